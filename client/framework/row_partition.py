"""Client graph building: RowPartition, how one ragged dimension divides its values into
rows (TF's ragged/row_partition.py). Always row_splits; the encodings a factory was given
or derived on the way (row_lengths, value_rowids, nrows, nvals) are kept, so the views read
them instead of building new ops, as TensorFlow's do. The factories build TF's graph node
for node, validate=True adding the same assertions. Immutable values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import constant, convert_to_tensor
from client.framework.shape_fns import constant_value
from client.ops import array_ops, bincount_ops, check_ops, control_flow_ops, math_ops


class RowPartition:
    """row_splits plus whatever other encodings of the same partition are known."""

    def __init__(
        self,
        row_splits: Any,
        row_lengths: Any = None,
        value_rowids: Any = None,
        nrows: Any = None,
        nvals: Any = None,
        uniform_row_length: Any = None,
    ) -> None:
        if row_splits.dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError("Row-partitioning argument must be int32 or int64")
        row_splits.shape.assert_has_rank(1)
        row_splits.set_shape([None])
        self._row_splits = row_splits
        self._row_lengths = row_lengths
        self._value_rowids = value_rowids
        self._nrows = nrows
        self._nvals = nvals
        self._uniform_row_length = uniform_row_length

    dtype = property(lambda self: self._row_splits.dtype)

    def row_splits(self) -> Any:
        return self._row_splits

    def uniform_row_length(self) -> Any:
        return self._uniform_row_length

    def has_precomputed_value_rowids(self) -> bool:
        return self._value_rowids is not None

    def precomputed_value_rowids(self) -> Any:
        return self._value_rowids

    def nvals(self) -> Any:
        return self._row_splits[-1]

    def nrows(self) -> Any:
        if self._nrows is not None:
            return self._nrows
        nsplits = self._row_splits.shape.as_list()[0]
        if nsplits is None:
            return array_ops.shape(self._row_splits, out_type=self.dtype)[0] - 1
        return constant(nsplits - 1, dtype=self.dtype)

    def row_lengths(self) -> Any:
        if self._row_lengths is not None:
            return self._row_lengths
        splits = self._row_splits
        return splits[1:] - splits[:-1]

    def with_dependencies(self, dependencies: list[Any]) -> RowPartition:
        splits = control_flow_ops.with_dependencies(dependencies, self._row_splits)
        return RowPartition(
            splits, self._row_lengths, self._value_rowids, self._nrows,
            uniform_row_length=self._uniform_row_length,
        )  # fmt: skip


def convert_partition(partition: Any, name: str, dtype: Any = None, dtype_hint: Any = None) -> Any:
    """A row-partitioning tensor: int64 unless the value says otherwise (an int32 numpy
    array or tensor keeps int32), as TF's RowPartition._convert_row_partition."""
    if dtype_hint is None:
        dtype_hint = dtypes.int64
    if isinstance(partition, np.ndarray) and partition.dtype == np.int32 and dtype is None:
        out = convert_to_tensor(partition, name=name)
    else:
        out = convert_to_tensor(partition, dtype=dtype, name=name, preferred_dtype=dtype_hint)
    if out.dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"{name} must have dtype int32 or int64")
    return out


def _assert_zero(tensor: Any, message: str) -> Any:
    return check_ops.assert_equal(tensor, constant(0, dtype=tensor.dtype), message=message)


def _assert_monotonic_increasing(tensor: Any, message: str) -> Any:
    return check_ops.assert_non_negative(tensor[1:] - tensor[:-1], message=message)


def _vector(partition: Any, name: str, dtype: Any, dtype_hint: Any) -> Any:
    """The partitioning argument as an int32/int64 tensor of rank 1 (statically)."""
    out = convert_partition(partition, name, dtype, dtype_hint)
    out.shape.assert_has_rank(1)
    return out


def _checked(tensor: Any, validate: bool, checks: Callable[[Any], list[Any]]) -> Any:
    """`tensor`, made to depend on `checks(tensor)` when validating: the one body every
    factory shares (TF's factories each spell it out)."""
    if not validate:
        return tensor
    return control_flow_ops.with_dependencies(checks(tensor), tensor)


def from_row_splits(
    row_splits: Any, validate: bool = True, dtype: Any = None, dtype_hint: Any = None
) -> RowPartition:
    if isinstance(row_splits, (list, tuple)) and not row_splits:
        raise ValueError("row_splits tensor may not be empty.")
    with _ops.name_scope(None, "RowPartitionFromRowSplits", [row_splits]):
        row_splits = _vector(row_splits, "row_splits", dtype, dtype_hint)
        msg = "Arguments to from_row_splits do not form a valid RaggedTensor:"
        row_splits = _checked(row_splits, validate, lambda t: [
            check_ops.assert_rank(t, 1, message=msg + "rank"),
            _assert_zero(t[0], message=msg + "zero"),
            _assert_monotonic_increasing(t, message=msg + "monotonic"),
        ])  # fmt: skip
        return RowPartition(row_splits)


def from_row_lengths(
    row_lengths: Any, validate: bool = True, dtype: Any = None, dtype_hint: Any = None
) -> RowPartition:
    with _ops.name_scope(None, "RowPartitionFromRowLengths", [row_lengths]):
        row_lengths = _vector(row_lengths, "row_lengths", dtype, dtype_hint)
        msg = "Arguments to from_row_lengths do not form a valid RowPartition"
        row_lengths = _checked(row_lengths, validate, lambda t: [
            check_ops.assert_rank(t, 1, message=msg),
            check_ops.assert_non_negative(t, message=msg),
        ])  # fmt: skip
        row_limits = math_ops.cumsum(row_lengths)
        row_splits = array_ops.concat([[0], row_limits], axis=0)
        return RowPartition(row_splits, row_lengths=row_lengths)


def from_row_starts(
    row_starts: Any, nvals: Any, validate: bool = True, dtype: Any = None, dtype_hint: Any = None
) -> RowPartition:
    with _ops.name_scope(None, "RowPartitionFromRowStarts", [row_starts]):
        row_starts = _vector(row_starts, "row_starts", dtype, dtype_hint)
        nvals = math_ops.cast(nvals, row_starts.dtype)
        msg = "Arguments to from_row_starts do not form a valid RaggedTensor"
        row_starts = _checked(row_starts, validate, lambda t: [
            check_ops.assert_rank(t, 1, message=msg),
            _assert_zero(t[:1], message=msg),
            _assert_monotonic_increasing(t, message=msg),
            check_ops.assert_less_equal(t[-1:], nvals, message=msg),
        ])  # fmt: skip
        row_splits = array_ops.concat([row_starts, [nvals]], axis=0)
        return RowPartition(row_splits, nvals=nvals)


def from_row_limits(
    row_limits: Any, validate: bool = True, dtype: Any = None, dtype_hint: Any = None
) -> RowPartition:
    with _ops.name_scope(None, "RowPartitionFromRowLimits", [row_limits]):
        row_limits = _vector(row_limits, "row_limits", dtype, dtype_hint)
        msg = "Arguments to from_row_limits do not form a valid RaggedTensor"
        row_limits = _checked(row_limits, validate, lambda t: [
            check_ops.assert_rank(t, 1, message=msg),
            check_ops.assert_non_negative(t[:1], message=msg),
            _assert_monotonic_increasing(t, message=msg),
        ])  # fmt: skip
        zero = array_ops.zeros([1], row_limits.dtype)
        row_splits = array_ops.concat([zero, row_limits], axis=0)
        return RowPartition(row_splits)


def _static_nrows(value_rowids: Any, nrows: Any) -> tuple[Any, Any]:
    """(nrows as a tensor, its value when known while building), TF's checks included."""
    if nrows is None:
        const_rowids = constant_value(value_rowids)
        if const_rowids is None:
            nrows = array_ops.concat([value_rowids[-1:], [-1]], axis=0)[0] + 1
            return nrows, None
        first = int(const_rowids[-1]) + 1 if const_rowids.size > 0 else 0
        return convert_to_tensor(first, value_rowids.dtype, name="nrows"), first
    nrows = convert_to_tensor(nrows, value_rowids.dtype, "nrows")
    known = constant_value(nrows)
    const_nrows = None if known is None else int(known)
    if const_nrows is not None:
        if const_nrows < 0:
            raise ValueError(f"Expected nrows >= 0; got {const_nrows}")
        const_rowids = constant_value(value_rowids)
        if const_rowids is not None and const_rowids.size > 0:  # noqa: SIM102 (TF's layout)
            if not const_nrows >= const_rowids[-1] + 1:
                raise ValueError(
                    f"Expected nrows >= value_rowids[-1] + 1; got nrows={const_nrows}, "
                    f"value_rowids[-1]={const_rowids[-1]}"
                )
    return nrows, const_nrows


def from_value_rowids(
    value_rowids: Any,
    nrows: Any = None,
    validate: bool = True,
    dtype: Any = None,
    dtype_hint: Any = None,
) -> RowPartition:
    with _ops.name_scope(None, "RowPartitionFromValueRowIds", [value_rowids, nrows]):
        value_rowids = convert_partition(value_rowids, "value_rowids", dtype, dtype_hint)
        nrows, const_nrows = _static_nrows(value_rowids, nrows)
        value_rowids.shape.assert_has_rank(1)
        nrows.shape.assert_has_rank(0)
        msg = "Arguments to from_value_rowids do not form a valid RowPartition"
        value_rowids = _checked(value_rowids, validate, lambda t: [
            check_ops.assert_rank(t, 1, message=msg),
            check_ops.assert_rank(nrows, 0, message=msg),
            check_ops.assert_non_negative(t[:1], message=msg),
            _assert_monotonic_increasing(t, message=msg),
            check_ops.assert_less(t[-1:], nrows, message=msg),
        ])  # fmt: skip
        rowids32 = math_ops.cast(value_rowids, dtypes.int32)
        nrows32 = math_ops.cast(nrows, dtypes.int32)
        row_lengths = bincount_ops.bincount(
            rowids32, minlength=nrows32, maxlength=nrows32, dtype=value_rowids.dtype
        )
        row_splits = array_ops.concat([[0], math_ops.cumsum(row_lengths)], axis=0)
        if const_nrows is not None:
            row_lengths.set_shape([const_nrows])
            row_splits.set_shape([const_nrows + 1])
        return RowPartition(row_splits, row_lengths, value_rowids, nrows)


def from_uniform_row_length_unchecked(
    uniform_row_length: Any, nvals: Any, nrows: Any
) -> RowPartition:
    """Rows of one length, nrows given (TF's from_uniform_row_length with validate=False,
    as from_tensor builds it): constant splits when both are known while building."""
    with _ops.name_scope(None, "RowPartitionFromUniformRowLength", [uniform_row_length, nrows]):
        dtype = uniform_row_length.dtype
        const_length = constant_value(uniform_row_length)
        const_nrows = constant_value(nrows)
        const_nvals = constant_value(nvals)
        if const_nvals is None and const_nrows is not None and const_length is not None:
            nvals = constant(int(const_nrows) * int(const_length), dtype=dtype)
        if const_nrows is not None and const_length is not None:
            splits = [v * int(const_length) for v in range(int(const_nrows) + 1)]
            row_splits = constant(splits, dtype=dtype)
        else:
            row_splits = math_ops.range(nrows + 1, dtype=dtype) * uniform_row_length
        return RowPartition(
            row_splits, nrows=nrows, nvals=nvals, uniform_row_length=uniform_row_length
        )
