"""Client, graph building: tf.reduce_sum / prod / min / max / mean / any / all on a
RaggedTensor, as TF's ragged_math_ops.ragged_reduce_aggregate builds them: axis None
reduces the flat values; axis 0 segments each row's j-th value together (segment ids
from RaggedRange over the row lengths); axis 1 segments each row (segment ids from the
row splits); deeper axes recurse into the values. Stateless."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.ragged_tensor import RaggedTensor, from_nested_row_splits, from_row_splits
from client.framework.shape_fns import constant_value
from client.ops import array_ops, math_ops
from client.ops.ragged_factory_ops import range as ragged_range
from client.ops.ragged_functional_ops import map_flat_values
from client.ops.ragged_util import row_splits_to_segment_ids


def get_positive_axis(axis: Any, ndims: int | None, axis_name: str = "axis",
                      ndims_name: str = "ndims") -> int:  # fmt: skip
    """TF's array_ops.get_positive_axis: `axis` in [0, ndims), negatives counted back."""
    if not isinstance(axis, int):
        raise TypeError(f"{axis_name} must be an int; got {type(axis).__name__}")
    if ndims is not None:
        if 0 <= axis < ndims:
            return axis
        if -ndims <= axis < 0:
            return axis + ndims
        raise ValueError(
            f"{axis_name}={axis} out of bounds: expected {-ndims}<={axis_name}<{ndims}"
        )
    if axis < 0:
        raise ValueError(
            f"{axis_name}={axis} may only be negative if {ndims_name} is statically known."
        )
    return axis


def _segment_aggregate(segment_op: Callable[..., Any], data: Any, segment_ids: Any,
                       num_segments: Any) -> Any:  # fmt: skip
    """TF's _ragged_segment_aggregate: rows of ragged `data` with the same segment id
    combine value by value (the output rows as long as the longest of them)."""
    if not isinstance(data, RaggedTensor):
        return segment_op(data, segment_ids, num_segments)
    with _ops.name_scope(None, "RaggedSegment", [data, segment_ids, num_segments]):
        if data.row_splits.dtype != segment_ids.dtype:
            raise ValueError(
                "Input RaggedTensors have mismatched row_splits dtypes; use "
                "RaggedTensor.with_row_splits_dtype() to convert them to compatible dtypes."
            )
        splits = data.row_splits
        data_row_lengths = splits[1:] - splits[:-1]
        output_row_lengths = math_ops.maximum(
            math_ops.unsorted_segment_max(data_row_lengths, segment_ids, num_segments), 0
        )
        output_splits = array_ops.concat(
            [array_ops.zeros([1], output_row_lengths.dtype), math_ops.cumsum(output_row_lengths)],
            axis=0,
        )
        out_row_start = array_ops.gather(output_splits, segment_ids)
        out_row_limit = out_row_start + data_row_lengths
        out_index = ragged_range(out_row_start, out_row_limit).values
        values = _segment_aggregate(segment_op, data.values, out_index, output_splits[-1])
        return from_row_splits(values, output_splits, validate=False)


def _static_axis(axis: Any) -> Any:
    if isinstance(axis, _ops.Tensor):
        value = constant_value(axis)
        if value is None:
            raise ValueError("axis must be known at graph construction time.")
        return value.tolist() if isinstance(value, np.ndarray) else value
    return axis


def reduce_aggregate(reduce_op: Callable[..., Any], segment_op: Callable[..., Any], rt: Any,
                     axis: Any, keepdims: Any, name: str | None = None) -> Any:  # fmt: skip
    """TF's ragged_reduce_aggregate."""
    if not isinstance(rt, RaggedTensor):
        return reduce_op(rt, axis, keepdims=keepdims, name=name)
    axis = _static_axis(axis)
    if axis is None:
        result = reduce_op(rt.flat_values, None, keepdims=keepdims, name=name)
        if keepdims:
            for _ in rt.shape[1:]:
                result = array_ops.expand_dims(result, axis=0)
        return result
    with _ops.name_scope(name, "RaggedReduce", [rt, axis]):
        if isinstance(axis, (tuple, list)):
            if not axis:
                return rt
            if len(axis) > 1:
                ndims = rt.shape.ndims
                positive = sorted(
                    get_positive_axis(a, ndims, f"axis[{i}]", "rank(input_tensor)")
                    for i, a in enumerate(axis)
                )
                inner = reduce_aggregate(reduce_op, segment_op, rt, positive[-1], keepdims)
                return reduce_aggregate(reduce_op, segment_op, inner, positive[:-1], keepdims)
            axis = axis[0]
        axis = get_positive_axis(axis, rt.shape.ndims, ndims_name="rank(input_tensor)")
        if axis == 0:
            row_lengths = rt.row_splits[1:] - rt.row_splits[:-1]
            num_segments = math_ops.maximum(math_ops.reduce_max(row_lengths), 0)
            segment_ids = ragged_range(row_lengths).values
            result = _segment_aggregate(segment_op, rt.values, segment_ids, num_segments)
            return array_ops.expand_dims(result, axis=0) if keepdims else result
        if axis == 1:
            num_segments = array_ops.shape(rt.row_splits)[0] - 1
            segment_ids = row_splits_to_segment_ids(rt.row_splits)
            result = _segment_aggregate(segment_op, rt.values, segment_ids, num_segments)
            return array_ops.expand_dims(result, axis=1) if keepdims else result
        return rt.with_values(
            reduce_aggregate(reduce_op, segment_op, rt.values, axis - 1, keepdims)
        )


def _reducer(reduce_op: Callable[..., Any], segment_op: Callable[..., Any], default: str) -> Any:
    def reduce(rt: Any, axis: Any = None, keepdims: Any = None, name: str | None = None) -> Any:
        return reduce_aggregate(reduce_op, segment_op, rt, axis, keepdims, name or default)

    return reduce


reduce_sum = _reducer(math_ops.reduce_sum, math_ops.unsorted_segment_sum, "RaggedReduceSum")
reduce_prod = _reducer(math_ops.reduce_prod, math_ops.unsorted_segment_prod, "RaggedReduceProd")
reduce_min = _reducer(math_ops.reduce_min, math_ops.unsorted_segment_min, "RaggedReduceMin")
reduce_max = _reducer(math_ops.reduce_max, math_ops.unsorted_segment_max, "RaggedReduceMax")


def reduce_mean(rt: Any, axis: Any = None, keepdims: Any = None, name: str | None = None) -> Any:
    with _ops.name_scope(name, "RaggedReduceMean", [rt, axis]):
        total = reduce_sum(rt, axis, keepdims)
        if isinstance(rt, RaggedTensor):
            ones: Any = from_nested_row_splits(
                array_ops.ones_like(rt.flat_values), rt.nested_row_splits, validate=False
            )
        else:
            ones = array_ops.ones_like(rt)
        count = reduce_sum(ones, axis, keepdims)
        if isinstance(total, RaggedTensor):
            return from_nested_row_splits(
                total.flat_values / count.flat_values, total.nested_row_splits, validate=False
            )
        return total / count


def _cast(rt: Any, dtype: Any) -> Any:
    return map_flat_values(math_ops.cast, rt, dtype)


def reduce_all(rt: Any, axis: Any = None, keepdims: Any = None, name: str | None = None) -> Any:
    with _ops.name_scope(name, "RaggedReduceAll", [rt, axis]):
        return _cast(reduce_prod(_cast(rt, dtypes.int32), axis, keepdims), dtypes.bool)


def reduce_any(rt: Any, axis: Any = None, keepdims: Any = None, name: str | None = None) -> Any:
    with _ops.name_scope(name, "RaggedReduceAny", [rt, axis]):
        return _cast(reduce_sum(_cast(rt, dtypes.int32), axis, keepdims), dtypes.bool)


RAGGED_REDUCERS = {
    "reduce_sum": reduce_sum, "reduce_prod": reduce_prod, "reduce_min": reduce_min,
    "reduce_max": reduce_max, "reduce_mean": reduce_mean, "reduce_all": reduce_all,
    "reduce_any": reduce_any,
}  # fmt: skip


def reduce_api(dense: Callable[..., Any], ragged: Callable[..., Any]) -> Callable[..., Any]:
    """tf.reduce_*(input_tensor, axis, keepdims, name, reduction_indices, keep_dims):
    TF1's deprecated names resolved first, then a RaggedTensor takes the ragged path."""

    def api(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: str | None = None,
            reduction_indices: Any = None, keep_dims: Any = None) -> Any:  # fmt: skip
        if not isinstance(input_tensor, RaggedTensor):
            return dense(input_tensor, axis, keepdims, name, reduction_indices, keep_dims)
        axis = reduction_indices if axis is None else axis
        keepdims = keep_dims if keepdims is None else keepdims
        return ragged(input_tensor, axis, keepdims, name)

    api.__name__ = getattr(dense, "__name__", "reduce")
    api.__doc__ = dense.__doc__
    return api


def install(namespace: dict[str, Any], math_namespace: Any) -> None:
    """Rebind client's tf.reduce_* and tf.math.reduce_* to dispatch RaggedTensors."""
    for n, ragged in RAGGED_REDUCERS.items():
        if n in namespace:
            namespace[n] = reduce_api(namespace[n], ragged)
        if hasattr(math_namespace, n):
            setattr(math_namespace, n, reduce_api(getattr(math_namespace, n), ragged))
