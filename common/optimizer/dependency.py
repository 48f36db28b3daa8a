"""Graph optimization pass: TensorFlow's grappler DependencyOptimizer: nodes that only
order other nodes, and control edges that order nothing new.

`tf.tuple` and `gate_gradients` wrap values in `Identity(x, ^group_deps)` with
`group_deps = NoOp(^a, ^b)`: two executor nodes per value that compute nothing. In a
while loop's gradient they run every iteration (the bench LSTM step: ~1,300 such
Identities and ~770 NoOps out of ~10,200 nodes). Each call, in TensorFlow's order:

  * control edges implied by a longer path go (common.optimizer.transitive_reduction);
  * a Const without inputs loses its control out-edges (it runs first anyway, never dead);
  * a node free of side effects whose outputs are only control edges becomes a NoOp (its
    data inputs become control inputs): a gradient's Sum/Reshape for a constant operand
    kept only by a `tuple`'s NoOp. As TensorFlow, the errors it would raise go with it.
    Never a stateful, ref-input, in-place, Placeholder, Assert/CheckNumerics,
    ControlTrigger, control-flow or transfer node, a function call, a node needed by
    name, nor (stricter than TensorFlow, which adds an Identity there) one reading a
    Switch output;
  * Identity and NoOp nodes are bypassed: their inputs move to their consumers. An
    Identity's data input replaces it on each data edge, and its control inputs (a
    NoOp's inputs) become control inputs of each consumer. A consumer then starts after
    exactly what it waited for before, and a dead input still makes it dead (any dead
    input, control included, kills a node that is not a Merge), so values, ordering and
    deadness are unchanged.

As TensorFlow does, a node is bypassed only where that is worth it (no more edges after
than before: inputs x consumers <= inputs + consumers) and safe: not needed by name, not
consumed by a Merge (which treats its inputs one by one) or a transfer node, an Identity
neither dereferencing a ref nor following a _Recv, and every node involved asking for the
same device (no edge may start to cross devices). An Identity after a Switch goes only
when no consumer waits on it by a control edge (TensorFlow's SafeToRemoveIdentity): a
data edge from the Switch output carries its deadness, a control edge from a Switch
would not say which branch. Other Identities without control inputs are left to
simplify.remove_identity_nodes.

Runs with the other passes (OptimizerOptions L1) unless RewriterConfig turns
dependency_optimization OFF or disables the meta optimizer, TensorFlow's switches for it.
Mutates the Graph it is given; not thread-safe (like Graph).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from common import dtypes
from common.graph import algorithm
from common.graph.graph import Graph, Node
from common.ops import registry
from common.optimizer.simplify import TRANSFER_OPS, is_protected, topological_order_by_id
from common.optimizer.transitive_reduction import remove_redundant_control_edges

TOGGLE_OFF = 2  # RewriterConfig.Toggle.OFF
_BLOCKING_CONSUMERS = frozenset({"Merge", "RefMerge"}) | TRANSFER_OPS
_SWITCH_OPS = frozenset({"Switch", "RefSwitch", "_SwitchN"})
_RECV_OPS = frozenset({"_Recv", "_HostRecv"})
_CONSTANT_OPS = frozenset({"Const", "HostConst"})
# Side-effect free by their OpDef, yet their running means something (TensorFlow's list,
# and IsFreeOfSideEffect's Placeholders: an unfed one must still fail).
_NEVER_NOOP = frozenset(
    {
        "Assert",
        "CheckNumerics",
        "ControlTrigger",
        "_ParallelConcatUpdate",
        "Placeholder",
        "PlaceholderV2",
        "PlaceholderWithDefault",
    }
)


def enabled(rewrite_options: Any = None) -> bool:
    """Whether a RewriterConfig (None: the defaults) lets the pass run."""
    if rewrite_options is None:
        return True
    if bool(getattr(rewrite_options, "disable_meta_optimizer", False)):
        return False
    return int(getattr(rewrite_options, "dependency_optimization", 0) or 0) != TOGGLE_OFF


def _consumers(node: Node) -> list[Node] | None:
    """The distinct consumers of `node` (SINK aside), or None if one of them blocks."""
    seen: dict[int, Node] = {}
    for e in node.out_edges:
        dst = e.dst
        if dst.is_sink:
            continue
        if dst.op in _BLOCKING_CONSUMERS:
            return None
        seen[dst.id] = dst
    return list(seen.values())


def _control_sources(node: Node) -> list[Node] | None:
    """The op nodes that are control inputs of `node`, or None if SOURCE is one."""
    sources = []
    for e in node.in_edges:
        if e.is_control:
            if not e.src.is_op:
                return None
            sources.append(e.src)
    return sources


def _same_device(node: Node, others: list[Node]) -> bool:
    return all(
        o.requested_device == node.requested_device and o.assigned_device == node.assigned_device
        for o in others
    )


def _add_controls(graph: Graph, sources: list[Node], dst: Node) -> None:
    """src -> ^dst for each source, unless dst already has an edge from it (a data edge
    already makes dst wait for src, and be dead when src is). Linear in dst's inputs."""
    present = {e.src.id for e in dst.in_edges}
    for src in sources:
        if src.id not in present:
            present.add(src.id)
            graph.add_control_edge(src, dst, allow_duplicates=True)


def _bypass_identity(graph: Graph, node: Node, keep: Collection[str]) -> bool:
    if node.op != "Identity" or node.name in keep:
        return False
    data = [e for e in node.in_edges if not e.is_control]
    controls = _control_sources(node)
    if len(data) != 1 or controls is None:
        return False
    src, src_output = data[0].src, data[0].src_output
    if src.op in _RECV_OPS or dtypes.is_ref(src.output_types[src_output]):
        return False
    if src.op in _SWITCH_OPS:
        if any(e.is_control and not e.dst.is_sink for e in node.out_edges):
            return False  # a control edge from the Switch would lose the branch
    elif not controls:
        return False  # simplify.remove_identity_nodes' case
    consumers = _consumers(node)
    if not consumers:
        return False
    inputs = 1 + len(controls)
    if inputs * len(consumers) > inputs + len(consumers):
        return False
    if not _same_device(node, [src, *controls, *consumers]):
        return False
    outs = sorted(node.out_edges, key=lambda e: e.is_control)  # data edges first
    graph.remove_node(node)
    for out in outs:
        if out.dst.is_sink:
            continue
        if out.is_control:
            _add_controls(graph, [src], out.dst)
        else:
            graph.add_edge(src, src_output, out.dst, out.dst_input)
    for dst in consumers:
        _add_controls(graph, controls, dst)
    return True


def _bypass_noop(graph: Graph, node: Node, keep: Collection[str]) -> bool:
    if node.op != "NoOp" or node.name in keep:
        return False
    controls = _control_sources(node)
    if not controls:
        return False
    consumers = _consumers(node)
    if not consumers:
        return False
    if len(controls) * len(consumers) > len(controls) + len(consumers):
        return False
    if not _same_device(node, [*controls, *consumers]):
        return False
    graph.remove_node(node)
    for dst in consumers:
        _add_controls(graph, controls, dst)
    return True


def _drop_constant_controls(graph: Graph, node: Node) -> bool:
    """A Const without inputs runs at the start of the step and is never dead: control
    edges from it order nothing. Removes them; whether there were any."""
    if node.op not in _CONSTANT_OPS or any(e.src.is_op for e in node.in_edges):
        return False
    edges = [e for e in node.out_edges if e.is_control and e.dst.is_op]
    if edges:
        graph.remove_edges(edges)
    return bool(edges)


def _may_become_noop(node: Node, keep: Collection[str]) -> bool:
    """TensorFlow's SafeToConvertToNoOp (and IsFreeOfSideEffect), on a node's kind."""
    if node.op == "NoOp" or node.op in _NEVER_NOOP or is_protected(node, keep):
        return False
    if node.op in _CONSTANT_OPS and not any(e.src.is_op for e in node.in_edges):
        return False  # _drop_constant_controls' case
    op_def = registry.find_op(node.op)  # None for a function call: left alone
    if op_def is None or op_def.is_stateful or not node.output_types:
        return False
    if "Queue" in node.op or "inplace" in node.op.lower():
        return False
    return not any(dtypes.is_ref(t) for t in node.input_types)


def _convert_to_noop(graph: Graph, node: Node, keep: Collection[str]) -> bool:
    """Replace a node whose outputs are only control edges by a NoOp of the same name and
    device, its inputs turned into control inputs; whether it was replaced."""
    if not _may_become_noop(node, keep):
        return False
    consumers: dict[int, Node] = {}
    for e in node.out_edges:
        if e.dst.is_sink:
            continue
        if not e.is_control:
            return False
        consumers[e.dst.id] = e.dst
    sources: dict[int, Node] = {}
    for e in node.in_edges:
        if not e.src.is_op:
            continue
        if not e.is_control and e.src.op in _SWITCH_OPS | _RECV_OPS:
            return False  # the edge would lose the branch (or the value's deadness)
        sources[e.src.id] = e.src
    if not consumers:
        return False
    name, requested, assigned = node.name, node.requested_device, node.assigned_device
    graph.remove_node(node)
    noop = graph.add_node(name, "NoOp", {}, requested)
    noop.assigned_device = assigned
    for src in sources.values():
        graph.add_control_edge(src, noop, allow_duplicates=True)
    for dst in consumers.values():
        graph.add_control_edge(noop, dst, allow_duplicates=True)
    return True


def optimize_dependencies(graph: Graph, keep: Collection[str] = ()) -> int:
    """One pass of the rewrites of the module docstring, in TensorFlow's order; returns
    how many nodes and control edges were removed or replaced."""
    changed = remove_redundant_control_edges(graph)
    # Consumers first: a chain becomes NoOps in one pass, and a Const whose consumer
    # became one loses the control edge it now has.
    for node in reversed(topological_order_by_id(graph)):
        changed += _drop_constant_controls(graph, node) or _convert_to_noop(graph, node, keep)
    for bypass in (_bypass_identity, _bypass_noop):
        for node in topological_order_by_id(graph):
            if bypass(graph, node, keep):
                changed += 1
    if changed:
        algorithm.fixup_source_and_sink_edges(graph)
    return changed
