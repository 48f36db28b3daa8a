"""Status conversion between OpError and gRPC: the one place each way.

Server side: `abort(context, error)` ends an RPC with the error's TensorFlow code (the
numbers equal gRPC's) and its truncated message. Client side: `from_rpc_error(err, task)`
turns a failed call into the OpError with the same code; a peer that cannot be reached
becomes UnavailableError "<task> is unavailable: ..." and a missed deadline names the task
too. Used by the worker service, the remote rendezvous and the master's worker calls.
Pure functions; safe from any thread.
"""

from __future__ import annotations

from typing import NoReturn

import grpc

from common.errors import (
    Code,
    DeadlineExceededError,
    OpError,
    UnavailableError,
    from_code,
    truncate,
)

_GRPC_BY_NUMBER: dict[int, grpc.StatusCode] = {c.value[0]: c for c in grpc.StatusCode}


def grpc_code(code: Code) -> grpc.StatusCode:
    return _GRPC_BY_NUMBER.get(int(code), grpc.StatusCode.UNKNOWN)


def abort(context: grpc.ServicerContext, error: OpError) -> NoReturn:
    """End the current RPC with `error` (raises, as grpc's context.abort does)."""
    context.abort(grpc_code(error.code), truncate(error.message))
    raise AssertionError("context.abort returned")  # pragma: no cover


def from_rpc_error(err: grpc.RpcError, task: str, method: str = "") -> OpError:
    """The OpError for a failed call to `task` (a task or device name)."""
    code_enum = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
    details = (err.details() if hasattr(err, "details") else None) or str(err)
    what = f" ({method})" if method else ""
    if code_enum == grpc.StatusCode.UNAVAILABLE:
        return UnavailableError(f"{task} is unavailable{what}: {details}")
    if code_enum == grpc.StatusCode.DEADLINE_EXCEEDED:
        return DeadlineExceededError(f"Call to {task}{what} timed out: {details}")
    return from_code(code_enum.value[0], details)
