"""Transport, admission: how many calls of one kind a server runs at once.

A gRPC Python server runs each call on one thread of a fixed pool. Calls that may block
for long (RunStep waiting on a dequeue, a parked RecvTensor) would otherwise take every
thread, and control calls (ListDevices, CloseSession, GetStatus, health) would queue
behind them until they time out. Each blocking kind gets `Slots` smaller than the pool;
a call that finds them full is refused at once with UNAVAILABLE naming the kind (clients
retry UNAVAILABLE), so the pool always has threads left for everything else.

Thread-safe.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from common.errors import UnavailableError


class Slots:
    """At most `capacity` calls of one kind at once."""

    def __init__(self, what: str, capacity: int, per_key: int | None = None) -> None:
        assert capacity > 0
        self.what = what
        self.capacity = capacity
        # At most this many for one key (a session): one client cannot fill every slot.
        self.per_key = per_key or capacity
        self._busy = 0
        self._by_key: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def busy(self) -> int:
        return self._busy

    @contextlib.contextmanager
    def admit(self, key: str = "") -> Iterator[None]:
        with self._lock:
            if self._busy >= self.capacity:
                raise UnavailableError(
                    f"{self.what}: {self.capacity} already running; try again later"
                )
            mine = self._by_key.get(key, 0)
            if mine >= self.per_key:
                raise UnavailableError(
                    f"{self.what}: {mine} already running for {key}; try again later"
                )
            self._busy += 1
            self._by_key[key] = mine + 1
        try:
            yield
        finally:
            with self._lock:
                self._busy -= 1
                left = self._by_key[key] - 1
                if left:
                    self._by_key[key] = left
                else:
                    del self._by_key[key]
