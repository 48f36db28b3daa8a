"""Benchmark, kernels alone: the MLP workload's kernels (bench.workloads.mlp: Fill, then
per layer MatMul + Relu, then Sum) run back to back in one process, with the BLAS set up
as our workers set it up (common.blas_env.configure(single_thread=True), run first,
before numpy loads) and MatMul as our kernel runs it (math_ops.parallel_matmul: row
blocks over the compute pool). Their time is the floor mlp_overhead_pct compares the MLP
step against.

With `--target HOST:PORT` (our master, with the bench cluster's two workers) the same
process also drives the MLP step (bench.workloads.mlp through bench.cluster.MasterClient)
and alternates one step with one run of the kernels `--pairs` times, so both are timed by
one clock at the same moments of a drifting load. It prints mlp_step_ms and mlp_kernels_ms
(medians) and mlp_overhead_pct (the median of the per-pair ratios, less 1, in percent).
Without a target it prints {"mlp_kernels_ms": ...} only.

    python -m bench.bench_kernels [--steps 30] [--target HOST:PORT --pairs 40]
"""

from __future__ import annotations

from common import blas_env

blas_env.configure(single_thread=True)  # before numpy loads, as worker/__main__ does

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

from common.ops.math_ops import parallel_matmul  # noqa: E402

LAYERS, WIDTH, BATCH = 4, 1024, 256  # bench.workloads.mlp's defaults


def mlp_kernels(
    layers: int = LAYERS, width: int = WIDTH, batch: int = BATCH
) -> Callable[[], float]:
    """A function running the MLP's kernels once; returns seconds taken."""
    weights = [np.full((width, width), 1.0 / width, np.float32) for _ in range(layers)]

    def once() -> float:
        t0 = time.perf_counter()
        h = np.full((batch, width), 1.0, np.float32)
        for w in weights:
            h = np.maximum(parallel_matmul(h, w), np.float32(0))
        total = h.sum()
        elapsed = time.perf_counter() - t0
        assert np.isclose(total, batch * width, rtol=1e-3), total
        return elapsed

    return once


def mlp_kernels_ms(steps: int) -> float:
    once = mlp_kernels()
    times = [once() for _ in range(steps + 3)]
    return statistics.median(times[3:]) * 1e3


def paired(target: str, pairs: int, warmup: int = 5) -> dict[str, float]:
    """The MLP step on our cluster at `target` and its kernels here, alternating."""
    from bench import workloads
    from bench.cluster import MasterClient

    w = workloads.mlp(LAYERS, WIDTH, BATCH)
    once = mlp_kernels()
    client = MasterClient(target, w.graph_def, workloads.config_proto())
    try:
        client.run([], {}, w.init_targets)

        def step() -> float:
            t0 = time.perf_counter()
            value = client.run([w.fetch], w.feeds, [])[0]
            elapsed = time.perf_counter() - t0
            w.check(value)
            return elapsed

        for _ in range(warmup):
            step()
            once()
        steps, kernels = [], []
        for _ in range(pairs):
            steps.append(step())
            kernels.append(once())
    finally:
        client.close()
    ratios = [s / k for s, k in zip(steps, kernels)]
    return {
        "mlp_step_ms_paired": round(statistics.median(steps) * 1e3, 3),
        "mlp_kernels_ms": round(statistics.median(kernels) * 1e3, 3),
        "mlp_overhead_pct": round((statistics.median(ratios) - 1.0) * 100.0, 1),
    }


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.bench_kernels")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--target", default=None, help="our master (HOST:PORT): pair with the step")
    p.add_argument("--pairs", type=int, default=40)
    args = p.parse_args()
    if args.target:
        print(json.dumps(paired(args.target, args.pairs)))
    else:
        print(json.dumps({"mlp_kernels_ms": round(mlp_kernels_ms(args.steps), 3)}))


if __name__ == "__main__":
    main()
