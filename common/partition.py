"""Partition: split a placed graph into one GraphDef per location, joining the pieces
with _Send/_Recv pairs (TensorFlow's graph_partition.cc Partition()).

For every edge whose ends lie in different locations (`node_to_loc`: the assigned device by
default; the master may pass the task instead, and workers partition again by device):
  * data edge: a `_Send` of the source output in the source partition and a `_Recv` in the
    destination partition, tensor_name "edge_<edge id>_<src name>". One pair per
    (source output, destination partition) is shared by all consumers there, except for
    ref-typed outputs, which get one pair per edge (TF does not collapse ref edges) and
    whose _Recv waits, by control edges, on the consumer's other inputs (read semantics);
  * control edge: a dummy `Const` (float, shape [0]) with a control input from the source
    is sent instead, and the destination depends on an `Identity` of the `_Recv`.
Ref types travel dereferenced: `T` and `tensor_type` hold the base type. On non-CPU devices
host-memory tensors (int32, string, resource) use `_HostSend`/`_HostRecv`, and a same-device
edge whose two ends disagree on memory type gets a same-device pair (with a control edge
from the send to the recv).

While loops whose frames span devices first get the control-loop scaffolding TF adds in
AddControlFlow (common.partition_control_flow); a control edge from a skeleton Merge to a
node is moved to the _Recv created for that node's cross-device input, as TF does.
`build_control_flow_info` (TF BuildControlFlowInfo) gives each node's frame.

Output is deterministic: within a partition, original nodes in id order, then the added
nodes in creation order. Pure; not thread-safe for one Graph.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import deque
from collections.abc import Callable
from typing import Any

from common import device_name
from common.dtypes import DataType, as_proto_enum
from common.errors import InvalidArgumentError, UnimplementedError
from common.graph.algorithm import CONTROL_FLOW_OPS, ENTER_OPS, EXIT_OPS, gc_paused
from common.graph.graph import CONTROL_SLOT, Edge, Graph, Node
from common.partition_control_flow import add_control_flow, has_control_loops, is_control_loop
from common.subgraph import attr_type, base_type, sendrecv_attrs
from protos import attr_value_pb2, graph_pb2, node_def_pb2, tensor_pb2, tensor_shape_pb2

NodeToLoc = Callable[[Node], str]
GetIncarnation = Callable[[str], int]
NewName = Callable[[str], str]


def unique_names(graph: Graph) -> NewName:
    """A `new_name` for `partition`: "prefix/_N" with N counting up, skipping the names
    `graph` already has and those it gave."""
    names = itertools.count()
    taken = {n.name for n in graph.op_nodes()}

    def new_name(prefix: str) -> str:
        while True:
            name = f"{prefix}/_{next(names)}"
            if name not in taken:
                taken.add(name)
                return name

    return new_name


_HOST_TYPES = frozenset({DataType.DT_INT32, DataType.DT_STRING, DataType.DT_RESOURCE})


# -- control flow frames ------------------------------------------------------------------
@dataclasses.dataclass
class ControlFlowInfo:
    """A node's while-loop frame: the Enter that opened it (None for the root frame) and
    the enclosing frame's name ("" is the root frame)."""

    frame_name: str = ""
    parent_frame_name: str = ""
    frame: Node | None = None
    parent_frame: Node | None = None


def _frame_name_attr(node: Node) -> str:
    attr = node.attr_protos.get("frame_name")
    return attr.s.decode() if attr is not None else ""


def build_control_flow_info(graph: Graph) -> list[ControlFlowInfo | None]:
    """Each node's frame, indexed by node id (None for nodes not reached from SOURCE).

    Raises InvalidArgumentError when a node has inputs from different frames."""
    info: list[ControlFlowInfo | None] = [None] * graph.num_node_ids
    parents: list[Node | None] = [None] * graph.num_node_ids
    info[graph.source.id] = ControlFlowInfo()
    ready = deque([graph.source])
    while ready:
        curr = ready.popleft()
        cur = info[curr.id]
        assert cur is not None
        if curr.op in EXIT_OPS and cur.parent_frame is not None:
            outer = info[cur.parent_frame.id]
            assert outer is not None
            frame = ControlFlowInfo(
                outer.frame_name, outer.parent_frame_name, outer.frame, outer.parent_frame
            )
        elif curr.op in EXIT_OPS:
            frame = ControlFlowInfo()
        else:
            frame = cur
        for e in curr.out_edges:
            out = e.dst
            if not out.is_op:
                continue  # SINK: reached from every frame (TF skips it too)
            seen = info[out.id]
            if out.op in ENTER_OPS:
                if seen is None:
                    info[out.id] = ControlFlowInfo(
                        _frame_name_attr(out), frame.frame_name, out, frame.frame
                    )
                    ready.append(out)
                elif seen.parent_frame_name != frame.frame_name:
                    raise _mixed_frames(
                        out, curr, frame.frame_name, parents[out.id], seen.parent_frame_name
                    )
                parents[out.id] = parents[out.id] or curr
                continue
            if seen is None:
                info[out.id] = ControlFlowInfo(
                    frame.frame_name, frame.parent_frame_name, frame.frame, frame.parent_frame
                )
                parents[out.id] = curr
                ready.append(out)
            elif seen.frame_name != frame.frame_name:
                raise _mixed_frames(out, curr, frame.frame_name, parents[out.id], seen.frame_name)
    return info


def _mixed_frames(node: Node, a: Node, a_frame: str, b: Node | None, b_frame: str):
    return InvalidArgumentError(
        f"The node '{node.name}' has inputs from different frames. The input '{a.name}' is "
        f"in frame '{a_frame}'. The input '{b.name if b else ''}' is in frame '{b_frame}'.",
        node.name,
    )


def _check_frames(graph: Graph, loc: NodeToLoc, cf: list[ControlFlowInfo | None]) -> None:
    """TF AddControlFlow's trigger: an edge inside one loop frame that crosses locations."""
    for e in graph.edges():
        src, dst = e.src, e.dst
        if not (src.is_op and dst.is_op) or loc(src) == loc(dst):
            continue
        si, di = cf[src.id], cf[dst.id]
        if si is None or di is None:
            continue
        src_frame = si.parent_frame_name if src.op in EXIT_OPS else si.frame_name
        dst_frame = di.parent_frame_name if dst.op in ENTER_OPS else di.frame_name
        if src_frame == dst_frame and src_frame and src.assigned_device == dst.assigned_device:
            raise UnimplementedError(
                f"Partitioning while loop frame '{src_frame}' across devices is not "
                f"supported yet: edge {src.name} -> {dst.name} crosses from {loc(src)} to "
                f"{loc(dst)}",
                dst.name,
            )


# -- memory types -------------------------------------------------------------------------
_DEVICE_TYPES: dict[str, str] = {"": ""}


def _device_type(device: str) -> str:
    found = _DEVICE_TYPES.get(device)
    if found is None:
        found = _DEVICE_TYPES[device] = device_name.parse(device).type or ""
    return found


def _on_host(dtype: DataType, device: str) -> bool:
    """Host-memory tensors on a non-CPU device (TF MTypeFromDType / DataTypeAlwaysOnHost)."""
    return base_type(dtype) in _HOST_TYPES and _device_type(device) not in ("CPU", "")


def _src_on_host(e: Edge) -> bool:
    return not e.is_control and _on_host(e.src.output_types[e.src_output], e.src.assigned_device)


def _dst_on_host(e: Edge) -> bool:
    """TF IsDstInputOnHost: always true on CPU."""
    if _device_type(e.dst.assigned_device) in ("CPU", ""):
        return True
    return not e.is_control and _on_host(e.dst.input_types[e.dst_input], e.dst.assigned_device)


def _need_same_device_sendrecv(e: Edge) -> bool:
    if e.is_control or e.src.assigned_device != e.dst.assigned_device:
        return False
    if _device_type(e.src.assigned_device) in ("CPU", ""):
        return False
    return _src_on_host(e) != _on_host(e.dst.input_types[e.dst_input], e.dst.assigned_device)


# -- NodeDef builders ---------------------------------------------------------------------
def _input_name(name: str, slot: int) -> str:
    if slot == CONTROL_SLOT:
        return "^" + name
    return name if slot == 0 else f"{name}:{slot}"


def _node_def(name: str, op: str, device: str, attrs: dict[str, Any]) -> Any:
    nd = node_def_pb2.NodeDef(name=name, op=op, device=device)
    for k, v in attrs.items():
        nd.attr[k].CopyFrom(v)
    return nd


def _empty_float_tensor() -> Any:
    shape = tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=0)])
    return tensor_pb2.TensorProto(dtype=as_proto_enum(DataType.DT_FLOAT), tensor_shape=shape)


class _Partitioner:
    """Two passes over the op nodes: copy each node into its partition (so originals come
    first, in id order), then wire inputs, appending _Send/_Recv and friends."""

    def __init__(
        self, graph: Graph, loc: NodeToLoc, get_incarnation: GetIncarnation, new_name: NewName
    ) -> None:
        self.graph = graph
        self.loc = loc
        self.get_incarnation = get_incarnation
        self.new_name = new_name
        self.partitions: dict[str, Any] = {}
        # (src id, src output, dst partition, on host) -> (recv-side node, real _Recv)
        self.dup_recv: dict[tuple[int, int, str, bool], tuple[Any, Any]] = {}
        self.locs: list[str | None] = [None] * graph.num_node_ids
        self.defs: list[Any] = [None] * graph.num_node_ids
        # Send/Recv NodeDefs differ only in name, tensor_name and input: copy a template.
        self._templates: dict[tuple, Any] = {}

    def loc_of(self, node: Node) -> str:
        found = self.locs[node.id]
        if found is None:
            found = self.locs[node.id] = self.loc(node)
        return found

    def graph_def(self, loc: str) -> Any:
        gd = self.partitions.get(loc)
        if gd is None:
            gd = self.partitions[loc] = graph_pb2.GraphDef()
        return gd

    def add(self, loc: str, nd: Any) -> Any:
        added = self.graph_def(loc).node.add()
        added.CopyFrom(nd)
        return added

    def _template(self, op: str, e: Edge, dtype: DataType, type_attr: str) -> Any:
        send_device, recv_device = e.src.assigned_device, e.dst.assigned_device
        key = (op, send_device, recv_device, dtype, type_attr)
        nd = self._templates.get(key)
        if nd is None:
            attrs = sendrecv_attrs(
                "", send_device, self.get_incarnation(send_device), recv_device, False
            )
            attrs[type_attr] = attr_type(dtype)
            device = send_device if type_attr == "T" else recv_device
            nd = self._templates[key] = _node_def("", op, device, attrs)
        return nd

    def _add_sendrecv(self, loc: str, template: Any, e: Edge) -> Any:
        nd = self.graph_def(loc).node.add()
        nd.CopyFrom(template)
        nd.name = self.new_name(e.src.name)
        nd.attr["tensor_name"].s = f"edge_{e.id}_{e.src.name}".encode()
        return nd

    def add_send(self, e: Edge, src_loc: str, send_from: str, dtype: DataType) -> Any:
        op = "_HostSend" if _src_on_host(e) else "_Send"
        nd = self._add_sendrecv(src_loc, self._template(op, e, dtype, "T"), e)
        nd.input.append(send_from)
        return nd

    def add_recv(self, e: Edge, dst_loc: str, dtype: DataType) -> tuple[Any, Any]:
        """TF AddRecv: (the node consumers read, the real _Recv)."""
        on_host = not e.is_control and _on_host(
            e.dst.input_types[e.dst_input], e.dst.assigned_device
        )
        op = "_HostRecv" if on_host else "_Recv"
        recv = self._add_sendrecv(dst_loc, self._template(op, e, dtype, "tensor_type"), e)
        if not e.is_control:
            return recv, recv
        ident = _node_def(
            self.new_name(e.src.name),
            "Identity",
            e.dst.assigned_device,
            {"T": attr_type(DataType.DT_FLOAT)},
        )
        ident.input.append(recv.name)
        return self.add(dst_loc, ident), recv

    def add_dummy_const(self, e: Edge, src_loc: str) -> Any:
        value = attr_value_pb2.AttrValue(tensor=_empty_float_tensor())
        nd = _node_def(
            self.new_name(e.src.name),
            "Const",
            e.src.assigned_device,
            {"dtype": attr_type(DataType.DT_FLOAT), "value": value},
        )
        nd.input.append("^" + e.src.name)
        return self.add(src_loc, nd)

    # -- the two passes ------------------------------------------------------------------
    def copy_node(self, dst: Node) -> None:
        nd = self.graph_def(self.loc_of(dst)).node.add()
        nd.name = dst.name
        nd.op = dst.op
        nd.device = dst.assigned_device
        attr = nd.attr
        for k, v in dst.attr_protos.items():
            attr[k].CopyFrom(v)
        self.defs[dst.id] = nd

    def ordered_inputs(self, dst: Node) -> list[Edge]:
        """Data edges in slot order, then control edges (TF's `inputs` vector)."""
        slots: list[Edge | None] = [None] * dst.num_inputs
        controls: list[Edge] = []
        missing = dst.num_inputs
        for e in dst.in_edges:
            if e.src_output == CONTROL_SLOT:
                controls.append(e)
            elif e.dst_input < len(slots) and slots[e.dst_input] is None:
                slots[e.dst_input] = e
                missing -= 1
        if missing:
            raise InvalidArgumentError(
                f"Incomplete graph, missing {missing} inputs for {dst.name}", dst.name
            )
        return [e for e in slots if e is not None] + controls

    def partition_node(self, dst: Node) -> None:
        dst_loc = self.loc_of(dst)
        dst_def = self.defs[dst.id]
        ref_recvs: list[Any] = []
        ref_control_inputs: list[str] = []
        inputs = self.ordered_inputs(dst)
        # TF's control_flow_edge: skeleton Merge -> dst, moved to dst's first new _Recv.
        loop_merges = [e.src.name for e in inputs if _is_loop_merge_edge(e)]
        for e in inputs:
            src = e.src
            if not src.is_op or _is_loop_merge_edge(e):
                continue
            src_loc = self.loc_of(src)
            if src_loc == dst_loc and not _need_same_device_sendrecv(e):
                dst_def.input.append(_input_name(src.name, e.src_output))
                if e.is_control or src.output_types[e.src_output] < 100:
                    ref_control_inputs.append(src.name)
                continue
            self.split_edge(
                e, src_loc, dst_loc, dst_def, ref_recvs, ref_control_inputs, loop_merges
            )
        if loop_merges:  # not moved to a _Recv: dst itself waits on the skeleton Merge
            dst_def.input.append("^" + loop_merges[0])
        for recv in ref_recvs:  # TF AddReadControl
            recv.input.extend("^" + name for name in ref_control_inputs)

    def split_edge(
        self,
        e: Edge,
        src_loc: str,
        dst_loc: str,
        dst_def: Any,
        ref_recvs: list[Any],
        ref_control_inputs: list[str],
        loop_merges: list[str] | None = None,
    ) -> None:
        src = e.src
        slot = CONTROL_SLOT if e.is_control else 0
        key = (src.id, e.src_output, dst_loc, _dst_on_host(e))
        found = self.dup_recv.get(key)
        if found is not None:
            dst_def.input.append(_input_name(found[0].name, slot))
            ref_control_inputs.append(found[0].name)
            return
        if e.is_control:
            send_from, dtype = self.add_dummy_const(e, src_loc).name, DataType.DT_FLOAT
        else:
            send_from = _input_name(src.name, e.src_output)
            dtype = base_type(e.dst.input_types[e.dst_input])
        send = self.add_send(e, src_loc, send_from, dtype)
        recv, real_recv = self.add_recv(e, dst_loc, dtype)
        if src_loc == dst_loc:  # same-device pair: the recv must not run before the send
            real_recv.input.append("^" + send.name)
        elif loop_merges:  # the _Recv runs in the frame and iteration of the skeleton Merge
            real_recv.input.append("^" + loop_merges.pop())
        if not e.is_control and src.output_types[e.src_output] > 100:
            ref_recvs.append(real_recv)
        else:
            self.dup_recv[key] = (recv, real_recv)
            ref_control_inputs.append(recv.name)
        dst_def.input.append(_input_name(recv.name, slot))

    def finish(self) -> dict[str, Any]:
        versions = self.graph.versions
        library = self.graph.flib.to_proto() if self.graph.flib is not None else None
        out: dict[str, Any] = {}
        for loc in sorted(self.partitions):
            gd = self.partitions[loc]
            if versions is not None:
                gd.versions.CopyFrom(versions)
            if library is not None:
                gd.library.CopyFrom(library)
            out[loc] = gd
        return out


def merge_control_inputs(graph: Graph, loc: NodeToLoc, new_name: NewName) -> int:
    """Give a node with several control inputs from one other location a single one: a
    NoOp there that waits on them all (one _Send/_Recv pair instead of one per edge; a
    node with 100,000 control inputs from another task otherwise costs 100,000 RecvTensor
    calls per step). The node still runs after all of them. Graphs with control-flow ops
    are left alone (deadness and frames cross control edges there). Returns the number
    of NoOps added."""
    if any(n.op in CONTROL_FLOW_OPS for n in graph.op_nodes()):
        return 0
    added = 0
    for dst in list(graph.op_nodes()):
        if len(dst.in_edges) < 2:
            continue
        dst_loc = loc(dst)
        groups: dict[str, list[Edge]] = {}
        for e in dst.in_edges:
            if e.src_output == CONTROL_SLOT and e.src.is_op:
                src_loc = loc(e.src)
                if src_loc != dst_loc:
                    groups.setdefault(src_loc, []).append(e)
        for edges in groups.values():
            if len(edges) < 2:
                continue
            device = edges[0].src.assigned_device
            joined = graph.add_node(
                new_name(f"{dst.name}/control_inputs"),
                "NoOp",
                {},
                device,
                input_types=(),
                output_types=(),
            )
            joined.assigned_device = device
            graph.remove_edges(edges)
            for e in edges:
                graph.add_edge(e.src, CONTROL_SLOT, joined, CONTROL_SLOT)
            graph.add_edge(joined, CONTROL_SLOT, dst, CONTROL_SLOT)
            added += 1
    return added


def _is_loop_merge_edge(e: Edge) -> bool:
    return e.src_output == CONTROL_SLOT and e.src.op == "Merge" and is_control_loop(e.src)


def _assigned_device(node: Node) -> str:
    return node.assigned_device


def partition(
    graph: Graph,
    *,
    node_to_loc: NodeToLoc = _assigned_device,
    get_incarnation: GetIncarnation,
    new_name: NewName,
    control_flow_info: list[ControlFlowInfo | None] | None = None,
) -> dict[str, Any]:
    """Split a placed graph into {location: GraphDef} (TF Partition()).

    `get_incarnation(device)` gives a device's uint64 incarnation; `new_name(prefix)` a
    graph-unique node name. A while loop split across devices first gets TF's control-loop
    scaffolding (added to `graph`). Raises InvalidArgumentError for a node with unconnected
    inputs or a split loop without a LoopCond."""
    if control_flow_info is None and any(n.op in ENTER_OPS for n in graph.op_nodes()):
        control_flow_info = build_control_flow_info(graph)
    if control_flow_info is not None and not has_control_loops(graph):
        add_control_flow(graph, control_flow_info, new_name)
    merge_control_inputs(graph, node_to_loc, new_name)
    p = _Partitioner(graph, node_to_loc, get_incarnation, new_name)
    if control_flow_info is not None:
        _check_frames(graph, p.loc_of, control_flow_info)
    with gc_paused():
        nodes = list(graph.op_nodes())
        for node in nodes:
            p.copy_node(node)
        for node in nodes:
            p.partition_node(node)
        return p.finish()
