"""Splitting one kernel's work over the compute pool (common.device.thread_pool).

BLAS runs single-threaded in workers (common/blas_env.py): a large GEMM, convolution or
pooling kernel uses the machine's cores by cutting its work into parts that numpy runs
with the GIL released. The caller runs part 0 and then every part no pool thread has
started yet, so a kernel that is itself on the pool never waits for a queued part (no
deadlock when every pool thread is busy; the caller then runs all parts itself).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


# Read once: os.cpu_count() reads /sys on every call (~17 us).
_CORES = os.cpu_count() or 1


def cores() -> int:
    return _CORES


def run_parts(fn: Callable[[int], T], parts: int) -> list[T]:
    """[fn(0), ..., fn(parts - 1)], parts 1.. offered to the compute pool."""
    if parts <= 1:
        return [fn(0)] if parts == 1 else []
    from common.device import thread_pool

    pool = thread_pool()
    futures = [pool.submit(fn, k) for k in range(1, parts)]
    try:
        results = [fn(0)]
        for k, f in enumerate(futures, start=1):
            results.append(fn(k) if f.cancel() else f.result())
    except BaseException:
        for f in futures:
            f.cancel()
        raise
    return results


def bounds(total: int, parts: int) -> list[tuple[int, int]]:
    """`parts` contiguous [lo, hi) ranges covering range(total), sizes within one."""
    return [(total * k // parts, total * (k + 1) // parts) for k in range(parts)]
