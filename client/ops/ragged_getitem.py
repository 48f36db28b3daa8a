"""Client, graph building: RaggedTensor.__getitem__ (TF's ragged_getitem.py, node for
node): an int row key slices the values between that row's splits; a row slice builds
new splits; inner keys index the values (slices through RaggedRange and gather, ints
only on uniform inner dimensions: a ragged dimension cannot be indexed, as in TF);
Ellipsis expands. tf.newaxis and rows of a uniform row length are not built here
(ValueError). Stateless."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.framework.ragged_tensor import RaggedTensor, from_row_splits
from client.framework.shape_fns import constant_value
from client.ops import array_ops, check_ops, control_flow_ops, control_flow_util, math_ops
from client.ops.cond_v2 import cond_v2
from client.ops.ragged_factory_ops import range as ragged_range
from client.ops.ragged_gather_ops import gather as ragged_gather


def _tensors_in_key(key: Any) -> Iterator[Any]:
    if isinstance(key, _ops.Tensor):
        yield key
    if isinstance(key, (list, tuple)):
        for k in key:
            yield from _tensors_in_key(k)
    if isinstance(key, slice):
        for k in (key.start, key.stop, key.step):
            yield from _tensors_in_key(k)


def getitem(rt: RaggedTensor, key: Any) -> Any:
    scope_tensors = [rt, *_tensors_in_key(key)]
    keys = list(key) if isinstance(key, (list, tuple)) else [key]
    with _ops.name_scope(None, "RaggedGetItem", scope_tensors):
        return _getitem(rt, keys)


def _no_newaxis(key: Any) -> None:
    if key is None:
        raise ValueError("This client's ragged __getitem__ does not build tf.newaxis")


def _uniform(rt: RaggedTensor) -> Any:
    return rt._row_partition.uniform_row_length()


def _getitem(rt: RaggedTensor, keys: list[Any]) -> Any:
    if not keys:
        return rt
    row_key, inner_keys = keys[0], keys[1:]
    if row_key is Ellipsis:
        return _getitem(rt, _expand_ellipsis(keys, rt.shape.ndims))
    _no_newaxis(row_key)
    if isinstance(row_key, slice):
        if _uniform(rt) is not None:
            raise ValueError("This client slices the rows of non-uniform RaggedTensors only")
        return _inner(_slice_rows(rt, row_key), inner_keys)
    starts = rt.row_splits[:-1]
    limits = rt.row_splits[1:]
    row = rt.values[starts[row_key] : limits[row_key]]
    return row.__getitem__(tuple(inner_keys))


def _slice_rows(rt: RaggedTensor, row_key: slice) -> RaggedTensor:
    if row_key.start is None and row_key.stop is None and row_key.step is None:
        return rt
    new_starts = rt.row_splits[:-1][row_key]
    new_limits = rt.row_splits[1:][row_key]
    zero_pad = array_ops.zeros([1], rt.row_splits.dtype)
    if row_key.step is None or row_key.step == 1:
        new_splits = array_ops.concat(
            [zero_pad[array_ops.size(new_starts) :], new_starts[:1], new_limits], axis=0
        )
        values_start = new_splits[0]
        values_limit = new_splits[-1]
        return from_row_splits(
            rt.values[values_start:values_limit], new_splits - values_start, validate=False
        )
    return _from_value_ranges(new_starts, new_limits, 1, rt.values)


def _inner(rt: Any, keys: list[Any]) -> Any:
    """TF's _ragged_getitem_inner_dimensions: keys for the dimensions below the rows."""
    if not keys:
        return rt
    if not isinstance(rt, RaggedTensor):
        return rt.__getitem__((slice(None, None, None), *keys))
    column_key = keys[0]
    if column_key is Ellipsis:
        return _inner(rt, _expand_ellipsis(keys, rt.values.shape.ndims))
    _no_newaxis(column_key)
    if isinstance(column_key, slice):
        if column_key.start is None and column_key.stop is None and column_key.step is None:
            return rt.with_values(_inner(rt.values, keys[1:]))
        return _slice_columns(rt, column_key, keys[1:])
    row_length = _uniform(rt)
    if row_length is None:
        raise ValueError("Cannot index into an inner ragged dimension.")
    column_key = math_ops.cast(column_key, row_length.dtype)
    message = "Index out of bounds when indexing into a ragged tensor"
    checks = [
        check_ops.assert_greater_equal(column_key, -row_length, message=message),
        check_ops.assert_less(column_key, row_length, message=message),
    ]
    with _ops.control_dependencies(checks):
        offset = _if_ge_zero(column_key, lambda: column_key, lambda: row_length + column_key)
        sliced = rt.values[offset::row_length]
        return _inner(sliced, keys[1:])


def _slice_columns(rt: RaggedTensor, key: slice, rest: list[Any]) -> Any:
    for bound in (key.start, key.stop):
        if not isinstance(bound, (_ops.Tensor, int, type(None))):
            raise TypeError("slice offsets must be integers or None")
    if _uniform(rt) is not None:
        raise ValueError("This client slices the columns of non-uniform RaggedTensors only")
    starts = rt.row_splits[:-1]
    limits = rt.row_splits[1:]
    step = 1 if key.step is None else key.step
    lower_bound = _if_ge_zero(step, lambda: starts, lambda: starts - 1)
    upper_bound = _if_ge_zero(step, lambda: limits, lambda: limits - 1)
    if key.start is None:
        inner_starts = _if_ge_zero(step, lambda: starts, lambda: limits - 1)
    else:
        start_offset = math_ops.cast(key.start, starts.dtype)
        inner_starts = _if_ge_zero(
            key.start,
            lambda: math_ops.minimum(starts + start_offset, upper_bound),
            lambda: math_ops.maximum(limits + start_offset, lower_bound),
        )
    if key.stop is None:
        inner_limits = _if_ge_zero(step, lambda: limits, lambda: starts - 1)
    else:
        stop_offset = math_ops.cast(key.stop, starts.dtype)
        inner_limits = _if_ge_zero(
            key.stop,
            lambda: math_ops.minimum(starts + stop_offset, upper_bound),
            lambda: math_ops.maximum(limits + stop_offset, lower_bound),
        )
    inner = _from_value_ranges(inner_starts, inner_limits, key.step, rt.values)
    return inner.with_values(_inner(inner.values, rest))


def _expand_ellipsis(keys: list[Any], remaining: int | None) -> list[Any]:
    if remaining is None:
        raise ValueError("Ellipsis not supported for unknown shape RaggedTensors")
    n = sum(1 for k in keys if k is not None)
    if n > remaining + 1:
        raise IndexError("Too many indices for RaggedTensor")
    if n == remaining + 1:
        return keys[1:]
    return [slice(None, None, None), *keys]


def _from_value_ranges(starts: Any, limits: Any, step: Any, values: Any) -> RaggedTensor:
    """Row i gathers values[starts[i]:limits[i]:step] (a RaggedRange of indices)."""
    step = convert_to_tensor(1 if step is None else step, name="step")
    if not step.dtype.is_integer:
        raise TypeError("slice strides must be integers or None")
    step = math_ops.cast(step, starts.dtype)
    indices = ragged_range(starts, limits, step, row_splits_dtype=starts.dtype)
    if isinstance(values, RaggedTensor):
        gathered = ragged_gather(values, indices.values)
    else:
        gathered = array_ops.gather(values, indices.values)
    return indices.with_values(gathered)


def _if_ge_zero(value: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any]) -> Any:
    if isinstance(value, _ops.Tensor):
        known = constant_value(value)
        if known is None:
            if control_flow_util.control_flow_v2_enabled():
                (out,) = cond_v2(value >= 0, true_fn, false_fn)
                return out
            return control_flow_ops.cond(value >= 0, true_fn, false_fn)
        value = known
    return true_fn() if value >= 0 else false_fn()


RaggedTensor.__getitem__ = getitem  # type: ignore[misc]
