"""Graph optimization pass: bypass Identity and NoOp nodes that only order other nodes
(the part of TensorFlow's grappler DependencyOptimizer that removes nodes).

`tf.tuple` and `gate_gradients` wrap values in `Identity(x, ^group_deps)` with
`group_deps = NoOp(^a, ^b)`: two executor nodes per value that compute nothing. In a
while loop's gradient they run every iteration (the bench LSTM step: ~1,300 such
Identities and ~770 NoOps out of ~10,200 nodes). Bypassing one moves its inputs to its
consumers: an Identity's data input replaces it on each data edge, and its control
inputs (a NoOp's inputs) become control inputs of each consumer. A consumer then starts
after exactly what it waited for before, and a dead input still makes it dead (any dead
input, control included, kills a node that is not a Merge), so values, ordering and
deadness are unchanged.

As TensorFlow does, a node is bypassed only where that is worth it (no more edges after
than before: inputs x consumers <= inputs + consumers) and safe: not needed by name, not
consumed by a Merge (which treats its inputs one by one) or a transfer node, an Identity
neither dereferencing a ref nor following a Switch or _Recv (there it carries deadness),
and every node involved asking for the same device (no edge may start to cross devices).
Identities with no control input are left to simplify.remove_identity_nodes.

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
from common.optimizer.simplify import TRANSFER_OPS, topological_order_by_id

TOGGLE_OFF = 2  # RewriterConfig.Toggle.OFF
_BLOCKING_CONSUMERS = frozenset({"Merge", "RefMerge"}) | TRANSFER_OPS
_DEADNESS_SOURCES = frozenset({"Switch", "RefSwitch", "_SwitchN", "_Recv", "_HostRecv"})


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
    if len(data) != 1 or not controls:
        return False
    src, src_output = data[0].src, data[0].src_output
    if src.op in _DEADNESS_SOURCES or dtypes.is_ref(src.output_types[src_output]):
        return False
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


def optimize_dependencies(graph: Graph, keep: Collection[str] = ()) -> int:
    """Bypass and remove the Identity nodes with control inputs, then the NoOps, that can
    go (see the module docstring); returns how many were removed."""
    removed = 0
    for bypass in (_bypass_identity, _bypass_noop):
        for node in topological_order_by_id(graph):
            if bypass(graph, node, keep):
                removed += 1
    if removed:
        algorithm.fixup_source_and_sink_edges(graph)
    return removed
