"""Master, gRPC edge: the MasterService servicer (TensorFlow's GrpcMasterService).

Thin adapter: decode the request, call `Master`, encode the response. Exceptions become
statuses in exactly one place (`_call`): OpErrors keep their TensorFlow code (equal to
the gRPC code) and message (with TF's "[[{{node X}}]]" suffix when a node is named, which
TensorFlow's Python client parses), anything else is INTERNAL. RunStep honours
`store_errors_in_response_body`: a failed step answers gRPC OK with status_code and
status_error_message. RunStep and RunCallable hand their response's RunMetadata to the
master, which fills it when RunOptions ask for a trace or partition graphs. Safe from any
thread (the Master is).
"""

from __future__ import annotations

import collections
import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import grpc

from common.errors import (
    CancelledError,
    DeadlineExceededError,
    OpError,
    as_op_error,
    as_proto_code,
    naming_node,
    truncate,
)
from master.master import Master
from master.partition_runner import STEP_CALL
from protos import master_pb2
from rpc import status as rpc_status
from rpc import wire
from rpc.admission import Slots

_FEED_FIELD = master_pb2.RunStepRequest.FEED_FIELD_NUMBER
_TENSOR_FIELD = master_pb2.RunStepResponse.TENSOR_FIELD_NUMBER
# Steps running at once (gRPC and socket calls together); more are UNAVAILABLE at once.
DEFAULT_MAX_STEPS = 80

log = logging.getLogger(__name__)

T = TypeVar("T")


def status_of(exc: BaseException) -> OpError:
    """The OpError a client sees for `exc`, its message naming the node."""
    error = as_op_error(exc)
    if not isinstance(exc, OpError):
        log.exception("internal error in a MasterService call")
    return naming_node(error)


class MasterServicer:
    """Each method is one MasterService RPC."""

    def __init__(self, master: Master, max_steps: int = DEFAULT_MAX_STEPS) -> None:
        self.master = master
        # Steps may block for long: they never take the threads control calls need.
        self.steps = Slots("master: steps running", max_steps, per_key=max_steps // 2)

    @staticmethod
    def _call(context: grpc.ServicerContext, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001  (the one exception -> status place)
            rpc_status.abort(context, status_of(exc))

    def CreateSession(
        self, request: master_pb2.CreateSessionRequest, context: grpc.ServicerContext
    ) -> master_pb2.CreateSessionResponse:
        handle, version = self._call(
            context, lambda: self.master.create_session(request.graph_def, request.config)
        )
        return master_pb2.CreateSessionResponse(session_handle=handle, graph_version=version)

    def ExtendSession(
        self, request: master_pb2.ExtendSessionRequest, context: grpc.ServicerContext
    ) -> master_pb2.ExtendSessionResponse:
        version = self._call(
            context,
            lambda: self.master.extend_session(
                request.session_handle, request.graph_def, request.current_graph_version
            ),
        )
        return master_pb2.ExtendSessionResponse(new_graph_version=version)

    def PartialRunSetup(
        self, request: master_pb2.PartialRunSetupRequest, context: grpc.ServicerContext
    ) -> master_pb2.PartialRunSetupResponse:
        handle = self._call(
            context,
            lambda: self.master.partial_run_setup(
                request.session_handle,
                list(request.feed),
                list(request.fetch),
                list(request.target),
            ),
        )
        return master_pb2.PartialRunSetupResponse(partial_run_handle=handle)

    def RunStep(
        self, request: master_pb2.RunStepRequest, context: grpc.ServicerContext
    ) -> master_pb2.RunStepResponse | wire.PartsMessage:
        return self._run_step(request, [(f.name, f.tensor) for f in request.feed], context)

    def RunStepSplit(self, payload: Any, context: Any) -> Any:
        """RunStep from its serialized request (the same-host socket): large feeds stay
        views of `payload` on their way to the workers, not copies (rpc.wire)."""
        request, feeds = wire.split_named_tensors(master_pb2.RunStepRequest, payload, _FEED_FIELD)
        return self._run_step(request, feeds, context)

    def _run_step(
        self,
        request: master_pb2.RunStepRequest,
        feeds: list[tuple[str, wire.Tensor]],
        context: Any,
    ) -> master_pb2.RunStepResponse | wire.PartsMessage:
        """The RunStepResponse; with large fetched values (views of what the workers
        sent: rpc.wire), a PartsMessage that frames them without a copy."""
        response = master_pb2.RunStepResponse()
        response.metadata.SetInParent()
        try:
            with self.steps.admit(f"session {request.session_handle}"), _cancel_on_end(context):
                values = self.master.run_step(
                    request.session_handle,
                    feeds,
                    list(request.fetch),
                    list(request.target),
                    request.options if request.HasField("options") else None,
                    request.partial_run_handle,
                    request.request_id,
                    response.metadata,
                )
        except Exception as exc:  # noqa: BLE001
            error = status_of(exc)
            if not request.store_errors_in_response_body:
                rpc_status.abort(context, error)
            response.status_code = as_proto_code(error.code)
            response.status_error_message = truncate(error.message)
            return response
        # TensorFlow's master answers sorted by name, a fetch listed twice twice.
        listed = collections.Counter(request.fetch)
        fetched = [
            (name, values[name]) for name in sorted(values) for _ in range(listed[name] or 1)
        ]
        if any(isinstance(value, wire.SplitTensor) for _, value in fetched):
            return wire.PartsMessage(response, _TENSOR_FIELD, fetched)
        for name, value in fetched:
            response.tensor.add(name=name).tensor.CopyFrom(wire.whole(value))
        return response

    def CloseSession(
        self, request: master_pb2.CloseSessionRequest, context: grpc.ServicerContext
    ) -> master_pb2.CloseSessionResponse:
        self._call(context, lambda: self.master.close_session(request.session_handle))
        return master_pb2.CloseSessionResponse()

    def ListDevices(
        self, request: master_pb2.ListDevicesRequest, context: grpc.ServicerContext
    ) -> master_pb2.ListDevicesResponse:
        local, remote = self._call(
            context, lambda: self.master.list_devices(request.session_handle)
        )
        return master_pb2.ListDevicesResponse(local_device=local, remote_device=remote)

    def Reset(
        self, request: master_pb2.ResetRequest, context: grpc.ServicerContext
    ) -> master_pb2.ResetResponse:
        self._call(context, lambda: self.master.reset(list(request.container)))
        return master_pb2.ResetResponse()

    def MakeCallable(
        self, request: master_pb2.MakeCallableRequest, context: grpc.ServicerContext
    ) -> master_pb2.MakeCallableResponse:
        handle = self._call(
            context, lambda: self.master.make_callable(request.session_handle, request.options)
        )
        return master_pb2.MakeCallableResponse(handle=handle)

    def RunCallable(
        self, request: master_pb2.RunCallableRequest, context: grpc.ServicerContext
    ) -> master_pb2.RunCallableResponse:
        response = master_pb2.RunCallableResponse()
        response.metadata.SetInParent()

        def run() -> Any:
            with self.steps.admit(f"session {request.session_handle}"):
                return self.master.run_callable(
                    request.session_handle, request.handle, list(request.feed), response.metadata
                )

        fetched = self._call(context, run)
        response.fetch.extend(fetched)
        return response

    def ReleaseCallable(
        self, request: master_pb2.ReleaseCallableRequest, context: grpc.ServicerContext
    ) -> master_pb2.ReleaseCallableResponse:
        self._call(
            context, lambda: self.master.release_callable(request.session_handle, request.handle)
        )
        return master_pb2.ReleaseCallableResponse()


_DEADLINE_SLACK_S = 0.25


@contextlib.contextmanager
def _cancel_on_end(context: Any) -> Iterator[None]:
    """While the step runs, the RPC ending (the client cancelled, its deadline passed)
    cancels it on every worker (partition_runner.STEP_CALL)."""
    add_callback = getattr(context, "add_callback", None)  # not on the socket path
    if add_callback is None:
        yield
        return
    cancels: list[Callable[[OpError], None]] = []
    finished = [False]

    def on_end() -> None:
        if finished[0]:
            return
        # The client sees DEADLINE_EXCEEDED when its deadline ended the call: the step
        # ends (and is counted) with the same code; a cancel is CANCELLED.
        # (gRPC may end the call a little before its own clock reads the deadline.)
        remaining = context.time_remaining()
        if remaining is not None and remaining <= _DEADLINE_SLACK_S:
            error: OpError = DeadlineExceededError(
                "RunStep's deadline passed: the step was stopped on every worker"
            )
        else:
            error = CancelledError("RunStep was cancelled: the client cancelled its call")
        for cancel in list(cancels):
            cancel(error)

    add_callback(on_end)
    token = STEP_CALL.set(cancels.append)
    try:
        yield
    finally:
        finished[0] = True
        STEP_CALL.reset(token)
