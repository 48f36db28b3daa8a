"""Rendezvous: where a _Send meets its _Recv inside one process (TensorFlow's LocalRendezvous).

A tensor travels under a string key "src_device;src_incarnation;dst_device;tensor_name;
frame_id:iter_id" (`create_key`). Whichever side comes first waits: a send that precedes
its recv is buffered, a recv that precedes its send is parked as a callback. Aborting
(`start_abort`) fails every parked and later recv with the abort error, so a failed step
never leaves a peer partition hanging. Thread-safe: one lock guards the tables and every
callback runs outside it.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from common.errors import (
    AbortedError,
    DeadlineExceededError,
    InvalidArgumentError,
    OpError,
)

_UINT64 = (1 << 64) - 1

# done(value, is_dead, error): value is None when error is set.
RecvCallback = Callable[[Any, bool, "OpError | None"], None]


class Rendezvous(Protocol):
    """What a step's _Send/_Recv kernels and its owner ask of a rendezvous (TensorFlow's
    RendezvousInterface): LocalRendezvous in one process, the worker's RemoteRendezvous
    (worker.remote_rendezvous) across tasks."""

    def send(self, key: str, value: Any, is_dead: bool = False) -> None: ...

    def recv_async(self, key: str, done: RecvCallback) -> None: ...

    def recv(self, key: str, timeout: float | None = None) -> tuple[Any, bool]: ...

    def start_abort(self, error: OpError) -> None: ...

    @property
    def status(self) -> OpError | None: ...

    def is_aborted(self) -> bool: ...


@dataclasses.dataclass(frozen=True)
class RendezvousKey:
    """A parsed rendezvous key (TensorFlow's Rendezvous::ParsedKey)."""

    src_device: str
    src_incarnation: int
    dst_device: str
    tensor_name: str
    frame_id: int = 0
    iter_id: int = 0

    @property
    def full_key(self) -> str:
        return create_key(
            self.src_device,
            self.src_incarnation,
            self.dst_device,
            self.tensor_name,
            (self.frame_id, self.iter_id),
        )

    def __str__(self) -> str:
        return self.full_key


def create_key(
    src_device: str,
    src_incarnation: int,
    dst_device: str,
    tensor_name: str,
    frame_iter: tuple[int, int] = (0, 0),
) -> str:
    """TensorFlow's Rendezvous::CreateKey: "src;%016x;dst;name;frame:iter"."""
    return (
        f"{src_device};{src_incarnation & _UINT64:016x};{dst_device};{tensor_name};"
        f"{frame_iter[0]}:{frame_iter[1]}"
    )


def _is_full_device_name(name: str) -> bool:
    from common import device_name

    try:
        return device_name.parse(name).is_full
    except OpError:
        return False


@functools.lru_cache(maxsize=1 << 14)
def parse_key(key: str) -> RendezvousKey:
    """Parse a key made by `create_key`; InvalidArgument if it is not one. Cached: a
    step's keys repeat every step, and the result is an immutable tuple."""
    parts = key.split(";")
    if len(parts) == 5:
        src, inc, dst, name, frame_iter = parts
        fi = frame_iter.split(":")
        if (
            name
            and len(inc) > 0
            and len(fi) == 2
            and _is_full_device_name(src)
            and _is_full_device_name(dst)
        ):
            try:
                return RendezvousKey(src, int(inc, 16), dst, name, int(fi[0]), int(fi[1]))
            except ValueError:
                pass
    raise InvalidArgumentError(f"Invalid rendezvous key: {key}")


class LocalRendezvous:
    """Per-step table of tensors in flight between _Send and _Recv kernels."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, tuple[Any, bool]] = {}  # sent, not yet received
        self._waiters: dict[str, deque[RecvCallback]] = {}  # received, not yet sent
        self._status: OpError | None = None

    def send(self, key: str, value: Any, is_dead: bool = False) -> None:
        """Deliver `value` under `key`. Dropped once aborted; AbortedError if the key
        is already buffered (sent twice before being received)."""
        with self._lock:
            if self._status is not None:
                return
            waiters = self._waiters.get(key)
            if waiters:
                done = waiters.popleft()
                if not waiters:
                    del self._waiters[key]
            else:
                if key in self._values:
                    raise AbortedError(f"Send of an already sent tensor: Duplicated send: {key}")
                self._values[key] = (value, is_dead)
                return
        done(value, is_dead, None)

    def recv_async(self, key: str, done: RecvCallback) -> None:
        """Call `done(value, is_dead, error)` once `key` is sent (maybe right now,
        on this thread) or the rendezvous is aborted."""
        item = None
        with self._lock:
            status = self._status
            if status is None:
                item = self._values.pop(key, None)
                if item is None:
                    self._waiters.setdefault(key, deque()).append(done)
                    return
        if item is None:
            done(None, False, status)
        else:
            done(item[0], item[1], None)

    def recv(self, key: str, timeout: float | None = None) -> tuple[Any, bool]:
        """Blocking receive: (value, is_dead). DeadlineExceeded after `timeout` seconds."""
        event = threading.Event()
        box: list[Any] = []

        def done(value: Any, is_dead: bool, error: OpError | None) -> None:
            box.append((value, is_dead, error))
            event.set()

        self.recv_async(key, done)
        if not event.wait(timeout):
            with self._lock:
                waiters = self._waiters.get(key)
                if waiters is not None and done in waiters:
                    waiters.remove(done)
                    if not waiters:
                        del self._waiters[key]
                    raise DeadlineExceededError(f"Timed out waiting for rendezvous key {key}")
            event.wait()  # the value arrived while we were giving up
        value, is_dead, error = box[0]
        if error is not None:
            raise error
        return value, is_dead

    def start_abort(self, error: OpError) -> None:
        """Fail every pending and later recv with `error` (the first abort wins)."""
        with self._lock:
            if self._status is not None:
                return
            self._status = error
            self._values.clear()
            waiters = [d for q in self._waiters.values() for d in q]
            self._waiters.clear()
        for done in waiters:
            done(None, False, error)

    @property
    def status(self) -> OpError | None:
        return self._status

    def is_aborted(self) -> bool:
        return self._status is not None
