"""Dtypes: TensorFlow's DataType enum and its mapping to numpy.

Values are TensorFlow's wire numbers; `X_REF = X + 100` marks reference-typed edges of TF1
variables. Runtime tensors are numpy arrays: strings are object arrays of `bytes`, resource
handles are 0-d object arrays holding a `ResourceHandle`. The reduced-precision float types
(bfloat16, float8, int4 ...) come from ml_dtypes, as in TensorFlow itself. Pure data; safe
from any thread.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, cast

import ml_dtypes
import numpy as np

from common.errors import InvalidArgumentError

if TYPE_CHECKING:
    from protos import types_pb2


class DataType(enum.IntEnum):
    DT_INVALID = 0
    DT_FLOAT = 1
    DT_DOUBLE = 2
    DT_INT32 = 3
    DT_UINT8 = 4
    DT_INT16 = 5
    DT_INT8 = 6
    DT_STRING = 7
    DT_COMPLEX64 = 8
    DT_INT64 = 9
    DT_BOOL = 10
    DT_QINT8 = 11
    DT_QUINT8 = 12
    DT_QINT32 = 13
    DT_BFLOAT16 = 14
    DT_QINT16 = 15
    DT_QUINT16 = 16
    DT_UINT16 = 17
    DT_COMPLEX128 = 18
    DT_HALF = 19
    DT_RESOURCE = 20
    DT_VARIANT = 21
    DT_UINT32 = 22
    DT_UINT64 = 23
    DT_FLOAT8_E5M2 = 24
    DT_FLOAT8_E4M3FN = 25
    DT_FLOAT8_E4M3FNUZ = 26
    DT_FLOAT8_E4M3B11FNUZ = 27
    DT_FLOAT8_E5M2FNUZ = 28
    DT_INT4 = 29
    DT_UINT4 = 30
    DT_INT2 = 31
    DT_UINT2 = 32
    DT_FLOAT4_E2M1FN = 33
    DT_FLOAT_REF = 101
    DT_DOUBLE_REF = 102
    DT_INT32_REF = 103
    DT_UINT8_REF = 104
    DT_INT16_REF = 105
    DT_INT8_REF = 106
    DT_STRING_REF = 107
    DT_COMPLEX64_REF = 108
    DT_INT64_REF = 109
    DT_BOOL_REF = 110
    DT_QINT8_REF = 111
    DT_QUINT8_REF = 112
    DT_QINT32_REF = 113
    DT_BFLOAT16_REF = 114
    DT_QINT16_REF = 115
    DT_QUINT16_REF = 116
    DT_UINT16_REF = 117
    DT_COMPLEX128_REF = 118
    DT_HALF_REF = 119
    DT_RESOURCE_REF = 120
    DT_VARIANT_REF = 121
    DT_UINT32_REF = 122
    DT_UINT64_REF = 123
    DT_FLOAT8_E5M2_REF = 124
    DT_FLOAT8_E4M3FN_REF = 125
    DT_FLOAT8_E4M3FNUZ_REF = 126
    DT_FLOAT8_E4M3B11FNUZ_REF = 127
    DT_FLOAT8_E5M2FNUZ_REF = 128
    DT_INT4_REF = 129
    DT_UINT4_REF = 130
    DT_INT2_REF = 131
    DT_UINT2_REF = 132
    DT_FLOAT4_E2M1FN_REF = 133


_REF_OFFSET = 100


def is_ref(dt: int) -> bool:
    return dt > _REF_OFFSET


def base(dt: int) -> DataType:
    """The value type of `dt` (DT_FLOAT for DT_FLOAT_REF)."""
    b = _BASE.get(dt)  # kernels ask per call: a table, not an enum construction (~0.6 us)
    return b if b is not None else DataType(dt - _REF_OFFSET if dt > _REF_OFFSET else dt)


_BASE: dict[int, DataType] = {
    dt: DataType(dt - _REF_OFFSET if dt > _REF_OFFSET else dt) for dt in DataType
}


def make_ref(dt: int) -> DataType:
    if dt == DataType.DT_INVALID:
        raise InvalidArgumentError("DT_INVALID has no reference type")
    return DataType(dt if dt > _REF_OFFSET else dt + _REF_OFFSET)


# TensorFlow's DataTypeString names: how op signatures ("T: {float, int32}") and error
# messages spell types.
_TF_NAMES: dict[DataType, str] = {
    DataType.DT_FLOAT: "float",
    DataType.DT_DOUBLE: "double",
    DataType.DT_INT32: "int32",
    DataType.DT_UINT8: "uint8",
    DataType.DT_INT16: "int16",
    DataType.DT_INT8: "int8",
    DataType.DT_STRING: "string",
    DataType.DT_COMPLEX64: "complex64",
    DataType.DT_INT64: "int64",
    DataType.DT_BOOL: "bool",
    DataType.DT_QINT8: "qint8",
    DataType.DT_QUINT8: "quint8",
    DataType.DT_QINT32: "qint32",
    DataType.DT_BFLOAT16: "bfloat16",
    DataType.DT_QINT16: "qint16",
    DataType.DT_QUINT16: "quint16",
    DataType.DT_UINT16: "uint16",
    DataType.DT_COMPLEX128: "complex128",
    DataType.DT_HALF: "half",
    DataType.DT_RESOURCE: "resource",
    DataType.DT_VARIANT: "variant",
    DataType.DT_UINT32: "uint32",
    DataType.DT_UINT64: "uint64",
    DataType.DT_FLOAT8_E5M2: "float8_e5m2",
    DataType.DT_FLOAT8_E4M3FN: "float8_e4m3fn",
    DataType.DT_FLOAT8_E4M3FNUZ: "float8_e4m3fnuz",
    DataType.DT_FLOAT8_E4M3B11FNUZ: "float8_e4m3b11fnuz",
    DataType.DT_FLOAT8_E5M2FNUZ: "float8_e5m2fnuz",
    DataType.DT_INT4: "int4",
    DataType.DT_UINT4: "uint4",
    DataType.DT_INT2: "int2",
    DataType.DT_UINT2: "uint2",
    DataType.DT_FLOAT4_E2M1FN: "float4_e2m1fn",
}
_BY_TF_NAME = {name: dt for dt, name in _TF_NAMES.items()}

# Python-API spellings (tf.float32 ...) that differ from the DataTypeString names.
_PY_NAMES = {
    DataType.DT_FLOAT: "float32",
    DataType.DT_DOUBLE: "float64",
    DataType.DT_HALF: "float16",
}


def as_proto_enum(dt: int) -> types_pb2.DataType:
    """`dt` as the type the generated proto stubs give DataType fields; the same int, so
    `attr.type = as_proto_enum(dt)` stores what `attr.type = dt` does."""
    return cast("types_pb2.DataType", int(dt))


def tf_name(dt: int) -> str:
    """TensorFlow's DataTypeString: "float", "int32", "float_ref", "resource" ..."""
    if dt == DataType.DT_INVALID:
        return "invalid"
    name = _TF_NAMES.get(base(dt), f"unknown dtype {int(dt)}")
    return name + "_ref" if is_ref(dt) else name


def python_name(dt: int) -> str:
    """The Python API's name: "float32", "int32", "float16" ..."""
    b = base(dt)
    name = _PY_NAMES.get(b) or _TF_NAMES[b]
    return name + "_ref" if is_ref(dt) else name


def from_name(name: str) -> DataType:
    """Accepts TensorFlow's DataTypeString names, Python-API names and "DT_*" enum names."""
    key = name.strip()
    if key.startswith("DT_"):
        try:
            return DataType[key]
        except KeyError:
            pass
    ref = key.endswith("_ref")
    stem = key[:-4] if ref else key
    stem = {"float32": "float", "float64": "double", "float16": "half"}.get(stem, stem)
    if stem not in _BY_TF_NAME:
        raise InvalidArgumentError(f"Unknown dtype name {name!r}")
    dt = _BY_TF_NAME[stem]
    return make_ref(dt) if ref else dt


_NUMPY: dict[DataType, np.dtype] = {
    DataType.DT_FLOAT: np.dtype(np.float32),
    DataType.DT_DOUBLE: np.dtype(np.float64),
    DataType.DT_INT32: np.dtype(np.int32),
    DataType.DT_UINT8: np.dtype(np.uint8),
    DataType.DT_INT16: np.dtype(np.int16),
    DataType.DT_INT8: np.dtype(np.int8),
    DataType.DT_STRING: np.dtype(object),
    DataType.DT_COMPLEX64: np.dtype(np.complex64),
    DataType.DT_INT64: np.dtype(np.int64),
    DataType.DT_BOOL: np.dtype(np.bool_),
    # Quantized types are stored as their underlying integers, as TensorFlow stores them.
    DataType.DT_QINT8: np.dtype(np.int8),
    DataType.DT_QUINT8: np.dtype(np.uint8),
    DataType.DT_QINT32: np.dtype(np.int32),
    DataType.DT_BFLOAT16: np.dtype(ml_dtypes.bfloat16),
    DataType.DT_QINT16: np.dtype(np.int16),
    DataType.DT_QUINT16: np.dtype(np.uint16),
    DataType.DT_UINT16: np.dtype(np.uint16),
    DataType.DT_COMPLEX128: np.dtype(np.complex128),
    DataType.DT_HALF: np.dtype(np.float16),
    DataType.DT_RESOURCE: np.dtype(object),
    DataType.DT_VARIANT: np.dtype(object),
    DataType.DT_UINT32: np.dtype(np.uint32),
    DataType.DT_UINT64: np.dtype(np.uint64),
    DataType.DT_FLOAT8_E5M2: np.dtype(ml_dtypes.float8_e5m2),
    DataType.DT_FLOAT8_E4M3FN: np.dtype(ml_dtypes.float8_e4m3fn),
    DataType.DT_FLOAT8_E4M3FNUZ: np.dtype(ml_dtypes.float8_e4m3fnuz),
    DataType.DT_FLOAT8_E4M3B11FNUZ: np.dtype(ml_dtypes.float8_e4m3b11fnuz),
    DataType.DT_FLOAT8_E5M2FNUZ: np.dtype(ml_dtypes.float8_e5m2fnuz),
    DataType.DT_INT4: np.dtype(ml_dtypes.int4),
    DataType.DT_UINT4: np.dtype(ml_dtypes.uint4),
    DataType.DT_INT2: np.dtype(ml_dtypes.int2),
    DataType.DT_UINT2: np.dtype(ml_dtypes.uint2),
    DataType.DT_FLOAT4_E2M1FN: np.dtype(ml_dtypes.float4_e2m1fn),
}

# numpy dtype -> DataType for values that arrive without a declared type (feeds, constants
# built from numpy). Quantized types never come back from numpy: they alias plain integers.
_FROM_NUMPY: dict[np.dtype, DataType] = {}
for _dt, _np in _NUMPY.items():
    if _np != np.dtype(object) and _dt.name[3] != "Q":
        _FROM_NUMPY.setdefault(_np, _dt)

QUANTIZED = frozenset(
    {
        DataType.DT_QINT8,
        DataType.DT_QUINT8,
        DataType.DT_QINT16,
        DataType.DT_QUINT16,
        DataType.DT_QINT32,
    }
)
FLOATING = frozenset(
    {
        DataType.DT_HALF,
        DataType.DT_BFLOAT16,
        DataType.DT_FLOAT,
        DataType.DT_DOUBLE,
        DataType.DT_FLOAT8_E5M2,
        DataType.DT_FLOAT8_E4M3FN,
        DataType.DT_FLOAT8_E4M3FNUZ,
        DataType.DT_FLOAT8_E4M3B11FNUZ,
        DataType.DT_FLOAT8_E5M2FNUZ,
        DataType.DT_FLOAT4_E2M1FN,
    }
)
COMPLEX = frozenset({DataType.DT_COMPLEX64, DataType.DT_COMPLEX128})
INTEGER = frozenset(
    {
        DataType.DT_INT8,
        DataType.DT_INT16,
        DataType.DT_INT32,
        DataType.DT_INT64,
        DataType.DT_UINT8,
        DataType.DT_UINT16,
        DataType.DT_UINT32,
        DataType.DT_UINT64,
        DataType.DT_INT4,
        DataType.DT_UINT4,
        DataType.DT_INT2,
        DataType.DT_UINT2,
    }
)
# Types whose elements are plain bytes in memory: eligible for tensor_content and zero-copy.
NOT_MEMCPY = frozenset(
    {DataType.DT_INVALID, DataType.DT_STRING, DataType.DT_RESOURCE, DataType.DT_VARIANT}
)


def as_numpy(dt: int) -> np.dtype:
    """The numpy dtype that holds values of `dt` (the base type for _REF types)."""
    try:
        return _NUMPY[base(dt)]
    except (KeyError, ValueError):
        raise InvalidArgumentError(f"No numpy representation for dtype {int(dt)}") from None


def from_numpy(np_dtype: np.dtype | type) -> DataType:
    """The DataType of a numpy dtype; object arrays are taken to hold strings."""
    d = np.dtype(np_dtype)
    if d == np.dtype(object) or d.kind in ("S", "U"):
        return DataType.DT_STRING
    try:
        return _FROM_NUMPY[d]
    except KeyError:
        raise InvalidArgumentError(f"Unsupported numpy dtype {d}") from None


def is_memcpy(dt: int) -> bool:
    return base(dt) not in NOT_MEMCPY


def itemsize(dt: int) -> int:
    """Bytes per element in tensor_content (ValueError for non-memcpy types)."""
    if not is_memcpy(dt):
        raise ValueError(f"{tf_name(dt)} has no fixed element size")
    return as_numpy(dt).itemsize


def is_valid(dt: int) -> bool:
    try:
        DataType(dt)
    except ValueError:
        return False
    return dt != DataType.DT_INVALID
