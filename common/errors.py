"""Errors: the one error model of the runtime, TensorFlow's canonical status codes.

Every failure the runtime reports is an `OpError` subclass carrying a `Code` whose numbers
are TensorFlow's (and gRPC's: the two are identical for 0-16), a message, and where known
the node that failed. Conversion to and from gRPC status happens in exactly one place each
way (rpc.status). `root_error` is the one rule for which of a step's errors it reports.
Safe from any thread.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from protos import error_codes_pb2


class Code(enum.IntEnum):
    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16


class OpError(Exception):
    """A failed operation: TensorFlow's status code, a message, and the node at fault."""

    code: Code = Code.UNKNOWN

    def __init__(self, message: str, node_name: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.node_name = node_name

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):  # keep the node name when pickled across processes
        return (type(self), (self.message, self.node_name))

    def with_node(self, node_name: str) -> OpError:
        """The same error attributed to `node_name` (kept if one is already set)."""
        if self.node_name is None:
            self.node_name = node_name
        return self


class CancelledError(OpError):
    code = Code.CANCELLED


class UnknownError(OpError):
    code = Code.UNKNOWN


class InvalidArgumentError(OpError):
    code = Code.INVALID_ARGUMENT


class DeadlineExceededError(OpError):
    code = Code.DEADLINE_EXCEEDED


class NotFoundError(OpError):
    code = Code.NOT_FOUND


class AlreadyExistsError(OpError):
    code = Code.ALREADY_EXISTS


class PermissionDeniedError(OpError):
    code = Code.PERMISSION_DENIED


class ResourceExhaustedError(OpError):
    code = Code.RESOURCE_EXHAUSTED


class FailedPreconditionError(OpError):
    code = Code.FAILED_PRECONDITION


class AbortedError(OpError):
    code = Code.ABORTED


class OutOfRangeError(OpError):
    code = Code.OUT_OF_RANGE


class UnimplementedError(OpError):
    code = Code.UNIMPLEMENTED


class InternalError(OpError):
    code = Code.INTERNAL


class UnavailableError(OpError):
    code = Code.UNAVAILABLE


class DataLossError(OpError):
    code = Code.DATA_LOSS


class UnauthenticatedError(OpError):
    code = Code.UNAUTHENTICATED


_BY_CODE: dict[Code, type[OpError]] = {
    cls.code: cls
    for cls in (
        CancelledError,
        UnknownError,
        InvalidArgumentError,
        DeadlineExceededError,
        NotFoundError,
        AlreadyExistsError,
        PermissionDeniedError,
        ResourceExhaustedError,
        FailedPreconditionError,
        AbortedError,
        OutOfRangeError,
        UnimplementedError,
        InternalError,
        UnavailableError,
        DataLossError,
        UnauthenticatedError,
    )
}

# TensorFlow's servers truncate long status messages; so do we, the same way.
MAX_MESSAGE_BYTES = 3072


def error_class(code: int) -> type[OpError]:
    try:
        return _BY_CODE[Code(code)]
    except (ValueError, KeyError):
        return UnknownError


def as_proto_code(code: int) -> error_codes_pb2.Code:
    """`code` as the type the generated proto stubs give status-code fields (the same int)."""
    return cast("error_codes_pb2.Code", int(code))


def from_code(code: int, message: str, node_name: str | None = None) -> OpError:
    """The exception for a status code received from a peer (unknown codes become UNKNOWN);
    the node is read from TensorFlow's "[[{{node X}}]]" in the message unless given."""
    return error_class(code)(message, node_name or node_in_message(message))


_NODE_IN_MESSAGE = re.compile(r"\{\{node ([^}]+)\}\}")


def node_in_message(message: str) -> str | None:
    """The node a TensorFlow error message names ("... [[{{node X}}]]"), if any."""
    m = _NODE_IN_MESSAGE.search(message)
    return m.group(1) if m else None


def naming_node(error: OpError) -> OpError:
    """`error` with TensorFlow's "\\n\\t [[{{node X}}]]" suffix when it has a node and its
    message names none yet: what crosses the wire (clients and masters parse it back)."""
    node = error.node_name
    if node and "{{node " not in error.message:
        return type(error)(f"{error.message}\n\t [[{{{{node {node}}}}}]]", node)
    return error


def as_op_error(exc: BaseException) -> OpError:
    """Any exception as an OpError; a MemoryError is RESOURCE_EXHAUSTED, other foreign
    exceptions INTERNAL with their type named."""
    if isinstance(exc, OpError):
        return exc
    if isinstance(exc, MemoryError):  # numpy could not allocate: TF's allocator OOM
        return ResourceExhaustedError(f"OOM: {exc or 'out of memory'}")
    return InternalError(f"{type(exc).__name__}: {exc}")


def truncate(message: str) -> str:
    data = message.encode("utf-8", "replace")
    if len(data) <= MAX_MESSAGE_BYTES:
        return message
    return data[:MAX_MESSAGE_BYTES].decode("utf-8", "ignore") + "... [truncated]"


_ECHO_CODES = frozenset({Code.ABORTED, Code.CANCELLED})


def root_error(errors: Sequence[OpError], recv_nodes: Collection[str] = ()) -> OpError:
    """The error a step reports out of all its parts' errors (in the order they arrived):
    the cause rather than its echoes, as TensorFlow's StatusGroup skips derived statuses.
    Aborts and cancellations are usually echoes of the first failure, and so is an error at
    a _Recv (`recv_nodes`): a peer's failure reaches the parts waiting on it through their
    _Recvs. The first error of the best rank wins; `errors` must not be empty."""

    def echo_rank(e: OpError) -> tuple[bool, bool]:
        return e.code in _ECHO_CODES, e.node_name is not None and e.node_name in recv_nodes

    return min(errors, key=echo_rank)
