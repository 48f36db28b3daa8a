"""Remote rendezvous, same-host fast path: tensors handed over in POSIX shared memory.

Between two of OUR workers on the same host (same boot, same /dev/shm mount), a
RecvTensorStream request carries a `ShmOffer` in `transport_options` naming the
receiver's host id. A producer whose host id matches writes the tensor bytes ONCE into a
fresh file in /dev/shm (one kernel copy, `os.write` from the numpy buffer) and answers a
single message: dtype + shape and a `ShmTensor` Any naming the file. The receiver maps it
read-only (MAP_SHARED | MAP_POPULATE) and unlinks it at once; the returned numpy array
aliases the mapping (zero copy) and keeps it alive as long as the array lives. TensorFlow
peers and remote hosts never offer, so they get gRPC as always.

Reuse (fresh tmpfs pages cost page faults on every step): the receiver keeps the
segments it mapped in a pool (renamed to its own pid) while their arrays live, and once
an array is gone (the mapping's reference count says so) offers that segment again in
the next request for the same rendezvous key; a producer whose tensor has exactly that
size writes into it in place, and the receiver hands out a new view of its existing
mapping. The producer maps a segment it was lent once (`write_into`: a bounded cache of
writable mappings by name, MAPPED_BYTES, FLOWRT_SHM_MAPPED_MB) and each later hand-off is
one memcpy in user space (1 MB: ~25 us here, against ~80 us for open + pwrite + close and
~140 us through a socket). A value that arrived another way (a same-host socket answer,
`note`) makes the pool create one empty segment of its size for its key, lent from the
next step on. The pool is bounded (POOL_BYTES, FLOWRT_SHM_POOL_MB); beyond it segments are
unlinked right after mapping.

Cleanup is guaranteed without an acknowledgement: the receiver renames (adopts) or
unlinks a segment right after mapping and unlinks its pool at exit; the producer
remembers every segment it wrote and a reaper thread unlinks those
still present after `PENDING_TTL` seconds (a receiver that died or failed), at process
exit all of them, and at the first segment a process writes or makes for its pool the
segments of dead processes (producers and pool owners alike). Set FLOWRT_SHM=0 to
disable the fast path. Thread-safe.
"""

from __future__ import annotations

import atexit
import collections
import functools
import mmap
import os
import re
import secrets
import socket
import sys
import threading
import time
from typing import Any

from common.errors import DataLossError, InternalError

SHM_DIR = "/dev/shm"
PREFIX = "flowrt-"
MIN_BYTES = 64 << 10  # smaller tensors stream: a file costs more than it saves
PENDING_TTL = 60.0
OFFER_TYPE = "type.googleapis.com/flowrt.ShmOffer"
TENSOR_TYPE = "type.googleapis.com/flowrt.ShmTensor"

_NAME = re.compile(rf"{re.escape(PREFIX)}(\d+)-[0-9a-f]{{32}}")
_lock = threading.Lock()
_pending: dict[str, float] = {}  # segment name -> time written (producer side)
_reaper: threading.Thread | None = None
_swept = False
_host_id: bytes | None = None
POOL_BYTES = int(os.environ.get("FLOWRT_SHM_POOL_MB", "2048")) << 20
# Producer side: writable mappings of lent segments kept (see write_into).
MAPPED_BYTES = int(os.environ.get("FLOWRT_SHM_MAPPED_MB", "512")) << 20
_HINTS = 4096


def enabled() -> bool:
    return os.environ.get("FLOWRT_SHM", "1") != "0" and _have_shm_dir()


@functools.cache
def _have_shm_dir() -> bool:
    return os.path.isdir(SHM_DIR)


def host_id() -> bytes:
    """Identifies this host's /dev/shm: hostname, boot id, the mount's device/inode
    (containers with a private /dev/shm differ even on one kernel) and the network
    namespace (tasks in two namespaces talk over a network, as two hosts do: they must not
    use each other's sockets and segments even where they share /dev/shm)."""
    global _host_id
    if _host_id is None:
        try:
            with open("/proc/sys/kernel/random/boot_id") as f:
                boot = f.read().strip()
        except OSError:
            boot = ""
        st = os.stat(SHM_DIR)
        try:
            netns = os.stat("/proc/self/ns/net").st_ino
        except OSError:
            netns = 0
        _host_id = f"{socket.gethostname()}|{boot}|{st.st_dev}|{st.st_ino}|{netns}".encode()
    return _host_id


def _path(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise DataLossError(f"Invalid shared-memory segment name {name!r}")
    return os.path.join(SHM_DIR, name)


# -- producer side ---------------------------------------------------------------------------
def write_segment(content: memoryview) -> str:
    """A new segment holding `content`; returns its name (the receiver unlinks it)."""
    _sweep_dead_producers()
    name = f"{PREFIX}{os.getpid()}-{secrets.token_hex(16)}"
    path = _path(name)
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    try:
        view = content.cast("B") if content.format != "B" else content
        done = 0
        while done < len(view):
            done += os.write(fd, view[done:])
    except BaseException:
        _unlink(path)
        raise
    finally:
        os.close(fd)
    with _lock:
        _pending[name] = time.monotonic()
        _start_reaper()
    return name


def _start_reaper() -> None:
    global _reaper
    if _reaper is None or not _reaper.is_alive():
        _reaper = threading.Thread(target=_reap_loop, name="flowrt-shm-reaper", daemon=True)
        _reaper.start()


def _reap_loop() -> None:
    while True:
        time.sleep(min(5.0, PENDING_TTL / 4))
        reap(time.monotonic())


def reap(now: float, ttl: float = PENDING_TTL) -> int:
    """Forget segments their receiver unlinked; unlink those older than `ttl`. Returns
    the number unlinked here."""
    with _lock:
        names = list(_pending.items())
    removed = 0
    for name, written in names:
        path = os.path.join(SHM_DIR, name)
        if not os.path.exists(path):
            with _lock:
                _pending.pop(name, None)
        elif now - written > ttl:
            removed += _unlink(path)
            with _lock:
                _pending.pop(name, None)
    return removed


def num_pending() -> int:
    with _lock:
        return len(_pending)


def _unlink(path: str) -> int:
    try:
        os.unlink(path)
        return 1
    except FileNotFoundError:
        return 0


@atexit.register
def _unlink_all() -> None:
    with _lock:
        names = list(_pending)
        _pending.clear()
    for name in names:
        _unlink(os.path.join(SHM_DIR, name))


def _sweep_dead_producers() -> None:
    """Once per process: remove segments left by producer processes that no longer run."""
    global _swept
    if _swept:
        return
    _swept = True
    try:
        entries = os.listdir(SHM_DIR)
    except OSError:
        return
    for entry in entries:
        m = _NAME.fullmatch(entry)
        if m and not pid_alive(int(m.group(1))):
            _unlink(os.path.join(SHM_DIR, entry))


def pid_alive(pid: int) -> bool:
    """Whether process `pid` runs (owners of leftover files in /dev/shm)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_into(name: str, content: memoryview) -> bool:
    """Overwrite the receiver's pooled segment `name` in place; False (write a new segment
    instead) if it is gone or its size differs."""
    view = content.cast("B") if content.format != "B" else content
    target = writable(name, len(view))
    if target is None:
        return False
    target[:] = view
    return True


def writable(name: str, nbytes: int) -> mmap.mmap | None:
    """This producer's writable mapping of the receiver's pooled segment `name`, if it
    holds exactly `nbytes` (see write_into); None if it is gone or its size differs."""
    return _MAPPED.get(name, nbytes)


class _WritableMappings:
    """Writable mappings of segments receivers lent this producer, by name, least
    recently used dropped beyond `max_bytes`. A receiver lends only segments alive in its
    pool, and names are never reused, so a mapping found here is the segment lent. A
    dropped mapping is unmapped once no writer holds it."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._maps: collections.OrderedDict[str, mmap.mmap] = collections.OrderedDict()
        self._bytes = 0

    def get(self, name: str, nbytes: int) -> mmap.mmap | None:
        """The mapping of segment `name` if it holds exactly `nbytes`, else None."""
        with self._lock:
            mapping = self._maps.get(name)
            if mapping is not None:
                self._maps.move_to_end(name)
        if mapping is None:
            mapping = self._map(name)
            if mapping is None:
                return None
        return mapping if len(mapping) == nbytes else None

    def _map(self, name: str) -> mmap.mmap | None:
        try:
            fd = os.open(_path(name), os.O_RDWR)
        except (FileNotFoundError, DataLossError):
            return None
        try:
            size = os.fstat(fd).st_size
            if size == 0:
                return None
            flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
            mapping = mmap.mmap(fd, size, flags=flags)
        except OSError:
            return None
        finally:
            os.close(fd)
        with self._lock:
            if name not in self._maps:
                self._maps[name] = mapping
                self._bytes += size
            while self._bytes > self.max_bytes and len(self._maps) > 1:
                _, dropped = self._maps.popitem(last=False)
                self._bytes -= len(dropped)
        return mapping

    def __len__(self) -> int:
        with self._lock:
            return len(self._maps)


_MAPPED = _WritableMappings(MAPPED_BYTES)


# -- receiver side ---------------------------------------------------------------------------
def _map(fd: int, name: str, nbytes: int) -> mmap.mmap:
    size = os.fstat(fd).st_size
    if size != nbytes:
        raise DataLossError(f"Shared-memory segment {name}: {size} bytes, expected {nbytes}")
    flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
    try:
        return mmap.mmap(fd, nbytes, flags=flags, prot=mmap.PROT_READ)
    except OSError as e:
        raise InternalError(f"Cannot map shared-memory segment {name}: {e}") from None


def map_segment(name: str, nbytes: int) -> mmap.mmap:
    """Map segment `name` (which must hold exactly `nbytes`) read-only and unlink it."""
    path = _path(name)
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise DataLossError(f"Shared-memory segment {name} is gone") from None
    try:
        return _map(fd, name, nbytes)
    finally:
        _unlink(path)
        os.close(fd)


class _Segment:
    __slots__ = ("lent", "mapping", "name", "nbytes")

    def __init__(self, name: str, nbytes: int, mapping: mmap.mmap) -> None:
        self.name = name
        self.nbytes = nbytes
        self.mapping = mapping
        self.lent = False

    def free(self) -> bool:
        # Only the pool references the mapping: no array over it is alive.
        return not self.lent and sys.getrefcount(self.mapping) <= 2


class ReceiverPool:
    """Segments this process received, kept for reuse (see the module docstring)."""

    def __init__(self, max_bytes: int = POOL_BYTES) -> None:
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._segments: dict[str, _Segment] = {}
        self._bytes = 0
        self._hints: collections.OrderedDict[str, int] = collections.OrderedDict()
        self._noted: set[str] = set()  # keys whose next lend may create a segment

    def lend(self, key: str) -> tuple[str, int] | None:
        """A free pooled segment of the size last received for `key`, marked lent; for a
        key `note`d (its value came another way) a new empty one, once per key."""
        with self._lock:
            nbytes = self._hints.get(key)
            if nbytes is None:
                return None
            for seg in self._segments.values():
                if seg.nbytes == nbytes and seg.free():
                    seg.lent = True
                    return seg.name, nbytes
            if key not in self._noted or self._bytes + nbytes > self.max_bytes:
                return None
            self._noted.discard(key)
        made = self._create(nbytes)
        if made is None:
            return None
        with self._lock:
            self._segments[made.name] = made
            self._bytes += nbytes
        return made.name, nbytes

    def note(self, key: str, nbytes: int) -> None:
        """`key`'s value (`nbytes`) arrived without shared memory: the next `lend(key)`
        may create a segment for it (see the module docstring)."""
        if nbytes < MIN_BYTES:
            return
        with self._lock:
            if self._hints.get(key) == nbytes:
                return  # a segment for it was made already (or is pooled)
            self._hint(key, nbytes)
            self._noted.add(key)
            while len(self._noted) > _HINTS:
                self._noted.pop()

    def _hint(self, key: str, nbytes: int) -> None:
        """Remember `key`'s size (lock held)."""
        self._hints[key] = nbytes
        self._hints.move_to_end(key)
        while len(self._hints) > _HINTS:
            self._hints.popitem(last=False)

    @staticmethod
    def _create(nbytes: int) -> _Segment | None:
        """A new empty segment of `nbytes` owned by this process, mapped, lent."""
        _sweep_dead_producers()  # as a producer's first write does (the module docstring)
        name = f"{PREFIX}{os.getpid()}-{secrets.token_hex(16)}"
        path = _path(name)
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        except OSError:
            return None
        try:
            # Pages reserved now: a full /dev/shm (a container's 64 MB) fails here, not as
            # SIGBUS when a producer later writes through its mapping.
            os.posix_fallocate(fd, 0, nbytes)
            mapping = _map(fd, name, nbytes)
        except (OSError, InternalError):
            _unlink(path)
            return None
        finally:
            os.close(fd)
        seg = _Segment(name, nbytes, mapping)
        seg.lent = True
        return seg

    def give_back(self, name: str) -> None:
        with self._lock:
            seg = self._segments.get(name)
            if seg is not None:
                seg.lent = False

    def receive(self, key: str, name: str, nbytes: int, lent: str | None) -> Any:
        """The mapping holding segment `name` (`nbytes`) for `key`: the lent one, now
        rewritten, or a new segment adopted into the pool (or unlinked if it is full)."""
        with self._lock:
            self._hint(key, nbytes)
            if lent is not None and name == lent:
                seg = self._segments.get(name)
                if seg is not None:
                    seg.lent = False
                    return seg.mapping
            room = self._bytes + nbytes <= self.max_bytes
        if lent is not None:
            self.give_back(lent)
        if not room:
            return map_segment(name, nbytes)
        own = f"{PREFIX}{os.getpid()}-{secrets.token_hex(16)}"
        try:
            os.rename(_path(name), _path(own))
        except FileNotFoundError:
            raise DataLossError(f"Shared-memory segment {name} is gone") from None
        fd = os.open(_path(own), os.O_RDONLY)
        try:
            mapping = _map(fd, own, nbytes)
        except BaseException:
            _unlink(_path(own))
            raise
        finally:
            os.close(fd)
        with self._lock:
            self._segments[own] = _Segment(own, nbytes, mapping)
            self._bytes += nbytes
        return mapping

    def trim(self) -> int:
        """Unlink and drop every free segment; returns how many."""
        with self._lock:
            free = [s for s in self._segments.values() if s.free()]
            for seg in free:
                del self._segments[seg.name]
                self._bytes -= seg.nbytes
        for seg in free:
            _unlink(os.path.join(SHM_DIR, seg.name))
        return len(free)

    def close(self) -> None:
        """Unlink every pooled segment (mappings stay valid while arrays use them)."""
        with self._lock:
            segs = list(self._segments.values())
            self._segments.clear()
            self._bytes = 0
        for seg in segs:
            _unlink(os.path.join(SHM_DIR, seg.name))

    def __len__(self) -> int:
        with self._lock:
            return len(self._segments)


POOL = ReceiverPool()
atexit.register(POOL.close)
