"""Worker, session ownership: which master incarnation owns each worker session, and the
leases our masters renew, so that a dead master's graphs do not stay registered forever.

Two rules free a master's sessions without it:
- Incarnation (TensorFlow's SessionMgr rule): CreateWorkerSession names the master task
  and its incarnation; a session created by a newer incarnation of the same master task
  means the old one restarted, so the sessions of older incarnations are dropped.
- Lease (ours): a flowrt master renews its sessions every lease/3 seconds with
  /dataflow.WorkerService/KeepAliveSessions (payload: `<d lease seconds>` then the session
  handles, NUL-separated; rpc.service_paths). A session renewed once and then not for its
  lease is dropped: its master died or lost this task. Sessions never renewed (a
  TensorFlow master) keep the old behaviour and live until DeleteWorkerSession.

Pure bookkeeping, no threads or I/O: the Worker asks `expired()` from its sweeper and
drops what it returns. Thread-safe: one lock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence


class SessionLeases:
    """Owner and lease of each worker session."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._owner: dict[str, tuple[str, int]] = {}  # handle -> (master task, incarnation)
        self._expiry: dict[str, float] = {}  # handle -> deadline (leased sessions only)

    def _now(self) -> float:
        return self._clock()

    def created(self, handle: str, master_task: str, incarnation: int) -> list[str]:
        """Record a new session; the sessions of older incarnations of its master, which
        the caller drops."""
        if not master_task or not incarnation:
            return []
        with self._lock:
            stale = [
                h
                for h, (task, inc) in self._owner.items()
                if task == master_task and inc != incarnation
            ]
            for h in stale:
                self._forget(h)
            self._owner[handle] = (master_task, incarnation)
        return stale

    def renew(self, lease_s: float, handles: Sequence[str]) -> list[str]:
        """Extend the lease of `handles`; the ones not known here (the caller may say so)."""
        deadline = self._now() + lease_s
        unknown = []
        with self._lock:
            for h in handles:
                if h in self._owner or h in self._expiry:
                    self._expiry[h] = deadline
                else:
                    unknown.append(h)
        return unknown

    def expired(self) -> list[str]:
        """Leased sessions past their deadline, forgotten here; the caller drops them."""
        now = self._now()
        with self._lock:
            gone = [h for h, deadline in self._expiry.items() if deadline < now]
            for h in gone:
                self._forget(h)
        return gone

    def deleted(self, handle: str) -> None:
        with self._lock:
            self._forget(handle)

    def leased(self) -> bool:
        with self._lock:
            return bool(self._expiry)

    def _forget(self, handle: str) -> None:
        self._owner.pop(handle, None)
        self._expiry.pop(handle, None)
