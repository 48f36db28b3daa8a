"""Splitting one kernel's work over helper threads.

BLAS runs single-threaded in workers (common/blas_env.py): a large GEMM, convolution or
pooling kernel uses the machine's cores by cutting its work into parts that numpy runs
with the GIL released. The caller runs part 0 and then every part no helper has started
yet, so a kernel never waits for a part nobody runs (no deadlock when every helper is
busy; the caller then runs all parts itself).

Parts go to a few process-wide helper threads ("flowrt-compute-parts", at most one per
core, started on first use, living as long as the process as the compute pool's threads
do) through bare locks rather than the compute pool's futures: a part
handed over costs one lock release to wake its helper and one to wake the caller if it
waits, where a ThreadPoolExecutor future took five Condition round trips and a
Semaphore, all Python code run with the GIL held on the critical path of every MatMul.
Thread-safe: any number of kernels may split their work at once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


# Read once: os.cpu_count() reads /sys on every call (~17 us).
_CORES = os.cpu_count() or 1


def cores() -> int:
    return _CORES


class _Part(Generic[T]):
    """Part k of a split: whoever takes `claim` first (caller or helper) runs it;
    `done` is released when a helper has run it."""

    __slots__ = ("fn", "k", "claim", "done", "result", "error")

    def __init__(self, fn: Callable[[int], T], k: int) -> None:
        self.fn = fn
        self.k = k
        self.claim = threading.Lock()
        self.done = threading.Lock()
        self.done.acquire()
        self.result: T | None = None
        self.error: BaseException | None = None

    def run_on_helper(self) -> threading.Lock | None:
        """Run the part unless the caller took it; returns the lock whose release wakes
        the caller (None: nothing to wake)."""
        if not self.claim.acquire(blocking=False):
            return None
        try:
            self.result = self.fn(self.k)
        except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread
            self.error = exc
        return self.done

    def wait(self) -> T:
        """The part's result on the caller's thread: run here unless a helper took it."""
        if self.claim.acquire(blocking=False):
            return self.fn(self.k)
        self.done.acquire()
        if self.error is not None:
            raise self.error
        return self.result  # type: ignore[return-value]


class _Helper:
    """A daemon thread that runs the parts put on it; idle, it waits on its own gate."""

    def __init__(self) -> None:
        self.gate = threading.Lock()
        self.gate.acquire()
        self.part: _Part[Any] | None = None
        threading.Thread(target=self._loop, name="flowrt-compute-parts", daemon=True).start()

    def give(self, part: _Part[Any]) -> None:
        self.part = part
        self.gate.release()

    def _loop(self) -> None:
        while True:
            self.gate.acquire()
            part, self.part = self.part, None
            done = part.run_on_helper() if part is not None else None
            # Idle, keep nothing of the split alive (its closure holds the kernel's arrays),
            # and be idle before waking the caller, whose next split may want this helper.
            part = None
            _idle.append(self)  # list.append is atomic: no lock
            if done is not None:
                done.release()


# Idle helpers (list.pop / append are atomic under the GIL) and how many exist.
_idle: list[_Helper] = []
_helpers_lock = threading.Lock()
_helpers = 0


def _idle_helper() -> _Helper | None:
    """An idle helper, a new one while there are fewer than cores, else None."""
    global _helpers
    try:
        return _idle.pop()
    except IndexError:
        pass
    with _helpers_lock:
        if _helpers >= _CORES:
            return None
        _helpers += 1
    return _Helper()


def run_parts(fn: Callable[[int], T], parts: int) -> list[T]:
    """[fn(0), ..., fn(parts - 1)], parts 1.. offered to idle helper threads."""
    if parts <= 1:
        return [fn(0)] if parts == 1 else []
    offered = [_Part(fn, k) for k in range(1, parts)]
    for part in offered:
        helper = _idle_helper()
        if helper is None:
            break  # the caller runs the rest
        helper.give(part)
    try:
        results = [fn(0)]
    except BaseException:
        _settle(offered)
        raise
    for i, part in enumerate(offered):
        try:
            results.append(part.wait())
        except BaseException:
            _settle(offered[i + 1 :])
            raise
    return results


def _settle(offered: list[_Part[Any]]) -> None:
    """After a failed part: take the parts not started; wait for those running, so none
    writes into the caller's buffers after run_parts has returned."""
    for part in offered:
        if not part.claim.acquire(blocking=False):
            part.done.acquire()


def bounds(total: int, parts: int) -> list[tuple[int, int]]:
    """`parts` contiguous [lo, hi) ranges covering range(total), sizes within one."""
    return [(total * k // parts, total * (k + 1) // parts) for k in range(parts)]
