"""How TensorFlow's CPU kernels cut work over the intra-op thread pool, for kernels whose
results depend on the cut: a random kernel that shards rows starts each shard's Philox
stream at a skip derived from the shard's first row, so its numbers depend on where the
shards begin.

TF's Shard (util/work_sharder.cc) runs all the work in one piece when the pool has one
thread, else ThreadPool::ParallelFor, which is Eigen's ThreadPoolDevice::parallelFor with
a cost of `cost_per_unit` compute cycles per unit: one piece when Eigen's cost model
wants one thread, else blocks of one size chosen by CalculateParallelForBlock. We only
compute the partition; the work itself runs as the caller likes.
"""

from __future__ import annotations

import os
from typing import Any

# Eigen's TensorCostModel constants (TensorCostModel.h).
_STARTUP_CYCLES = 100000
_PER_THREAD_CYCLES = 100000
_TASK_SIZE = 40000
_MAX_OVERSHARDING = 4


def default_intra_op_threads() -> int:
    """TF's intra-op pool size when ConfigProto.intra_op_parallelism_threads is 0: the
    CPUs this process may be scheduled on (port::MaxParallelism)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def pool_threads(scope: Any) -> int:
    """The intra-op pool size of the session that registered a kernel's graph
    (KernelConstruction.scope, a common.resource_mgr.Scope; None: the default)."""
    threads = getattr(scope, "intra_op_threads", 0)
    return threads if threads > 0 else default_intra_op_threads()


def _divup(a: int, b: int) -> int:
    return (a + b - 1) // b


def shards(total: int, cost_per_unit: int, threads: int) -> list[tuple[int, int]]:
    """The [start, limit) pieces TF's Shard(threads, pool, total, cost_per_unit, work)
    calls `work` with, in row order; `threads` is the intra-op pool size (0: default)."""
    if total <= 0:
        return []
    threads = threads if threads > 0 else default_intra_op_threads()
    cost = float(total) * float(cost_per_unit)  # TensorCostModel::totalCost
    wanted = (cost - _STARTUP_CYCLES) / _PER_THREAD_CYCLES + 0.9
    if threads <= 1 or total == 1 or min(threads, max(1, int(wanted))) == 1:
        return [(0, total)]
    block = _block_size(total, float(cost_per_unit), threads)
    return [(s, min(total, s + block)) for s in range(0, total, block)]


def _block_size(n: int, cost_per_unit: float, threads: int) -> int:
    """Eigen's ThreadPoolDevice::CalculateParallelForBlock (no block alignment)."""
    block_size_f = 1.0 / (cost_per_unit / _TASK_SIZE) if cost_per_unit else float("inf")
    by_threads = _divup(n, _MAX_OVERSHARDING * threads)
    block = min(n, max(by_threads, int(block_size_f) if block_size_f < n else n))
    max_block = min(n, 2 * block)
    count = _divup(n, block)
    best = count / (_divup(count, threads) * threads)
    prev = count
    while best < 1.0 and prev > 1:
        coarser = _divup(n, prev - 1)
        if coarser > max_block:
            break
        coarser_count = _divup(n, coarser)
        prev = coarser_count
        efficiency = coarser_count / (_divup(coarser_count, threads) * threads)
        if efficiency + 0.01 >= best:
            block, count = coarser, coarser_count
            best = max(best, efficiency)
    return block
