"""Graph optimization pass: fuse runs of cheap elementwise ops into one kernel.

A *cluster* is a tree of fusible nodes (float32/float64 AddV2, Add, Sub, Mul, RealDiv,
Maximum, Minimum, SquaredDifference, Neg, Square, Sigmoid, Tanh, Exp, Log, Reciprocal,
Relu, SigmoidGrad, TanhGrad, ReluGrad) on one device in which every member but the root
feeds exactly one data edge, to another member, and nothing else (no control edges, no
fetch, no `keep` name). The cluster becomes one `_FusedElementwise` node that takes the
root's name and out-edges and the members' outside inputs (each distinct tensor once).
Its attr `program` lists one step per member in dependency order, "<op> <operand>
[<operand>]", an operand being "i<k>" (input k) or "t<k>" (the result of step k); the
last step is the result. Attr `names` lists the members' names in step order (errors
name the member that failed).

The kernel (common.ops.fused_ops) compiles the program to one Python function of numpy
operators. Each member's own kernel computes the same IEEE operation in the same dtype
(float32 scalars stay float32 scalars, arrays broadcast as the ops do), so the fused
result equals the unfused one bit for bit. Generated numpy code rather than numexpr:
numexpr's per-call set-up (~5-10 us) is larger than a whole scalar chain here, and it
evaluates float32 expressions in its own blocked order (no bit-for-bit guarantee).

Inside while loops and conds too (TensorFlow's executor rules, common.executor.propagator):
members are not control-flow ops and feed each other by data edges, so they run in one
frame and one iteration, and so do the fused node and its inputs (a non-control-flow
node's inputs all come from its own frame and iteration). A member is dead when any of
its inputs is, so the root is dead exactly when one of the cluster's outside inputs is,
which is when the fused node is dead: values and deadness are unchanged. One difference
remains, on broken graphs only: a member whose own inputs are live but whose cluster is
dead (another member reads an untaken Switch branch) runs unfused and not fused, so a
shape error it would raise on a dead path is not raised.

On by default, as TensorFlow's Grappler remapper is (RewriterConfig.remapping DEFAULT):
results are identical, only the number of executor nodes changes. Off where TensorFlow's
remapper is off: RewriterConfig.remapping OFF or disable_meta_optimizer, and also with
OptimizerOptions.global_jit_level OFF; an explicit ON (remapping ON, global_jit_level
ON_1/ON_2) wins. Not thread-safe for one Graph.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from common.dtypes import DataType
from common.graph.graph import CONTROL_SLOT, Graph, Node
from common.ops.fused_ops import FUSIBLE_OPS
from common.subgraph import attr_type

_TYPES = frozenset({DataType.DT_FLOAT, DataType.DT_DOUBLE})
JIT_OFF, ON_1, ON_2 = -1, 1, 2  # OptimizerOptions.GlobalJitLevel
REMAPPING_ON, REMAPPING_OFF = 1, 2  # RewriterConfig.Toggle


def enabled(options: Any = None, rewrite_options: Any = None) -> bool:
    """Whether fusion runs for a session's OptimizerOptions / RewriterConfig (None: the
    defaults, on)."""
    jit = int(getattr(options, "global_jit_level", 0) or 0)
    remap = int(getattr(rewrite_options, "remapping", 0) or 0)
    if jit in (ON_1, ON_2) or remap == REMAPPING_ON:
        return True
    meta_off = bool(getattr(rewrite_options, "disable_meta_optimizer", False))
    return not (jit == JIT_OFF or remap == REMAPPING_OFF or meta_off)


def _fusible(node: Node) -> bool:
    if node.op not in FUSIBLE_OPS or "_class" in node.attr_protos:
        return False
    t = node.attr_protos.get("T")
    if t is None or DataType(t.type) not in _TYPES:
        return False
    return all(not e.is_control or not e.src.is_op for e in node.in_edges) and all(
        not e.is_control or not e.dst.is_op for e in node.out_edges
    )


def _data_out(node: Node) -> list:
    return [e for e in node.out_edges if not e.is_control]


def fuse_elementwise(graph: Graph, keep: Iterable[str] = ()) -> int:
    """Fuse every cluster of two or more nodes; returns the number of nodes removed."""
    keep = frozenset(keep)
    fusible = {n.id for n in graph.op_nodes() if _fusible(n)}
    parent: dict[int, Node] = {}  # member -> the member it feeds
    for nid in fusible:
        node = graph.find_node_id(nid)
        assert node is not None
        outs = _data_out(node)
        if node.name in keep or len(outs) != 1:
            continue
        dst = outs[0].dst
        if (
            dst.id in fusible
            and dst.requested_device == node.requested_device
            and dst.assigned_device == node.assigned_device
            and node.attr_protos["T"].type == dst.attr_protos["T"].type
        ):
            parent[nid] = dst
    children: dict[int, list[Node]] = {}
    for nid, dst in parent.items():
        children.setdefault(dst.id, []).append(graph.find_node_id(nid))  # type: ignore[arg-type]
    removed = 0
    for nid in sorted(fusible):
        root = graph.find_node_id(nid)
        if root is None or nid in parent or nid not in children:
            continue
        removed += _fuse(graph, root, parent)
    return removed


def _members(root: Node, parent: dict[int, Node]) -> list[Node]:
    """The cluster under `root`, operands before users (iterative post-order)."""
    order: list[Node] = []
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        stack.append((node, True))
        for e in sorted(node.in_edges, key=lambda e: -e.dst_input):
            if not e.is_control and parent.get(e.src.id) is node:
                stack.append((e.src, False))
    return order


def _fuse(graph: Graph, root: Node, parent: dict[int, Node]) -> int:
    members = _members(root, parent)
    step_of = {m.id: k for k, m in enumerate(members)}
    inputs: list[tuple[Node, int]] = []
    index: dict[tuple[int, int], int] = {}
    program = []
    for m in members:
        operands = []
        for e in sorted((e for e in m.in_edges if not e.is_control), key=lambda e: e.dst_input):
            if e.src.id in step_of and parent.get(e.src.id) is m:
                operands.append(f"t{step_of[e.src.id]}")
                continue
            key = (e.src.id, e.src_output)
            if key not in index:
                index[key] = len(inputs)
                inputs.append((e.src, e.src_output))
            operands.append(f"i{index[key]}")
        program.append(" ".join([m.op, *operands]))
    t = root.attr_protos["T"].type
    outs = [(e.dst, e.dst_input) for e in root.out_edges]
    name, requested, assigned = root.name, root.requested_device, root.assigned_device
    graph.remove_nodes(members)
    fused = graph.add_node(
        name,
        "_FusedElementwise",
        {
            "T": attr_type(DataType(t)),
            "N": _attr_int(len(inputs)),
            "program": _attr_strings(program),
            "names": _attr_strings([m.name for m in members]),
        },
        requested,
        input_types=(DataType(t),) * len(inputs),
        output_types=(DataType(t),),
    )
    fused.assigned_device = assigned
    for slot, (src, out) in enumerate(inputs):
        graph.add_edge(src, out, fused, slot)
    for dst, dst_input in outs:
        graph.add_edge(fused, CONTROL_SLOT if dst_input == CONTROL_SLOT else 0, dst, dst_input)
    return len(members) - 1


def _attr_int(value: int) -> Any:
    from protos import attr_value_pb2

    return attr_value_pb2.AttrValue(i=value)


def _attr_strings(values: list[str]) -> Any:
    from protos import attr_value_pb2

    attr = attr_value_pb2.AttrValue()
    attr.list.s.extend(v.encode() for v in values)
    return attr
