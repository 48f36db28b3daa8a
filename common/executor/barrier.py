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
    """Counts down the parts of one step and keeps their errors in arrival order."""

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
        self.done = threading.Event()  # every part has reported
        self.wake = threading.Event()  # the first error, or every part has reported
        if count == 0:
            self._finish()

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
            self.wake.set()
        if last:
            self._finish()

    def _finish(self) -> None:
        if self._on_done is not None:
            self._on_done(self.errors)
        self.done.set()
        self.wake.set()

    @property
    def errors(self) -> list[OpError]:
        """The parts' errors so far, in the order they arrived."""
        with self._lock:
            return list(self._errors)

    def root_error(self, recv_nodes: Collection[str] = ()) -> OpError | None:
        """The step's error to report (common.errors.root_error), None if none failed."""
        errors = self.errors
        return root_error(errors, recv_nodes) if errors else None
