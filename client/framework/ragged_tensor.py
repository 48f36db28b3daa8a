"""Client graph building: tf.RaggedTensor (values, which may be ragged again, and a
RowPartition of them into rows) and tf.compat.v1.ragged.RaggedTensorValue, what
Session.run returns for one. Immutable values. The factories (from_row_splits,
from_row_lengths, from_value_rowids, from_row_starts, from_row_limits,
from_nested_row_splits, validate=True adding TF's assertions) and views (nrows,
row_lengths, value_rowids, bounding_shape, to_tensor / to_sparse through
RaggedTensorToTensor / RaggedTensorToSparse) build TF's ragged_tensor.py graph node for
node; they are the module functions below the class."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework import row_partition as rp
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.framework.row_partition import RowPartition
from client.framework.shape_fns import constant_value
from client.framework.sparse_tensor import SparseTensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, check_ops, math_ops


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

    def __init__(self, values: Any, row_splits: Any = None, *, row_partition: Any = None) -> None:
        # values may be a RaggedTensor itself (a nested ragged dimension). Given splits
        # (no ops built, TF's from_row_splits(validate=False) on tensors): Python splits
        # become int64, TF's dtype hint for them (nested splits must agree).
        self._values = (
            values if isinstance(values, RaggedTensor) else convert_to_tensor(values, name="values")
        )
        if row_partition is None:
            hint = None if isinstance(row_splits, _ops.Tensor) else dtypes.int64
            splits = convert_to_tensor(row_splits, dtype=hint, name="row_splits")
            row_partition = RowPartition(splits)
        self._row_partition: RowPartition = row_partition

    # The graph-building methods are the module functions below the class.
    @classmethod
    def from_row_splits(
        cls, values: Any, row_splits: Any, name: str | None = None, validate: bool = True
    ) -> RaggedTensor:
        return from_row_splits(values, row_splits, name, validate)

    @classmethod
    def from_value_rowids(
        cls,
        values: Any,
        value_rowids: Any,
        nrows: Any = None,
        name: str | None = None,
        validate: bool = True,
    ) -> RaggedTensor:
        return from_value_rowids(values, value_rowids, nrows, name, validate)

    @classmethod
    def from_row_lengths(
        cls, values: Any, row_lengths: Any, name: str | None = None, validate: bool = True
    ) -> RaggedTensor:
        return from_row_lengths(values, row_lengths, name, validate)

    @classmethod
    def from_row_starts(
        cls, values: Any, row_starts: Any, name: str | None = None, validate: bool = True
    ) -> RaggedTensor:
        return from_row_starts(values, row_starts, name, validate)

    @classmethod
    def from_row_limits(
        cls, values: Any, row_limits: Any, name: str | None = None, validate: bool = True
    ) -> RaggedTensor:
        return from_row_limits(values, row_limits, name, validate)

    @classmethod
    def from_nested_row_splits(
        cls,
        flat_values: Any,
        nested_row_splits: Any,
        name: str | None = None,
        validate: bool = True,
    ) -> RaggedTensor:
        return from_nested_row_splits(flat_values, nested_row_splits, name, validate)

    def nrows(self, out_type: Any = None, name: str | None = None) -> Any:
        return nrows(self, out_type, name)

    def row_lengths(self, axis: int = 1, name: str | None = None) -> Any:
        return row_lengths(self, axis, name)

    def value_rowids(self, name: str | None = None) -> Any:
        return value_rowids(self, name)

    def bounding_shape(
        self, axis: Any = None, name: str | None = None, out_type: Any = None
    ) -> Any:
        return bounding_shape(self, axis, name, out_type)

    def to_tensor(
        self, default_value: Any = None, name: str | None = None, shape: Any = None
    ) -> Any:
        return to_tensor(self, default_value, name, shape)

    def to_sparse(self, name: str | None = None) -> Any:
        return to_sparse(self, name)

    @property
    def nested_row_splits(self) -> tuple[Any, ...]:
        return tuple(nested_row_splits(self))

    def with_values(self, new_values: Any) -> RaggedTensor:
        """The same row partition (the same object: TF's dispatch compares identity) over
        new values with as many rows."""
        new_values = _as_values(new_values)
        new_values.shape.with_rank_at_least(1)
        self._values.shape[:1].assert_is_compatible_with(new_values.shape[:1])
        if isinstance(new_values, RaggedTensor) and self._row_partition.dtype != (
            new_values._row_partition.dtype
        ):
            raise ValueError(
                "self and new_values have mismatched row_splits dtypes; use "
                "RaggedTensor.with_row_splits_dtype() to convert them to compatible dtypes."
            )
        return RaggedTensor(new_values, row_partition=self._row_partition)

    def with_flat_values(self, new_values: Any) -> RaggedTensor:
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    values = property(lambda self: self._values)
    row_splits = property(lambda self: self._row_partition.row_splits())
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

    @property
    def shape(self) -> TensorShape:
        """[nrows, None, <values' dimensions after the first>] (nrows static when the
        splits' length is)."""
        nsplits = self.row_splits.shape.as_list()[0]
        uniform = self._row_partition.uniform_row_length()
        ncols = None if uniform is None else constant_value(uniform)
        outer = TensorShape([
            None if nsplits is None else nsplits - 1,
            None if ncols is None else int(ncols),
        ])  # fmt: skip
        inner = self._values.shape
        if inner.ndims is None:
            return TensorShape(None)
        return outer.concatenate(inner[1:])

    def __repr__(self) -> str:
        return f"tf.RaggedTensor(values={self._values!r}, row_splits={self.row_splits!r})"

    def consumers(self) -> list[_ops.Operation]:
        return self._values.consumers()


# -- RaggedTensor factories ----------------------------------------------------------------
def _partition_dtype(values: Any) -> Any:
    return values._row_partition.dtype if isinstance(values, RaggedTensor) else None


def _nrows(values: Any, out_type: Any = dtypes.int32) -> Any:
    if isinstance(values, RaggedTensor):
        return values.nrows(out_type=out_type)
    return array_ops.shape(values, out_type=out_type)[0]


def _as_values(values: Any) -> Any:
    return values if isinstance(values, RaggedTensor) else convert_to_tensor(values, name="values")


def _from_row_partition(values: Any, partition: RowPartition, validate: bool) -> RaggedTensor:
    """TF's RaggedTensor._from_row_partition: with validate, nvals must equal the number of
    values (and dense values must have a rank)."""
    values = _as_values(values)
    if isinstance(values, RaggedTensor) and values._row_partition.dtype != partition.dtype:
        raise ValueError(
            "Argument `row_partition` of RaggedTensor with name: partition must have same "
            f"dtype as Argument `values`. ({partition.dtype} vs. "
            f"{values._row_partition.dtype})."
        )
    if validate:
        msg = "Arguments to _from_row_partition do not form a valid RaggedTensor"
        nvals = _nrows(values, partition.dtype)
        checks = [
            check_ops.assert_equal(
                math_ops.cast(partition.nvals(), partition.dtype), nvals, message=msg
            )
        ]
        if not isinstance(values, RaggedTensor):
            checks.append(check_ops.assert_rank_at_least(values, 1))
        partition = partition.with_dependencies(checks)
    return RaggedTensor(values, row_partition=partition)


def _check_validate(validate: Any) -> None:
    if not isinstance(validate, bool):
        raise TypeError(f"Argument `validate` must have type bool. Received {validate}.")


def from_row_splits(
    values: Any, row_splits: Any, name: str | None = None, validate: bool = True
) -> RaggedTensor:
    _check_validate(validate)
    with _ops.name_scope(name, "RaggedFromRowSplits", [values, row_splits]):
        partition = rp.from_row_splits(
            row_splits, validate=validate, dtype_hint=_partition_dtype(values)
        )
        return _from_row_partition(values, partition, validate)


def from_row_lengths(
    values: Any, row_lengths: Any, name: str | None = None, validate: bool = True
) -> RaggedTensor:
    _check_validate(validate)
    with _ops.name_scope(name, "RaggedFromRowLengths", [values, row_lengths]):
        partition = rp.from_row_lengths(
            row_lengths, validate=validate, dtype_hint=_partition_dtype(values)
        )
        return _from_row_partition(values, partition, validate)


def from_value_rowids(
    values: Any,
    value_rowids: Any,
    nrows: Any = None,
    name: str | None = None,
    validate: bool = True,
) -> RaggedTensor:
    _check_validate(validate)
    with _ops.name_scope(name, "RaggedFromValueRowIds", [values, value_rowids, nrows]):
        partition = rp.from_value_rowids(
            value_rowids, nrows, validate=validate, dtype_hint=_partition_dtype(values)
        )
        return _from_row_partition(values, partition, validate)


def from_row_starts(
    values: Any, row_starts: Any, name: str | None = None, validate: bool = True
) -> RaggedTensor:
    _check_validate(validate)
    with _ops.name_scope(name, "RaggedFromRowStarts", [values, row_starts]):
        values = _as_values(values)
        partition = rp.from_row_starts(
            row_starts, _nrows(values), validate=validate, dtype_hint=_partition_dtype(values)
        )
        return _from_row_partition(values, partition, validate)


def from_row_limits(
    values: Any, row_limits: Any, name: str | None = None, validate: bool = True
) -> RaggedTensor:
    _check_validate(validate)
    with _ops.name_scope(name, "RaggedFromRowLimits", [values, row_limits]):
        values = _as_values(values)
        partition = rp.from_row_limits(
            row_limits, validate=validate, dtype_hint=_partition_dtype(values)
        )
        return _from_row_partition(values, partition, validate)


def from_nested_row_splits(
    flat_values: Any, nested_row_splits: Any, name: str | None = None, validate: bool = True
) -> RaggedTensor:
    _check_validate(validate)
    if isinstance(nested_row_splits, _ops.Tensor):
        raise TypeError(
            f"Argument `nested_row_splits` must be a list of Tensors. Received {nested_row_splits}."
        )
    with _ops.name_scope(name, "RaggedFromNestedRowSplits", [flat_values, *nested_row_splits]):
        result = flat_values
        for splits in reversed(list(nested_row_splits)):
            result = from_row_splits(result, splits, validate=validate)
        return result


# -- RaggedTensor views --------------------------------------------------------------------
def nested_row_splits(rt: RaggedTensor) -> list[Any]:
    out = [rt.row_splits]
    values = rt.values
    while isinstance(values, RaggedTensor):
        out.append(values.row_splits)
        values = values.values
    return out


def nrows(rt: RaggedTensor, out_type: Any = None, name: str | None = None) -> Any:
    with _ops.name_scope(name, "RaggedNRows", [rt.row_splits]):
        n = rt._row_partition.nrows()
        return n if out_type is None else math_ops.cast(n, out_type)


def row_lengths(rt: RaggedTensor, axis: int = 1, name: str | None = None) -> Any:
    # TF opens no name scope for axis 0 and 1: the ops land in the caller's scope.
    if axis == 0:
        return rt._row_partition.nrows()
    if axis == 1:
        return rt._row_partition.row_lengths()
    raise ValueError("This client's row_lengths takes axis 0 or 1")


def value_rowids(rt: RaggedTensor, name: str | None = None) -> Any:
    with _ops.name_scope(name, "RaggedValueRowIds", [rt.row_splits]):
        partition = rt._row_partition
        if partition.has_precomputed_value_rowids():
            return partition.precomputed_value_rowids()
        from client.ops.ragged_util import row_splits_to_segment_ids  # needs this module

        return row_splits_to_segment_ids(partition.row_splits())


def bounding_shape(
    rt: RaggedTensor, axis: Any = None, name: str | None = None, out_type: Any = None
) -> Any:
    """The smallest dense shape holding every row (TF's RaggedBoundingBox graph)."""
    own = rt._row_partition.dtype
    out_type = own if out_type is None else dtypes.as_dtype(out_type)
    with _ops.name_scope(name, "RaggedBoundingBox", [rt.row_splits, axis]):
        splits_list = nested_row_splits(rt)
        if isinstance(axis, int):
            if axis == 0:
                return array_ops.shape(splits_list[0], out_type=out_type)[0] - 1
            if axis == 1:
                result = math_ops.maximum(math_ops.reduce_max(rt.row_lengths()), 0)
                return result if out_type == own else math_ops.cast(result, out_type)
        splits_shape = array_ops.shape(rt.row_splits, out_type=out_type)
        flat_shape = array_ops.shape(rt.flat_values, out_type=out_type)
        ragged_dims = [splits_shape[0] - 1] + [
            math_ops.maximum(math_ops.reduce_max(s[1:] - s[:-1]), 0) for s in splits_list
        ]
        inner_dims = flat_shape[1:]
        if out_type != own:
            ragged_dims = [math_ops.cast(d, out_type) for d in ragged_dims]
        bbox = array_ops.concat([array_ops.stack(ragged_dims), inner_dims], axis=0)
        return bbox if axis is None else array_ops.gather(bbox, axis)


def _partition_pairs(rt: RaggedTensor) -> list[tuple[str, Any]]:
    """The row partitions RaggedTensorToTensor reads: value_rowids where a partition has
    them (the first one then also as its row count), else row_splits."""
    partitions = []
    v: Any = rt
    while isinstance(v, RaggedTensor):
        partitions.append(v._row_partition)
        v = v.values

    def tail(p: RowPartition) -> tuple[str, Any]:
        if p.has_precomputed_value_rowids():
            return ("VALUE_ROWIDS", p.precomputed_value_rowids())
        return ("ROW_SPLITS", p.row_splits())

    first = partitions[0]
    rest = [tail(p) for p in partitions[1:]]
    if first.has_precomputed_value_rowids():
        return [("FIRST_DIM_SIZE", first.nrows()), tail(first), *rest]
    return [("ROW_SPLITS", first.row_splits()), *rest]


def _shape_as_tensor(shape: Any, dtype: Any) -> Any:
    if isinstance(shape, _ops.Tensor):
        if shape.dtype not in (dtypes.int64, dtypes.int32):
            return math_ops.cast(shape, dtype)
        return shape
    shape = TensorShape(shape)
    if shape.ndims is None:
        return constant(-1, dtype=dtype)
    return constant([-1 if d is None else d for d in shape.as_list()], dtype=dtype)


def to_tensor(
    rt: RaggedTensor, default_value: Any = None, name: str | None = None, shape: Any = None
) -> Any:
    """RaggedTensorToTensor: rows padded with default_value (zeros when None) to the
    longest row, or cut/padded to `shape` where it gives a dimension."""
    with _ops.name_scope(name, "RaggedToTensor", [rt.flat_values, default_value, shape]):
        flat = rt.flat_values
        if default_value is not None:
            default_value = convert_to_tensor(default_value, name="default_value", dtype=flat.dtype)
        pairs = _partition_pairs(rt)
        if default_value is None:
            default_value = array_ops.zeros([], dtype=flat.dtype)
        if (
            isinstance(shape, (list, tuple))
            and any(isinstance(v, _ops.Tensor) for v in shape)
            and all(isinstance(v, (int, _ops.Tensor)) for v in shape)
        ):
            shape = array_ops.stack(shape)
        shape_t = _shape_as_tensor(shape, pairs[0][1].dtype)
        attrs = {"row_partition_types": [t for t, _ in pairs]}
        inputs = [shape_t, flat, default_value, [p for _, p in pairs]]
        out = apply_op("RaggedTensorToTensor", inputs, attrs).outputs[0]
        ragged_shape = rt.shape
        if ragged_shape.ndims is not None and not isinstance(shape, _ops.Tensor):
            wanted = TensorShape(shape)
            if wanted.ndims is None:
                out.set_shape(ragged_shape)
            else:
                dims = zip(wanted.as_list(), ragged_shape.as_list())
                out.set_shape([a if a is not None else b for a, b in dims])
        return out


def to_sparse(rt: RaggedTensor, name: str | None = None) -> SparseTensor:
    with _ops.name_scope(name, "RaggedToSparse", [rt.flat_values]):
        splits = nested_row_splits(rt)
        indices, values, shape = apply_op(
            "RaggedTensorToSparse", [splits, rt.flat_values], {}
        ).outputs
        return SparseTensor(indices, values, shape)
