"""Worker, gRPC edge: the WorkerService servicer (decode, call Worker, encode).

Served under /tensorflow.WorkerService and /dataflow.WorkerService (rpc.service_paths),
plus our server-streaming /dataflow.WorkerService/RecvTensorStream (rpc.tensor_stream
framing), its one-message unary form RecvTensorOne, and LocalEndpoint (where our
same-host peers reach RunGraph and RecvTensorOne over a Unix socket: rpc.local_rpc,
whose handlers are here too). RunGraph honours ExecutorOpts (record_timeline /
record_costs: RunGraphResponse.step_stats; record_partition_graphs: partition_graph) on
both paths. Errors leave through `rpc_status.abort` (or the local
answer's code) only, except RunGraph with store_errors_in_response_body, which answers
OK with status_code/status_error_message as TensorFlow's worker does. Stateless apart
from the Worker; safe from any thread.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import grpc
import numpy as np

from common import dtypes, metrics
from common import tensor as tensor_util
from common.errors import (
    InvalidArgumentError,
    OpError,
    as_op_error,
    as_proto_code,
    naming_node,
    truncate,
)
from common.executor import StepStatsCollector
from protos import named_tensor_pb2, worker_pb2
from rpc import call_pool, local_rpc, tensor_stream
from rpc import status as rpc_status
from rpc.admission import Slots
from rpc.service_paths import (
    CLEANUP_BATCH_METHOD,
    KEEPALIVE_METHOD,
    ONE_METHOD,
    STREAM_METHOD,
    STREAM_SERVICE,
    add_worker_servicer,
    decode_keepalive,
)
from worker.worker import Worker

# Of the server's threads (worker.server.MAX_RPC_THREADS), what RunGraph and waiting
# RecvTensor calls may hold at once; the rest stay free for every other call.
MAX_RUN_GRAPHS = 32
MAX_RECVS = 24

log = logging.getLogger(__name__)

T = TypeVar("T")

# A local RecvTensor answer up to this size is encoded on the thread that sent the value;
# a larger one on a pooled thread (its shared-memory write would hold up the sender).
INLINE_ANSWER_BYTES = 1 << 20
# Up to this size a memcpy-able value crosses a local socket as raw bytes (measured here:
# 1 MB in 0.14 ms, 16 MB in 2.7 ms), beyond it through shared memory, whose file write and
# mapping cost ~0.5 ms per MB-sized hop but scale to any size with one copy. Either way, a
# segment the receiver lent (its pool's, already mapped on both ends) is written in place:
# one memcpy (1 MB: ~25 us).
LOCAL_RAW_BYTES = 16 << 20


def _collector(request: worker_pb2.RunGraphRequest) -> StepStatsCollector | None:
    """A collector when ExecutorOpts asks for a timeline or costs (TF's worker). A partial
    run records into its first call's collector and answers the whole trace on its last
    call (TF's worker does not trace partial runs); costs are not built for them."""
    opts = request.exec_opts
    if opts.record_timeline or (opts.record_costs and not request.is_partial):
        return StepStatsCollector()
    return None


def _timeout(context: grpc.ServicerContext) -> float | None:
    remaining = context.time_remaining()
    return None if remaining is None or remaining > 1e9 else max(0.0, remaining)


class WorkerServicer:
    """Thin adapter: each method is one WorkerService RPC."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        # Calls that may block for a step's length never take the threads GetStatus,
        # session and cleanup calls need (rpc.admission).
        self.run_graphs = Slots(f"{worker.task_name}: RunGraph calls running", MAX_RUN_GRAPHS)
        self.recvs = Slots(f"{worker.task_name}: RecvTensor calls waiting", MAX_RECVS)
        self.local_endpoint: bytes | None = None  # set when a LocalServer listens

    def _call(self, context: grpc.ServicerContext, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except Exception as exc:
            error = as_op_error(exc)
            if not isinstance(exc, OpError):
                log.exception("internal error in a WorkerService call")
            rpc_status.abort(context, naming_node(error))  # the node travels in the message

    # -- status and sessions ---------------------------------------------------------------
    def GetStatus(
        self, request: worker_pb2.GetStatusRequest, context: grpc.ServicerContext
    ) -> worker_pb2.GetStatusResponse:
        return worker_pb2.GetStatusResponse(device_attributes=self.worker.get_status())

    def CreateWorkerSession(
        self, request: worker_pb2.CreateWorkerSessionRequest, context: grpc.ServicerContext
    ) -> worker_pb2.CreateWorkerSessionResponse:
        self._call(
            context,
            lambda: self.worker.create_worker_session(
                request.session_handle,
                request.isolate_session_state,
                request.master_task,
                request.master_incarnation,
            ),
        )
        return worker_pb2.CreateWorkerSessionResponse()

    def KeepAliveSessions(self, request: bytes, context: grpc.ServicerContext) -> bytes:
        """Our master renews its sessions' leases (worker.session_leases); raw bytes."""
        lease_s, handles = decode_keepalive(request)
        self._call(context, lambda: self.worker.keepalive_sessions(lease_s, handles))
        return b""

    def DeleteWorkerSession(
        self, request: worker_pb2.DeleteWorkerSessionRequest, context: grpc.ServicerContext
    ) -> worker_pb2.DeleteWorkerSessionResponse:
        self._call(context, lambda: self.worker.delete_worker_session(request.session_handle))
        return worker_pb2.DeleteWorkerSessionResponse()

    # -- graphs ----------------------------------------------------------------------------
    def RegisterGraph(
        self, request: worker_pb2.RegisterGraphRequest, context: grpc.ServicerContext
    ) -> worker_pb2.RegisterGraphResponse:
        handle = self._call(
            context,
            lambda: self.worker.register_graph(
                request.session_handle, request.create_worker_session_called, request.graph_def
            ),
        )
        return worker_pb2.RegisterGraphResponse(graph_handle=handle)

    def DeregisterGraph(
        self, request: worker_pb2.DeregisterGraphRequest, context: grpc.ServicerContext
    ) -> worker_pb2.DeregisterGraphResponse:
        self._call(
            context,
            lambda: self.worker.deregister_graph(
                request.session_handle,
                request.create_worker_session_called,
                request.graph_handle,
            ),
        )
        return worker_pb2.DeregisterGraphResponse()

    def RunGraph(
        self, request: worker_pb2.RunGraphRequest, context: grpc.ServicerContext
    ) -> worker_pb2.RunGraphResponse:
        try:
            with self.run_graphs.admit():
                return self._run_graph(request, _timeout(context))
        except OpError as error:
            rpc_status.abort(context, error)

    def _run_graph(
        self, request: worker_pb2.RunGraphRequest, timeout: float | None
    ) -> worker_pb2.RunGraphResponse:
        """The RunGraphResponse; raises the OpError unless the request asks for errors in
        the response body."""
        response = worker_pb2.RunGraphResponse()
        try:
            sends = [(t.name, _decode_send(t)) for t in request.send]
            collector = _collector(request)
            recvs = self.worker.run_graph(
                request.session_handle,
                request.create_worker_session_called,
                request.graph_handle,
                request.step_id,
                sends,
                list(request.recv_key),
                timeout,
                is_partial=request.is_partial,
                is_last_partial_run=request.is_last_partial_run,
                collector=collector,
            )
            for key in request.recv_key:
                value, is_dead = recvs[key]
                named = response.recv.add(name=key)
                if not is_dead:
                    named.tensor.CopyFrom(tensor_util.as_proto_tensor_content(value))
            if collector is not None:
                ended = not request.is_partial or request.is_last_partial_run
                if request.exec_opts.record_timeline and ended:
                    collector.fill(response.step_stats)
                if request.exec_opts.record_costs:
                    response.cost_graph.CopyFrom(
                        self.worker.cost_graph(
                            request.session_handle,
                            request.create_worker_session_called,
                            request.graph_handle,
                            collector,
                        )
                    )
            if request.exec_opts.record_partition_graphs:
                response.partition_graph.extend(
                    self.worker.partition_graphs(
                        request.session_handle,
                        request.create_worker_session_called,
                        request.graph_handle,
                    )
                )
        except Exception as exc:
            error = as_op_error(exc)
            if not isinstance(exc, OpError):
                log.exception("internal error in RunGraph")
            _log_failed_step(request, error)
            if not request.store_errors_in_response_body:
                raise error from None
            error = naming_node(error)  # the master reports the node, as TF's worker
            return worker_pb2.RunGraphResponse(
                status_code=as_proto_code(error.code), status_error_message=truncate(error.message)
            )
        return response

    def CleanupGraph(
        self, request: worker_pb2.CleanupGraphRequest, context: grpc.ServicerContext
    ) -> worker_pb2.CleanupGraphResponse:
        self._call(context, lambda: self.worker.cleanup_graph(request.step_id))
        return worker_pb2.CleanupGraphResponse()

    def CleanupGraphBatch(self, request: bytes, context: grpc.ServicerContext) -> bytes:
        """Our batched CleanupGraph: `request` holds little-endian int64 step ids."""
        self._call(context, lambda: self._cleanup_batch(request))
        return b""

    def _cleanup_batch(self, request: bytes | memoryview) -> None:
        if len(request) % 8:
            raise InvalidArgumentError(
                f"CleanupGraphBatch: {len(request)} bytes is not a list of int64 step ids"
            )
        for (step_id,) in struct.iter_unpack("<q", request):
            self.worker.cleanup_graph(step_id)

    def CleanupAll(
        self, request: worker_pb2.CleanupAllRequest, context: grpc.ServicerContext
    ) -> worker_pb2.CleanupAllResponse:
        self._call(context, lambda: self.worker.cleanup_all(list(request.container)))
        return worker_pb2.CleanupAllResponse()

    # -- tensors ---------------------------------------------------------------------------
    def _recv(
        self, request: worker_pb2.RecvTensorRequest, context: grpc.ServicerContext
    ) -> tuple[Any, bool]:
        def wait() -> tuple[Any, bool]:
            with self.recvs.admit():
                return self.worker.recv_tensor(
                    request.step_id,
                    request.rendezvous_key,
                    _timeout(context),
                    context.add_callback,
                )

        return self._call(context, wait)

    def RecvTensor(
        self, request: worker_pb2.RecvTensorRequest, context: grpc.ServicerContext
    ) -> worker_pb2.RecvTensorResponse:
        value, is_dead = self._recv(request, context)
        metrics.tensor_sent(value, is_dead, "grpc")
        return self._call(context, lambda: tensor_stream.to_response(value, is_dead))

    def RecvTensorStream(
        self, request: worker_pb2.RecvTensorRequest, context: grpc.ServicerContext
    ) -> Iterator[bytes]:
        value, is_dead = self._recv(request, context)
        metrics.tensor_sent(value, is_dead, "grpc")
        yield from tensor_stream.encode_stream(request, value, is_dead)

    def RecvTensorOne(
        self, request: worker_pb2.RecvTensorRequest, context: grpc.ServicerContext
    ) -> bytes:
        """Our unary RecvTensor: the RecvTensorStream answer when it is ONE message
        (inline, shared memory, dead, not memcpy-able), sent with the status in one batch
        (a streamed answer waits for each message to be sent first). A value that would
        take several messages is sent back into the step's rendezvous, and the answer is
        empty: the caller asks RecvTensorStream for it."""
        value, is_dead = self._recv(request, context)
        answer = self._call(context, lambda: self._one_message(request, value, is_dead))
        if answer:  # else RecvTensorStream sends it (and counts it)
            metrics.tensor_sent(value, is_dead, "grpc")
        return answer

    def _one_message(
        self, request: worker_pb2.RecvTensorRequest, value: Any, is_dead: bool
    ) -> bytes:
        messages = tensor_stream.encode_stream(request, value, is_dead)
        first = next(messages)
        if next(messages, None) is None:
            return first
        rendezvous = self.worker.rendezvous_mgr.find_or_create(request.step_id)
        rendezvous.send(request.rendezvous_key, value, is_dead)
        return b""

    def LocalEndpoint(self, request: bytes, context: grpc.ServicerContext) -> bytes:
        """Host id NUL socket path of this worker's LocalServer (rpc.local_rpc)."""
        if self.local_endpoint is None:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "no local endpoint")
        return self.local_endpoint

    # -- local RPC handlers (rpc.local_rpc; run on the connection's thread) -------------
    def local_run_graph(
        self, payload: memoryview, timeout: float | None, reply: local_rpc.Reply
    ) -> None:
        request = local_rpc.parse_consuming(worker_pb2.RunGraphRequest, payload)
        response = self._run_graph(request, timeout)
        reply(0, response.SerializeToString())

    def local_recv_tensor(
        self, payload: memoryview, timeout: float | None, reply: local_rpc.Reply
    ) -> None:
        """RecvTensorOne: parked in the step's rendezvous, answered by the thread that
        delivers the value (or a pooled one for a large value)."""
        request = local_rpc.parse(worker_pb2.RecvTensorRequest, payload)
        lent = tensor_stream.lent_segment(request)  # now, while the value is not there yet

        def answer(value: Any, is_dead: bool) -> None:
            try:
                head = None
                if lent is not None and not is_dead:
                    head = tensor_stream.write_lent(value, *lent)
                if head is not None:
                    metrics.tensor_sent(value, is_dead, "local")
                    reply(0, *local_rpc.pack_messages([head]))
                    return
                messages = self._local_messages(request, value, is_dead)
                if messages != [b""]:  # else RecvTensorStream sends it (and counts it)
                    metrics.tensor_sent(value, is_dead, "local")
                reply(0, *local_rpc.pack_messages(messages))
            except Exception as exc:  # noqa: BLE001  (every failure answers the caller)
                local_rpc.reply_error(reply, exc)

        def done(value: Any, is_dead: bool, error: OpError | None) -> None:
            if error is not None:
                local_rpc.reply_error(reply, error)
            elif is_dead or getattr(value, "nbytes", 0) <= INLINE_ANSWER_BYTES:
                answer(value, is_dead)
            else:
                call_pool.shared().submit(answer, value, is_dead)

        self.worker.recv_tensor_async(request.step_id, request.rendezvous_key, done)

    def _local_messages(
        self, request: worker_pb2.RecvTensorRequest, value: Any, is_dead: bool
    ) -> list[Any]:
        if not is_dead:
            array = np.asarray(value)
            if (
                tensor_stream.INLINE_BYTES < array.nbytes <= LOCAL_RAW_BYTES
                and dtypes.is_memcpy(tensor_util.infer_dtype(array))
                and not tensor_stream.lent_fits(request, array.nbytes)
            ):
                return tensor_stream.raw_messages(array)
        return [self._one_message(request, value, is_dead)]

    def local_cleanup_batch(
        self, payload: memoryview, timeout: float | None, reply: local_rpc.Reply
    ) -> None:
        self._cleanup_batch(payload)
        reply(0, b"")

    def local_handlers(self) -> dict[int, local_rpc.Handler]:
        return {
            local_rpc.RUN_GRAPH: self.local_run_graph,
            local_rpc.RECV_TENSOR: self.local_recv_tensor,
            local_rpc.CLEANUP_BATCH: self.local_cleanup_batch,
        }

    def local_message_handlers(self) -> dict[int, local_rpc.MessageHandler]:
        """RunGraph for a master of this process: the request and the response stay
        messages (as TensorFlow's master calls its own task's worker, not over gRPC)."""
        return {local_rpc.RUN_GRAPH: self._run_graph}  # type: ignore[dict-item]

    # -- no-ops ----------------------------------------------------------------------------
    def Logging(
        self, request: worker_pb2.LoggingRequest, context: grpc.ServicerContext
    ) -> worker_pb2.LoggingResponse:
        return worker_pb2.LoggingResponse()

    def Tracing(
        self, request: worker_pb2.TracingRequest, context: grpc.ServicerContext
    ) -> worker_pb2.TracingResponse:
        return worker_pb2.TracingResponse()


def add_to_server(server: grpc.Server, servicer: WorkerServicer) -> None:
    """Register the unary WorkerService RPCs (both names), RecvTensorStream, RecvTensorOne,
    CleanupGraphBatch, LocalEndpoint and KeepAliveSessions."""
    add_worker_servicer(server, servicer)
    stream: grpc.RpcMethodHandler[worker_pb2.RecvTensorRequest, bytes]
    stream = grpc.unary_stream_rpc_method_handler(
        servicer.RecvTensorStream,
        request_deserializer=worker_pb2.RecvTensorRequest.FromString,
        response_serializer=None,  # the messages are already bytes
    )
    one: grpc.RpcMethodHandler[worker_pb2.RecvTensorRequest, bytes]
    one = grpc.unary_unary_rpc_method_handler(
        servicer.RecvTensorOne, request_deserializer=worker_pb2.RecvTensorRequest.FromString
    )
    cleanup: grpc.RpcMethodHandler[bytes, bytes]
    cleanup = grpc.unary_unary_rpc_method_handler(servicer.CleanupGraphBatch)  # raw bytes
    endpoint: grpc.RpcMethodHandler[bytes, bytes]
    endpoint = grpc.unary_unary_rpc_method_handler(servicer.LocalEndpoint)  # raw bytes
    keepalive: grpc.RpcMethodHandler[bytes, bytes]
    keepalive = grpc.unary_unary_rpc_method_handler(servicer.KeepAliveSessions)  # raw bytes
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                STREAM_SERVICE,
                {
                    STREAM_METHOD: stream,
                    ONE_METHOD: one,
                    CLEANUP_BATCH_METHOD: cleanup,
                    local_rpc.ENDPOINT_METHOD: endpoint,
                    KEEPALIVE_METHOD: keepalive,
                },
            ),
        )
    )


def _decode_send(named: named_tensor_pb2.NamedTensorProto) -> Any:
    """A RunGraph send value (a client's feed) as numpy; InvalidArgument naming the fed
    tensor when its TensorProto is malformed."""
    try:
        return tensor_util.to_numpy(named.tensor)
    except InvalidArgumentError as e:
        parts = named.name.split(";")
        fed = parts[3] if len(parts) == 5 else named.name
        raise InvalidArgumentError(f"Cannot feed {fed}: {e.message}", fed.split(":")[0]) from None


def _log_failed_step(request: worker_pb2.RunGraphRequest, error: OpError) -> None:
    """One line per failed RunGraph (the master logs the step's cause the same way)."""
    message = error.message.splitlines()[0][:500] if error.message else ""
    log.warning(
        "step failed: session=%s step=%d graph=%s code=%s node=%s: %s",
        request.session_handle or "-",
        request.step_id,
        request.graph_handle,
        error.code.name,
        error.node_name or "-",
        message,
    )
