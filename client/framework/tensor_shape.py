"""Client, graph building: TensorShape as the Python API exposes it (dims are int or None).

Immutable; safe from any thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class Dimension:
    """TF's tensor_shape.Dimension: one dimension, its `value` an int or None (unknown).
    Arithmetic with an unknown side is unknown; comparisons with one give None."""

    __slots__ = ("_value",)
    __hash__ = None  # type: ignore[assignment]  # unhashable, as TF's (it defines __eq__)

    def __init__(self, value: Any) -> None:
        self._value = _dim(value)

    @property
    def value(self) -> int | None:
        return self._value

    def __repr__(self) -> str:
        return f"Dimension({self._value!r})"

    def __str__(self) -> str:
        return "?" if self._value is None else str(self._value)

    def __int__(self) -> int:
        if self._value is None:
            raise TypeError("int() argument must be a string, a bytes-like object or a number")
        return self._value

    __index__ = __int__

    def __float__(self) -> float:
        return float(int(self))

    def __bool__(self) -> bool:
        return bool(self._value)

    def _both(self, other: Any, fn: Any) -> Any:
        other = as_dimension(other)
        if self._value is None or other._value is None:
            return None
        return fn(self._value, other._value)

    def __eq__(self, other: Any) -> Any:
        try:
            return self._both(other, lambda a, b: a == b)
        except (TypeError, ValueError):
            return NotImplemented

    def __ne__(self, other: Any) -> Any:
        try:
            return self._both(other, lambda a, b: a != b)
        except (TypeError, ValueError):
            return NotImplemented

    def __lt__(self, other: Any) -> Any:
        return self._both(other, lambda a, b: a < b)

    def __le__(self, other: Any) -> Any:
        return self._both(other, lambda a, b: a <= b)

    def __gt__(self, other: Any) -> Any:
        return self._both(other, lambda a, b: a > b)

    def __ge__(self, other: Any) -> Any:
        return self._both(other, lambda a, b: a >= b)

    def _arith(self, other: Any, fn: Any) -> Dimension:
        return Dimension(self._both(other, fn))

    def __add__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a + b)

    def __sub__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a - b)

    def __mul__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a * b)

    def __floordiv__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a // b)

    def __mod__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a % b)

    def __radd__(self, other: Any) -> Dimension:
        return as_dimension(other) + self

    def __rsub__(self, other: Any) -> Dimension:
        return as_dimension(other) - self

    def __rmul__(self, other: Any) -> Dimension:
        return as_dimension(other) * self

    def __rfloordiv__(self, other: Any) -> Dimension:
        return as_dimension(other) // self

    def __rmod__(self, other: Any) -> Dimension:
        return as_dimension(other) % self

    def is_compatible_with(self, other: Any) -> bool:
        return bool(self._both(other, lambda a, b: a == b) is not False)

    def assert_is_compatible_with(self, other: Any) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {as_dimension(other)} are not compatible")

    def merge_with(self, other: Any) -> Dimension:
        other = as_dimension(other)
        self.assert_is_compatible_with(other)
        return Dimension(self._value if self._value is not None else other._value)


class KnownDimension(int):
    """A known dimension as `shape[i]` gives it: an int (TF 2's TensorShape) that also
    answers `.value` (TF 1's Dimension), so TF1 code reading `shape[i].value` runs."""

    __slots__ = ()

    @property
    def value(self) -> int:
        return int(self)


def as_dimension(value: Any) -> Dimension:
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(dimension: Any) -> int | None:
    """tf.compat.v1.dimension_value: a Dimension's value, or the int (or None) itself."""
    return dimension.value if isinstance(dimension, Dimension) else dimension


class TensorShape:
    """A possibly partial static shape: `dims` is None for unknown rank."""

    __slots__ = ("_dims",)

    def __init__(self, dims: Any) -> None:
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif isinstance(dims, Iterable):
            self._dims = tuple(_dim(d) for d in dims)
        else:
            self._dims = (_dim(dims),)

    @property
    def dims(self) -> list[Dimension] | None:
        """The dimensions as Dimension objects, as TF's `dims` (`shape.dims[i].value`)."""
        return None if self._dims is None else [Dimension(d) for d in self._dims]

    @property
    def ndims(self) -> int | None:
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def as_list(self) -> list[int | None]:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def as_tuple(self) -> tuple[int | None, ...] | None:
        return self._dims

    def is_fully_defined(self) -> bool:
        return self._dims is not None and None not in self._dims

    def num_elements(self) -> int | None:
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:  # type: ignore[union-attr]
            n *= d  # type: ignore[operator]
        return n

    def is_compatible_with(self, other: Any) -> bool:
        o = as_shape(other)
        if self._dims is None or o._dims is None:
            return True
        if len(self._dims) != len(o._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, o._dims))

    def assert_is_compatible_with(self, other: Any) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def merge_with(self, other: Any) -> TensorShape:
        o = as_shape(other)
        if self._dims is None:
            return o
        if o._dims is None:
            return self
        if not self.is_compatible_with(o):
            raise ValueError(f"Shapes {self} and {o} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, o._dims)])

    def with_rank(self, rank: int) -> TensorShape:
        if self._dims is None:
            return unknown_shape(rank)
        if len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def with_rank_at_least(self, rank: int) -> TensorShape:
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def concatenate(self, other: Any) -> TensorShape:
        o = as_shape(other)
        if self._dims is None or o._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + o._dims)

    def assert_has_rank(self, rank: int) -> None:
        self.with_rank(rank)

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key: Any) -> Any:
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        d = self._dims[key]
        return None if d is None else KnownDimension(d)

    def __eq__(self, other: object) -> bool:
        try:
            o = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == o._dims

    def __hash__(self) -> int:
        return hash(self._dims)

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"

    def __repr__(self) -> str:
        return "TensorShape(None)" if self._dims is None else f"TensorShape({list(self._dims)})"

    def debug_string(self) -> str:
        """TensorFlow's C++ DebugString: "[2,?]" or "<unknown>" (used in error messages)."""
        if self._dims is None:
            return "<unknown>"
        return "[" + ",".join("?" if d is None else str(d) for d in self._dims) + "]"


def _dim(d: Any) -> int | None:
    if d is None:
        return None
    if hasattr(d, "value"):  # Dimension-like
        d = d.value
        if d is None:
            return None
    d = int(d)
    if d < 0:
        if d == -1:
            return None
        raise ValueError(f"Dimension {d} must be >= 0")
    return d


def as_shape(shape: Any) -> TensorShape:
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank: int | None = None) -> TensorShape:
    return TensorShape(None if rank is None else [None] * rank)


def scalar() -> TensorShape:
    return TensorShape([])
