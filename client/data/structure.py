"""Client, tf.data: element structures (TF's data/util/nest and data/util/structure).

A dataset element is a nest of components: tuples (namedtuples included) and dicts
(flattened in sorted key order) nest; anything else, a list included, is one component,
as tf.data's nest treats lists as tensors. `TensorSpec` describes one component,
`SparseTensorSpec` a SparseTensor component, which datasets carry as one DT_VARIANT tensor
of unknown shape (TF's _flat_tensor_specs; client/data/tensor_list.py encodes it).
Pure functions; safe from any thread.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from client.framework import dtypes as _dtypes
from client.framework.sparse_tensor import SparseTensorValue
from client.framework.tensor_shape import TensorShape, as_shape


@dataclasses.dataclass(frozen=True)
class TensorSpec:
    """The type of one component: its static shape and dtype (tf.TensorSpec)."""

    shape: TensorShape
    dtype: _dtypes.DType
    name: str | None = None

    def __init__(self, shape: Any, dtype: Any = _dtypes.float32, name: str | None = None) -> None:
        object.__setattr__(self, "shape", as_shape(shape))
        object.__setattr__(self, "dtype", _dtypes.as_dtype(dtype))
        object.__setattr__(self, "name", name)

    def is_compatible_with(self, other: Any) -> bool:
        return self.dtype == other.dtype and self.shape.is_compatible_with(other.shape)

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name}, name={self.name!r})"


@dataclasses.dataclass(frozen=True)
class SparseTensorSpec:
    """The type of a SparseTensor component: its static dense shape and value dtype."""

    shape: TensorShape
    dtype: _dtypes.DType

    def __init__(self, shape: Any = None, dtype: Any = _dtypes.float32) -> None:
        object.__setattr__(self, "shape", as_shape(shape))
        object.__setattr__(self, "dtype", _dtypes.as_dtype(dtype))

    def is_compatible_with(self, other: Any) -> bool:
        return (
            isinstance(other, SparseTensorSpec)
            and self.dtype == other.dtype
            and self.shape.is_compatible_with(other.shape)
        )

    @property
    def value_type(self) -> type:
        from client.framework.sparse_tensor import SparseTensor

        return SparseTensor

    def __repr__(self) -> str:
        return f"SparseTensorSpec({self.shape}, tf.{self.dtype.name})"


Spec = TensorSpec | SparseTensorSpec
_VARIANT_COMPONENT = TensorSpec(None, _dtypes.variant)


def component_spec(spec: Spec) -> TensorSpec:
    """The tensor a dataset carries for `spec` (a variant for a SparseTensor)."""
    return _VARIANT_COMPONENT if isinstance(spec, SparseTensorSpec) else spec


def with_shape(spec: Spec, shape: TensorShape) -> Spec:
    """`spec` of the same kind and dtype with `shape`."""
    if isinstance(spec, SparseTensorSpec):
        return SparseTensorSpec(shape, spec.dtype)
    return TensorSpec(shape, spec.dtype)


def batched(spec: Spec, lead: int | None) -> Spec:
    """The spec of `spec` elements stacked along a new leading dim `lead`."""
    return with_shape(spec, TensorShape([lead]).concatenate(spec.shape))


def unbatched(spec: Spec) -> Spec:
    """The spec of one row of `spec` (unknown rank stays unknown)."""
    shape = spec.shape
    return with_shape(spec, TensorShape(None if shape.ndims is None else shape.as_list()[1:]))


def _is_tuple(value: Any) -> bool:
    """A tuple that nests: a SparseTensorValue (a namedtuple) is one component, as TF's."""
    return isinstance(value, tuple) and not isinstance(value, SparseTensorValue)


def is_nested(value: Any) -> bool:
    return isinstance(value, dict) or _is_tuple(value)


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def flatten(structure: Any) -> list[Any]:
    """The components of `structure`, depth first (dict values in sorted key order)."""
    if isinstance(structure, dict):
        return [x for k in sorted(structure) for x in flatten(structure[k])]
    if _is_tuple(structure):
        return [x for v in structure for x in flatten(v)]
    return [structure]


def pack_sequence_as(structure: Any, flat: list[Any]) -> Any:
    """`flat` (as `flatten(structure)` orders it) in the shape of `structure`."""
    values = iter(flat)

    def build(s: Any) -> Any:
        if isinstance(s, dict):
            built = {k: build(s[k]) for k in sorted(s)}
            return type(s)((k, built[k]) for k in s)
        if not _is_tuple(s):
            return next(values)
        if _is_namedtuple(s):
            return type(s)(*[build(v) for v in s])
        if isinstance(s, tuple):
            return tuple(build(v) for v in s)
        return next(values)

    out = build(structure)
    if next(values, None) is not None:
        raise ValueError("The flat sequence has more elements than the structure.")
    return out


def map_structure(fn: Callable[..., Any], structure: Any, *more: Any) -> Any:
    flats = [flatten(structure)] + [flatten(m) for m in more]
    if any(len(f) != len(flats[0]) for f in flats):
        raise ValueError("The two structures don't have the same number of elements.")
    return pack_sequence_as(structure, [fn(*xs) for xs in zip(*flats)])


def assert_same_structure(a: Any, b: Any) -> None:
    def shape_of(s: Any) -> Any:
        if isinstance(s, dict):
            return ("dict", tuple((k, shape_of(s[k])) for k in sorted(s)))
        if _is_tuple(s):
            return ("tuple", tuple(shape_of(v) for v in s))
        return "."

    if shape_of(a) != shape_of(b):
        raise TypeError(f"The two structures don't have the same nested structure: {a} vs {b}")


def spec_of(value: Any) -> Spec:
    from client.framework.sparse_tensor import SparseTensor

    if isinstance(value, SparseTensor):
        return SparseTensorSpec(value.shape, value.dtype.base_dtype)
    return TensorSpec(value.shape, value.dtype.base_dtype)


def flat_types(element_spec: Any) -> list[_dtypes.DType]:
    return [component_spec(s).dtype for s in flatten(element_spec)]


def flat_shapes(element_spec: Any) -> list[TensorShape]:
    return [component_spec(s).shape for s in flatten(element_spec)]


def most_specific_compatible_shape(a: TensorShape, b: TensorShape) -> TensorShape:
    """The dims two shapes agree on, None elsewhere (unknown rank if ranks differ)."""
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


class HasElementSpec:
    """element_spec and TF1's output_types / output_shapes / output_classes, for a
    Dataset or an Iterator (`_element_spec`: a structure of TensorSpecs)."""

    _element_spec: Any

    @property
    def element_spec(self) -> Any:
        return self._element_spec

    @property
    def output_types(self) -> Any:
        return map_structure(lambda s: s.dtype, self._element_spec)

    @property
    def output_shapes(self) -> Any:
        return map_structure(lambda s: s.shape, self._element_spec)

    @property
    def output_classes(self) -> Any:
        from client.framework.ops import Tensor

        return map_structure(
            lambda s: s.value_type if isinstance(s, SparseTensorSpec) else Tensor,
            self._element_spec,
        )
