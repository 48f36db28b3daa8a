"""Executor stage, one step over several parts: TensorFlow's ExecutorBarrier. N executors
(or N RunGraph calls) run as one step; each reports to `when_done(error)` exactly once.
The first error calls `on_error(error)` (the owner aborts the other parts: the step's
StepStates, its rendezvous, or CleanupGraph on the workers); when the last part has
reported, `on_done(errors)` runs and `done` is set. The owner then reports `root_error()`
(common.errors.root_error: the cause, not its echoes), or its own rule on top of it.

Used by the in-process session (common.session.ExecutorGroup), function calls
(common.function_runtime), the worker's steps (worker.graph_mgr) and the master's RunGraph
fan-out (master.partition_runner). Thread-safe: parts report from any thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection

from common.errors import OpError, root_error


class ExecutorBarrier:
    """Counts down the parts of one step and keeps their errors in arrival order.

    `done` and `wake` are threading.Events made only when asked for: most owners learn the
    end from `on_done` and never wait, and an Event costs microseconds to make (a served
    step makes a barrier every step). One made after the fact is born set."""

    def __init__(
        self,
        count: int,
        on_error: Callable[[OpError], None] | None = None,
        on_done: Callable[[list[OpError]], None] | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._pending = count
        self._errors: list[OpError] = []
        self._on_error = on_error
        self._on_done = on_done
        self._finished = False  # every part has reported (under _lock)
        self._woken = False  # the first error, or finished (under _lock)
        self._done: threading.Event | None = None
        self._wake: threading.Event | None = None
        if count == 0:
            self._finish()

    @property
    def done(self) -> threading.Event:
        """Set when every part has reported."""
        with self._lock:
            if self._done is None:
                self._done = threading.Event()
                if self._finished:
                    self._done.set()
            return self._done

    @property
    def wake(self) -> threading.Event:
        """Set at the first error, or when every part has reported."""
        with self._lock:
            if self._wake is None:
                self._wake = threading.Event()
                if self._woken:
                    self._wake.set()
            return self._wake

    def when_done(self, error: OpError | None) -> None:
        """One part finished, with `error` or None."""
        with self._lock:
            first = error is not None and not self._errors
            if error is not None:
                self._errors.append(error)
            self._pending -= 1
            last = self._pending == 0
        if first:
            assert error is not None
            if self._on_error is not None:
                self._on_error(error)
            self._set_woken()
        if last:
            self._finish()

    def _set_woken(self) -> None:
        with self._lock:
            self._woken = True
            wake = self._wake
        if wake is not None:
            wake.set()

    def _finish(self) -> None:
        if self._on_done is not None:
            self._on_done(self.errors)
        with self._lock:
            self._finished = True
            done = self._done
        if done is not None:
            done.set()
        self._set_woken()

    @property
    def errors(self) -> list[OpError]:
        """The parts' errors so far, in the order they arrived."""
        with self._lock:
            return list(self._errors)

    def root_error(self, recv_nodes: Collection[str] = ()) -> OpError | None:
        """The step's error to report (common.errors.root_error), None if none failed."""
        errors = self.errors
        return root_error(errors, recv_nodes) if errors else None
