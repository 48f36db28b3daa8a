"""Graph optimization (before placement): removal of Identity nodes and of dead nodes
(TensorFlow's RemoveIdentityNodes and RemoveDeadNodes).

An Identity-like node (Identity, Snapshot, StopGradient, PreventGradient) is bypassed
when its consumers can read its input directly without a change of meaning: exactly one
data input and no control inputs, the input is neither ref-typed (the Identity
dereferences a variable) nor produced by a Switch or _Recv (the Identity carries
deadness for control flow), it has consumers, it asks for the same device as its
producer, and the caller does not need it by name. A node is dead when it cannot reach a
node that must run: a protected node (_Send/_Retval/_Arg/_Recv, stateful, control flow,
or named by the caller).

Mutates the Graph it is given; not thread-safe (like Graph).
"""

from __future__ import annotations

import heapq
from collections.abc import Collection

from common import dtypes
from common.graph import algorithm
from common.graph.graph import Graph, Node

IDENTITY_OPS = frozenset({"Identity", "Snapshot", "StopGradient", "PreventGradient"})

# Ops that carry values between devices, call frames or the client: never optimized away.
TRANSFER_OPS = frozenset(
    {"_Send", "_Recv", "_HostSend", "_HostRecv", "_Arg", "_Retval", "_DeviceArg", "_DeviceRetval"}
)

# Case lowers to _SwitchN, which these rewrites leave alone as well.
CONTROL_FLOW_OPS = algorithm.CONTROL_FLOW_OPS | {"_SwitchN"}


def topological_order_by_id(graph: Graph) -> list[Node]:
    """Op nodes, producers first, the lowest id first among ready nodes (deterministic and
    independent of edge order). NextIteration -> Merge back edges are ignored."""
    pending = [0] * graph.num_node_ids
    ready: list[int] = []
    for n in graph.op_nodes():
        pending[n.id] = sum(1 for e in n.in_edges if e.src.is_op and not algorithm.is_back_edge(e))
        if pending[n.id] == 0:
            ready.append(n.id)
    heapq.heapify(ready)
    order: list[Node] = []
    while ready:
        node = graph.find_node_id(heapq.heappop(ready))
        assert node is not None
        order.append(node)
        for e in node.out_edges:
            if e.dst.is_op and not algorithm.is_back_edge(e):
                pending[e.dst.id] -= 1
                if pending[e.dst.id] == 0:
                    heapq.heappush(ready, e.dst.id)
    return order


def is_protected(node: Node, keep: Collection[str]) -> bool:
    """A node no pass may remove: it has effects, moves data, steers control flow or is
    needed by name."""
    return (
        node.op in TRANSFER_OPS
        or node.op in CONTROL_FLOW_OPS
        or node.name in keep
        or (node.op_def is not None and node.op_def.is_stateful)
    )


def has_ref_type(node: Node) -> bool:
    return any(dtypes.is_ref(t) for t in node.input_types) or any(
        dtypes.is_ref(t) for t in node.output_types
    )


def _bypassable_input(node: Node, keep: Collection[str]):
    """The single data in-edge of an Identity-like node that can be bypassed, or None."""
    if node.op not in IDENTITY_OPS or node.name in keep:
        return None
    data = None
    for e in node.in_edges:
        if e.is_control:
            if not e.src.is_source:
                return None  # control inputs would have to move: leave the node alone
            continue
        if data is not None:
            return None
        data = e
    if data is None or not any(not e.dst.is_sink for e in node.out_edges):
        return None
    src = data.src
    if dtypes.is_ref(src.output_types[data.src_output]):
        return None
    if src.op in ("Switch", "RefSwitch", "_SwitchN", "_Recv", "_HostRecv"):
        return None
    if node.device and node.device != src.device:
        return None  # an explicit copy to another device
    return data


def remove_identity_nodes(graph: Graph, keep: Collection[str] = ()) -> int:
    """Bypass and remove every removable Identity-like node; returns how many.

    Producers first, so a chain of Identities collapses in one call."""
    removed = 0
    for node in topological_order_by_id(graph):
        data = _bypassable_input(node, keep)
        if data is None:
            continue
        src, src_output = data.src, data.src_output
        for out in list(node.out_edges):
            if out.dst.is_sink:
                continue
            if out.is_control:
                graph.add_control_edge(src, out.dst)
            else:
                graph.add_edge(src, src_output, out.dst, out.dst_input)
        graph.remove_node(node)
        removed += 1
    if removed:
        algorithm.fixup_source_and_sink_edges(graph)
    return removed


def remove_dead_nodes(graph: Graph, keep: Collection[str] = ()) -> int:
    """Remove every op node that cannot reach a protected node; returns how many."""
    roots = [n for n in graph.op_nodes() if is_protected(n, keep)]
    alive = algorithm.reverse_reachable(graph, roots)
    dead = [n for n in graph.op_nodes() if not alive[n.id]]
    if dead:
        algorithm.remove_nodes(graph, dead)
        algorithm.fixup_source_and_sink_edges(graph)
    return len(dead)
