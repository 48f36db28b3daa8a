"""common.ops.parallel: a kernel's work split over helper threads."""

from __future__ import annotations

import threading
import time
import weakref

import numpy as np
import pytest

from common.ops import parallel
from common.ops.math_ops import parallel_matmul


def test_results_in_part_order() -> None:
    assert parallel.run_parts(lambda k: k * k, 5) == [0, 1, 4, 9, 16]
    assert parallel.run_parts(lambda k: k, 1) == [0]
    assert parallel.run_parts(lambda k: k, 0) == []


def _await_idle_helper() -> None:
    """Until a helper is idle or may be started (one still waking from an earlier split,
    at a high load, would leave part 1 to the caller)."""
    deadline = time.monotonic() + 10
    while not parallel._idle and parallel._helpers >= parallel.cores():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_parts_run_beside_the_caller() -> None:
    """With two parts that each wait for the other, both must run at once: one on a
    helper thread, not the caller's."""
    if parallel.cores() < 2:
        pytest.skip("one core: the caller runs every part")
    _await_idle_helper()
    barrier = threading.Barrier(2, timeout=30)
    names = parallel.run_parts(lambda k: (barrier.wait(), threading.current_thread().name)[1], 2)
    assert names[0] == threading.current_thread().name
    assert names[1] == "flowrt-compute-parts"


def test_error_of_a_helper_part_reaches_the_caller() -> None:
    def fn(k: int) -> int:
        if k == 2:
            raise ValueError("part 2")
        return k

    with pytest.raises(ValueError, match="part 2"):
        parallel.run_parts(fn, 4)
    assert parallel.run_parts(lambda k: k, 4) == [0, 1, 2, 3]  # helpers still serve


def test_no_part_runs_after_a_failed_split_returns() -> None:
    """A part still running when another fails would write into the kernel's output
    after the kernel has failed (and its buffers maybe reused): run_parts waits for it."""
    started = threading.Event()
    running = [0]
    lock = threading.Lock()

    def fn(k: int) -> None:
        if k == 0:
            started.wait(2.0)  # part 1 is on a helper by now (unless there is none)
            raise RuntimeError("part 0")
        with lock:
            running[0] += 1
        started.set()
        time.sleep(0.2)
        with lock:
            running[0] -= 1

    with pytest.raises(RuntimeError, match="part 0"):
        parallel.run_parts(fn, 2)
    with lock:
        assert running[0] == 0


def test_concurrent_splits_more_than_helpers() -> None:
    """Many kernels splitting at once, more parts than helpers, nested splits: every
    part runs once (the callers run what no helper took), no deadlock."""
    errors: list[BaseException] = []

    def kernel(seed: int) -> None:
        try:
            for _ in range(50):
                inner = parallel.run_parts(
                    lambda k: sum(parallel.run_parts(lambda j: seed + k + j, 3)), 4
                )
                assert inner == [3 * (seed + k) + 3 for k in range(4)]
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=kernel, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors[0]


def test_parallel_matmul_equals_matmul() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((300, 200)).astype(np.float32)
    b = rng.standard_normal((200, 500)).astype(np.float32)
    np.testing.assert_allclose(parallel_matmul(a, b), a @ b, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(parallel_matmul(b.T, a.T), b.T @ a.T, rtol=1e-5, atol=1e-4)


def test_helpers_keep_no_split_alive() -> None:
    """An idle helper holds nothing of the last split it ran (its closure would keep the
    kernel's inputs and output alive until the next split)."""

    class Buffer:
        pass

    def split() -> weakref.ref:
        buf = Buffer()
        _await_idle_helper()
        barrier = threading.Barrier(min(2, parallel.cores()), timeout=30)
        parallel.run_parts(lambda k: (barrier.wait(), buf)[1], min(2, parallel.cores()))
        return weakref.ref(buf)

    ref = split()
    deadline = time.monotonic() + 5
    while ref() is not None and time.monotonic() < deadline:
        time.sleep(0.01)  # the helper lets go just after waking the caller
    assert ref() is None
