"""Checkpoint format: slices of partitioned variables -- their extents, TensorSliceProtos
and the keys a slice is stored under (checkpoint::EncodeTensorNameSlice in TensorFlow's
OrderedCode). Pure functions."""

from __future__ import annotations

from collections.abc import Sequence

from protos import tensor_slice_pb2

# One dimension of a slice: (start, length), length None for the whole dimension.
Extent = tuple[int, int | None]


def _num_increasing(value: int) -> bytes:
    """OrderedCode::WriteNumIncreasing: a length byte, then big-endian bytes."""
    body = value.to_bytes((value.bit_length() + 7) // 8, "big") if value else b""
    return bytes([len(body)]) + body


def _ordered_string(value: bytes) -> bytes:
    """OrderedCode::WriteString: 0x00 -> 00 ff, 0xff -> ff 00, then the separator 00 01."""
    escaped = (_ESCAPES.get(c, bytes([c])) for c in value)
    return b"".join(escaped) + b"\x00\x01"


_ESCAPES = {0x00: b"\x00\xff", 0xFF: b"\xff\x00"}


# Header bits of OrderedCode::WriteSignedNumIncreasing by encoded length.
_SIGNED_HEADER = [(0, 0), (0x80, 0), (0xC0, 0), (0xE0, 0), (0xF0, 0), (0xF8, 0), (0xFC, 0)]
_SIGNED_HEADER += [(0xFE, 0), (0xFF, 0), (0xFF, 0x80), (0xFF, 0xC0)]


def _signed_increasing(value: int) -> bytes:
    """OrderedCode::WriteSignedNumIncreasing: n bytes hold [-2^(7n-1), 2^(7n-1)); the
    leading bits give the sign and the length."""
    x = ~value if value < 0 else value
    if x < 64:
        return bytes([(0x80 ^ value) & 0xFF])
    length = -(-(x.bit_length() + 1) // 7)
    body = bytearray((value & ((1 << 80) - 1)).to_bytes(10, "big")[10 - length :])
    body[0] ^= _SIGNED_HEADER[length][0]
    body[1] ^= _SIGNED_HEADER[length][1]
    return bytes(body)


def encode_tensor_name_slice(name: bytes, extents: Sequence[Extent]) -> bytes:
    """The key a slice of tensor `name` is stored under (EncodeTensorNameSlice)."""
    out = _num_increasing(0) + _ordered_string(name) + _num_increasing(len(extents))
    for start, length in extents:
        if length is None:  # TensorSlice's full extent: start 0, length kFullExtent (-1)
            start, length = 0, -1
        out += _signed_increasing(start) + _signed_increasing(length)
    return out


def is_full_slice(extents: Sequence[Extent], shape: Sequence[int]) -> bool:
    return all(n is None or (s == 0 and n == d) for (s, n), d in zip(extents, shape))


def slice_proto(extents: Sequence[Extent]) -> tensor_slice_pb2.TensorSliceProto:
    """TensorSlice::AsProto: a full dimension is an empty Extent."""
    proto = tensor_slice_pb2.TensorSliceProto()
    for start, length in extents:
        extent = proto.extent.add()
        if length is not None:
            extent.start, extent.length = start, length
    return proto


def extents_of(proto: tensor_slice_pb2.TensorSliceProto) -> list[Extent]:
    return [(e.start, e.length if e.HasField("length") else None) for e in proto.extent]


def bounds(extents: Sequence[Extent], shape: Sequence[int]) -> list[tuple[int, int]]:
    return [(s, d if n is None else s + n) for (s, n), d in zip(extents, shape)]


def extents_str(extents: Sequence[Extent]) -> str:
    return ":".join("-" if n is None else f"{s},{n}" for s, n in extents)
