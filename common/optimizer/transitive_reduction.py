"""Graph optimization pass: drop control edges that another path already implies (the
TransitiveReduction of TensorFlow's grappler DependencyOptimizer).

A control edge src -> ^dst is redundant when dst also depends on src through a path of
two or more edges: dst cannot start before that path's last node is done, which needs
src done, and a dead src makes every node on the path dead, so dst is dead either way.
The rewrites that bypass NoOps and Identities leave many such edges (`gate_gradients`
tuples in a loop's gradient: a NoOp waiting for BiasAddGrad and for the ConcatV2 that
BiasAddGrad reads), and each kept edge can stop a later bypass from being worth it.

Paths that do not imply waiting and deadness are not followed, as TensorFlow: none
through a node that changes frames (Enter, Exit, NextIteration: another iteration or
frame) or out of a Merge (it runs on its first live input). Stricter than TensorFlow,
none through a ControlTrigger (it is live when its inputs are dead) and no Merge as a
target (a data path into a Merge does not make it wait). NextIteration -> Merge back
edges are not in the order.

Linear per source over the nodes between it and its last control target in a
topological order; the whole pass stops after `budget` edge visits (very large graphs
keep their remaining edges). Mutates the Graph it is given; not thread-safe (like Graph).
"""

from __future__ import annotations

from common.graph import algorithm
from common.graph.graph import Edge, Graph, Node
from common.optimizer.simplify import topological_order_by_id

# Nodes whose out-edges start no path that implies waiting or deadness.
_PATH_BREAKERS = (
    algorithm.ENTER_OPS
    | algorithm.EXIT_OPS
    | algorithm.NEXT_ITERATION_OPS
    | algorithm.MERGE_OPS
    | {"ControlTrigger"}
)
# Nodes whose in-edges are neither followed nor removed.
_NOT_TARGETS = algorithm.ENTER_OPS | algorithm.EXIT_OPS | algorithm.NEXT_ITERATION_OPS
_NOT_TARGETS |= algorithm.MERGE_OPS
DEFAULT_BUDGET = 5_000_000  # edge visits: a few seconds of Python at worst
_ZERO, _ONE, _TWO_OR_MORE = 0, 1, 2


def remove_redundant_control_edges(graph: Graph, budget: int = DEFAULT_BUDGET) -> int:
    """Remove every control edge implied by a longer path (module docstring); returns how
    many were removed."""
    order = topological_order_by_id(graph)
    position = {n.id: i for i, n in enumerate(order)}
    outputs: list[list[int]] = [[] for _ in order]
    controls: list[list[tuple[int, Edge]]] = [[] for _ in order]
    # Per source: the positions its paths can matter in (first fanout, last control target).
    first, last = [len(order)] * len(order), [-1] * len(order)
    redundant: list[Edge] = []
    for i, node in enumerate(order):
        if node.op in _NOT_TARGETS or node.op_def is None:
            continue
        for e, duplicate in _in_edges_marking_duplicates(node):
            if duplicate:
                redundant.append(e)
                continue
            src = e.src
            if not src.is_op or src.op in _PATH_BREAKERS or src.op_def is None:
                continue
            s = position[src.id]
            outputs[s].append(i)
            first[s] = min(first[s], i)
            if e.is_control:
                controls[s].append((i, e))
                last[s] = max(last[s], i)
    distance = bytearray(len(order))
    for s in range(len(order)):
        lo, hi = first[s], last[s]
        if lo >= hi or hi <= s:
            continue  # one fanout at most in range: no second path to any control target
        budget -= _longest_path_lower_bounds(s, lo, hi, outputs, distance)
        redundant += [e for i, e in controls[s] if distance[i] == _TWO_OR_MORE]
        if budget <= 0:
            break
    if redundant:
        graph.remove_edges(redundant)
        algorithm.fixup_source_and_sink_edges(graph)
    return len(redundant)


def _in_edges_marking_duplicates(node: Node) -> list[tuple[Edge, bool]]:
    """(edge, is a duplicate) for each in-edge: a control edge from a node that also has
    a data edge, or an earlier control edge, into `node` adds nothing (a data edge waits
    for its source and is dead whenever the source is)."""
    data = {e.src.id for e in node.in_edges if not e.is_control}
    seen: set[int] = set()
    out = []
    for e in node.in_edges:
        if not e.is_control:
            out.append((e, False))
            continue
        out.append((e, e.src.is_op and (e.src.id in data or e.src.id in seen)))
        seen.add(e.src.id)
    return out


def _longest_path_lower_bounds(
    source: int, lo: int, hi: int, outputs: list[list[int]], distance: bytearray
) -> int:
    """Mark in `distance` (positions lo..hi) the nodes reached from `source` once (ONE)
    or more than once (TWO_OR_MORE: a path of two or more edges, or two edges from the
    source itself); returns the edges visited."""
    distance[lo : hi + 1] = bytes(hi + 1 - lo)
    stack = [source]
    visits = 0
    while stack:
        node = stack.pop()
        for fanout in outputs[node]:
            visits += 1
            if lo <= fanout <= hi and distance[fanout] != _TWO_OR_MORE:
                distance[fanout] = _ONE if distance[fanout] == _ZERO else _TWO_OR_MORE
                stack.append(fanout)
    return visits
