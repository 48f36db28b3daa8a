"""Benchmark, kernels alone: the MLP workload's kernels (bench.workloads.mlp: Fill, then
per layer MatMul + Relu, then Sum) run back to back in one process, with the BLAS set up
as our workers set it up (common.blas_env.configure(single_thread=True), run first,
before numpy loads) and MatMul as our kernel runs it (math_ops.parallel_matmul: row
blocks over the compute pool). Their median time is the floor mlp_overhead_pct compares the
MLP step against. Prints JSON {"mlp_kernels_ms": ...}.

    python -m bench.bench_kernels [--steps 30]
"""

from __future__ import annotations

from common import blas_env

blas_env.configure(single_thread=True)  # before numpy loads, as worker/__main__ does

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from common.ops.math_ops import parallel_matmul  # noqa: E402


def mlp_kernels_ms(steps: int, layers: int = 4, width: int = 1024, batch: int = 256) -> float:
    weights = [np.full((width, width), 1.0 / width, np.float32) for _ in range(layers)]
    times = []
    for _ in range(steps + 3):
        t0 = time.perf_counter()
        h = np.full((batch, width), 1.0, np.float32)
        for w in weights:
            h = np.maximum(parallel_matmul(h, w), np.float32(0))
        total = h.sum()
        times.append(time.perf_counter() - t0)
        assert np.isclose(total, batch * width, rtol=1e-3), total
    return statistics.median(times[3:]) * 1e3


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.bench_kernels")
    p.add_argument("--steps", type=int, default=30)
    args = p.parse_args()
    print(json.dumps({"mlp_kernels_ms": round(mlp_kernels_ms(args.steps), 3)}))


if __name__ == "__main__":
    main()
