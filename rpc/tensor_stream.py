"""Remote rendezvous, wire form of a received tensor: RecvTensor (unary, TF-compatible) and
our chunked RecvTensorStream.

Unary RecvTensor answers a normal RecvTensorResponse with the value in tensor_content,
which any TensorFlow peer parses. Between our own workers the value streams instead, so no
single gRPC message holds it (no 2 GiB cliff, no 4 MiB limit):

    message 0:    a serialized RecvTensorResponse: is_dead, send_start_micros, and a
                  tensor with dtype + shape only (for string/resource/variant dtypes the
                  whole value, in tensor_content form, since it has no fixed byte size);
    messages 1..: raw little-endian element bytes, CHUNK_BYTES each (the last shorter).

The receiver preallocates ONE numpy buffer of the announced size and copies every chunk
into place (no bytes concatenation); a byte count that does not add up is DataLossError.

`encode_stream` (what the server answers) adds two shortcuts: a value of at most
INLINE_BYTES travels in message 0's tensor_content (one message), and a value of at least
shm.MIN_BYTES whose request carries a matching same-host `ShmOffer` travels through
shared memory (rpc.shm): message 0 then has dtype + shape and a `ShmTensor`
transport_options naming the segment, and nothing follows. Pure functions apart from the
segments shm writes; safe from any thread.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from common import dtypes
from common import tensor as tensor_util
from common.errors import DataLossError, InvalidArgumentError
from protos import worker_pb2
from rpc import shm

CHUNK_BYTES = 2 << 20  # well below grpcio's default 4 MiB message limit
INLINE_BYTES = 64 << 10  # up to this, the value rides in the first message


def _now_micros() -> int:
    return int(time.time() * 1e6)


def _dead_tensor_proto() -> Any:
    # TF sends an empty (default) tensor with is_dead; keep a valid dtype for parsers.
    return tensor_util.as_proto_tensor_content(np.zeros((0,), np.float32))


def to_response(value: Any, is_dead: bool) -> worker_pb2.RecvTensorResponse:
    """The unary RecvTensorResponse for a value (tensor_content form)."""
    resp = worker_pb2.RecvTensorResponse(is_dead=is_dead, send_start_micros=_now_micros())
    if is_dead:
        resp.tensor.CopyFrom(_dead_tensor_proto())
    else:
        resp.tensor.CopyFrom(tensor_util.as_proto_tensor_content(np.asarray(value)))
    return resp


def from_response(resp: worker_pb2.RecvTensorResponse) -> tuple[Any, bool]:
    """(value, is_dead) from a unary RecvTensorResponse (any TensorProto form)."""
    if resp.is_dead:
        return None, True
    return tensor_util.to_numpy(resp.tensor), False


def encode_chunks(value: Any, is_dead: bool, chunk_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
    """The RecvTensorStream messages for a value (see the module docstring)."""
    head = worker_pb2.RecvTensorResponse(is_dead=is_dead, send_start_micros=_now_micros())
    if is_dead:
        yield head.SerializeToString()
        return
    array = np.asarray(value)
    dt = tensor_util.infer_dtype(array)
    if not dtypes.is_memcpy(dt):
        head.tensor.CopyFrom(tensor_util.as_proto_tensor_content(array, dt))
        yield head.SerializeToString()
        return
    head.tensor.dtype = dtypes.as_proto_enum(dt)
    for d in array.shape:
        head.tensor.tensor_shape.dim.add(size=d)
    yield head.SerializeToString()
    content = tensor_util.tensor_content_view(array)
    for start in range(0, len(content), chunk_bytes):
        yield bytes(content[start : start + chunk_bytes])


def raw_messages(array: np.ndarray) -> list[Any]:
    """A memcpy-able value as two messages, head and ALL its bytes as one chunk (a view of
    the array, not a copy): what a same-host socket answer carries (rpc.local_rpc)."""
    head = worker_pb2.RecvTensorResponse(send_start_micros=_now_micros())
    head.tensor.dtype = dtypes.as_proto_enum(tensor_util.infer_dtype(array))
    for d in array.shape:
        head.tensor.tensor_shape.dim.add(size=d)
    return [head.SerializeToString(), tensor_util.tensor_content_view(array)]


def shm_offer(request: worker_pb2.RecvTensorRequest, lent: tuple[str, int] | None = None) -> None:
    """Offer the same-host shared-memory path in a RecvTensorStream request, with the
    receiver's free pooled segment (name, size) to write into when there is one."""
    request.transport_options.type_url = shm.OFFER_TYPE
    parts = [shm.host_id()]
    if lent is not None:
        parts += [lent[0].encode(), str(lent[1]).encode()]
    request.transport_options.value = b"\0".join(parts)


def lent_segment(request: Any) -> tuple[str, Any] | None:
    """The receiver's pooled segment a same-host `request` lends (see shm_offer), as its
    name and this producer's writable mapping of it (rpc.shm.writable), if this host
    can write it; else None. Asked when the request arrives, before the value exists."""
    opts = request.transport_options
    if opts.type_url != shm.OFFER_TYPE:
        return None
    parts = opts.value.split(b"\0")
    if len(parts) != 3 or parts[0] != shm.host_id() or not parts[2].isdigit():
        return None
    nbytes = int(parts[2])
    if nbytes < shm.MIN_BYTES or nbytes <= INLINE_BYTES or not shm.enabled():
        return None
    name = parts[1].decode(errors="replace")
    mapping = shm.writable(name, nbytes)
    return None if mapping is None else (name, mapping)


def write_lent(value: Any, name: str, mapping: Any) -> bytes | None:
    """The answer's one message for `value` written into the lent segment `name` (its
    writable `mapping`: rpc.shm.writable, looked up before the value existed), when
    `value` is a C-contiguous little-endian memcpy-able array of exactly the segment's
    size; else None (encode_stream then answers). What encode_stream does for such a
    value, without its checks and conversions: the sender runs it between its kernel and
    the answer, on the critical path of every same-host hop."""
    if type(value) is not np.ndarray or value.nbytes != len(mapping):
        return None
    dt = _memcpy_enum(value.dtype)
    if dt is None or not value.flags.c_contiguous:
        return None
    mapping[:] = value.reshape(-1).view(np.uint8).data
    return _shm_head(dt, value.shape, name)


@functools.cache
def _memcpy_enum(np_dtype: np.dtype) -> int | None:
    """The DataType (int) of a native or little-endian memcpy-able numpy dtype, else None."""
    if np_dtype.hasobject or np_dtype.kind in "SUV" or np_dtype.byteorder == ">":
        return None
    try:
        dt = dtypes.from_numpy(np_dtype)
    except InvalidArgumentError:
        return None
    return int(dt) if dtypes.is_memcpy(dt) else None


def _shm_head(dt: int, shape: tuple[int, ...], name: str) -> bytes:
    """Message 0 of a value handed over in the shared-memory segment `name`."""
    head = worker_pb2.RecvTensorResponse(send_start_micros=_now_micros())
    head.tensor.dtype = dtypes.as_proto_enum(dt)
    for d in shape:
        head.tensor.tensor_shape.dim.add(size=d)
    head.transport_options.type_url = shm.TENSOR_TYPE
    head.transport_options.value = name.encode()
    return head.SerializeToString()


def lent_fits(request: Any, nbytes: int) -> bool:
    """Whether `request` lends a same-host segment of exactly `nbytes` (the value then
    goes into it in place: rpc.shm.write_into)."""
    return _shm_accepted(request, nbytes)[1] is not None


def _shm_accepted(request: Any, nbytes: int) -> tuple[bool, str | None]:
    """(use shared memory, the receiver's segment of exactly nbytes or None)."""
    opts = request.transport_options if request is not None else None
    if opts is None or opts.type_url != shm.OFFER_TYPE or nbytes < shm.MIN_BYTES:
        return False, None
    parts = opts.value.split(b"\0")
    if parts[0] != shm.host_id() or not shm.enabled():
        return False, None
    if len(parts) == 3 and parts[2].isdigit() and int(parts[2]) == nbytes:
        return True, parts[1].decode(errors="replace")
    return True, None


def encode_stream(
    request: Any, value: Any, is_dead: bool, chunk_bytes: int = CHUNK_BYTES
) -> Iterator[bytes]:
    """The RecvTensorStream answer to `request`: inline, shared memory or chunks."""
    if is_dead:
        yield from encode_chunks(value, is_dead, chunk_bytes)
        return
    array = np.asarray(value)
    dt = tensor_util.infer_dtype(array)
    if not dtypes.is_memcpy(dt):
        yield from encode_chunks(array, False, chunk_bytes)
        return
    nbytes = array.nbytes
    if nbytes <= INLINE_BYTES:
        head = worker_pb2.RecvTensorResponse(send_start_micros=_now_micros())
        head.tensor.CopyFrom(tensor_util.as_proto_tensor_content(array, dt))
        yield head.SerializeToString()
    elif (offer := _shm_accepted(request, nbytes))[0]:
        content = tensor_util.tensor_content_view(array)
        name = offer[1]
        if name is None or not shm.write_into(name, content):
            name = shm.write_segment(content)
        yield _shm_head(dt, array.shape, name)
    else:
        yield from encode_chunks(array, False, chunk_bytes)


def decode_chunks(
    messages: Iterable[bytes],
    what: str = "RecvTensorStream",
    key: str | None = None,
    lent: str | None = None,
) -> tuple[Any, bool]:
    """(value, is_dead) from the RecvTensorStream messages; DataLossError if malformed.
    With the rendezvous `key`, shared-memory segments go through shm.POOL (`lent`: the
    pooled segment the request offered)."""
    it = iter(messages)
    first = next(it, None)
    if first is None:
        raise DataLossError(f"{what}: empty stream")
    head = worker_pb2.RecvTensorResponse.FromString(first)
    if head.is_dead:
        _expect_end(it, what)
        return None, True
    if lent is not None and key is not None and head.transport_options.value == lent.encode():
        value = _lent_value(head, key, lent)
        if value is not None:
            _expect_end(it, what)
            return value, False
    dt = tensor_util.proto_dtype(head.tensor)
    if not dtypes.is_memcpy(dt) or head.tensor.tensor_content:
        _expect_end(it, what)
        return tensor_util.to_numpy(head.tensor), False
    shape = tensor_util.proto_shape(head.tensor)
    np_dtype = dtypes.as_numpy(dt)
    if head.transport_options.type_url == shm.TENSOR_TYPE:
        _expect_end(it, what)
        nbytes = math.prod(shape) * np_dtype.itemsize
        name = head.transport_options.value.decode(errors="replace")
        if key is None:
            mapping = shm.map_segment(name, nbytes)
        else:
            mapping = shm.POOL.receive(key, name, nbytes, lent)
        return np.frombuffer(mapping, np_dtype).reshape(shape), False
    nbytes = math.prod(shape) * np_dtype.itemsize
    if isinstance(messages, list) and len(messages) == 2 and len(messages[1]) == nbytes:
        whole = np.frombuffer(messages[1], np.uint8)  # one chunk of it all (a local answer)
        if key is not None:
            shm.POOL.note(key, nbytes)  # the next step may hand it over in shared memory
        if whole.ctypes.data % np_dtype.alignment == 0:
            return whole.view(np_dtype).reshape(shape), False  # no copy
    buf = np.empty(nbytes, np.uint8)
    offset = 0
    for chunk in it:
        end = offset + len(chunk)
        if end > buf.size:
            raise DataLossError(f"{what}: more than the announced {buf.size} bytes")
        buf[offset:end] = np.frombuffer(chunk, np.uint8)
        offset = end
    if offset != buf.size:
        raise DataLossError(f"{what}: got {offset} of {buf.size} bytes")
    return buf.view(np_dtype).reshape(shape), False


def _lent_value(head: Any, key: str, lent: str) -> np.ndarray | None:
    """The value of an answer written into the receiver's lent segment `lent`, viewed in
    its mapping; None (decode_chunks' general path decides) for anything else. What
    decode_chunks does for it, without its conversions: the receiver runs it between the
    answer and the consumer, on the critical path of every same-host hop."""
    if head.transport_options.type_url != shm.TENSOR_TYPE or head.tensor.tensor_content:
        return None
    np_dtype = _memcpy_numpy(head.tensor.dtype)
    if np_dtype is None:
        return None
    shape = tuple([d.size for d in head.tensor.tensor_shape.dim])
    if any(d < 0 for d in shape):
        return None
    nbytes = math.prod(shape) * np_dtype.itemsize
    mapping = shm.POOL.receive(key, lent, nbytes, lent)
    return np.frombuffer(mapping, np_dtype).reshape(shape)


@functools.cache
def _memcpy_numpy(dt: int) -> np.dtype | None:
    """The numpy dtype of a memcpy-able DataType (int; not a _REF), else None."""
    if not dtypes.is_valid(dt) or dtypes.is_ref(dt) or not dtypes.is_memcpy(dt):
        return None
    return dtypes.as_numpy(dt)


def _expect_end(it: Iterator[bytes], what: str) -> None:
    if next(it, None) is not None:
        raise DataLossError(f"{what}: unexpected data after a complete tensor")
