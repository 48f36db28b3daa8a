"""Client graph building: tf.RaggedTensor (values, which may be ragged again, and row
splits, as tf.io.RaggedFeature parses them) and tf.compat.v1.ragged.RaggedTensorValue, what
Session.run returns for one. Immutable values. The factories and views TF1 programs use
(from_value_rowids, from_row_lengths, nrows, row_lengths, to_tensor / to_sparse through
RaggedTensorToTensor / RaggedTensorToSparse, as TF's ragged_tensor.py emits them) are the
module functions below the class."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.framework.sparse_tensor import SparseTensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, bincount_ops, math_ops


class RaggedTensorValue(NamedTuple):
    """A fetched RaggedTensor: numpy values and row_splits (row i is
    values[row_splits[i]:row_splits[i + 1]])."""

    values: Any
    row_splits: Any

    def to_list(self) -> list:
        s = np.asarray(self.row_splits)
        if isinstance(self.values, RaggedTensorValue):
            rows = self.values.to_list()
            return [rows[s[i] : s[i + 1]] for i in range(len(s) - 1)]
        v = np.asarray(self.values)
        return [v[s[i] : s[i + 1]].tolist() for i in range(len(s) - 1)]

    @property
    def flat_values(self) -> Any:
        v = self.values
        return v.flat_values if isinstance(v, RaggedTensorValue) else v

    @property
    def nested_row_splits(self) -> tuple[Any, ...]:
        v = self.values
        inner = v.nested_row_splits if isinstance(v, RaggedTensorValue) else ()
        return (self.row_splits, *inner)

    @property
    def dtype(self) -> Any:
        v = self.values
        return v.dtype if isinstance(v, RaggedTensorValue) else np.asarray(v).dtype


class RaggedTensor:
    """Rows of varying length: row i is values[row_splits[i]:row_splits[i + 1]]."""

    def __init__(self, values: Any, row_splits: Any) -> None:
        # values may be a RaggedTensor itself (a nested ragged dimension).
        self._values = (
            values if isinstance(values, RaggedTensor) else convert_to_tensor(values, name="values")
        )
        # Python splits become int64, TF's dtype hint for them (nested splits must agree).
        hint = None if isinstance(row_splits, _ops.Tensor) else dtypes.int64
        self._row_splits = convert_to_tensor(row_splits, dtype=hint, name="row_splits")

    @classmethod
    def from_row_splits(
        cls, values: Any, row_splits: Any, name: str | None = None, validate: bool = True
    ) -> RaggedTensor:
        return cls(values, row_splits)

    # The graph-building methods are the module functions below the class.
    @classmethod
    def from_value_rowids(
        cls,
        values: Any,
        value_rowids: Any,
        nrows: Any = None,
        name: str | None = None,
        validate: bool = True,
    ) -> RaggedTensor:
        return from_value_rowids(values, value_rowids, nrows, name)

    @classmethod
    def from_row_lengths(
        cls, values: Any, row_lengths: Any, name: str | None = None, validate: bool = True
    ) -> RaggedTensor:
        return from_row_lengths(values, row_lengths, name)

    def nrows(self, out_type: Any = None, name: str | None = None) -> Any:
        return nrows(self, out_type or dtypes.int64, name)

    def row_lengths(self, axis: int = 1, name: str | None = None) -> Any:
        if axis != 1:
            raise ValueError("This client's row_lengths takes axis=1 only")
        return row_lengths(self, name)

    def to_tensor(
        self, default_value: Any = None, name: str | None = None, shape: Any = None
    ) -> Any:
        return to_tensor(self, default_value, name, shape)

    def to_sparse(self, name: str | None = None) -> Any:
        return to_sparse(self, name)

    @property
    def nested_row_splits(self) -> tuple[Any, ...]:
        return tuple(nested_row_splits(self))

    values = property(lambda self: self._values)
    row_splits = property(lambda self: self._row_splits)
    dtype = property(lambda self: self._values.dtype)
    graph = property(lambda self: self._values.graph)

    @property
    def flat_values(self) -> Any:
        v = self._values
        return v.flat_values if isinstance(v, RaggedTensor) else v

    @property
    def ragged_rank(self) -> int:
        v = self._values
        return 1 + (v.ragged_rank if isinstance(v, RaggedTensor) else 0)

    def __repr__(self) -> str:
        return f"tf.RaggedTensor(values={self._values!r}, row_splits={self._row_splits!r})"

    def consumers(self) -> list[_ops.Operation]:
        return self._values.consumers()


# -- RaggedTensor factories and views ------------------------------------------------------
def row_splits_from_row_lengths(row_lengths: Any) -> Any:
    """[0, cumsum(row_lengths)...] as int64 (TF's RowPartition.from_row_lengths)."""
    lengths = math_ops.cast(convert_to_tensor(row_lengths, name="row_lengths"), dtypes.int64)
    zero = constant([0], dtype=dtypes.int64)
    return array_ops.concat([zero, math_ops.cumsum(lengths)], axis=0)


def from_value_rowids(
    values: Any, value_rowids: Any, nrows: Any = None, name: str | None = None
) -> RaggedTensor:
    """Row i holds the values whose row id is i (ids sorted), nrows defaulting to the
    largest id + 1; splits from a bincount of the ids, as TF's RowPartition builds them."""
    with _ops.name_scope(name, "RaggedFromValueRowIds", [values, value_rowids, nrows]):
        rowids = math_ops.cast(convert_to_tensor(value_rowids, name="value_rowids"), dtypes.int64)
        if nrows is None:
            nrows = math_ops.reduce_max(rowids) + 1
        nrows = math_ops.cast(convert_to_tensor(nrows, name="nrows"), dtypes.int64)
        counts = bincount_ops.bincount(rowids, minlength=nrows, maxlength=nrows, dtype=dtypes.int64)
        return RaggedTensor(values, row_splits_from_row_lengths(counts))


def from_row_lengths(values: Any, row_lengths: Any, name: str | None = None) -> RaggedTensor:
    with _ops.name_scope(name, "RaggedFromRowLengths", [values, row_lengths]):
        return RaggedTensor(values, row_splits_from_row_lengths(row_lengths))


def nested_row_splits(rt: RaggedTensor) -> list[Any]:
    out = [rt.row_splits]
    values = rt.values
    while isinstance(values, RaggedTensor):
        out.append(values.row_splits)
        values = values.values
    return out


def nrows(rt: RaggedTensor, out_type: Any = dtypes.int64, name: str | None = None) -> Any:
    with _ops.name_scope(name, "RaggedNRows", [rt.row_splits]):
        n = array_ops.shape(rt.row_splits, out_type=out_type)[0]
        return n - 1


def row_lengths(rt: RaggedTensor, name: str | None = None) -> Any:
    with _ops.name_scope(name, "RaggedRowLengths", [rt.row_splits]):
        splits = rt.row_splits
        return splits[1:] - splits[:-1]


def to_tensor(
    rt: RaggedTensor, default_value: Any = None, name: str | None = None, shape: Any = None
) -> Any:
    """RaggedTensorToTensor: rows padded with default_value (zeros when None) to the
    longest row, or cut/padded to `shape` where it gives a dimension."""
    with _ops.name_scope(name, "RaggedToTensor", [rt.flat_values, default_value]):
        flat = rt.flat_values
        if default_value is None:
            default = array_ops.zeros([], dtype=flat.dtype)
        else:
            default = convert_to_tensor(default_value, dtype=flat.dtype, name="default_value")
        if shape is None:
            shape_t = constant(-1, dtype=dtypes.int64)
        else:
            dims = [-1 if d is None else d for d in TensorShape(shape).as_list()]
            shape_t = constant(dims, dtype=dtypes.int64)
        splits = nested_row_splits(rt)
        attrs = {"row_partition_types": ["ROW_SPLITS"] * len(splits)}
        out = apply_op("RaggedTensorToTensor", [shape_t, flat, default, splits], attrs).outputs[0]
        rank = 1 + len(splits) + (flat.shape.ndims - 1 if flat.shape.ndims is not None else 0)
        out.set_shape([None] * rank if flat.shape.ndims is not None else None)
        return out


def to_sparse(rt: RaggedTensor, name: str | None = None) -> SparseTensor:
    with _ops.name_scope(name, "RaggedToSparse", [rt.flat_values]):
        splits = nested_row_splits(rt)
        indices, values, shape = apply_op(
            "RaggedTensorToSparse", [splits, rt.flat_values], {}
        ).outputs
        return SparseTensor(indices, values, shape)
