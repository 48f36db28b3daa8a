"""Worker, partial runs (TF's DoPartialRunGraph): one step of a registered graph spread over
several RunGraph calls for one step_id, the executors running across the calls.

The first call for a step_id starts the step; every call delivers its sends and waits for
its recv keys; the call marked last waits for the executors and frees the step. A partial
run its master abandoned (died, or never sent the last call) expires once no call for it
has been in flight for `idle_timeout` seconds: it is aborted and freed as CleanupGraph
would, and a late call for it fails with Aborted saying so. GraphMgr owns one table per
worker session and hands it the step to start. Thread-safe: one lock guards the table.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from common.errors import AbortedError, DeadlineExceededError, InvalidArgumentError, OpError
from common.rendezvous import Rendezvous, parse_key
from rpc.deadlines import DEADLINES

# Expired partial runs remembered so that a late call learns why its step is gone; older
# ones get the rendezvous tombstone's "Step N was cleaned up".
_MAX_EXPIRED_PARTIALS = 1024


class PartialStep(Protocol):
    """The executors of one registered graph running one step (graph_mgr's _RunningStep)."""

    step_id: int

    @property
    def rendezvous(self) -> Rendezvous: ...

    def start(self) -> None: ...

    def wait(self, deadline: float) -> None: ...

    def abort(self, error: OpError) -> None: ...

    def release(self) -> None: ...


def send_inputs(rendezvous: Rendezvous, sends: Iterable[tuple[str, Any]]) -> None:
    """Deliver a RunGraph's sends into the step's rendezvous (TF's GraphMgr::SendInputs)."""
    for key, value in sends:
        parse_key(key)
        rendezvous.send(key, value, False)


def recv_output(rendezvous: Rendezvous, key: str, deadline: float) -> tuple[Any, bool]:
    """(value, is_dead) of a RunGraph's recv key, by `deadline` (GraphMgr::RecvOutputs)."""
    value, is_dead = rendezvous.recv(key, max(0.0, deadline - time.monotonic()))
    if is_dead:  # as TF's GraphMgr::RecvOutputs
        raise InvalidArgumentError(f"The tensor returned for {key} was not valid.")
    return value, is_dead


@dataclasses.dataclass(eq=False)
class _Partial:
    """A running partial run; its counters are guarded by PartialRuns._lock."""

    step: PartialStep
    calls: int = 0  # partial RunGraph calls in flight
    generation: int = 0  # of the idle deadline, bumped at every arming
    watch: int | None = None  # DEADLINES token of the idle deadline while armed


class PartialRuns:
    """The partial runs of one worker session, by step_id."""

    def __init__(self, idle_timeout: float, cleanup_step: Callable[[int], None]) -> None:
        self.idle_timeout = idle_timeout
        self._cleanup_step = cleanup_step  # RendezvousMgr.cleanup: drop and tombstone
        self._lock = threading.Lock()
        self._partials: dict[int, _Partial] = {}  # step_id -> running partial run
        # step_id -> why it is gone, for partial runs that expired (oldest first).
        self._expired: collections.OrderedDict[int, str] = collections.OrderedDict()

    def run(
        self,
        new_step: Callable[[], PartialStep],
        step_id: int,
        sends: Iterable[tuple[str, Any]],
        recv_keys: Sequence[str],
        deadline: float,
        is_last: bool,
        on_last: Callable[[Any], None] | None = None,
    ) -> dict[str, tuple[Any, bool]]:
        """One partial RunGraph call of step `step_id`; {recv key: (value, is_dead)}. The
        first call starts the step (`new_step()`), every call delivers its sends and waits
        for its recv keys, and the one with `is_last` waits for the executors to finish,
        hands the finished step to `on_last` and frees the step."""
        partial, first = self._begin_call(new_step, step_id)
        step = partial.step
        # Kernels run inline on the calls' threads (the first call's, or the one whose
        # send made them ready): the watcher ends the step at this call's deadline.
        watch = DEADLINES.watch(
            deadline,
            lambda: step.abort(
                DeadlineExceededError(f"Step {step_id} timed out on partial RunGraph")
            ),
        )
        try:
            if first:
                step.start()
            send_inputs(step.rendezvous, sends)
            out = {key: recv_output(step.rendezvous, key, deadline) for key in recv_keys}
            if is_last:
                step.wait(deadline)
                if on_last is not None:
                    on_last(step)  # the step is finished: its trace is complete
                self._end(partial)
            elif (aborted := step.rendezvous.status) is not None:  # a kernel failed, or
                raise aborted  # the deadline passed
        except OpError as e:
            step.rendezvous.start_abort(e)
            self._end(partial)
            raise step.rendezvous.status or e from None
        finally:
            DEADLINES.cancel(watch)
            self._end_call(partial)
        return out

    def _begin_call(
        self, new_step: Callable[[], PartialStep], step_id: int
    ) -> tuple[_Partial, bool]:
        """The partial run `step_id` with this call counted in flight (so it cannot
        expire meanwhile); True if this call created it and must start it."""
        with self._lock:
            partial = self._join(step_id)
        if partial is not None:
            return partial, False
        step = new_step()
        try:
            with self._lock:
                partial = self._join(step_id)  # a concurrent first call won
                if partial is None:
                    partial = self._partials[step_id] = _Partial(step, calls=1)
                    return partial, True
        except OpError:
            step.release()
            raise
        step.release()
        return partial, False

    def _join(self, step_id: int) -> _Partial | None:
        """Count a call into the running partial run `step_id` and disarm its idle
        deadline; None if there is none; Aborted if it expired. Lock held."""
        message = self._expired.get(step_id)
        if message is not None:
            raise AbortedError(message)
        partial = self._partials.get(step_id)
        if partial is not None:
            partial.calls += 1
            if partial.watch is not None:
                DEADLINES.cancel(partial.watch)
                partial.watch = None
        return partial

    def _end_call(self, partial: _Partial) -> None:
        """A call of `partial` returned: once none is in flight, the next must come within
        the idle timeout."""
        with self._lock:
            partial.calls -= 1
            if partial.calls > 0 or self._partials.get(partial.step.step_id) is not partial:
                return
            partial.generation += 1
            generation = partial.generation
            partial.watch = DEADLINES.watch(
                time.monotonic() + self.idle_timeout,
                lambda: self._expire(partial, generation),
            )

    def _expire(self, partial: _Partial, generation: int) -> None:
        """The idle deadline passed: abort the partial run and free it (watcher thread)."""
        step_id = partial.step.step_id
        with self._lock:
            if (
                self._partials.get(step_id) is not partial
                or partial.calls > 0
                or partial.generation != generation
            ):
                return  # a call came, or the run ended, as the deadline passed
            del self._partials[step_id]
            partial.watch = None
            message = (
                f"Partial run step {step_id} was abandoned: no partial RunGraph call for it "
                f"within {self.idle_timeout:g}s, so it was aborted and its state freed"
            )
            self._expired[step_id] = message
            while len(self._expired) > _MAX_EXPIRED_PARTIALS:
                self._expired.popitem(last=False)
        error = AbortedError(message)
        partial.step.rendezvous.start_abort(error)  # peers' RecvTensor see why, too
        partial.step.abort(error)
        partial.step.release()
        self._cleanup_step(step_id)  # as CleanupGraph: dropped and tombstoned

    def _end(self, partial: _Partial) -> None:
        with self._lock:
            if self._partials.get(partial.step.step_id) is not partial:
                return
            self._drop(partial.step.step_id)
        partial.step.release()

    def _drop(self, step_id: int) -> _Partial | None:
        """Remove a partial run and disarm its idle deadline. Lock held."""
        partial = self._partials.pop(step_id, None)
        if partial is not None and partial.watch is not None:
            DEADLINES.cancel(partial.watch)
            partial.watch = None
        return partial

    def abort(self, step_id: int) -> None:
        """CleanupGraph of a partial run the master abandoned: stop and free it. Every
        step's CleanupGraph asks every session of the worker, so a step that is no partial
        run here returns without the lock (a dict lookup is atomic; a partial run that
        starts concurrently with its own cleanup raced the lock just the same)."""
        if step_id not in self._partials:
            return
        with self._lock:
            partial = self._drop(step_id)
        if partial is not None:
            partial.step.abort(AbortedError(f"Step {step_id} was cleaned up"))
            partial.step.release()

    def step_ids(self) -> list[int]:
        with self._lock:
            return sorted(self._partials)
