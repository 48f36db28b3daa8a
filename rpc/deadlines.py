"""Deadlines: one thread that calls what is due when its time passes (steps' aborts).

A RunGraph's executors may run on the RPC's own thread (cheap kernels run inline), so a
step of purely local kernels, such as an endless while loop, never returns to a point
where it could notice its deadline. The watcher calls each step's abort at its deadline
from its own thread; the executors see the abort on their hot path and stop. The master
uses it too: a RunGraph answer its RPC thread meant to read itself is handed to a pooled
thread when that thread stays busy (master.partition_runner).
Process-wide (one thread, started on first use, a daemon); thread-safe.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable

THREAD_NAME = "flowrt-deadlines"


class DeadlineWatcher:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int]] = []
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._ids = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, deadline: float, on_deadline: Callable[[], None]) -> int:
        """Call `on_deadline()` at time.monotonic() `deadline` unless cancelled first."""
        token = next(self._ids)
        with self._cond:
            self._callbacks[token] = on_deadline
            earliest = self._heap[0][0] if self._heap else None
            heapq.heappush(self._heap, (deadline, token))
            if len(self._heap) > 2 * len(self._callbacks) + 64:
                # Cancelled entries leave the heap when they reach its top; with long
                # deadlines that is late, so drop them all now and then (amortized O(1)).
                self._heap = [e for e in self._heap if e[1] in self._callbacks]
                heapq.heapify(self._heap)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=THREAD_NAME, daemon=True)
                self._thread.start()
            elif earliest is None or deadline < earliest:
                self._cond.notify()  # else the watcher wakes at `earliest` anyway
        return token

    def heap_size(self) -> int:
        with self._cond:
            return len(self._heap)

    def cancel(self, token: int) -> None:
        with self._cond:
            self._callbacks.pop(token, None)

    def pending(self) -> int:
        with self._cond:
            return len(self._callbacks)

    def _loop(self) -> None:
        while True:
            with self._cond:
                due = self._next_due()
            for callback in due:
                callback()  # outside the lock: an abort may take other locks

    def _next_due(self) -> list[Callable[[], None]]:
        """Wait until something is due; return what is (cancelled entries dropped)."""
        while True:
            while self._heap and self._heap[0][1] not in self._callbacks:
                heapq.heappop(self._heap)
            if not self._heap:
                self._cond.wait()
                continue
            wait = self._heap[0][0] - time.monotonic()
            if wait > 0:
                self._cond.wait(wait)
                continue
            due = []
            now = time.monotonic()
            while self._heap and self._heap[0][0] <= now:
                _, token = heapq.heappop(self._heap)
                callback = self._callbacks.pop(token, None)
                if callback is not None:
                    due.append(callback)
            return due


DEADLINES = DeadlineWatcher()
