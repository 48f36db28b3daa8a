"""Client, graph building: tf.gather with a RaggedTensor (TF's ragged dispatch to
ragged_gather_ops.gather): rows of ragged params by dense or ragged indices along axis 0,
one RaggedGather op; anything else is array_ops.gather. No gradient: TF registers none
for RaggedGather (its values' gradient flows through the flat values' ops only)."""

from __future__ import annotations

from typing import Any

from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.ragged_tensor import RaggedTensor, from_nested_row_splits
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, math_ops


def _ragged_gather(params: RaggedTensor, indices: Any) -> Any:
    if isinstance(indices, RaggedTensor):
        values = _ragged_gather(params, indices.values)
        return RaggedTensor(values, row_partition=indices._row_partition)
    if indices.shape.ndims is None:
        raise ValueError("rank(indices) must be known statically")
    splits = list(params.nested_row_splits)
    out_ragged_rank = indices.shape.ndims + len(splits) - 1
    op = apply_op(
        "RaggedGather",
        [splits, params.flat_values, indices],
        {"OUTPUT_RAGGED_RANK": out_ragged_rank},
    )
    *out_splits, values = op.outputs
    if not out_splits:
        return values
    result = from_nested_row_splits(values, out_splits, validate=False)
    if indices.shape.ndims > 1:
        # Indices' own dimensions are uniform: their row counts and lengths are known.
        indices_shape = array_ops.shape(indices, out_type=params.row_splits.dtype)
        shape_cumprod = math_ops.cumprod(indices_shape)
        target: Any = result
        for dim in range(indices.shape.ndims - 1):
            target._row_partition._nrows = shape_cumprod[dim]
            target._row_partition._uniform_row_length = indices_shape[dim + 1]
            target = target.values
    return result


def gather(
    params: Any,
    indices: Any,
    validate_indices: Any = None,
    name: str | None = None,
    axis: Any = None,
    batch_dims: int = 0,
) -> Any:
    """tf.gather; RaggedTensor params or indices take TF's ragged path (axis 0 only)."""
    if not isinstance(params, RaggedTensor) and not isinstance(indices, RaggedTensor):
        return array_ops.gather(params, indices, validate_indices, name, axis, batch_dims)
    with _ops.name_scope(name, "RaggedGather", [params, indices]):
        if not isinstance(params, RaggedTensor):
            params = convert_to_tensor(params, name="params")
        if not isinstance(indices, RaggedTensor):
            indices = convert_to_tensor(indices, name="indices")
        if batch_dims != 0 or axis not in (None, 0):
            raise ValueError("This client gathers ragged tensors along axis 0 only")
        if not isinstance(params, RaggedTensor):
            values = array_ops.gather(params, indices.values, axis=0, batch_dims=0)
            return RaggedTensor(values, row_partition=indices._row_partition)
        return _ragged_gather(params, indices)


def _gather_shapes(op: Any) -> list[TensorShape]:
    n_out = len(op.outputs) - 1
    params_values = op.inputs[len(op.inputs) - 2].shape
    inner = params_values[1:] if params_values.ndims is not None else TensorShape(None)
    return [TensorShape([None])] * n_out + [TensorShape([None]).concatenate(inner)]


shape_fns.SHAPE_FNS["RaggedGather"] = _gather_shapes
