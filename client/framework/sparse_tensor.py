"""Client graph building: tf.SparseTensor (indices, values, dense_shape tensors) and
tf.compat.v1.SparseTensorValue, what Session.run returns for one. Immutable values."""

from __future__ import annotations

from typing import Any, NamedTuple

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor


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

    def consumers(self) -> list[_ops.Operation]:
        return self._values.consumers()
