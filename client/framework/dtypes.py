"""Client, graph building: DType objects as tf.compat.v1 exposes them (tf.float32 ...).

A `DType` wraps `common.dtypes.DataType` (TensorFlow's wire enum) with TF's Python
properties. Instances are interned per enum value; immutable, safe from any thread.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from common import dtypes as _dt
from common.dtypes import DataType

_FLOATS = {DataType.DT_HALF, DataType.DT_BFLOAT16, DataType.DT_FLOAT, DataType.DT_DOUBLE}
_INTS = {
    DataType.DT_INT8,
    DataType.DT_INT16,
    DataType.DT_INT32,
    DataType.DT_INT64,
    DataType.DT_UINT8,
    DataType.DT_UINT16,
    DataType.DT_UINT32,
    DataType.DT_UINT64,
}
_COMPLEX = {DataType.DT_COMPLEX64, DataType.DT_COMPLEX128}


class DType:
    """A tensor element type (TensorFlow's tf.DType)."""

    __slots__ = ("_type_enum",)

    def __init__(self, type_enum: int) -> None:
        self._type_enum = DataType(type_enum)

    @property
    def as_datatype_enum(self) -> DataType:
        return self._type_enum

    @property
    def name(self) -> str:
        return _dt.python_name(self._type_enum)

    @property
    def base_dtype(self) -> DType:
        return as_dtype(_dt.base(self._type_enum))

    @property
    def is_ref_dtype(self) -> builtins.bool:
        return _dt.is_ref(self._type_enum)

    @property
    def as_numpy_dtype(self) -> type:
        if self.base_dtype._type_enum in (DataType.DT_STRING, DataType.DT_RESOURCE):
            return object
        return _dt.as_numpy(self._type_enum).type

    @property
    def is_floating(self) -> builtins.bool:
        return self.base_dtype._type_enum in _FLOATS

    @property
    def is_integer(self) -> builtins.bool:
        return self.base_dtype._type_enum in _INTS

    @property
    def is_complex(self) -> builtins.bool:
        return self.base_dtype._type_enum in _COMPLEX

    @property
    def real_dtype(self) -> DType:
        """The dtype of a complex dtype's parts (complex64 -> float32); itself otherwise."""
        real = {
            DataType.DT_COMPLEX64: DataType.DT_FLOAT,
            DataType.DT_COMPLEX128: DataType.DT_DOUBLE,
        }
        return as_dtype(real.get(self.base_dtype._type_enum, self.base_dtype._type_enum))

    @property
    def is_bool(self) -> builtins.bool:
        return self.base_dtype._type_enum == DataType.DT_BOOL

    @property
    def is_unsigned(self) -> builtins.bool:
        return self.name.startswith("uint")

    @property
    def is_numpy_compatible(self) -> builtins.bool:
        return self.base_dtype._type_enum not in (DataType.DT_RESOURCE, DataType.DT_VARIANT)

    @property
    def size(self) -> int:
        return _dt.itemsize(self._type_enum)

    @property
    def min(self) -> Any:
        t: np.dtype[Any] = np.dtype(self.as_numpy_dtype)
        return np.finfo(t).min if self.is_floating else np.iinfo(t).min

    @property
    def max(self) -> Any:
        t: np.dtype[Any] = np.dtype(self.as_numpy_dtype)
        return np.finfo(t).max if self.is_floating else np.iinfo(t).max

    def is_compatible_with(self, other: Any) -> builtins.bool:
        return self.base_dtype == as_dtype(other).base_dtype

    def __eq__(self, other: object) -> builtins.bool:
        if other is None:
            return False
        try:
            return self._type_enum == as_dtype(other)._type_enum
        except TypeError:
            return False

    def __ne__(self, other: object) -> builtins.bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self._type_enum)

    def __repr__(self) -> str:
        return f"tf.{self.name}"

    def __reduce__(self):
        return as_dtype, (int(self._type_enum),)


_INTERNED: dict[DataType, DType] = {}


def as_dtype(value: Any) -> DType:
    """A DType from a DType, DataType enum/int, numpy dtype or type, or a name string."""
    if isinstance(value, DType):
        return value
    try:
        if isinstance(value, str):
            enum = _dt.from_name(value)
        elif isinstance(value, (int, DataType)) and not isinstance(value, builtins.bool):
            enum = DataType(value)
        elif value is str or value is bytes:
            enum = DataType.DT_STRING
        elif value is float:
            enum = DataType.DT_FLOAT
        elif value is int:
            enum = DataType.DT_INT32
        elif value is builtins.bool:
            enum = DataType.DT_BOOL
        else:
            enum = _dt.from_numpy(np.dtype(value))
    except Exception:
        raise TypeError(f"Cannot convert {value!r} to a dtype.") from None
    d = _INTERNED.get(enum)
    if d is None:
        d = _INTERNED[enum] = DType(enum)
    return d


float16 = half = as_dtype(DataType.DT_HALF)
bfloat16 = as_dtype(DataType.DT_BFLOAT16)
float32 = as_dtype(DataType.DT_FLOAT)
float64 = double = as_dtype(DataType.DT_DOUBLE)
int8 = as_dtype(DataType.DT_INT8)
int16 = as_dtype(DataType.DT_INT16)
int32 = as_dtype(DataType.DT_INT32)
int64 = as_dtype(DataType.DT_INT64)
uint8 = as_dtype(DataType.DT_UINT8)
uint16 = as_dtype(DataType.DT_UINT16)
uint32 = as_dtype(DataType.DT_UINT32)
uint64 = as_dtype(DataType.DT_UINT64)
bool = as_dtype(DataType.DT_BOOL)
string = as_dtype(DataType.DT_STRING)
complex64 = as_dtype(DataType.DT_COMPLEX64)
complex128 = as_dtype(DataType.DT_COMPLEX128)
resource = as_dtype(DataType.DT_RESOURCE)
variant = as_dtype(DataType.DT_VARIANT)
