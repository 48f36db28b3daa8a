"""Per-step rendezvous table of a worker (TF's RendezvousMgr), keyed by step_id.

A step's rendezvous is created by whichever comes first: the step's RunGraph or an
incoming RecvTensor for it (a peer may ask before this worker started the step, TF wire
facts 11.1 item 5: the request is parked in the rendezvous until the value is sent).
`cleanup(step_id)` (CleanupGraph) aborts and removes it and leaves a tombstone: a late
RecvTensor or RunGraph for a cleaned step (a peer or the master still on its way) gets
Aborted at once instead of recreating the step and waiting for a value nobody will send.
Tombstones are bounded in number and expire after `tombstone_seconds`. `abort_all` is for
shutdown. The table's size is the `flowrt_worker_live_steps` gauge (common.metrics).
Entries nobody cleans up (a master that died mid-step) expire: once idle for
`expiry_seconds` and not held by a running RunGraph (`hold`/`release`), the next table
operation aborts and drops them. A holder may pass `on_abort`: whenever the table aborts
the step (cleanup, abort_all, expiry) it is called with the error after the rendezvous
aborted, so a step whose kernels never wait on the rendezvous (a loop of local kernels)
stops too. Thread-safe: one lock guards the table; aborts run outside it.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
import time
from collections.abc import Callable

from common import metrics
from common.errors import AbortedError, DeadlineExceededError, OpError
from worker.remote_rendezvous import RemoteRendezvous

DEFAULT_EXPIRY_SECONDS = 3600.0
_SWEEPS_PER_EXPIRY = 16
DEFAULT_TOMBSTONE_SECONDS = 600.0
DEFAULT_MAX_TOMBSTONES = 100_000


AbortHook = Callable[[OpError], None]


@dataclasses.dataclass
class _Entry:
    rendezvous: RemoteRendezvous
    touched: float
    holders: int = 0
    on_abort: list[AbortHook] = dataclasses.field(default_factory=list)

    def abort(self, error: OpError) -> None:
        """Abort the rendezvous, then tell the holders (call without the table lock)."""
        self.rendezvous.start_abort(error)
        for hook in list(self.on_abort):
            hook(error)


class RendezvousMgr:
    """step_id -> the step's rendezvous (made by `factory(step_id)`)."""

    def __init__(
        self,
        factory: Callable[[int], RemoteRendezvous],
        expiry_seconds: float = DEFAULT_EXPIRY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        tombstone_seconds: float = DEFAULT_TOMBSTONE_SECONDS,
        max_tombstones: int = DEFAULT_MAX_TOMBSTONES,
    ) -> None:
        self._factory = factory
        self._expiry = expiry_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._table: dict[int, _Entry] = {}
        self._next_sweep = float("-inf")  # _sweep scans the table from then on
        # step_id -> when it was cleaned up, oldest first.
        self._cleaned: collections.OrderedDict[int, float] = collections.OrderedDict()
        self._tombstone_seconds = tombstone_seconds
        self._max_tombstones = max_tombstones

    def find_or_create(self, step_id: int) -> RemoteRendezvous:
        return self._get(step_id, hold=False)

    def hold(self, step_id: int, on_abort: AbortHook | None = None) -> RemoteRendezvous:
        """find_or_create, and keep the entry from expiring until `release(step_id)`;
        `on_abort(error)` is called if the table aborts the step before that."""
        return self._get(step_id, hold=True, on_abort=on_abort)

    def release(self, step_id: int, on_abort: AbortHook | None = None) -> None:
        """Undo one `hold` (passing the same `on_abort`, if it gave one)."""
        with self._lock:
            entry = self._table.get(step_id)
            if entry is not None:
                entry.holders -= 1
                entry.touched = self._clock()
                if on_abort is not None and on_abort in entry.on_abort:
                    entry.on_abort.remove(on_abort)

    def _get(self, step_id: int, hold: bool, on_abort: AbortHook | None = None) -> RemoteRendezvous:
        expired = self._sweep()
        with self._lock:
            entry = self._table.get(step_id)
            if entry is None:
                self._check_not_cleaned(step_id)
                entry = _Entry(self._factory(step_id), self._clock())
                self._table[step_id] = entry
                metrics.WORKER_LIVE_STEPS.inc()
            entry.touched = self._clock()
            entry.holders += int(hold)
            if on_abort is not None:
                entry.on_abort.append(on_abort)
        self._abort_expired(expired)
        return entry.rendezvous

    def find(self, step_id: int) -> RemoteRendezvous | None:
        with self._lock:
            entry = self._table.get(step_id)
            return entry.rendezvous if entry is not None else None

    def _check_not_cleaned(self, step_id: int) -> None:
        """Raise Aborted for a tombstoned step; drops expired tombstones. Lock held."""
        horizon = self._clock() - self._tombstone_seconds
        while self._cleaned and next(iter(self._cleaned.values())) < horizon:
            self._cleaned.popitem(last=False)
        if step_id in self._cleaned:
            raise AbortedError(f"Step {step_id} was cleaned up")

    def was_cleaned(self, step_id: int) -> bool:
        with self._lock:
            try:
                self._check_not_cleaned(step_id)
            except AbortedError:
                return True
            return False

    def cleanup(self, step_id: int) -> None:
        """Abort and drop the step's rendezvous (no error if there is none) and tombstone
        the step_id."""
        with self._lock:
            entry = self._table.pop(step_id, None)
            if entry is not None:
                metrics.WORKER_LIVE_STEPS.dec()
            self._cleaned.pop(step_id, None)
            self._cleaned[step_id] = self._clock()
            while len(self._cleaned) > self._max_tombstones:
                self._cleaned.popitem(last=False)
        if entry is not None:
            entry.abort(AbortedError(f"Cleanup {step_id}"))
        self._abort_expired(self._sweep())

    def abort_all(self, error: OpError) -> None:
        """Abort and drop every step (worker shutdown, CleanupAll)."""
        with self._lock:
            entries = list(self._table.values())
            self._table.clear()
            metrics.WORKER_LIVE_STEPS.dec(len(entries))
        for entry in entries:
            entry.abort(error)

    def step_ids(self) -> list[int]:
        with self._lock:
            return sorted(self._table)

    def __len__(self) -> int:
        with self._lock:
            return len(self._table)

    def _sweep(self) -> list[tuple[int, _Entry]]:
        """Drop the entries idle past the expiry, scanning the table at most every
        expiry/_SWEEPS_PER_EXPIRY: every RunGraph and RecvTensor looks a step up, and a
        scan per lookup cost each step time in the number of steps alive (32 clients:
        dozens). An idle step so goes at most that much later than its expiry."""
        now = self._clock()
        if now < self._next_sweep:  # a racy read: at worst one scan more
            return []
        with self._lock:
            self._next_sweep = now + self._expiry / _SWEEPS_PER_EXPIRY
            expired = [
                (sid, e)
                for sid, e in self._table.items()
                if e.holders <= 0 and now - e.touched > self._expiry
            ]
            for sid, _ in expired:
                del self._table[sid]
            if expired:
                metrics.WORKER_LIVE_STEPS.dec(len(expired))
        return expired

    def _abort_expired(self, expired: list[tuple[int, _Entry]]) -> None:
        for step_id, entry in expired:
            entry.abort(
                DeadlineExceededError(
                    f"Step {step_id} expired: no CleanupGraph within {self._expiry}s"
                )
            )
