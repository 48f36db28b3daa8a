"""Client, graph building: tf.roll (TF's manip_ops), tf.searchsorted and
tf.unravel_index (TF's array_ops), with TensorFlow's node names, and the client shape
functions of Roll, LowerBound/UpperBound and UnravelIndex."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops


def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> Any:
    return apply_op("Roll", [input, shift, axis], {}, name).outputs[0]


def unravel_index(indices: Any, dims: Any, name: str | None = None) -> Any:
    return apply_op("UnravelIndex", [indices, dims], {}, name).outputs[0]


def _shape_internal(x: Any) -> Any:
    """TF's shape_internal(optimize=True): the "Shape/shape_as_tensor" Const when the
    static shape is known, else a Shape op."""
    with _ops.name_scope(None, "Shape", [x]) as scope:
        x = convert_to_tensor(x)
        if x.shape.is_fully_defined():
            return constant(x.shape.as_list(), dtype=dtypes.int32, name="shape_as_tensor")
        return apply_op("Shape", [x], {"out_type": dtypes.int32}, scope).outputs[0]


def searchsorted(
    sorted_sequence: Any,
    values: Any,
    side: str = "left",
    out_type: Any = dtypes.int32,
    name: str | None = None,
) -> Any:
    sequence_size = _shape_internal(sorted_sequence)[-1]
    values_size = _shape_internal(values)[-1]
    sorted_2d = array_ops.reshape(sorted_sequence, [-1, sequence_size])
    values_2d = array_ops.reshape(values, [-1, values_size])
    if side not in ("left", "right"):
        raise ValueError(
            f"Argument `side` must be either 'right' or 'left'. Received: `side` = '{side}'."
        )
    op = "UpperBound" if side == "right" else "LowerBound"
    output = apply_op(op, [sorted_2d, values_2d], {"out_type": dtypes.as_dtype(out_type)}, name)
    return array_ops.reshape(output.outputs[0], _shape_internal(values))


def _bound_shape(op: Any) -> list[Any]:
    return [op.inputs[1].shape.merge_with(TensorShape([None, None]))]


def _unravel_index_shape(op: Any) -> list[Any]:
    indices, dims = op.inputs[0].shape, op.inputs[1].shape
    n = dims[0] if dims.ndims == 1 else None
    if indices.ndims == 0:
        return [TensorShape([n])]
    if indices.ndims == 1:
        return [TensorShape([n, indices[0]])]
    return [shape_fns.UNKNOWN]


shape_fns.SHAPE_FNS["Roll"] = lambda op: [op.inputs[0].shape]
shape_fns.SHAPE_FNS["LowerBound"] = _bound_shape
shape_fns.SHAPE_FNS["UpperBound"] = _bound_shape
shape_fns.SHAPE_FNS["UnravelIndex"] = _unravel_index_shape
