"""RPC plumbing shared by master and worker: a cached thread pool for blocking gRPC calls.

Why: grpcio's `.future()` and streaming calls are "managed" calls, and a channel with no
managed call in flight starts a fresh "channel spin" thread for the next one, so every
step paid a Thread.start per channel (1-3 ms under load). A BLOCKING call runs on the
calling thread with its own completion queue and needs no spin thread; running blocking
calls on the threads of this pool gives futures without thread creation per call.

`CallPool.submit(fn, *args)` never queues behind busy threads: an idle thread takes the
call, else a new daemon thread starts (so calls that wait on each other, e.g. the
RunGraphs of concurrent steps, cannot deadlock on a bound). Idle threads exit after
`idle_seconds`. Thread-safe.
"""

from __future__ import annotations

import concurrent.futures
import queue
import threading
from collections.abc import Callable
from typing import Any

_Item = tuple[concurrent.futures.Future, Callable[..., Any], tuple[Any, ...]]


class CallPool:
    """Cached daemon threads running submitted callables (see the module docstring)."""

    def __init__(self, name: str, idle_seconds: float = 60.0) -> None:
        self._name = name
        self._idle_seconds = idle_seconds
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._idle = 0  # threads waiting for work, minus items queued for them
        self._threads = 0

    def submit(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        item = (future, fn, args)
        with self._lock:
            if self._idle > 0:
                self._idle -= 1
                self._queue.put(item)
                return future
            self._threads += 1
            number = self._threads
        # The first item travels in a box the thread empties: Thread keeps its args for
        # its whole life, and a finished call must not stay reachable (its arguments and
        # callbacks can hold a step's whole state: kernels, tensors).
        threading.Thread(
            target=self._work, args=([item],), name=f"{self._name}-{number}", daemon=True
        ).start()
        return future

    def num_threads(self) -> int:
        with self._lock:
            return self._threads

    def _work(self, box: list[_Item]) -> None:
        item: _Item | None = box.pop()
        while item is not None:
            _run(item)
            item = None  # not held while this thread waits for the next one
            item = self._next()
        with self._lock:
            self._threads -= 1

    def _next(self) -> _Item | None:
        with self._lock:
            self._idle += 1
        try:
            return self._queue.get(timeout=self._idle_seconds)
        except queue.Empty:
            with self._lock:
                try:
                    return self._queue.get_nowait()  # queued for us as we timed out
                except queue.Empty:
                    self._idle -= 1
                    return None


def _run(item: _Item) -> None:
    future, fn, args = item
    if not future.set_running_or_notify_cancel():
        return
    try:
        result = fn(*args)
    except BaseException as exc:  # noqa: BLE001  (the future carries every failure)
        future.set_exception(exc)
    else:
        future.set_result(result)


_shared: CallPool | None = None
_shared_lock = threading.Lock()


def shared() -> CallPool:
    """The process-wide pool for RPCs (RunGraph fan-out, CleanupGraph, RecvTensor)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = CallPool("flowrt-rpc-call")
        return _shared
