"""Transport, tensors that pass through: a message's large tensor contents kept as views of
the bytes they arrived in, and written out again as parts, never copied in between.

A 1 GB feed crosses the master on its way to a worker. Parsed as a protobuf it is copied
out of the request's bytes; copied into each RunGraphRequest; serialized again. Instead,
on the same-host socket (rpc.local_rpc) the master splits a RunStepRequest's feeds
(`split_named_tensors`): a feed whose `tensor_content` is at least SPLIT_BYTES becomes a
`SplitTensor`, its other fields parsed (dtype, shape) and its content a memoryview of the
request's bytes. A RunGraphRequest carrying split tensors is a `PartsMessage`: its small
fields serialized once, each split tensor framed around its view (`named_tensor_parts`);
the socket sends the parts one after another and gRPC gets them joined once. Fetches go
back the same way: the master splits the worker's RunGraphResponse (a `SplitResponse`) and
answers the RunStep with a `PartsMessage` viewing it.

The wire form is protobuf's (tag = field << 3 | wire type, varint lengths): a message is
the concatenation of its fields, repeated fields may arrive in any order, so appending
framed fields to a serialized message is the message with those fields added. Pure
functions; safe from any thread.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, TypeVar, cast

from google.protobuf.message import DecodeError, Message

from common.errors import InvalidArgumentError
from protos import named_tensor_pb2, tensor_pb2

# Contents below this are parsed as usual: splitting pays off only for large tensors.
SPLIT_BYTES = 1 << 20

_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5
_NAME_FIELD = 1  # NamedTensorProto.name
_TENSOR_FIELD = 2  # NamedTensorProto.tensor
_CONTENT_FIELD = 4  # TensorProto.tensor_content

M = TypeVar("M", bound=Message)


@dataclasses.dataclass(frozen=True, eq=False)
class SplitTensor:
    """A TensorProto whose tensor_content is a view of the bytes it arrived in."""

    header: tensor_pb2.TensorProto  # every field but tensor_content
    content: memoryview

    @property
    def dtype(self) -> int:
        return int(self.header.dtype)

    @property
    def tensor_shape(self) -> Any:
        return self.header.tensor_shape

    def ByteSize(self) -> int:  # noqa: N802  (TensorProto's name: callers take either)
        return sum(memoryview(p).nbytes for p in self.parts())

    def parts(self) -> list[Any]:
        """The serialized TensorProto, as bytes-like parts."""
        return [
            self.header.SerializeToString(),
            _tag(_CONTENT_FIELD, _LEN) + _varint(self.content.nbytes),
            self.content,
        ]

    def proto(self) -> tensor_pb2.TensorProto:
        """A whole TensorProto (a copy of the content)."""
        out = tensor_pb2.TensorProto()
        out.CopyFrom(self.header)
        out.tensor_content = bytes(self.content)
        return out


Tensor = tensor_pb2.TensorProto | SplitTensor


def whole(value: Tensor) -> tensor_pb2.TensorProto:
    """`value` as a TensorProto (a SplitTensor is copied)."""
    return value.proto() if isinstance(value, SplitTensor) else value


@dataclasses.dataclass(frozen=True, eq=False)
class PartsMessage:
    """A message plus (more) entries of one repeated NamedTensorProto field, to be sent as
    parts: split tensors' contents are not copied."""

    message: Message  # without these entries
    field: int  # the repeated NamedTensorProto field they belong to
    tensors: Sequence[tuple[str, Tensor]]

    def parts(self) -> list[Any]:
        out: list[Any] = [self.message.SerializeToString()]
        for name, value in self.tensors:
            out.extend(named_tensor_parts(self.field, name, value))
        return out

    def join(self) -> bytes:
        return b"".join(memoryview(p).cast("B") for p in self.parts())


def serialized_parts(message: Message | PartsMessage) -> list[Any]:
    """A message's wire form as bytes-like parts."""
    if isinstance(message, PartsMessage):
        return message.parts()
    return [message.SerializeToString()]


def serialize(message: Message | PartsMessage) -> bytes:
    """A message's wire form in one piece (gRPC's serializer: one copy of the parts)."""
    if isinstance(message, PartsMessage):
        return message.join()
    return message.SerializeToString()


@dataclasses.dataclass(frozen=True, eq=False)
class SplitResponse:
    """A response message whose repeated NamedTensorProto field was split out
    (`split_named_tensors`); other attributes are the message's."""

    message: Message  # without the split field
    tensors: list[tuple[str, Tensor]]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.message, name)


def named_tensors(response: Any, field: str = "recv") -> dict[str, Tensor]:
    """{name: tensor} of a response's repeated NamedTensorProto `field`, split or not."""
    if isinstance(response, SplitResponse):
        return dict(response.tensors)
    return {named.name: named.tensor for named in getattr(response, field)}


def named_tensor_parts(field: int, name: str, value: Tensor) -> list[Any]:
    """Field `field` holding NamedTensorProto(name, value), as parts (a split tensor's
    content is not copied)."""
    tensor = value.parts() if isinstance(value, SplitTensor) else [value.SerializeToString()]
    tensor_len = sum(memoryview(p).nbytes for p in tensor)
    name_bytes = name.encode()
    head = (
        _tag(_NAME_FIELD, _LEN)
        + _varint(len(name_bytes))
        + name_bytes
        + _tag(_TENSOR_FIELD, _LEN)
        + _varint(tensor_len)
    )
    return [_tag(field, _LEN) + _varint(len(head) + tensor_len) + head, *tensor]


def split_named_tensors(
    cls: type[M], payload: Any, field: int, min_bytes: int = SPLIT_BYTES
) -> tuple[M, list[tuple[str, Tensor]]]:
    """Parse `payload` (a serialized `cls`) apart from its repeated NamedTensorProto
    `field`: (the message without that field, its (name, tensor) entries in wire order,
    those with at least `min_bytes` of tensor_content as SplitTensors viewing `payload`).
    InvalidArgument if malformed."""
    view = memoryview(payload).cast("B")
    if view.nbytes < min_bytes:  # nothing to split: protobuf parses faster
        try:
            message = _parse(cls, view)
        except DecodeError as e:
            raise InvalidArgumentError(f"Malformed {cls.DESCRIPTOR.name}: {e}") from None
        name = cls.DESCRIPTOR.fields_by_number[field].name
        return message, [(named.name, named.tensor) for named in getattr(message, name)]
    rest: list[memoryview] = []
    tensors: list[tuple[str, Tensor]] = []
    try:
        for number, kind, start, value_start, end in _fields(view, 0, view.nbytes):
            if number == field and kind == _LEN:
                tensors.append(_named_tensor(view[value_start:end], min_bytes))
            else:
                rest.append(view[start:end])
        message = cls.FromString(b"".join(rest))
    except (DecodeError, ValueError, IndexError) as e:
        raise InvalidArgumentError(f"Malformed {cls.DESCRIPTOR.name}: {e}") from None
    return message, tensors


def _named_tensor(view: memoryview, min_bytes: int) -> tuple[str, Tensor]:
    if view.nbytes < min_bytes:
        named = _parse(named_tensor_pb2.NamedTensorProto, view)
        return named.name, named.tensor
    name = b""
    tensor: memoryview | None = None
    for number, kind, _, value_start, end in _fields(view, 0, view.nbytes):
        if number == _NAME_FIELD and kind == _LEN:
            name = bytes(view[value_start:end])
        elif number == _TENSOR_FIELD and kind == _LEN:
            if tensor is not None:  # a repeated submessage merges: leave it to protobuf
                named = _parse(named_tensor_pb2.NamedTensorProto, view)
                return named.name, named.tensor
            tensor = view[value_start:end]
    if tensor is None:
        return name.decode(errors="replace"), tensor_pb2.TensorProto()
    return name.decode(errors="replace"), _tensor(tensor, min_bytes)


def _tensor(view: memoryview, min_bytes: int) -> Tensor:
    content: tuple[int, int, int] | None = None
    for number, kind, start, value_start, end in _fields(view, 0, view.nbytes):
        if number == _CONTENT_FIELD and kind == _LEN:
            if content is not None:  # the last one wins: leave it to protobuf
                return _parse(tensor_pb2.TensorProto, view)
            content = (start, value_start, end)
    if content is None or content[2] - content[1] < min_bytes:
        return _parse(tensor_pb2.TensorProto, view)
    start, value_start, end = content
    header = tensor_pb2.TensorProto.FromString(bytes(view[:start]) + bytes(view[end:]))
    return SplitTensor(header, view[value_start:end])


def _parse(cls: type[M], view: memoryview) -> M:
    return cls.FromString(cast(bytes, view))  # protobuf parses any bytes-like object


def _fields(view: memoryview, pos: int, end: int) -> Any:
    """(field number, wire type, field start, value start, field end) of each field."""
    while pos < end:
        start = pos
        key, pos = _read_varint(view, pos)
        number, kind = key >> 3, key & 7
        if number == 0:
            raise DecodeError("field number 0")
        if kind == _VARINT:
            _, pos = _read_varint(view, pos)
            value_start = start
        elif kind == _FIXED64:
            value_start, pos = pos, pos + 8
        elif kind == _FIXED32:
            value_start, pos = pos, pos + 4
        elif kind == _LEN:
            length, value_start = _read_varint(view, pos)
            pos = value_start + length
        else:
            raise DecodeError(f"wire type {kind} (field {number})")
        if pos > end:
            raise DecodeError("truncated message")
        yield number, kind, start, value_start, pos


def _read_varint(view: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if shift > 63:
            raise DecodeError("varint too long")
        byte = view[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return value, pos
        shift += 7


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _tag(field: int, kind: int) -> bytes:
    return _varint(field << 3 | kind)
