"""gRPC registration and client stubs for MasterService and WorkerService.

Wire contract, edge of the gRPC layer. TensorFlow serves and calls
``/tensorflow.MasterService/<Method>`` and ``/tensorflow.WorkerService/<Method>``,
while code generated from our ``package dataflow`` would use ``/dataflow.*``. The
helpers here register a servicer under both names and build stubs on TensorFlow's
path, so our master can drive TensorFlow workers and TensorFlow clients can reach
our master. Method tables come from the service descriptors, so they cannot drift
from the .proto files. Everything here is stateless and safe to call concurrently.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import Message

from protos import master_pb2, master_service_pb2, worker_pb2, worker_service_pb2
from rpc import wire

# Primary name first: stubs call it, servers answer it and the alias.
MASTER_SERVICE_NAMES = ("tensorflow.MasterService", "dataflow.MasterService")
WORKER_SERVICE_NAMES = ("tensorflow.WorkerService", "dataflow.WorkerService")

MethodTable = Mapping[str, tuple[type[Message], type[Message]]]


def _method_table(service: ServiceDescriptor) -> dict[str, tuple[type[Message], type[Message]]]:
    return {
        m.name: (
            message_factory.GetMessageClass(m.input_type),
            message_factory.GetMessageClass(m.output_type),
        )
        for m in service.methods
    }


# RPC name -> (request class, response class), in .proto declaration order.
MASTER_METHODS: MethodTable = _method_table(
    master_service_pb2.DESCRIPTOR.services_by_name["MasterService"]
)
WORKER_METHODS: MethodTable = _method_table(
    worker_service_pb2.DESCRIPTOR.services_by_name["WorkerService"]
)


def method_path(service_name: str, method: str) -> str:
    """Full gRPC path, e.g. ``/tensorflow.MasterService/RunStep``."""
    return f"/{service_name}/{method}"


def generic_handler(
    service_name: str, servicer: object, method_table: MethodTable
) -> grpc.GenericRpcHandler:
    """Unary handlers for every RPC in method_table that servicer implements.

    Servicer methods are named like the RPCs and take (request, context). RPCs the
    servicer lacks are left out, so gRPC answers them with UNIMPLEMENTED.
    """
    handlers = {}
    for name, (request_cls, _) in method_table.items():
        behaviour = getattr(servicer, name, None)
        if behaviour is None:
            continue
        handlers[name] = grpc.unary_unary_rpc_method_handler(
            _refusing_malformed(behaviour, request_cls),
            request_deserializer=_lenient_parser(request_cls),
            response_serializer=wire.serialize,  # a message, or a wire.PartsMessage
        )
    return grpc.method_handlers_generic_handler(service_name, handlers)


class Malformed:
    """A request that did not parse (what `_lenient_parser` returns instead of raising:
    grpcio answers a deserializer's exception with INTERNAL and logs a traceback)."""

    def __init__(self, error: Exception) -> None:
        self.error = error


def _lenient_parser(cls: type[Message]) -> Any:
    def parse(data: bytes) -> Any:
        try:
            return cls.FromString(data)
        except Exception as e:  # noqa: BLE001  (any parse failure is the caller's)
            return Malformed(e)

    return parse


def _refusing_malformed(behaviour: Any, cls: type[Message]) -> Any:
    def handle(request: Any, context: grpc.ServicerContext) -> Any:
        if isinstance(request, Malformed):
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"Malformed {cls.DESCRIPTOR.name}: {request.error}",
            )
        return behaviour(request, context)

    return handle


def _add_servicer(
    server: grpc.Server, servicer: object, names: Iterable[str], table: MethodTable
) -> None:
    server.add_generic_rpc_handlers(tuple(generic_handler(n, servicer, table) for n in names))


def add_master_servicer(server: grpc.Server, servicer: object) -> None:
    """Serve servicer's MasterService methods under both service names."""
    _add_servicer(server, servicer, MASTER_SERVICE_NAMES, MASTER_METHODS)


def add_worker_servicer(server: grpc.Server, servicer: object) -> None:
    """Serve servicer's WorkerService methods under both service names."""
    _add_servicer(server, servicer, WORKER_SERVICE_NAMES, WORKER_METHODS)


class _Stub:
    """One grpc.UnaryUnaryMultiCallable attribute per RPC of the service."""

    def __init__(self, channel: grpc.Channel, service_name: str, table: MethodTable) -> None:
        self.service_name = service_name
        for name, (request_cls, response_cls) in table.items():
            call = channel.unary_unary(
                method_path(service_name, name),
                request_serializer=request_cls.SerializeToString,
                response_deserializer=response_cls.FromString,
            )
            setattr(self, name, call)


class MasterStub(_Stub):
    """MasterService's calls, typed by their messages (master.proto)."""

    CreateSession: grpc.UnaryUnaryMultiCallable[
        master_pb2.CreateSessionRequest, master_pb2.CreateSessionResponse
    ]
    ExtendSession: grpc.UnaryUnaryMultiCallable[
        master_pb2.ExtendSessionRequest, master_pb2.ExtendSessionResponse
    ]
    PartialRunSetup: grpc.UnaryUnaryMultiCallable[
        master_pb2.PartialRunSetupRequest, master_pb2.PartialRunSetupResponse
    ]
    RunStep: grpc.UnaryUnaryMultiCallable[master_pb2.RunStepRequest, master_pb2.RunStepResponse]
    CloseSession: grpc.UnaryUnaryMultiCallable[
        master_pb2.CloseSessionRequest, master_pb2.CloseSessionResponse
    ]
    ListDevices: grpc.UnaryUnaryMultiCallable[
        master_pb2.ListDevicesRequest, master_pb2.ListDevicesResponse
    ]
    Reset: grpc.UnaryUnaryMultiCallable[master_pb2.ResetRequest, master_pb2.ResetResponse]
    MakeCallable: grpc.UnaryUnaryMultiCallable[
        master_pb2.MakeCallableRequest, master_pb2.MakeCallableResponse
    ]
    RunCallable: grpc.UnaryUnaryMultiCallable[
        master_pb2.RunCallableRequest, master_pb2.RunCallableResponse
    ]
    ReleaseCallable: grpc.UnaryUnaryMultiCallable[
        master_pb2.ReleaseCallableRequest, master_pb2.ReleaseCallableResponse
    ]


class WorkerStub(_Stub):
    """WorkerService's calls, typed by their messages (worker.proto)."""

    GetStatus: grpc.UnaryUnaryMultiCallable[
        worker_pb2.GetStatusRequest, worker_pb2.GetStatusResponse
    ]
    CreateWorkerSession: grpc.UnaryUnaryMultiCallable[
        worker_pb2.CreateWorkerSessionRequest, worker_pb2.CreateWorkerSessionResponse
    ]
    DeleteWorkerSession: grpc.UnaryUnaryMultiCallable[
        worker_pb2.DeleteWorkerSessionRequest, worker_pb2.DeleteWorkerSessionResponse
    ]
    RegisterGraph: grpc.UnaryUnaryMultiCallable[
        worker_pb2.RegisterGraphRequest, worker_pb2.RegisterGraphResponse
    ]
    DeregisterGraph: grpc.UnaryUnaryMultiCallable[
        worker_pb2.DeregisterGraphRequest, worker_pb2.DeregisterGraphResponse
    ]
    RunGraph: grpc.UnaryUnaryMultiCallable[worker_pb2.RunGraphRequest, worker_pb2.RunGraphResponse]
    CleanupGraph: grpc.UnaryUnaryMultiCallable[
        worker_pb2.CleanupGraphRequest, worker_pb2.CleanupGraphResponse
    ]
    CleanupAll: grpc.UnaryUnaryMultiCallable[
        worker_pb2.CleanupAllRequest, worker_pb2.CleanupAllResponse
    ]
    RecvTensor: grpc.UnaryUnaryMultiCallable[
        worker_pb2.RecvTensorRequest, worker_pb2.RecvTensorResponse
    ]
    RecvBuf: grpc.UnaryUnaryMultiCallable[worker_pb2.RecvBufRequest, worker_pb2.RecvBufResponse]
    Logging: grpc.UnaryUnaryMultiCallable[worker_pb2.LoggingRequest, worker_pb2.LoggingResponse]
    Tracing: grpc.UnaryUnaryMultiCallable[worker_pb2.TracingRequest, worker_pb2.TracingResponse]
    CompleteGroup: grpc.UnaryUnaryMultiCallable[
        worker_pb2.CompleteGroupRequest, worker_pb2.CompleteGroupResponse
    ]
    CompleteInstance: grpc.UnaryUnaryMultiCallable[
        worker_pb2.CompleteInstanceRequest, worker_pb2.CompleteInstanceResponse
    ]
    GetStepSequence: grpc.UnaryUnaryMultiCallable[
        worker_pb2.GetStepSequenceRequest, worker_pb2.GetStepSequenceResponse
    ]
    MarkRecvFinished: grpc.UnaryUnaryMultiCallable[
        worker_pb2.MarkRecvFinishedRequest, worker_pb2.MarkRecvFinishedResponse
    ]


def master_stub(channel: grpc.Channel, service_name: str = MASTER_SERVICE_NAMES[0]) -> MasterStub:
    """Client for a master; calls /tensorflow.MasterService/<Method> by default."""
    return MasterStub(channel, service_name, MASTER_METHODS)


def worker_stub(channel: grpc.Channel, service_name: str = WORKER_SERVICE_NAMES[0]) -> WorkerStub:
    """Client for a worker; calls /tensorflow.WorkerService/<Method> by default."""
    return WorkerStub(channel, service_name, WORKER_METHODS)


# -- our extension methods (TensorFlow workers answer them UNIMPLEMENTED) -------------------
STREAM_SERVICE = "dataflow.WorkerService"
STREAM_METHOD = "RecvTensorStream"
STREAM_PATH = f"/{STREAM_SERVICE}/{STREAM_METHOD}"
# RecvTensorStream's answer when it is one message, as a unary RPC (worker.service serves it).
ONE_METHOD = "RecvTensorOne"
ONE_PATH = f"/{STREAM_SERVICE}/{ONE_METHOD}"
# Our batched CleanupGraph (the master's background cleanups): the request is the step ids
# as little-endian int64s, the response empty. TensorFlow workers answer UNIMPLEMENTED.
CLEANUP_BATCH_METHOD = "CleanupGraphBatch"
CLEANUP_BATCH_PATH = f"/{STREAM_SERVICE}/{CLEANUP_BATCH_METHOD}"

# A master renews its worker sessions' leases (worker.session_leases): the request is
# `<d lease seconds>` then the session handles, NUL-separated; the response empty.
KEEPALIVE_METHOD = "KeepAliveSessions"
KEEPALIVE_PATH = f"/{STREAM_SERVICE}/{KEEPALIVE_METHOD}"
_LEASE = struct.Struct("<d")


def encode_keepalive(lease_s: float, handles: Sequence[str]) -> bytes:
    return _LEASE.pack(lease_s) + "\0".join(handles).encode()


def decode_keepalive(payload: bytes) -> tuple[float, list[str]]:
    (lease_s,) = _LEASE.unpack_from(payload)
    rest = payload[_LEASE.size :].decode()
    return lease_s, [h for h in rest.split("\0") if h]
