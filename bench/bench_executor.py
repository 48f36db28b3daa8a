"""Benchmark, executor: per-step time of a chain of 1,000 scalar float32 AddV2 nodes fed
by an _Arg, and of the same chain with a do-nothing kernel (the executor's own per-node
cost). Prints JSON {"chain1000_step_ms": ..., "chain1000_trivial_kernel_step_ms": ...},
medians over the timed steps."""

from __future__ import annotations

import json
import statistics
import time

import numpy as np

import common.ops  # noqa: F401  (registers the ops and kernels)
from common import attr_value
from common.dtypes import DataType
from common.executor import CallFrame, Executor, StepState
from common.graph.graph import Graph, Node
from common.ops import registry

DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


def _add(g: Graph, name: str, op: str, attrs: dict, inputs: list[Node]) -> Node:
    op_def = registry.lookup_op(op)
    protos = {k: attr_value.to_proto(v, op_def.attr(k).type) for k, v in attrs.items()}
    node = g.add_node(name, op, protos, DEVICE)
    for slot, src in enumerate(inputs):
        g.add_edge(src, 0, node, slot)
    return node


def chain_graph(length: int, op: str = "AddV2") -> Graph:
    g = Graph()
    x = _add(g, "x", "_Arg", {"T": DataType.DT_FLOAT, "index": 0}, [])
    prev = x
    for k in range(length):
        prev = _add(g, f"add_{k}", op, {"T": DataType.DT_FLOAT}, [prev, x])
    _add(g, "y", "_Retval", {"T": DataType.DT_FLOAT, "index": 0}, [prev])
    return g


def _register_trivial_add() -> None:
    """A kernel doing almost nothing, to measure the executor's own per-node cost."""
    if registry.find_op("_BenchTrivialAdd") is None:
        registry.register_op(
            "_BenchTrivialAdd", inputs=["x: T", "y: T"], outputs=["z: T"], attrs=["T: type"]
        )
        registry.register_kernel("_BenchTrivialAdd")(lambda kc: lambda ctx, ins: [ins[0] + ins[1]])


def median_step_ms(steps: int, length: int, op: str) -> float:
    ex = Executor(chain_graph(length, op), DEVICE)
    times = []
    for step_id in range(steps + 10):
        frame = CallFrame([np.float32(1.0)], 1)
        step = StepState(step_id, DEVICE, call_frame=frame)
        t0 = time.perf_counter()
        ex.run(step)
        times.append(time.perf_counter() - t0)
        assert frame.retvals[0] == length + 1, frame.retvals
    return round(statistics.median(times[10:]) * 1e3, 3)


def main(steps: int = 200, length: int = 1000) -> dict:
    _register_trivial_add()
    return {
        "chain1000_step_ms": median_step_ms(steps, length, "AddV2"),
        # The same chain with a trivial kernel: the executor's own cost.
        "chain1000_trivial_kernel_step_ms": median_step_ms(steps, length, "_BenchTrivialAdd"),
    }


if __name__ == "__main__":
    print(json.dumps(main()))
