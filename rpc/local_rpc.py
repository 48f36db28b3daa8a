"""RPC plumbing, same-host fast path: our own processes on one host make their hot calls
(the master's RunGraph and CleanupGraphBatch, the workers' RecvTensorOne to each other,
and our client's MasterService calls) over a Unix domain socket instead of gRPC.
Everything else, other hosts and TensorFlow peers (a TensorFlow client, a TensorFlow
worker) use gRPC. A server shared in-process (`share_in_process`: a master hosting a worker
task) is called directly, without its socket; a method it also serves on messages
(`message_handlers`: RunGraph) is then called without bytes either way.

Why: measured here, a unary gRPC round trip between two Python processes takes
0.46-0.54 ms and about 0.5 ms of CPU on the two ends together, with three or four thread
hand-offs per call (poller thread, handler pool, completion queue); the same request and
answer over a Unix socket take 0.06 ms, and the thread that waits is the thread that
reads. A step crosses two or three such calls in a row, and with every core busy each
hand-off can wait a scheduler slice.

Discovery: a worker (a master) listens on a socket in a private directory (mode 0700)
under /dev/shm, and answers our unary /dataflow.WorkerService/LocalEndpoint
(/dataflow.MasterService/LocalEndpoint) with its host id (rpc.shm.host_id: hostname,
boot id, and the identity of the /dev/shm mount, so two containers with private /dev/shm
never match) and the socket path. `LocalPeers` asks each
task once, and uses the socket only when the host id is its own and the socket connects;
a task that answers UNIMPLEMENTED (TensorFlow), another host, or FLOWRT_LOCAL_RPC=0 means
gRPC. A socket that stops connecting (the worker restarted) is asked for again.

Wire: one call at a time per connection (clients keep idle connections per peer):

    request:   <Q body length> <B method> <d timeout_s, 0 = none> payload
    response:  <Q body length> <i code: 0 = OK, else TensorFlow's error code> payload
               (the serialized response, or the UTF-8 error message)

A master serves every MasterService method on its socket (`unary_handlers`, method
MASTER_BASE + the method's place in the .proto): the same servicer as gRPC, the same
serialized messages; `UnaryStub` calls them. The client sends CreateSession over gRPC and
the rest over the socket once it has found it.

Server: one thread per connection runs each call; a handler answers through `reply`,
at once or later from another thread (RecvTensor: the thread that sends the value).
Every wait has an exit: a client call ends at its deadline (DeadlineExceeded naming the
peer), on `cancel()` (the connection is shut down), or when the peer goes away
(Unavailable naming the peer). Thread-safe.
"""

from __future__ import annotations

import contextvars
import errno
import functools
import hmac
import logging
import os
import re
import secrets
import select
import shutil
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

import grpc
from google.protobuf.message import DecodeError, Message

from common.errors import (
    CancelledError,
    DataLossError,
    DeadlineExceededError,
    InvalidArgumentError,
    OpError,
    UnavailableError,
    UnimplementedError,
    as_op_error,
    from_code,
    truncate,
)
from rpc import shm, wire
from rpc.service_paths import MASTER_METHODS, MethodTable

log = logging.getLogger(__name__)

# Methods (the byte after the length).
RUN_GRAPH = 1
RECV_TENSOR = 2
CLEANUP_BATCH = 3  # our CleanupGraphBatch: little-endian int64 step ids, empty answer
METHOD_NAMES = {
    RUN_GRAPH: "RunGraph",
    RECV_TENSOR: "RecvTensor",
    CLEANUP_BATCH: "CleanupGraphBatch",
}
# MasterService methods: MASTER_BASE + the method's place in MASTER_METHODS (.proto order).
MASTER_BASE = 16
MASTER_METHOD_IDS = {name: MASTER_BASE + k for k, name in enumerate(MASTER_METHODS)}
METHOD_NAMES.update({k: name for name, k in MASTER_METHOD_IDS.items()})
# Socket send buffer: a MB-sized answer leaves in one write instead of waiting for the
# reader to drain the default ~200 KB several times (the kernel caps it at wmem_max).
SEND_BUFFER_BYTES = 4 << 20

ENDPOINT_SERVICE = "dataflow.WorkerService"
ENDPOINT_METHOD = "LocalEndpoint"
ENDPOINT_PATH = f"/{ENDPOINT_SERVICE}/{ENDPOINT_METHOD}"
MASTER_ENDPOINT_SERVICE = "dataflow.MasterService"
MASTER_ENDPOINT_PATH = f"/{MASTER_ENDPOINT_SERVICE}/{ENDPOINT_METHOD}"

_REQUEST = struct.Struct("<QBd")
_SECRET_BYTES = 16
_RESPONSE = struct.Struct("<Qi")
MAX_IDLE_PER_PEER = 16
_DIR_PREFIX = "flowrt-rpc-"
_DIR = re.compile(rf"{re.escape(_DIR_PREFIX)}(\d+)-[0-9a-f]{{16}}")

# reply(code, *parts): the answer to one call (code 0: the parts, concatenated, are the
# response; else the UTF-8 error message). Parts are bytes-like (a numpy buffer is sent
# without a copy in Python).
Reply = Callable[..., None]
_JOIN_BELOW = 64 << 10  # smaller answers go out in one send
_COUNT = struct.Struct("<I")
# A request: bytes-like, or a list of bytes-like parts sent one after another (rpc.wire).
Payload = Any
_TIMEVAL = struct.Struct("@ll")  # struct timeval (SO_RCVTIMEO)
_FIRST_READ = 64 << 10  # a frame up to this long arrives in one recv
# handler(payload, timeout_s or None, reply): runs on the connection's thread.
Handler = Callable[[memoryview, "float | None", Reply], None]
# handler(request, timeout_s or None) -> response: the same call as a Handler of the same
# method, on messages: what a caller of this process runs instead (no bytes either way).
MessageHandler = Callable[[Message, "float | None"], Message]


def enabled() -> bool:
    return os.environ.get("FLOWRT_LOCAL_RPC", "1") != "0" and _have_shm_dir()


@functools.cache
def _have_shm_dir() -> bool:
    return os.path.isdir(shm.SHM_DIR)


def _recv_exactly(sock: socket.socket, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            raise EOFError("connection closed")
        got += k
    return buf


# -- callers that go away -----------------------------------------------------------------
class _Hangups:
    """Connections whose caller going away must be heard of while their handler runs (a
    master's RunStep: the step is cancelled on every worker, as when a gRPC call ends):
    one epoll thread per process, started at the first use, waits for their hang-ups."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._epoll: Any = None
        self._callbacks: dict[int, list[Callable[[], None]]] = {}

    def add(self, conn: socket.socket, callback: Callable[[], None]) -> bool:
        with self._lock:
            if self._epoll is None:
                if not hasattr(select, "epoll"):
                    return False
                self._epoll = select.epoll()
                threading.Thread(target=self._run, name="flowrt-hangups", daemon=True).start()
            fd = conn.fileno()
            callbacks = self._callbacks.get(fd)
            if callbacks is not None:
                callbacks.append(callback)
                return True
            self._callbacks[fd] = [callback]
            try:
                self._epoll.register(fd, select.EPOLLRDHUP | select.EPOLLHUP)
            except OSError:
                del self._callbacks[fd]
                return False
        return True

    def discard(self, conn: socket.socket) -> None:
        """The call ended: forget its callbacks (before the connection is closed, so its
        descriptor cannot be reused while registered)."""
        with self._lock:
            self._forget(conn.fileno())

    def _forget(self, fd: int) -> list[Callable[[], None]]:
        callbacks = self._callbacks.pop(fd, None)
        if callbacks is None:
            return []
        try:
            self._epoll.unregister(fd)
        except OSError:
            pass
        return callbacks

    def _run(self) -> None:
        while True:
            for fd, _ in self._epoll.poll():
                with self._lock:
                    callbacks = self._forget(fd)
                for callback in callbacks:
                    try:
                        callback()
                    except Exception:  # noqa: BLE001  (one callback must not stop the rest)
                        log.exception("a local call's hang-up callback failed")


_hangups = _Hangups()
# The connection whose call runs on this thread (LocalServer sets it around a handler).
_CALLER: contextvars.ContextVar[socket.socket | None] = contextvars.ContextVar(
    "flowrt_local_caller", default=None
)


def on_caller_gone(callback: Callable[[], None]) -> bool:
    """From a socket handler, on its connection's thread: run `callback` (once, on another
    thread) if the caller's connection closes before the handler returns. False when not
    in such a handler (an in-process call) or the platform cannot watch it."""
    conn = _CALLER.get()
    return conn is not None and _hangups.add(conn, callback)


def _recv_frame(
    sock: socket.socket, head: struct.Struct, timed: bool = False, deadline: float | None = None
) -> tuple[tuple[Any, ...], bytearray]:
    """One frame (`head`, whose first field counts the bytes after it, then the body):
    the head's fields and the body. A frame up to _FIRST_READ bytes long takes ONE recv:
    every system call releases the GIL, and under load each release can hand it to
    another thread. Nothing follows a frame on its connection until it is answered, so
    the read never takes bytes of the next one. The socket stays blocking: the deadline
    is the kernel's receive timeout (SO_RCVTIMEO, set before each read when `timed`, None
    meaning none), which costs no poll() before each read and no switch of the socket's
    mode; when it passes, TimeoutError or BlockingIOError."""
    if timed:
        _set_recv_timeout(sock, deadline)
    first = sock.recv(_FIRST_READ)
    while len(first) < head.size:
        if not first:
            raise EOFError("connection closed")
        if timed:
            _set_recv_timeout(sock, deadline)
        more = sock.recv(_FIRST_READ)
        if not more:
            raise EOFError("connection closed")
        first += more
    fields = head.unpack_from(first)
    size = 8 + fields[0] - head.size  # the length field counts what follows it
    if size < 0 or len(first) - head.size > size:
        raise EOFError("malformed frame on the local connection")
    if len(first) - head.size == size:
        return fields, bytearray(memoryview(first)[head.size :])
    body = bytearray(size)
    got = len(first) - head.size
    body[:got] = memoryview(first)[head.size :]
    del first
    view = memoryview(body)
    while got < size:
        if timed:
            _set_recv_timeout(sock, deadline)
        k = sock.recv_into(view[got:])
        if k == 0:
            raise EOFError("connection closed")
        got += k
    return fields, body


def _set_recv_timeout(sock: socket.socket, deadline: float | None) -> None:
    """The kernel's receive timeout: what is left until `deadline` (None: no limit)."""
    if deadline is None:
        seconds = 0.0  # SO_RCVTIMEO 0: wait without limit
    else:
        seconds = deadline - time.monotonic()
        if seconds <= 0:
            raise TimeoutError
        seconds = max(seconds, 1e-3)  # a timeval rounding to 0 would mean no limit
    whole = int(seconds)
    sock.setsockopt(
        socket.SOL_SOCKET,
        socket.SO_RCVTIMEO,
        _TIMEVAL.pack(whole, int((seconds - whole) * 1e6)),
    )


# -- server -------------------------------------------------------------------------------
class LocalServer:
    """Listens on a Unix socket and runs calls with `handlers` {method: Handler}; a
    caller in this process (share_in_process) runs `message_handlers` {method:
    MessageHandler} directly, when the method has one."""

    def __init__(
        self,
        handlers: dict[int, Handler],
        name: str,
        message_handlers: dict[int, MessageHandler] | None = None,
    ) -> None:
        self._handlers = handlers
        self.message_handlers = dict(message_handlers or {})
        self._name = name
        # A connection must first send this (handed out by LocalEndpoint, a gRPC call that
        # TLS and the token protect): the socket is as closed as the gRPC port.
        self._secret = secrets.token_bytes(_SECRET_BYTES)
        self._lock = threading.Lock()
        self._idle_changed = threading.Condition(self._lock)
        self._conns: set[socket.socket] = set()
        self._busy: set[socket.socket] = set()  # connections running a handler
        self._threads: set[threading.Thread] = set()
        self._closed = False
        _sweep_dead_dirs()
        self._dir = os.path.join(shm.SHM_DIR, f"{_DIR_PREFIX}{os.getpid()}-{secrets.token_hex(8)}")
        os.mkdir(self._dir, 0o700)
        self.path = os.path.join(self._dir, "sock")
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(self.path)
        self._listener.listen(64)
        self._thread = threading.Thread(
            target=self._accept, name=f"flowrt-local-rpc-{name}", daemon=True
        )
        self._thread.start()
        if _share_in_process:
            with _in_process_lock:
                _in_process[self.path] = self

    def endpoint(self) -> bytes:
        """What LocalEndpoint answers: host id NUL socket path NUL connection secret."""
        return shm.host_id() + b"\0" + self.path.encode() + b"\0" + self._secret

    def client(self, peer: str) -> LocalClient:
        """A client of this server from this process (what `discover` builds remotely)."""
        return LocalClient(self.path, peer, self._secret)

    def close(self, timeout: float = 5.0, drain: bool = False) -> None:
        """Stop listening and drop every connection (their callers see Unavailable);
        waits up to `timeout` for the connection threads (a call still running ends
        with its step, which the worker aborts first). With `drain`, calls whose handler
        is running get up to `timeout` to answer first (a master's RunSteps, as gRPC's
        grace period gives them)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        with _in_process_lock:
            _in_process.pop(self.path, None)
        _shutdown(self._listener)
        self._thread.join(timeout)
        self._listener.close()
        with self._lock:
            if drain:
                for conn in self._conns - self._busy:
                    _shutdown(conn)
                self._idle_changed.wait_for(lambda: not self._busy, timeout)
            conns = list(self._conns)
        for conn in conns:
            _shutdown(conn)
        with self._lock:
            threads = list(self._threads)
        for t in threads:
            t.join(timeout)
        shutil.rmtree(self._dir, ignore_errors=True)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # closed
            _set_send_buffer(conn)
            thread = threading.Thread(
                target=self._serve,
                args=(conn,),
                name=f"flowrt-local-conn-{self._name}",
                daemon=True,
            )
            with self._lock:
                if self._closed:
                    conn.close()
                    return
                self._conns.add(conn)
                self._threads.add(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        write_lock = threading.Lock()
        try:
            if not hmac.compare_digest(bytes(_recv_exactly(conn, _SECRET_BYTES)), self._secret):
                log.warning("local socket %s: a connection without the secret", self._name)
                return
            while True:
                (_, method, timeout), frame = _recv_frame(conn, _REQUEST)
                body = memoryview(frame)
                del frame
                with self._lock:
                    if self._closed:
                        break
                    self._busy.add(conn)
                try:
                    self._dispatch(conn, write_lock, method, body, timeout or None)
                finally:
                    del body  # not held while waiting for the next request
                    with self._lock:
                        self._busy.discard(conn)
                        self._idle_changed.notify_all()
        except (EOFError, OSError):
            pass
        finally:
            with self._lock:
                self._conns.discard(conn)
                self._threads.discard(threading.current_thread())
            conn.close()

    def _dispatch(
        self,
        conn: socket.socket,
        write_lock: threading.Lock,
        method: int,
        body: memoryview,
        timeout: float | None,
    ) -> None:
        answered = [False]

        def reply(code: int, *parts: Any) -> None:
            views = [memoryview(p).cast("B") for p in parts]
            total = sum(v.nbytes for v in views)
            head = _RESPONSE.pack(total + 4, int(code))
            with write_lock:
                if answered[0]:
                    return
                answered[0] = True
                try:
                    if total < _JOIN_BELOW:
                        conn.sendall(b"".join([head, *views]))
                    else:
                        conn.sendall(head)
                        for v in views:
                            conn.sendall(v)
                except OSError:
                    pass  # the caller went away (cancelled, timed out, died)

        token = _CALLER.set(conn)
        try:
            self.invoke(method, body, timeout, reply)
        finally:
            _CALLER.reset(token)
            _hangups.discard(conn)

    def invoke(self, method: int, body: memoryview, timeout: float | None, reply: Reply) -> None:
        """Run `method`'s handler; any failure answers the caller through `reply`."""
        handler = self._handlers.get(method)
        try:
            if handler is None:
                raise UnimplementedError(f"Local RPC method {method} is not served here")
            handler(body, timeout, reply)
        except Exception as exc:  # noqa: BLE001  (every failure answers the caller)
            error = as_op_error(exc)
            if not isinstance(exc, OpError):
                log.exception("internal error in a local RPC")
            reply(int(error.code), truncate(error.message).encode())


def _send_request(
    conn: socket.socket, method: int, payload: Payload, timeout: float | None
) -> None:
    """One request frame; a large payload is sent as it is, never copied into the frame
    (a 1 GB feed would cost the sender another 1 GB), a list of parts part by part."""
    views = [memoryview(p).cast("B") for p in _parts(payload)]
    total = sum(v.nbytes for v in views)
    head = _REQUEST.pack(total + 9, method, timeout or 0.0)
    if total < _JOIN_BELOW:
        conn.sendall(b"".join([head, *views]))
    else:
        conn.sendall(head)
        for v in views:
            conn.sendall(v)


def _parts(payload: Payload) -> list[Any]:
    return payload if isinstance(payload, list) else [payload]


def _set_send_buffer(sock: socket.socket) -> None:
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
    except OSError:
        pass


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _sweep_dead_dirs() -> None:
    """Remove socket directories of processes that died without closing them."""
    try:
        names = os.listdir(shm.SHM_DIR)
    except OSError:
        return
    for name in names:
        m = _DIR.fullmatch(name)
        if m is None or shm.pid_alive(int(m.group(1))):
            continue
        shutil.rmtree(os.path.join(shm.SHM_DIR, name), ignore_errors=True)


# -- client -------------------------------------------------------------------------------
class LocalCall:
    """One call in flight on a connection: `finish()` waits for the answer, at the latest
    until the call's deadline (its timeout from when it started). Until then `fileno()`
    may be polled: it turns readable when the answer arrives, the peer goes away or the
    call is cancelled."""

    def __init__(
        self, client: LocalClient, conn: socket.socket, method: int, timeout: float | None
    ) -> None:
        self._client = client
        self._conn = conn
        self._method = method
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self._cancelled = False

    def cancel(self) -> None:
        self._cancelled = True
        _shutdown(self._conn)

    def fileno(self) -> int:
        """The connection's descriptor (for poll; read only through `finish`)."""
        return self._conn.fileno()

    def finish(self) -> bytearray:
        """The response bytes; raises the call's OpError."""
        conn, peer = self._conn, self._client.peer
        what = METHOD_NAMES.get(self._method, str(self._method))
        ok = False
        deadline = self.deadline
        try:
            (_, code), body = _recv_frame(conn, _RESPONSE, True, deadline)
            ok = True
        except (TimeoutError, BlockingIOError):  # BlockingIOError: SO_RCVTIMEO passed
            raise DeadlineExceededError(
                f"Call to {peer} ({what}) timed out: Deadline Exceeded"
            ) from None
        except (EOFError, OSError) as exc:
            if self._cancelled:
                raise CancelledError(f"{what} to {peer} was cancelled") from None
            raise UnavailableError(
                f"{peer} is unavailable ({what}): local connection lost: {exc}"
            ) from None
        finally:
            if ok:
                self._client._give_back(conn)
            else:
                conn.close()
        if code:
            raise from_code(code, body.decode(errors="replace"))
        return body


class InProcessCall:
    """A call to a LocalServer of this process (`share_in_process`), with LocalCall's
    interface. Handlers that answer later (RecvTensor, CleanupGraph) run at once; a
    RunGraph, which blocks until its step ends, runs in `finish()` on the waiting thread."""

    _RUN_IN_FINISH = frozenset({RUN_GRAPH})

    def __init__(
        self, server: LocalServer, peer: str, method: int, payload: Payload, timeout: float | None
    ) -> None:
        self._server = server
        self._peer = peer
        self._method = method
        parts = _parts(payload)
        self._payload = memoryview(
            parts[0] if len(parts) == 1 else b"".join(memoryview(p).cast("B") for p in parts)
        )
        self._timeout = timeout
        self._done = threading.Event()
        self._answer: tuple[int, bytes] | None = None
        self._cancelled = False
        self._lock = threading.Lock()
        if method not in self._RUN_IN_FINISH:
            server.invoke(method, self._payload, timeout, self._reply)

    def _reply(self, code: int, *parts: Any) -> None:
        with self._lock:
            if self._answer is None:
                self._answer = (int(code), b"".join(memoryview(p).cast("B") for p in parts))
        self._done.set()

    def cancel(self) -> None:
        self._cancelled = True
        self._done.set()

    def finish(self) -> bytes:
        """The response bytes; raises the call's OpError."""
        what = METHOD_NAMES.get(self._method, str(self._method))
        if self._method in self._RUN_IN_FINISH and not self._cancelled:
            self._server.invoke(self._method, self._payload, self._timeout, self._reply)
        if not self._done.wait(self._timeout):
            raise DeadlineExceededError(
                f"Call to {self._peer} ({what}) timed out: Deadline Exceeded"
            )
        with self._lock:
            answer = self._answer
        if answer is None:  # cancelled before the answer
            raise CancelledError(f"{what} to {self._peer} was cancelled")
        code, body = answer
        if code:
            raise from_code(code, body.decode(errors="replace"))
        return body


# Servers other code of this process may call directly (share_in_process): socket path ->
# server. A master hosting a worker task (`python -m master --colocate`) reaches it so.
_in_process: dict[str, LocalServer] = {}
_in_process_lock = threading.Lock()
_share_in_process = False


def share_in_process(on: bool = True) -> None:
    """LocalServers started from now on are also callable directly from this process."""
    global _share_in_process
    _share_in_process = on


def sharing_in_process() -> bool:
    """Whether LocalServers started now are shared in-process (share_in_process)."""
    return _share_in_process


class LocalClient:
    """Calls to one peer's socket, with a pool of idle connections."""

    def __init__(self, path: str, peer: str, secret: bytes = b"") -> None:
        self.path = path
        self.peer = peer
        self._secret = secret  # the server's connection secret (LocalServer.endpoint)
        self._lock = threading.Lock()
        self._idle: list[socket.socket] = []
        self._closed = False

    def start(
        self, method: int, payload: Payload, timeout: float | None
    ) -> LocalCall | InProcessCall:
        """Send the request now (on this thread); raises ConnectionError if the socket
        does not connect (the caller then asks for the endpoint again or uses gRPC). A
        server shared in this process (share_in_process) is called directly."""
        with _in_process_lock:
            server = _in_process.get(self.path)
        if server is not None:
            return InProcessCall(server, self.peer, method, payload, timeout)
        conn = self._take()
        try:
            _send_request(conn, method, payload, timeout)
        except OSError:
            conn.close()
            conn = self._connect()  # an idle connection the peer dropped: one retry
            _send_request(conn, method, payload, timeout)
        return LocalCall(self, conn, method, timeout)

    def call(self, method: int, payload: bytes, timeout: float | None) -> bytes | bytearray:
        return self.start(method, payload, timeout).finish()

    def message_handler(self, method: int) -> MessageHandler | None:
        """The server's MessageHandler of `method` when the server is shared in this
        process (share_in_process), else None."""
        with _in_process_lock:
            server = _in_process.get(self.path)
        return None if server is None else server.message_handlers.get(method)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _take(self) -> socket.socket:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._connect()

    def _connect(self) -> socket.socket:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        _set_send_buffer(conn)
        try:
            conn.connect(self.path)
            conn.sendall(self._secret)
        except OSError as exc:
            conn.close()
            raise ConnectionError(errno.ECONNREFUSED, f"{self.path}: {exc}") from None
        return conn

    def _give_back(self, conn: socket.socket) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < MAX_IDLE_PER_PEER:
                self._idle.append(conn)
                return
        conn.close()


class LocalPeers:
    """Which tasks are reachable over a local socket (see the module docstring)."""

    def __init__(self, channel_of: Callable[[str], grpc.Channel]) -> None:
        self._channel_of = channel_of
        self._lock = threading.Lock()
        self._clients: dict[str, tuple[grpc.Channel, LocalClient | None]] = {}
        self._refused: dict[str, str] = {}  # task -> a socket path that did not connect

    def client(self, task: str) -> LocalClient | None:
        """The task's LocalClient, or None: use gRPC."""
        if not enabled():
            return None
        channel = self._channel_of(task)
        with self._lock:
            entry = self._clients.get(task)
        if entry is not None and entry[0] is channel:
            return entry[1]
        client = self._discover(task, channel)
        with self._lock:
            self._clients[task] = (channel, client)
        return client

    def forget(self, task: str, client: LocalClient) -> None:
        """The socket did not connect: ask the task again next time (a restarted worker
        has a new one); if it names the same socket again (say, another user's), gRPC."""
        with self._lock:
            entry = self._clients.get(task)
            if entry is not None and entry[1] is client:
                del self._clients[task]
            self._refused[task] = client.path
        client.close()

    def close(self) -> None:
        with self._lock:
            clients = [c for _, c in self._clients.values() if c is not None]
            self._clients.clear()
        for c in clients:
            c.close()

    def start(
        self, task: str, method: int, payload: Payload, timeout: float | None
    ) -> LocalCall | InProcessCall | None:
        """Start a call on the task's socket; None when the task must be reached over
        gRPC (not local, or its socket is gone)."""
        client = self.client(task)
        if client is None:
            return None
        try:
            return client.start(method, payload, timeout)
        except ConnectionError:
            self.forget(task, client)
            return None

    def message_handler(self, task: str, method: int) -> MessageHandler | None:
        """The task's MessageHandler of `method` when the task is served in this process
        (LocalClient.message_handler), else None."""
        client = self.client(task)
        return None if client is None else client.message_handler(method)

    def _discover(self, task: str, channel: grpc.Channel) -> LocalClient | None:
        with self._lock:
            refused = self._refused.get(task)
        return discover(channel, ENDPOINT_PATH, task, refused)


def discover(
    channel: grpc.Channel, endpoint_path: str, peer: str, refused: str | None = None
) -> LocalClient | None:
    """A LocalClient for the server behind `channel` if it answers `endpoint_path` with
    this host's id and a socket path other than `refused`; None: use gRPC."""
    method: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(endpoint_path)
    try:
        answer = method(b"", timeout=10.0)
    except grpc.RpcError:
        return None  # a TensorFlow server, or not reachable now: gRPC says why
    host, _, rest = bytes(answer).partition(b"\0")
    raw_path, _, secret = rest.partition(b"\0")
    path = raw_path.decode(errors="replace")
    if not path or host != shm.host_id() or path == refused or len(secret) != _SECRET_BYTES:
        return None
    return LocalClient(path, peer, secret)


# -- unary services over the socket (MasterService) ------------------------------------------
class _Aborted(Exception):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = int(code.value[0])
        self.details = details


class _LocalContext:
    """What our servicers use of grpc.ServicerContext, for a call over the socket."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self._deadline = None if timeout is None else time.monotonic() + timeout

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise _Aborted(code, details)

    def time_remaining(self) -> float | None:
        return None if self._deadline is None else max(0.0, self._deadline - time.monotonic())

    def is_active(self) -> bool:
        return True

    def add_callback(self, callback: Callable[[], None]) -> bool:
        """As gRPC's: `callback` runs if the caller goes away (its connection closes:
        it cancelled, its deadline passed, it died) before the call ends."""
        return on_caller_gone(callback)


def unary_handlers(servicer: Any, table: MethodTable, base: int) -> dict[int, Handler]:
    """Socket handlers running `servicer`'s unary methods (named like the RPCs, taking
    (request, context)): method base + k is the k-th RPC of `table`."""
    handlers: dict[int, Handler] = {}
    for k, (name, (request_cls, _)) in enumerate(table.items()):
        behaviour = getattr(servicer, name, None)
        if behaviour is not None:
            handlers[base + k] = functools.partial(_run_unary, behaviour, request_cls)
    return handlers


def _run_unary(
    behaviour: Callable[[Any, Any], Any],
    request_cls: type[Message],
    payload: memoryview,
    timeout: float | None,
    reply: Reply,
) -> None:
    try:
        response = behaviour(parse_consuming(request_cls, payload), _LocalContext(timeout))
    except _Aborted as aborted:
        reply(aborted.code, aborted.details.encode())
        return
    reply(0, response.SerializeToString())


def parts_handler(behaviour: Callable[[memoryview, Any], Any]) -> Handler:
    """A socket handler running `behaviour(payload, context)` on the request's bytes, whose
    answer (a message or a wire.PartsMessage) is sent as parts, without joining them."""
    return functools.partial(_run_parts, behaviour)


def _run_parts(
    behaviour: Callable[[memoryview, Any], Any],
    payload: memoryview,
    timeout: float | None,
    reply: Reply,
) -> None:
    try:
        response = behaviour(payload, _LocalContext(timeout))
    except _Aborted as aborted:
        reply(aborted.code, aborted.details.encode())
        return
    reply(0, *wire.serialized_parts(response))


class UnaryStub:
    """Calls unary RPCs of `table` (by name) on a LocalClient; see unary_handlers."""

    def __init__(self, client: LocalClient, table: MethodTable, base: int) -> None:
        self.client = client
        self._methods = {
            name: (base + k, classes[1]) for k, (name, classes) in enumerate(table.items())
        }

    def call(self, method: str, request: Message, timeout: float | None = None) -> Any:
        """The response; raises the call's OpError, or ConnectionError when the socket
        does not connect (the server is gone: use gRPC)."""
        number, response_cls = self._methods[method]
        body = self.client.call(number, request.SerializeToString(), timeout)
        return parse(response_cls, body)

    def close(self) -> None:
        self.client.close()


M = TypeVar("M", bound=Message)


def parse(cls: type[M], data: Any) -> M:
    """A protobuf message from a bytes-like view; InvalidArgument if malformed."""
    try:
        return cls.FromString(cast(bytes, data))
    except DecodeError as e:
        raise InvalidArgumentError(f"Malformed {cls.DESCRIPTOR.name}: {e}") from None


def parse_consuming(cls: type[M], payload: Any) -> M:
    """`parse`, then release the request's bytes (the message holds its own copy): a
    1 GB feed is not kept twice while its step runs."""
    message = parse(cls, payload)
    if isinstance(payload, memoryview):
        payload.release()
    return message


_ALIGN = 16  # every message starts at a multiple of this in the answer (numpy views)


def _padding(offset: int) -> int:
    return -offset % _ALIGN


def pack_messages(messages: list[Any]) -> list[Any]:
    """Several messages as reply parts: <I count>, count x <Q length>, then each message
    at the next multiple of 16 bytes (so a tensor's bytes can be viewed in place)."""
    lengths = [memoryview(m).nbytes for m in messages]
    parts: list[Any] = [_COUNT.pack(len(messages)) + struct.pack(f"<{len(lengths)}Q", *lengths)]
    offset = len(parts[0])
    for m, n in zip(messages, lengths):
        pad = _padding(offset)
        if pad:
            parts.append(bytes(pad))
        parts.append(m)
        offset += pad + n
    return parts


def unpack_messages(body: Any) -> list[memoryview]:
    """The messages of a pack_messages answer (views into `body`, no copies)."""
    view = memoryview(body)
    (count,) = _COUNT.unpack_from(view)
    lengths = struct.unpack_from(f"<{count}Q", view, _COUNT.size)
    offset = _COUNT.size + 8 * count
    out = []
    for n in lengths:
        offset += _padding(offset)
        out.append(view[offset : offset + n])
        offset += n
    if offset != len(view):
        raise DataLossError(f"Local answer: {len(view) - offset} bytes after {count} messages")
    return out


def reply_error(reply: Reply, exc: BaseException) -> None:
    """Answer a call with `exc` as an OpError."""
    error = as_op_error(exc)
    reply(int(error.code), truncate(error.message).encode())
