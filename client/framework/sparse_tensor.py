"""Client graph building: tf.SparseTensor (indices, values, dense_shape tensors) and
tf.compat.v1.SparseTensorValue, what Session.run returns for one. Immutable values."""

from __future__ import annotations

from typing import Any, NamedTuple

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.framework.tensor_shape import TensorShape


class SparseTensorValue(NamedTuple):
    """A fetched SparseTensor: numpy indices, values and dense_shape."""

    indices: Any
    values: Any
    dense_shape: Any


class SparseTensor:
    """A sparse tensor: `values[i]` sits at `indices[i]` of a tensor of `dense_shape`."""

    def __init__(self, indices: Any, values: Any, dense_shape: Any) -> None:
        # Python values become Consts under a "SparseTensor" scope, as in TF's constructor.
        with _ops.name_scope(None, "SparseTensor", [indices, values, dense_shape]):
            self._indices = convert_to_tensor(indices, dtype=dtypes.int64, name="indices")
            self._values = convert_to_tensor(values, name="values")
            self._dense_shape = convert_to_tensor(
                dense_shape, dtype=dtypes.int64, name="dense_shape"
            )

    indices = property(lambda self: self._indices)
    values = property(lambda self: self._values)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)
    graph = property(lambda self: self._values.graph)
    op = property(lambda self: self._values.op)

    def __repr__(self) -> str:
        return (
            f"SparseTensor(indices={self._indices!r}, values={self._values!r}, "
            f"dense_shape={self._dense_shape!r})"
        )

    def __str__(self) -> str:
        # TF's form (its components' str), which error messages embed.
        return (
            f"SparseTensor(indices={self._indices}, values={self._values}, "
            f"dense_shape={self._dense_shape})"
        )

    def consumers(self) -> list[_ops.Operation]:
        return self._values.consumers()

    @property
    def shape(self) -> TensorShape:
        """The static dense shape: what is known of dense_shape's value, merged with
        set_shape's, as TF's SparseTensor.shape."""
        known = shape_fns._shape_from_tensor(self._dense_shape)
        extra = getattr(self, "_shape_hint", None)
        return known if extra is None else known.merge_with(extra)

    def get_shape(self) -> TensorShape:
        return self.shape

    def set_shape(self, shape: Any) -> None:
        shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
        if not shape.is_compatible_with(self.shape):
            raise ValueError(f"Shape {shape} is not compatible with {self.shape}")
        self._shape_hint = self.shape.merge_with(shape)


def convert_to_sparse_tensor(sp_input: Any) -> SparseTensor:
    """A SparseTensor from a SparseTensor or a SparseTensorValue (TF's
    sparse_ops._convert_to_sparse_tensor); TypeError for anything else."""
    if isinstance(sp_input, SparseTensorValue):
        return SparseTensor(sp_input.indices, sp_input.values, sp_input.dense_shape)
    if not isinstance(sp_input, SparseTensor):
        raise TypeError("Input must be a SparseTensor.")
    return sp_input
