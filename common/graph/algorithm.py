"""Graph algorithms every rewrite stage shares: orders, reachability, pruning, cycles.

TensorFlow's graph/algorithm.h plus FixupSourceAndSinkEdges and PruneForReverseReachability.
All functions are iterative (graphs have 100k+ nodes; no recursion) and O(nodes + edges).
The only cycles a valid graph has run through NextIteration -> Merge edges (while loops);
those are the "back edges" the orders and the cycle check may ignore.

Functions read or rewrite the Graph they are given; like Graph, not thread-safe.
"""

from __future__ import annotations

import contextlib
import gc
from collections import Counter
from collections.abc import Callable, Iterable, Iterator

from common.errors import InvalidArgumentError
from common.graph.graph import CONTROL_SLOT, Edge, Graph, Node

# TF's IsEnter / IsExit: a reference (a ref variable written in a loop) enters as RefEnter.
ENTER_OPS = frozenset({"Enter", "RefEnter"})
EXIT_OPS = frozenset({"Exit", "RefExit"})
NEXT_ITERATION_OPS = frozenset({"NextIteration", "RefNextIteration"})
MERGE_OPS = frozenset({"Merge", "RefMerge"})
# The v1 control-flow ops: the ones that build frames (while loops) and conditionals out of
# Switch/Merge. Rewrites that do not understand frames leave graphs holding them alone.
CONTROL_FLOW_OPS = frozenset(
    {
        "Switch",
        "RefSwitch",
        "Merge",
        "RefMerge",
        "Enter",
        "RefEnter",
        "Exit",
        "RefExit",
        "NextIteration",
        "RefNextIteration",
        "LoopCond",
        "ControlTrigger",
    }
)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC for one pass over a graph: a pass allocates ~10 objects per node
    and frees none, so full collections over the whole graph made 100k-node graphs
    superlinear."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def is_back_edge(e: Edge) -> bool:
    """A NextIteration -> Merge edge: the loop back edge of a while loop."""
    return e.src.op in NEXT_ITERATION_OPS and e.dst.op in MERGE_OPS


def _pending_counts(graph: Graph, ignore_back_edges: bool) -> list[int]:
    pending = [0] * graph.num_node_ids
    for n in graph.nodes():
        if ignore_back_edges and n.op in MERGE_OPS:
            pending[n.id] = sum(1 for e in n.in_edges if not is_back_edge(e))
        else:
            pending[n.id] = len(n.in_edges)
    return pending


def topological_order(graph: Graph, ignore_back_edges: bool = True) -> list[Node]:
    """All live nodes (SOURCE and SINK included), producers before consumers (Kahn's
    algorithm with a stack: deterministic, depth-first among ready nodes). NextIteration ->
    Merge edges are ignored when `ignore_back_edges`. Raises InvalidArgumentError naming a
    node of a cycle otherwise."""
    pending = _pending_counts(graph, ignore_back_edges)
    ready = [n for n in graph.nodes() if pending[n.id] == 0]
    order: list[Node] = []
    while ready:
        n = ready.pop()
        order.append(n)
        back = ignore_back_edges and n.op in NEXT_ITERATION_OPS
        for e in n.out_edges:
            dst = e.dst
            if back and dst.op in MERGE_OPS:
                continue
            pending[dst.id] -= 1
            if pending[dst.id] == 0:
                ready.append(dst)
    if len(order) != graph.num_nodes:
        cycle = find_cycle(graph, ignore_back_edges) or []
        raise InvalidArgumentError(
            f"{graph.num_nodes - len(order)} nodes in a cycle"
            + (": " + " -> ".join(n.name for n in cycle + cycle[:1]) if cycle else ""),
            cycle[0].name if cycle else None,
        )
    return order


def find_cycle(graph: Graph, ignore_back_edges: bool = True) -> list[Node] | None:
    """The nodes of one cycle (each feeds the next, the last feeds the first), or None.
    Iterative three-colour DFS along out-edges."""
    WHITE, GREY, BLACK = 0, 1, 2
    color = [WHITE] * graph.num_node_ids
    for root in graph.nodes():
        if color[root.id] != WHITE:
            continue
        color[root.id] = GREY
        path: list[Node] = [root]
        stack = [iter(root.out_edges)]
        while stack:
            e = next(stack[-1], None)
            if e is None:
                stack.pop()
                color[path.pop().id] = BLACK
                continue
            if ignore_back_edges and is_back_edge(e):
                continue
            dst = e.dst
            if color[dst.id] == GREY:
                return path[[n.id for n in path].index(dst.id) :]
            if color[dst.id] == WHITE:
                color[dst.id] = GREY
                path.append(dst)
                stack.append(iter(dst.out_edges))
    return None


def reverse_dfs_from(
    graph: Graph,
    start_nodes: Iterable[Node],
    visit: Callable[[Node], None] | None = None,
    leave: Callable[[Node], None] | None = None,
) -> None:
    """Walk from `start_nodes` against the edges (to producers), calling `visit(node)`
    when a node is first reached and `leave(node)` once all its producers are done."""
    seen = bytearray(graph.num_node_ids)
    for start in start_nodes:
        if seen[start.id]:
            continue
        seen[start.id] = 1
        if visit is not None:
            visit(start)
        stack: list[tuple[Node, Iterator[Edge]]] = [(start, iter(start.in_edges))]
        while stack:
            node, it = stack[-1]
            e = next(it, None)
            if e is None:
                stack.pop()
                if leave is not None:
                    leave(node)
                continue
            src = e.src
            if not seen[src.id]:
                seen[src.id] = 1
                if visit is not None:
                    visit(src)
                stack.append((src, iter(src.in_edges)))


def reverse_reachable(graph: Graph, start_nodes: Iterable[Node]) -> bytearray:
    """Marks (by node id) of the nodes from which some start node can be reached."""
    seen = bytearray(graph.num_node_ids)
    stack = []
    for s in start_nodes:
        if not seen[s.id]:
            seen[s.id] = 1
            stack.append(s)
    while stack:
        n = stack.pop()
        for e in n.in_edges:
            src = e.src
            if not seen[src.id]:
                seen[src.id] = 1
                stack.append(src)
    return seen


def prune_for_reverse_reachability(graph: Graph, start_nodes: Iterable[Node]) -> bool:
    """Remove every op node from which no start node is reachable (TF's
    PruneForReverseReachability), then re-add SOURCE/SINK edges. True if anything was
    removed."""
    keep = reverse_reachable(graph, start_nodes)
    dead = [n for n in graph.op_nodes() if not keep[n.id]]
    if not dead:
        return False
    remove_nodes(graph, dead)
    fixup_source_and_sink_edges(graph)
    return True


def remove_nodes(graph: Graph, nodes: Iterable[Node]) -> None:
    """Remove many op nodes at once in O(nodes + edges) (Graph.remove_node is O(degree of
    each neighbour), quadratic when pruning most of a graph with SOURCE/SINK hubs)."""
    doomed = {n.id for n in nodes}
    if not doomed:
        return
    assert all(i > 1 for i in doomed), "SOURCE and SINK cannot be removed"
    touched: dict[int, Node] = {}
    for nid in doomed:
        node = graph._nodes[nid]
        assert node is not None
        for e in node.in_edges:
            if e.src.id not in doomed:
                touched[e.src.id] = e.src
        for e in node.out_edges:
            if e.dst.id not in doomed:
                touched[e.dst.id] = e.dst
    for n in touched.values():
        n.in_edges = [e for e in n.in_edges if e.src.id not in doomed]
        n.out_edges = [e for e in n.out_edges if e.dst.id not in doomed]
    # Graph internals: the bulk form of Graph.remove_node / remove_edge.
    for nid in doomed:
        node = graph._nodes[nid]
        assert node is not None  # doomed holds live nodes only
        for e in node.in_edges + node.out_edges:
            if graph._edges[e.id] is not None:
                graph._edges[e.id] = None
                graph._num_edges -= 1
        graph._nodes[nid] = None
        del graph._by_name[node.name]
        graph._num_nodes -= 1


def fixup_source_and_sink_edges(graph: Graph) -> None:
    """SOURCE -> n for every op node without in-edges and n -> SINK for every op node
    without out-edges (TF's FixupSourceAndSinkEdges), so every node is reachable from
    SOURCE and reaches SINK."""
    source, sink = graph.source, graph.sink
    add = graph.add_edge
    for n in graph.op_nodes():
        if not n.in_edges:
            add(source, CONTROL_SLOT, n, CONTROL_SLOT)
        if not n.out_edges:
            add(n, CONTROL_SLOT, sink, CONTROL_SLOT)


def summarize_graph(graph: Graph, max_nodes: int = 50) -> str:
    """A short human-readable account: counts, ops used, and the first nodes with inputs."""
    ops = Counter(n.op for n in graph.op_nodes())
    lines = [
        f"Graph with {graph.num_op_nodes} op nodes and {graph.num_edges} edges; ops: "
        + ", ".join(f"{op} x{c}" for op, c in sorted(ops.items()))
    ]
    for i, n in enumerate(graph.op_nodes()):
        if i == max_nodes:
            lines.append(f"... {graph.num_op_nodes - max_nodes} more nodes")
            break
        ins = []
        for e in sorted(n.in_edges, key=lambda e: (e.is_control, e.dst_input)):
            if e.src.is_source:
                continue
            ins.append("^" + e.src.name if e.is_control else f"{e.src.name}:{e.src_output}")
        dev = f" @{n.device}" if n.device else ""
        lines.append(f"{n.id}: {n.name} = {n.op}({', '.join(ins)}){dev}")
    return "\n".join(lines)
