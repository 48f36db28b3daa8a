"""Executor stage, per-step state: what every kernel of one step on one device shares.

`StepState` is what kernels see as `ctx.step`: the step id, the device, the step's
rendezvous, resource manager and per-step container, the function runtime, (for
function bodies) the call frame of _Arg/_Retval values and, when the step is traced, the
device's step-statistics recorder. It also carries the step's
cancellation: `abort(error)` marks the step failed and aborts its rendezvous, so every
executor of the step (one per partition) stops and every blocked _Recv fails fast.
Thread-safe: abort may be called from any thread; the rest is set before the step starts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from common.errors import OpError
from common.rendezvous import Rendezvous
from common.resource_mgr import ResourceMgr


class CallFrame:
    """The arguments and return values of one function call (_Arg / _Retval)."""

    __slots__ = ("_lock", "args", "retvals")

    def __init__(self, args: list[Any] | None = None, num_retvals: int = 0) -> None:
        self.args: list[Any] = list(args or [])
        self.retvals: list[Any] = [None] * num_retvals
        self._lock = threading.Lock()

    def set_retval(self, index: int, value: Any) -> None:
        with self._lock:
            if index >= len(self.retvals):
                self.retvals.extend([None] * (index + 1 - len(self.retvals)))
            self.retvals[index] = value


class FunctionRunner(Protocol):
    """What kernels ask of their step's function runtime (common.function_runtime's
    FunctionRuntime, TensorFlow's FunctionLibraryRuntime): call a library function."""

    def run_async(
        self,
        name: str,
        attrs: Mapping[str, Any],
        args: Sequence[Any],
        caller_step: StepState,
        done: Callable[[Any, Any], None],
        *,
        device: str | None = None,
    ) -> None:
        """`done(outputs, None)` or `done(None, error)` exactly once."""

    def run(
        self,
        name: str,
        attrs: Mapping[str, Any],
        args: Sequence[Any],
        caller_step: StepState,
        *,
        timeout: float | None = None,
    ) -> list[Any]:
        """Call and wait."""


class StepState:
    """Per-(step, device) state shared by the kernels of every executor of the step."""

    def __init__(
        self,
        step_id: int = 0,
        device: str = "",
        incarnation: int = 0,
        rendezvous: Rendezvous | None = None,
        resource_mgr: ResourceMgr | None = None,
        step_container: str = "",
        function_runtime: FunctionRunner | None = None,
        call_frame: CallFrame | None = None,
        stats: Any = None,
    ) -> None:
        self.step_id = step_id
        self.device = device
        self.incarnation = incarnation
        self.rendezvous = rendezvous
        self.resource_mgr = resource_mgr if resource_mgr is not None else ResourceMgr()
        # Per-step resources (TensorArrays, stacks ...) live in this container of
        # resource_mgr; whoever owns the step calls cleanup() after its last executor.
        self.step_container = step_container or f"__per_step_{step_id}"
        # What kernels resolved per-step resource handles to, by the handle tensor's id
        # (and, for a TensorArray's gradient, its source): key -> (handle tensor, what it
        # resolved to). The tensor is kept so its id is not reused while the entry lives. A
        # loop's stack and TensorArray ops look the same handle up once per iteration
        # (common.ops.data_flow_ops.lookup_per_step, TensorArrayGradV3).
        self.resource_cache: dict[Any, tuple[Any, Any]] = {}
        self.function_runtime = function_runtime
        self.call_frame = call_frame
        # A traced step's recorder (common.executor.stats.DeviceStats), else None: the
        # executor then runs the step over its traced view (chosen once per step).
        self.stats = stats
        self.abort_error: OpError | None = None  # read by executors on their hot path
        self._lock = threading.Lock()
        # Called once with the abort error (async kernels parked on a queue, ...).
        self._abort_callbacks: list[Callable[[OpError], None]] = []

    def abort(self, error: OpError) -> None:
        """Fail the step (the first error wins), abort its rendezvous, run the callbacks."""
        with self._lock:
            if self.abort_error is not None:
                return
            self.abort_error = error
            callbacks, self._abort_callbacks = self._abort_callbacks, []
        if self.rendezvous is not None:
            self.rendezvous.start_abort(error)
        for fn in callbacks:
            fn(error)

    def add_abort_callback(self, fn: Callable[[OpError], None]) -> bool:
        """Call `fn(error)` when the step aborts. False (and not kept) if it already has."""
        with self._lock:
            if self.abort_error is not None:
                return False
            self._abort_callbacks.append(fn)
            return True

    def remove_abort_callback(self, fn: Callable[[OpError], None]) -> None:
        with self._lock:
            if fn in self._abort_callbacks:
                self._abort_callbacks.remove(fn)

    def is_aborted(self) -> bool:
        return self.abort_error is not None

    def cleanup(self) -> None:
        """Drop the per-step resource container."""
        self.resource_mgr.cleanup(self.step_container)
