"""Client, gradients: RaggedTensorToTensor's (TF's ragged_conversion_ops.py), so gradients
reach a RaggedTensor's flat values through to_tensor(): the padded gradient's entries that
came from a value, as IndexedSlices of the flat values, and the rest summed into the
default value's gradient."""

from __future__ import annotations

from typing import Any

from client.framework.gradient_registry import RegisterGradient
from client.framework.indexed_slices import IndexedSlices
from client.framework.op_builder import apply_op
from client.ops import array_ops, math_ops


def _rank_ignoring_leading_ones(value: Any) -> int:
    """rank(value) without its leading size-1 dimensions, from the static shape (TF falls
    back to a dynamic computation this client does not build)."""
    dims = value.shape.as_list() if value.shape.ndims is not None else None
    if dims is None or None in dims:
        raise ValueError(
            "This client's RaggedTensorToTensor gradient needs the default value's static shape"
        )
    ndims = len(dims)
    for d in dims:
        if d != 1:
            break
        ndims -= 1
    return ndims


@RegisterGradient("RaggedTensorToTensor")
def _ragged_tensor_to_tensor_grad(op: Any, grad: Any) -> list[Any]:
    flat_values, default_value = op.inputs[1], op.inputs[2]
    partitions = list(op.inputs[3:])
    types = [t.decode() if isinstance(t, bytes) else t for t in op.get_attr("row_partition_types")]
    flat_value_shape = array_ops.shape(flat_values)
    ragged_rank = sum(1 for t in types if t != "FIRST_DIM_SIZE")
    # Where each element of the dense result came from (-1: the default value).
    indices = apply_op(
        "RaggedTensorToTensor",
        [
            array_ops.shape(grad)[: 1 + ragged_rank],
            math_ops.range(flat_value_shape[0]),
            -1,
            partitions,
        ],
        {"row_partition_types": types},
    ).outputs[0]
    mask = math_ops.not_equal(indices, -1)
    values_grad = IndexedSlices(
        values=array_ops.boolean_mask(grad, mask),
        indices=array_ops.boolean_mask(indices, mask),
        dense_shape=flat_value_shape,
    )
    default_grads = array_ops.boolean_mask(grad, ~mask)
    dims_to_reduce = math_ops.range(
        array_ops.rank(default_grads) - _rank_ignoring_leading_ones(default_value)
    )
    default_grad = math_ops.reduce_sum(default_grads, axis=dims_to_reduce)
    default_grad = array_ops.reshape(default_grad, array_ops.shape(default_value))
    return [None, values_grad, default_grad] + [None for _ in partitions]
