"""Tensor values: numpy arrays <-> TensorProto, with TensorFlow's encoding rules.

The one place where tensors cross the proto boundary (Const values, feeds, fetches,
RunGraph send/recv, RecvTensor). Decoding follows TensorFlow's Tensor::FromProto:

* a non-empty `tensor_content` wins: raw little-endian element bytes for fixed-size
  dtypes; for DT_STRING / DT_RESOURCE / DT_VARIANT the varint32 lengths of all elements
  followed by their bytes (serialized protos for resource and variant);
* a variant element is a VariantTensorDataProto; one whose type_name has a registered
  codec (`register_variant_codec`, as TF's variant_op_registry: list_ops registers
  "tensorflow::TensorList") decodes to that Python object and encodes back to TF's
  bytes; any other type_name stays an opaque VariantTensorDataProto;
* otherwise the dtype's typed field (`float_val`, `int_val`, `half_val` as 16-bit
  patterns, complex as (re, im) pairs, float8/float4 as bytes in `float8_val` ...), with
  the fill rule: fewer values than elements repeat the last one; none means zeros.

Arrays decoded from `tensor_content` alias the proto's bytes and are READ-ONLY: kernels
never mutate their inputs in place, so sharing is safe and saves a copy of every large
feed or received tensor. Whoever must own a mutable buffer (variables, in-place updates)
asks `to_numpy(..., writable=True)` or copies. Pure functions; safe from any thread.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from common import dtypes
from common.dtypes import DataType
from common.errors import InvalidArgumentError, ResourceExhaustedError
from common.resource_mgr import ResourceHandle
from common.tensor_shape import known_dims_from_proto, shape_from_proto, shape_to_proto
from protos import resource_handle_pb2, tensor_pb2

TensorProto = tensor_pb2.TensorProto
VariantTensorDataProto = tensor_pb2.VariantTensorDataProto

# dtype -> the typed TensorProto field holding its values.
_INT_VAL_TYPES = (
    DataType.DT_INT32,
    DataType.DT_UINT8,
    DataType.DT_INT16,
    DataType.DT_INT8,
    DataType.DT_QINT8,
    DataType.DT_QUINT8,
    DataType.DT_QINT32,
    DataType.DT_QINT16,
    DataType.DT_QUINT16,
    DataType.DT_UINT16,
    DataType.DT_INT4,
    DataType.DT_UINT4,
    DataType.DT_INT2,
    DataType.DT_UINT2,
)
_FLOAT8_VAL_TYPES = (
    DataType.DT_FLOAT8_E5M2,
    DataType.DT_FLOAT8_E4M3FN,
    DataType.DT_FLOAT8_E4M3FNUZ,
    DataType.DT_FLOAT8_E4M3B11FNUZ,
    DataType.DT_FLOAT8_E5M2FNUZ,
    DataType.DT_FLOAT4_E2M1FN,
)
TYPED_FIELD: dict[DataType, str] = {
    DataType.DT_FLOAT: "float_val",
    DataType.DT_DOUBLE: "double_val",
    DataType.DT_STRING: "string_val",
    DataType.DT_COMPLEX64: "scomplex_val",
    DataType.DT_INT64: "int64_val",
    DataType.DT_BOOL: "bool_val",
    DataType.DT_BFLOAT16: "half_val",
    DataType.DT_COMPLEX128: "dcomplex_val",
    DataType.DT_HALF: "half_val",
    DataType.DT_RESOURCE: "resource_handle_val",
    DataType.DT_VARIANT: "variant_val",
    DataType.DT_UINT32: "uint32_val",
    DataType.DT_UINT64: "uint64_val",
    **{dt: "int_val" for dt in _INT_VAL_TYPES},
    **{dt: "float8_val" for dt in _FLOAT8_VAL_TYPES},
}
_LIST_TYPES = (DataType.DT_STRING, DataType.DT_RESOURCE, DataType.DT_VARIANT)

# ---------------------------------------------------------------------------------------
# The varint-lengths-then-bytes list form (TF EncodeStringList / StringListDecoder)
# ---------------------------------------------------------------------------------------


def _put_varint32(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def encode_string_list(items: Sequence[bytes]) -> bytes:
    """All lengths as varint32 first, then all bytes:
    ["ab", "", "xyz"] -> b"\\x02\\x00\\x03abxyz"."""
    out = bytearray()
    for item in items:
        if len(item) >= 1 << 32:
            raise InvalidArgumentError("String element longer than 2^32-1 bytes")
        _put_varint32(out, len(item))
    for item in items:
        out += item
    return bytes(out)


def _get_varint32(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while shift < 35:
        if pos >= len(data):
            raise InvalidArgumentError("Truncated varint in string-list tensor_content")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & 0xFFFFFFFF, pos
        shift += 7
    raise InvalidArgumentError("Malformed varint32 in string-list tensor_content")


def decode_string_list(data: bytes, n: int) -> list[bytes]:
    """Inverse of encode_string_list for `n` elements; InvalidArgumentError unless the
    data holds exactly n lengths and their bytes."""
    pos = 0
    sizes = []
    for _ in range(n):
        size, pos = _get_varint32(data, pos)
        sizes.append(size)
    if pos + sum(sizes) != len(data):
        raise InvalidArgumentError(
            f"Invalid string-list tensor_content: {n} elements need "
            f"{pos + sum(sizes)} bytes, got {len(data)}"
        )
    out = []
    for size in sizes:
        out.append(data[pos : pos + size])
        pos += size
    return out


# ---------------------------------------------------------------------------------------
# Resource handles
# ---------------------------------------------------------------------------------------


def handle_to_proto(h: ResourceHandle) -> resource_handle_pb2.ResourceHandleProto:
    proto = resource_handle_pb2.ResourceHandleProto(
        device=h.device, container=h.container, name=h.name, maybe_type_name=h.maybe_type_name
    )
    for dt, shape in h.dtypes_and_shapes:
        proto.dtypes_and_shapes.add(dtype=int(dt), shape=shape_to_proto(shape))
    return proto


def handle_from_proto(proto: resource_handle_pb2.ResourceHandleProto) -> ResourceHandle:
    """The hash_code of TF's C++ resource type is not kept: our resources are Python
    objects looked up by container and name."""
    return ResourceHandle(
        device=proto.device,
        container=proto.container,
        name=proto.name,
        maybe_type_name=proto.maybe_type_name,
        dtypes_and_shapes=tuple(
            (DataType(ds.dtype), shape_from_proto(ds.shape)) for ds in proto.dtypes_and_shapes
        ),
    )


# ---------------------------------------------------------------------------------------
# Variants: TF's unary variant registry (type_name -> encode/decode), filled at import
# time by the op modules that own a variant type; read-only afterwards, so thread-safe.
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class VariantCodec:
    """How a Python variant value of class `cls` is VariantTensorDataProto `type_name`."""

    type_name: str
    cls: type
    encode: Callable[[Any], VariantTensorDataProto]
    decode: Callable[[VariantTensorDataProto], Any]


_CODECS_BY_NAME: dict[str, VariantCodec] = {}
_CODECS_BY_CLASS: dict[type, VariantCodec] = {}


def register_variant_codec(
    type_name: str,
    cls: type,
    encode: Callable[[Any], VariantTensorDataProto],
    decode: Callable[[VariantTensorDataProto], Any],
) -> None:
    """Registers the codec of one variant type; registering a type_name again (a module
    reload) replaces it."""
    codec = VariantCodec(type_name, cls, encode, decode)
    _CODECS_BY_NAME[type_name] = codec
    _CODECS_BY_CLASS[cls] = codec


def is_variant_value(x: Any) -> bool:
    """Whether `x` can be an element of a DT_VARIANT tensor."""
    return isinstance(x, VariantTensorDataProto) or type(x) in _CODECS_BY_CLASS


def encode_variant(x: Any) -> VariantTensorDataProto:
    """The VariantTensorDataProto of a variant element (TF's Variant::Encode)."""
    if isinstance(x, VariantTensorDataProto):
        return x
    codec = _CODECS_BY_CLASS.get(type(x))
    if codec is None:
        raise InvalidArgumentError(
            f"Expected variant elements in a variant tensor, got {type(x).__name__}"
        )
    return codec.encode(x)


def decode_variant(proto: VariantTensorDataProto) -> Any:
    """The Python value of a variant element: the registered type's object, or the proto
    itself (opaque) for a type_name nobody registered."""
    codec = _CODECS_BY_NAME.get(proto.type_name)
    return proto if codec is None else codec.decode(proto)


# ---------------------------------------------------------------------------------------
# TensorProto -> numpy
# ---------------------------------------------------------------------------------------


def proto_dtype(proto: TensorProto) -> DataType:
    """The value dtype of a TensorProto; InvalidArgumentError for invalid or _REF types."""
    dt = proto.dtype
    if not dtypes.is_valid(dt) or dtypes.is_ref(dt):
        raise InvalidArgumentError(f"Invalid TensorProto: unsupported dtype {int(dt)}")
    return DataType(dt)


def proto_shape(proto: TensorProto) -> tuple[int, ...]:
    return known_dims_from_proto(proto.tensor_shape, "Invalid TensorProto")


def to_numpy(proto: TensorProto, *, writable: bool = False) -> np.ndarray:
    """The numpy value of a TensorProto (see the module docstring for the rules).

    DT_STRING gives an object array of bytes, DT_RESOURCE an object array of
    ResourceHandle, DT_VARIANT an object array of decoded variants (`decode_variant`)."""
    dt = proto_dtype(proto)
    shape = proto_shape(proto)
    n = math.prod(shape)
    try:
        if n == 0:  # as TF: an empty tensor ignores whatever values the proto carries
            flat = np.empty(0, dtype=dtypes.as_numpy(dt))
        elif proto.tensor_content:
            flat = _from_content(dt, proto.tensor_content, n)
        else:
            flat = _from_typed(dt, proto, n)
    except MemoryError:
        raise ResourceExhaustedError(
            f"OOM decoding a {dtypes.tf_name(dt)} tensor of shape {list(shape)}"
        ) from None
    arr = flat.reshape(shape)
    if writable and not arr.flags.writeable:
        arr = arr.copy()
    return arr


def _from_content(dt: DataType, content: bytes, n: int) -> np.ndarray:
    if dt in _LIST_TYPES:
        return _object_array([_list_element(dt, b) for b in decode_string_list(content, n)])
    np_dtype = dtypes.as_numpy(dt)
    expected = n * np_dtype.itemsize
    if len(content) != expected:
        raise InvalidArgumentError(
            f"Invalid TensorProto: tensor_content has {len(content)} bytes, but "
            f"{n} elements of {dtypes.tf_name(dt)} need {expected}"
        )
    return np.frombuffer(content, dtype=np_dtype)


def _list_element(dt: DataType, data: bytes) -> Any:
    if dt == DataType.DT_STRING:
        return data
    if dt == DataType.DT_RESOURCE:
        return handle_from_proto(resource_handle_pb2.ResourceHandleProto.FromString(data))
    return decode_variant(VariantTensorDataProto.FromString(data))


def _object_array(items: list) -> np.ndarray:
    arr = np.empty(len(items), dtype=object)
    arr[:] = items
    return arr


def _fill(values: np.ndarray, n: int) -> np.ndarray:
    """TF's FromProtoField rule: zeros when empty, the last value repeated when short,
    extra values ignored."""
    have = len(values)
    if have == 0:
        if values.dtype == object:
            raise AssertionError("object fills are handled by the caller")
        return np.zeros(n, dtype=values.dtype)
    if have >= n:
        return values[:n]
    out = np.empty(n, dtype=values.dtype)
    out[:have] = values
    out[have:] = values[-1]
    return out


def _from_typed(dt: DataType, proto: TensorProto, n: int) -> np.ndarray:
    np_dtype = dtypes.as_numpy(dt)
    field = TYPED_FIELD[dt]
    raw = getattr(proto, field)
    if dt in _LIST_TYPES:
        return _from_object_field(dt, raw, n)
    if dt in (DataType.DT_COMPLEX64, DataType.DT_COMPLEX128):
        parts = np.asarray(raw, dtype=np_dtype.type(0).real.dtype)
        pairs = parts[: len(parts) // 2 * 2]
        values = (pairs[0::2] + 1j * pairs[1::2]).astype(np_dtype)
    elif field == "half_val":
        values = np.asarray(raw, dtype=np.int32).astype(np.uint16).view(np_dtype)
    elif field == "float8_val":
        values = np.frombuffer(raw, dtype=np.uint8).view(np_dtype)
    elif field == "int_val" and np_dtype.itemsize < 4:
        # Narrow integers arrive as int32; wrap to the element width as C++ casts do.
        values = np.asarray(raw, dtype=np.int32).astype(np_dtype)
    else:
        values = np.asarray(raw, dtype=np_dtype)
    return _fill(values, n)


def _from_object_field(dt: DataType, raw: Any, n: int) -> np.ndarray:
    if dt == DataType.DT_STRING:
        items: list = list(raw) or [b""]
    elif dt == DataType.DT_RESOURCE:
        items = [handle_from_proto(h) for h in raw] or [ResourceHandle("", "", "")]
    else:
        # Each element gets its own value, as C++ copies each Variant.
        src = list(raw) or [VariantTensorDataProto()]
        return _object_array([_variant_element(src[min(i, len(src) - 1)]) for i in range(n)])
    return _object_array(items[:n] + [items[-1]] * (n - len(items)))


def _variant_element(v: VariantTensorDataProto) -> Any:
    if v.type_name in _CODECS_BY_NAME:
        return decode_variant(v)  # a fresh object; `v` stays the proto's
    out = VariantTensorDataProto()
    out.CopyFrom(v)
    return out


# ---------------------------------------------------------------------------------------
# numpy -> TensorProto
# ---------------------------------------------------------------------------------------


def infer_dtype(array: np.ndarray) -> DataType:
    """The DataType of a numpy value; object arrays are inspected: ResourceHandle ->
    DT_RESOURCE, a variant (VariantTensorDataProto or a registered variant class such as
    TensorList) -> DT_VARIANT, anything else DT_STRING."""
    if array.dtype == object and array.size:
        first = array.flat[0]
        if isinstance(first, ResourceHandle):
            return DataType.DT_RESOURCE
        if is_variant_value(first):
            return DataType.DT_VARIANT
    np_dtype = array.dtype
    if np_dtype.byteorder == ">":  # a big-endian array is still, say, int32
        np_dtype = np_dtype.newbyteorder("=")
    return dtypes.from_numpy(np_dtype)


def _as_bytes(x: Any) -> bytes:
    if isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode("utf-8")
    if isinstance(x, (bytearray, memoryview, np.bytes_)):
        return bytes(x)
    raise InvalidArgumentError(f"Expected bytes or str in a string tensor, got {type(x).__name__}")


def _object_items(dt: DataType, flat: np.ndarray) -> list:
    if dt == DataType.DT_STRING:
        return [_as_bytes(x) for x in flat]
    if dt == DataType.DT_VARIANT:
        return [encode_variant(x) for x in flat]
    for x in flat:
        if not isinstance(x, ResourceHandle):
            raise InvalidArgumentError(
                f"Expected ResourceHandle elements in a {dtypes.tf_name(dt)} tensor, "
                f"got {type(x).__name__}"
            )
    return list(flat)


def _cast(array: np.ndarray, dt: DataType) -> np.ndarray:
    if dt in _LIST_TYPES:
        if array.dtype.kind == "U":
            return array.astype(object)
        return array
    np_dtype = dtypes.as_numpy(dt)
    if array.dtype == np_dtype:
        return array
    if array.dtype == object:
        raise InvalidArgumentError(f"Cannot convert an object array to {dtypes.tf_name(dt)}")
    return array.astype(np_dtype)


def from_numpy(
    array: Any,
    dtype: DataType | None = None,
    *,
    use_tensor_content: bool = True,
    string_content: bool = False,
) -> TensorProto:
    """The TensorProto of a numpy value (cast to `dtype` when given).

    Fixed-size dtypes go to `tensor_content` (as TF's C++ AsProtoTensorContent writes
    them) unless `use_tensor_content` is False, then to their typed field, one value per
    element. Strings, resource handles and variants go to their typed fields unless
    `string_content` is True, then to the varint-list form in `tensor_content` (what TF
    writes for feeds and fetches)."""
    arr = np.asarray(array)
    dt = DataType(dtypes.base(dtype)) if dtype is not None else infer_dtype(arr)
    if not dtypes.is_valid(dt):
        raise InvalidArgumentError(f"Cannot make a TensorProto of dtype {int(dt)}")
    arr = _cast(arr, dt)
    proto = TensorProto(dtype=dtypes.as_proto_enum(dt))
    for d in arr.shape:
        proto.tensor_shape.dim.add(size=d)
    if arr.size == 0:
        return proto
    if dt in _LIST_TYPES:
        _put_objects(proto, dt, arr.reshape(-1), string_content)
    elif use_tensor_content:
        proto.tensor_content = tensor_content_view(arr).tobytes()
    else:
        _put_typed(proto, dt, np.ascontiguousarray(arr).reshape(-1))
    return proto


def as_proto_tensor_content(array: Any, dtype: DataType | None = None) -> TensorProto:
    """Everything in tensor_content, as TF's Tensor::AsProtoTensorContent (the form of
    feeds, fetches, RunGraph recv values and RecvTensor payloads)."""
    return from_numpy(array, dtype, use_tensor_content=True, string_content=True)


def as_proto_field(array: Any, dtype: DataType | None = None) -> TensorProto:
    """Every value in its typed field and the shape always present (even a scalar's empty
    one), as TF's Tensor::AsProtoField: the form of the tensors inside a variant."""
    proto = from_numpy(array, dtype, use_tensor_content=False)
    proto.tensor_shape.SetInParent()
    return proto


def _put_objects(proto: TensorProto, dt: DataType, flat: np.ndarray, as_content: bool) -> None:
    items = _object_items(dt, flat)
    if dt == DataType.DT_STRING:
        if as_content:
            proto.tensor_content = encode_string_list(items)
        else:
            proto.string_val.extend(items)
        return
    if dt == DataType.DT_RESOURCE:
        protos: list[Any] = [handle_to_proto(h) for h in items]
        if not as_content:
            proto.resource_handle_val.extend(protos)
            return
    else:
        protos = items
        if not as_content:
            proto.variant_val.extend(protos)
            return
    proto.tensor_content = encode_string_list([p.SerializeToString() for p in protos])


def _put_typed(proto: TensorProto, dt: DataType, flat: np.ndarray) -> None:
    field = TYPED_FIELD[dt]
    if dt in (DataType.DT_COMPLEX64, DataType.DT_COMPLEX128):
        parts = np.empty(flat.size * 2, dtype=flat.real.dtype)
        parts[0::2], parts[1::2] = flat.real, flat.imag
        getattr(proto, field).extend(parts.tolist())
    elif field == "half_val":
        proto.half_val.extend(flat.view(np.uint16).tolist())
    elif field == "float8_val":
        proto.float8_val = flat.view(np.uint8).tobytes()
    elif field == "int_val" and flat.dtype.itemsize < 4 and flat.dtype.kind not in "iu":
        proto.int_val.extend(flat.astype(np.int32).tolist())  # ml_dtypes int4/int2 ...
    else:
        getattr(proto, field).extend(flat.tolist())


def tensor_content_view(array: np.ndarray) -> memoryview:
    """The tensor_content bytes of a fixed-size-dtype array as a flat byte memoryview:
    zero-copy for C-contiguous little-endian arrays (the transport's fast path)."""
    arr = np.asarray(array)
    if arr.dtype == object or arr.dtype.kind in "SU":
        raise InvalidArgumentError(f"{arr.dtype} arrays have no raw tensor_content")
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    arr = np.ascontiguousarray(arr)
    return arr.reshape(-1).view(np.uint8).data


def tensor_nbytes(proto: TensorProto) -> int:
    """Bytes of the decoded value: elements x element size for fixed-size dtypes; the
    total element length for strings; serialized size for resources and variants."""
    dt = proto_dtype(proto)
    n = math.prod(proto_shape(proto))
    if dtypes.is_memcpy(dt):
        return n * dtypes.itemsize(dt)
    if n == 0:
        return 0
    if proto.tensor_content:
        return sum(len(x) for x in decode_string_list(proto.tensor_content, n))
    if dt == DataType.DT_STRING:
        values = list(proto.string_val)
        sizes = [len(v) for v in values[:n]] or [0]
        return sum(sizes) + sizes[-1] * (n - len(sizes))
    return sum(x.ByteSize() for x in getattr(proto, TYPED_FIELD[dt]))


# ---------------------------------------------------------------------------------------
# Python values (like tf.make_tensor_proto)
# ---------------------------------------------------------------------------------------

# Dtypes tf.make_tensor_proto writes to tensor_content when given a full-size array.
_CONTENT_TYPES = frozenset(dtypes.DataType(d) for d in TYPED_FIELD) - frozenset(
    {
        DataType.DT_STRING,
        DataType.DT_RESOURCE,
        DataType.DT_VARIANT,
        DataType.DT_BOOL,
        DataType.DT_COMPLEX64,
        DataType.DT_COMPLEX128,
    }
)


def _resolve_dtype(dtype: Any) -> DataType | None:
    if dtype is None:
        return None
    if isinstance(dtype, str):
        return DataType(dtypes.base(dtypes.from_name(dtype)))
    if isinstance(dtype, int):
        return DataType(dtypes.base(dtype))
    return dtypes.from_numpy(dtype)


def _python_array(values: Any, dt: DataType | None) -> np.ndarray:
    """numpy form of Python values with TF's defaults: ints -> int32 (int64 if they do
    not fit), floats -> float32, str/bytes -> string; numpy inputs keep their dtype."""
    if dt is not None:
        if dt in _LIST_TYPES:
            return np.asarray(values, dtype=object)
        return np.asarray(values, dtype=dtypes.as_numpy(dt))
    if isinstance(values, (np.ndarray, np.generic)):
        return np.asarray(values)
    arr = np.asarray(values)
    if arr.dtype.kind in "SU":
        return np.asarray(values, dtype=object)
    if arr.dtype == np.int64:
        info = np.iinfo(np.int32)
        if arr.size == 0 or (arr.min() >= info.min and arr.max() <= info.max):
            return arr.astype(np.int32)
    if arr.dtype == np.float64:
        return arr.astype(np.float32)
    return arr


def make_tensor_proto(
    values: Any, dtype: Any = None, shape: Sequence[int] | None = None
) -> TensorProto:
    """Like tf.make_tensor_proto: full-size numeric arrays in tensor_content; scalars,
    strings, bool/complex and short value lists (the fill rule repeats the last value)
    in typed fields. InvalidArgumentError when more values than the shape holds."""
    dt = _resolve_dtype(dtype)
    arr = _python_array(values, dt)
    if dt is None:
        dt = infer_dtype(arr)
    target = tuple(int(d) for d in shape) if shape is not None else arr.shape
    size = math.prod(target)
    if arr.size > size:
        raise InvalidArgumentError(
            f"Too many elements provided. Takes at most {size}, but got {arr.size}"
        )
    if arr.size == size and size > 1 and dt in _CONTENT_TYPES:
        return from_numpy(arr.reshape(target), dt)
    proto = from_numpy(arr.reshape(-1), dt, use_tensor_content=False)
    del proto.tensor_shape.dim[:]
    for d in target:
        proto.tensor_shape.dim.add(size=d)
    return proto
