"""Transport, RecvTensor client side: pulls one tensor of a step from a peer task, for the
worker's remote rendezvous (worker.remote_rendezvous).

From one of our workers on this host over its Unix socket (rpc.local_rpc: the same request
and answer as RecvTensorOne, raw bytes for a value up to 16 MB); otherwise over our
`/dataflow.WorkerService/RecvTensorOne`, which answers in one unary message whatever the
chunked RecvTensorStream (rpc.tensor_stream) would send as one (inline values, shared
memory), and an empty message for the rest, which then streams; or over the unary
TF-compatible RecvTensor for a peer that answers with UNIMPLEMENTED (a TensorFlow worker;
remembered per task). The call starts on the thread that asks; `finish()` waits for the
answer. One client is shared by all steps of a worker; thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import grpc

from common import metrics
from protos import worker_pb2
from rpc import local_rpc, shm, tensor_stream
from rpc import status as rpc_status
from rpc.service_paths import ONE_PATH, STREAM_PATH
from rpc.worker_cache import WorkerCache

DEFAULT_RECV_TIMEOUT = 600.0

# register(call) -> False when the step is already aborted (the caller cancels the call).
RegisterCall = Callable[[Any], bool]
# Blocks for the (value, is_dead) of a started RecvTensor.
Finish = Callable[[], tuple[Any, bool]]


class RecvTensorClient:
    """Pulls one tensor from a peer task. Shared by all steps of a worker."""

    def __init__(self, cache: WorkerCache, timeout: float = DEFAULT_RECV_TIMEOUT) -> None:
        self.cache = cache
        self.timeout = timeout
        self._lock = threading.Lock()
        self._unary_tasks: set[str] = set()  # peers without RecvTensorStream (TensorFlow)
        self.local = local_rpc.LocalPeers(cache.channel)  # same-host peers: a socket

    def close(self) -> None:
        """Close the local connections (before the cache closes its channels)."""
        self.local.close()

    def fetch(self, task: str, step_id: int, key: str, register: RegisterCall) -> tuple[Any, bool]:
        """(value, is_dead) of `key` from `task`; OpError on failure."""
        return self.start(task, step_id, key, register)()

    def start(self, task: str, step_id: int, key: str, register: RegisterCall) -> Finish:
        """Send the request now; the returned `finish()` blocks for (value, is_dead) and
        raises OpError on failure. The caller's thread starts the call, so the request is
        on the wire before a pool thread even wakes up to wait for the answer."""
        request = worker_pb2.RecvTensorRequest(step_id=step_id, rendezvous_key=key)
        with self._lock:
            unary = task in self._unary_tasks
        if unary:
            return lambda: self._fetch_unary_or_raise(task, request, register)
        stream, local = self._start_stream(task, request, register)

        def finish() -> tuple[Any, bool]:
            try:
                return stream()
            except grpc.RpcError as err:
                if err.code() != grpc.StatusCode.UNIMPLEMENTED:
                    raise rpc_status.from_rpc_error(err, task, "RecvTensor") from None
            with self._lock:
                self._unary_tasks.add(task)
            return self._fetch_unary_or_raise(task, request, register)

        return finish if local is None else _SocketFinish(finish, local)

    def _fetch_unary_or_raise(
        self, task: str, request: Any, register: RegisterCall
    ) -> tuple[Any, bool]:
        try:
            return self._fetch_unary(task, request, register)
        except grpc.RpcError as err:
            raise rpc_status.from_rpc_error(err, task, "RecvTensor") from None

    def _start_stream(
        self, task: str, request: Any, register: RegisterCall
    ) -> tuple[Finish, local_rpc.LocalCall | None]:
        """The call's finish() and, when its answer comes on a same-host socket, that call
        (see `socket_call`)."""
        key = request.rendezvous_key
        lent = None
        if shm.enabled():
            request = worker_pb2.RecvTensorRequest(step_id=request.step_id, rendezvous_key=key)
            lent = shm.POOL.lend(key)
            tensor_stream.shm_offer(request, lent)
        lent_name = lent[0] if lent else None
        try:
            local = self.local.start(
                task, local_rpc.RECV_TENSOR, request.SerializeToString(), self.timeout
            )
            if local is not None:
                if not register(local):
                    local.cancel()
                call: Any = local
            else:
                call = self._call(task, ONE_PATH, request, register)
        except BaseException:
            if lent_name is not None:
                shm.POOL.give_back(lent_name)
            raise

        carrier = "grpc" if local is None else _carrier(local)

        def finish() -> tuple[Any, bool]:
            what = f"RecvTensor from {task}"
            try:
                if local is not None:
                    messages: list[Any] = local_rpc.unpack_messages(call.finish())
                else:
                    messages = list(call)
                if messages == [b""]:  # several messages: they stream (see RecvTensorOne)
                    stream = self._call(task, STREAM_PATH, request, register)
                    got = tensor_stream.decode_chunks(stream, what, key, lent_name)
                else:
                    got = tensor_stream.decode_chunks(messages, what, key, lent_name)
            finally:
                if lent_name is not None:
                    shm.POOL.give_back(lent_name)
            metrics.tensor_received(got[0], metrics.recv_transport(got[0], carrier))
            return got

        return finish, local if isinstance(local, local_rpc.LocalCall) else None

    def _call(self, task: str, path: str, request: Any, register: RegisterCall) -> Any:
        """Start `path` (RecvTensorOne or RecvTensorStream, both read as streams: this
        channel runs them on the reading thread, and they stay cancellable)."""
        method: grpc.UnaryStreamMultiCallable[worker_pb2.RecvTensorRequest, bytes]
        method = self.cache.channel(task).unary_stream(
            path, request_serializer=worker_pb2.RecvTensorRequest.SerializeToString
        )
        call = method(request, timeout=self.timeout)
        if not register(call):
            call.cancel()
        return call

    def _fetch_unary(self, task: str, request: Any, register: RegisterCall) -> tuple[Any, bool]:
        future = self.cache.stub(task).RecvTensor.future(request, timeout=self.timeout)
        if not register(future):
            future.cancel()
        got = tensor_stream.from_response(future.result())
        metrics.tensor_received(got[0], "grpc")
        return got


class _SocketFinish:
    """A started recv's finish() whose answer comes on a same-host socket (`call`)."""

    __slots__ = ("_finish", "call")

    def __init__(self, finish: Finish, call: local_rpc.LocalCall) -> None:
        self._finish = finish
        self.call = call

    def __call__(self) -> tuple[Any, bool]:
        return self._finish()


def socket_call(finish: Finish) -> local_rpc.LocalCall | None:
    """The same-host socket call whose answer a started recv's `finish` reads, or None
    (gRPC, in-process): one thread may poll the descriptors of many such calls (its
    fileno() turns readable once the answer arrives, the peer goes away or the call is
    cancelled) and run each finish() when it does: it then reads an answer under way."""
    return finish.call if isinstance(finish, _SocketFinish) else None


def _carrier(call: Any) -> str:
    """The metrics transport of a call on a same-host peer (common.metrics)."""
    return "in_process" if isinstance(call, local_rpc.InProcessCall) else "local"
