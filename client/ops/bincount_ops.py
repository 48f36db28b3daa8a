"""Client, graph building: tf.math.bincount / tf.bincount as TensorFlow 2.21 builds them in a
graph (bincount_ops.bincount, which compat.v1's bincount_v1 calls): the output size from
the input's max, clipped by minlength/maxlength, then one DenseBincount."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.ops import array_ops, math_ops


def bincount(
    arr: Any,
    weights: Any = None,
    minlength: Any = None,
    maxlength: Any = None,
    dtype: Any = dtypes.int32,
    name: str | None = None,
    axis: int | None = None,
    binary_output: bool = False,
) -> Any:
    with _ops.name_scope("bincount" if name is None else name):
        arr = convert_to_tensor(arr, name="arr")
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
        if weights is not None and binary_output:
            raise ValueError(
                "Arguments `binary_output` and `weights` are mutually exclusive. Please "
                "specify only one."
            )
        if not arr.dtype.is_integer:
            arr = math_ops.cast(arr, dtypes.int32)
        axis = 0 if axis is None else axis
        if axis not in [0, -1]:
            raise ValueError(
                f"Unsupported value for argument axis={axis}. Only 0 and -1 are currently "
                "supported."
            )
        array_is_nonempty = array_ops.size(arr) > 0
        output_size = math_ops.cast(array_is_nonempty, arr.dtype) * (math_ops.reduce_max(arr) + 1)
        if minlength is not None:
            minlength = convert_to_tensor(minlength, name="minlength", dtype=arr.dtype)
            output_size = math_ops.maximum(minlength, output_size)
        if maxlength is not None:
            maxlength = convert_to_tensor(maxlength, name="maxlength", dtype=arr.dtype)
            output_size = math_ops.minimum(maxlength, output_size)
        if axis == 0:
            if weights is not None:
                weights = array_ops.reshape(weights, [-1])
            arr = array_ops.reshape(arr, [-1])
        if weights is None:
            weights = constant([], dtype=dtype or arr.dtype)
        attrs = {"binary_output": binary_output}
        return apply_op("DenseBincount", [arr, output_size, weights], attrs).outputs[0]


def bincount_v1(
    arr: Any,
    weights: Any = None,
    minlength: Any = None,
    maxlength: Any = None,
    dtype: Any = dtypes.int32,
) -> Any:
    """compat.v1's tf.bincount / tf.math.bincount."""
    return bincount(arr, weights, minlength, maxlength, dtype)
