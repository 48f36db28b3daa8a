"""Partition, cross-device loops: the control-loop scaffolding TensorFlow's
graph_partition.cc AddControlFlow adds before a placed graph with while loops is split.

A loop frame whose nodes sit on several devices must iterate in lockstep everywhere. The
frame leader is the device owning the frame's LoopCond; every other device that receives
a tensor inside the frame gets, per frame, a skeleton loop

    dummy Const (root frame, or the enclosing frame's skeleton Merge when nested)
      -> Enter(frame) -> Merge(Enter, NextIteration) -> Switch(Merge, LoopCond) -> :1 ->
      NextIteration -> back to the Merge

whose Switch reads the leader's LoopCond (a _Send/_Recv pair once partitioned, keyed by
frame and iteration), and whose Merge fires once per iteration. A control edge from that
Merge to each node receiving a cross-device input in the frame lets Partition() hang the
node's _Recv on the Merge, so the _Recv runs in the right frame and iteration. When the
condition turns false the skeleton's NextIteration is dead, the frame drains and ends on
every device. Skeleton nodes are named "_cloop..." (TF's ControlLoopName), which is how
Partition() tells their control edges apart (`is_control_loop`).

Before that, as TF does, control-flow nodes move next to their data
(`optimize_control_flow_colocation`): a loop-invariant Enter whose consumers sit on another
device than the one requested for it would otherwise be the only node of its frame there,
run in iteration 0 only, and leave its consumers' _Recvs of later iterations waiting.

Mutates the Graph it is given. Pure otherwise; not thread-safe for one Graph.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from common.dtypes import DataType, as_proto_enum
from common.errors import InvalidArgumentError
from common.graph.graph import Edge, Graph, Node
from protos import attr_value_pb2, tensor_pb2, tensor_shape_pb2

CONTROL_LOOP_PREFIX = "_cloop"

NewName = Callable[[str], str]


@dataclasses.dataclass
class ControlLoop:
    """One skeleton loop of one frame on one device."""

    enter: Node
    merge: Node
    switch_node: Node
    next_iteration: Node


def is_control_loop(node: Node) -> bool:
    """True for the scaffolding nodes AddControlFlow adds (TF IsControlLoop)."""
    return node.name.startswith(CONTROL_LOOP_PREFIX)


def has_control_loops(graph: Graph) -> bool:
    """Whether the scaffolding was already added (a graph partitioned twice, e.g. by the
    master per task and then by a worker per device)."""
    return any(n.op == "Merge" and is_control_loop(n) for n in graph.op_nodes())


# -- attrs ------------------------------------------------------------------------------------
def _type(dtype: DataType) -> attr_value_pb2.AttrValue:
    return attr_value_pb2.AttrValue(type=as_proto_enum(dtype))


def _empty_float() -> attr_value_pb2.AttrValue:
    shape = tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=0)])
    return attr_value_pb2.AttrValue(
        tensor=tensor_pb2.TensorProto(dtype=as_proto_enum(DataType.DT_FLOAT), tensor_shape=shape)
    )


class _ControlFlowAdder:
    """TF AddControlFlow over one graph; `cf` is build_control_flow_info's result."""

    def __init__(self, graph: Graph, cf: list, new_name: NewName) -> None:
        self.graph = graph
        self.cf = cf
        self.new_name = new_name
        self.loops: dict[tuple[str, str], ControlLoop] = {}
        self.frame_cond: dict[str, Node] = {}
        for node in graph.op_nodes():
            info = self.info(node)
            if node.op == "LoopCond" and info is not None:
                self.frame_cond[info.frame_name] = node

    # -- control flow info of old and new nodes ---------------------------------------------
    def info(self, node: Node):
        return self.cf[node.id] if node.id < len(self.cf) else None

    def copy_info(self, node: Node, like: Node) -> None:
        while len(self.cf) <= node.id:
            self.cf.append(None)
        self.cf[node.id] = self.cf[like.id]

    def output_frame(self, node: Node) -> Node | None:
        """The Enter of the frame node's outputs live in (None: the root frame)."""
        info = self.info(node)
        if info is None:
            return None
        return info.parent_frame if node.op in ("Exit", "RefExit") else info.frame

    def input_frame(self, node: Node) -> Node | None:
        info = self.info(node)
        if info is None:
            return None
        return info.parent_frame if node.op in ("Enter", "RefEnter") else info.frame

    def frame_name(self, frame: Node | None) -> str:
        return self.cf[frame.id].frame_name if frame is not None else ""

    def same_inner_frame(self, e: Edge) -> str:
        """The frame name when `e` crosses devices inside one (non-root) frame, else ""."""
        src, dst = e.src, e.dst
        if not (src.is_op and dst.is_op) or src.assigned_device == dst.assigned_device:
            return ""
        src_name = self.frame_name(self.output_frame(src))
        if src_name and src_name == self.frame_name(self.input_frame(dst)):
            return src_name
        return ""

    # -- building --------------------------------------------------------------------------
    def add_node(self, name: str, op: str, attrs: dict, device: str, like: Node) -> Node:
        node = self.graph.add_node(name, op, attrs, device)
        node.assigned_device = device
        self.copy_info(node, like)
        return node

    def add_control_loop(self, frame: Node, e: Edge, loop_cond: Node) -> ControlLoop:
        """TF AddControlLoop: the skeleton of `frame` on e.dst's device."""
        device = e.dst.assigned_device
        info = self.cf[frame.id]
        pi = frame.attr("parallel_iterations", 10)
        float_t = _type(DataType.DT_FLOAT)
        names = [CONTROL_LOOP_PREFIX + self.new_name(e.dst.name) for _ in range(4)]
        enter = self.add_node(
            names[0],
            "Enter",
            {
                "T": float_t,
                "frame_name": attr_value_pb2.AttrValue(s=info.frame_name.encode()),
                "is_constant": attr_value_pb2.AttrValue(b=False),
                "parallel_iterations": attr_value_pb2.AttrValue(i=int(pi)),
            },
            device,
            frame,
        )
        merge = self.add_node(
            names[1], "Merge", {"T": float_t, "N": attr_value_pb2.AttrValue(i=2)}, device, frame
        )
        switch = self.add_node(names[2], "Switch", {"T": float_t}, device, frame)
        nxt = self.add_node(names[3], "NextIteration", {"T": float_t}, device, frame)
        g = self.graph
        g.add_edge(enter, 0, merge, 0)
        g.add_edge(nxt, 0, merge, 1)
        g.add_edge(merge, 0, switch, 0)
        g.add_edge(loop_cond, 0, switch, 1)
        g.add_edge(switch, 1, nxt, 0)
        return ControlLoop(enter, merge, switch, nxt)

    def add_loops_for_edge(self, e: Edge) -> None:
        """Skeletons for e's frame on e.dst's device, and for each enclosing frame."""
        device = e.dst.assigned_device
        frame = self.output_frame(e.src)
        child: ControlLoop | None = None
        while True:
            name = self.frame_name(frame)
            if not name:  # the root frame: a dummy Const starts the outermost skeleton
                if child is not None:
                    const = self.add_node(
                        self.new_name(e.dst.name),
                        "Const",
                        {"dtype": _type(DataType.DT_FLOAT), "value": _empty_float()},
                        device,
                        self.graph.source,
                    )
                    self.graph.add_edge(const, 0, child.enter, 0)
                return
            assert frame is not None
            found = self.loops.get((name, device))
            if found is not None:
                if child is not None:
                    self.graph.add_edge(found.merge, 0, child.enter, 0)
                return
            loop_cond = self.frame_cond.get(name)
            if loop_cond is None:
                raise InvalidArgumentError(
                    f"A cross-device loop must have a pivot predicate: {name}", e.dst.name
                )
            loop = self.add_control_loop(frame, e, loop_cond)
            self.loops[(name, device)] = loop
            if child is not None:
                self.graph.add_edge(loop.merge, 0, child.enter, 0)
            frame = self.cf[frame.id].parent_frame
            child = loop

    def run(self) -> None:
        for e in list(self.graph.edges()):
            if self.same_inner_frame(e):
                self.add_loops_for_edge(e)
        # Each cross-device consumer in a frame waits on its device's skeleton Merge;
        # Partition() moves these control edges to the _Recvs it creates.
        for e in list(self.graph.edges()):
            name = self.same_inner_frame(e)
            if name:
                loop = self.loops[(name, e.dst.assigned_device)]
                self.graph.add_control_edge(loop.merge, e.dst, allow_duplicates=True)


def _colocated_device(node: Node) -> str | None:
    """The device TF's OptimizeControlFlowColocation gives `node`, or None to keep its own:
    a Switch goes with its data input, an Exit with its input, a (non-ref) Enter and a
    NextIteration with their first data consumer."""
    if node.op in ("Switch", "RefSwitch"):
        found = [e.src for e in node.in_edges if e.dst_input == 0]
    elif node.op in ("Exit", "RefExit"):
        found = [e.src for e in node.in_edges if not e.is_control]
    elif (node.op == "Enter" and node.input_types[0] < 100) or node.op == "NextIteration":
        found = [e.dst for e in node.out_edges if not e.is_control]
    else:
        return None
    return found[0].assigned_device if found else None


def optimize_control_flow_colocation(graph: Graph) -> None:
    """TF OptimizeControlFlowColocation, in TF's depth-first order from SOURCE (a node
    takes its neighbour's device as it stands when the node is visited)."""
    visited = bytearray(graph.num_node_ids)
    stack = [graph.source]
    while stack:
        node = stack.pop()
        if visited[node.id]:
            continue
        visited[node.id] = 1
        if node.is_op:
            device = _colocated_device(node)
            if device is not None:
                node.assigned_device = device
        stack.extend(e.dst for e in node.out_edges if not visited[e.dst.id])


def add_control_flow(graph: Graph, control_flow_info: list, new_name: NewName) -> int:
    """Add the control-loop scaffolding for every frame split across devices (TF
    AddControlFlow), after moving control-flow nodes next to their data; returns how many
    skeleton loops were added. `control_flow_info` is
    `partition.build_control_flow_info(graph)` and is extended for the new nodes."""
    optimize_control_flow_colocation(graph)
    adder = _ControlFlowAdder(graph, control_flow_info, new_name)
    adder.run()
    return len(adder.loops)
