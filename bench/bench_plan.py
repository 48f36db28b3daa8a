"""Benchmark of the planning stages: prune (subgraph rewrite) + place + partition.

Builds a layered DAG of Const/AddV2 nodes (each AddV2 reads two nodes of the previous
layer) whose nodes request devices round-robin over 2 tasks x 2 CPUs, then times
rewrite_graph_for_execution (fetching the last layer) + place + partition. Graph
construction is not timed. Prints JSON: {"plan_ms_1k_nodes": ..., ...}, the median of runs
of the planning thread's CPU time (time.process_time: the stages are single-threaded pure
Python, and CPU time stays meaningful on a shared, loaded machine where wall time does not).

    python -m bench.bench_plan [--runs 3] [--sizes 1000,10000,100000]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time

import common.ops  # noqa: F401  (registers Const, AddV2, _Send ...)
from common.dtypes import DataType
from common.graph import algorithm
from common.graph.graph import Graph
from common.partition import partition
from common.placer import place
from common.subgraph import DeviceInfo, attr_type, rewrite_graph_for_execution

DEVICES = [f"/job:worker/replica:0/task:{t}/device:CPU:{k}" for t in (0, 1) for k in (0, 1)]
REQUESTS = [
    "/job:worker/task:0",
    "/job:worker/task:0/device:CPU:1",
    "/job:worker/task:1/device:CPU:0",
    "/job:worker/task:1/cpu:1",
]
WIDTH = 100
F = DataType.DT_FLOAT


def build(num_nodes: int) -> tuple[Graph, list[str]]:
    """A layered DAG of `num_nodes` nodes; returns it and the last layer's tensor names."""
    g = Graph()
    t_attr = {"T": attr_type(F)}
    c_attr = {"dtype": attr_type(F)}
    layer = []
    for i in range(min(WIDTH, num_nodes)):
        layer.append(
            g.add_node(f"c{i}", "Const", c_attr, REQUESTS[i % 4], input_types=(), output_types=(F,))
        )
    n = len(layer)
    depth = 0
    while n < num_nodes:
        depth += 1
        nxt = []
        for i in range(min(WIDTH, num_nodes - n)):
            node = g.add_node(
                f"l{depth}_{i}",
                "AddV2",
                t_attr,
                REQUESTS[(i + depth) % 4],
                input_types=(F, F),
                output_types=(F,),
            )
            g.add_edge(layer[i], 0, node, 0)
            g.add_edge(layer[(i + 1) % len(layer)], 0, node, 1)
            nxt.append(node)
        n += len(nxt)
        layer = nxt
    algorithm.fixup_source_and_sink_edges(g)
    return g, [f"{node.name}:0" for node in layer]


def plan(g: Graph, fetches: list[str]) -> dict:
    client = DeviceInfo(DEVICES[0], 1)
    rewrite_graph_for_execution(g, [], fetches, [], device_info=client)
    place(g, DEVICES, default_device="/job:worker/task:0")
    counter = itertools.count()
    return partition(g, get_incarnation=lambda d: 7, new_name=lambda p: f"{p}/_{next(counter)}")


def time_plan(num_nodes: int, runs: int) -> float:
    times = []
    for _ in range(runs):
        g, fetches = build(num_nodes)
        start = time.process_time()
        plan(g, fetches)
        times.append((time.process_time() - start) * 1000.0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="1000,10000,100000")
    args = parser.parse_args()
    result = {}
    for size in (int(s) for s in args.sizes.split(",")):
        label = f"{size // 1000}k" if size % 1000 == 0 else str(size)
        result[f"plan_ms_{label}_nodes"] = round(time_plan(size, args.runs), 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
