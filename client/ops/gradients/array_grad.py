"""Client, gradients: array ops (TensorFlow's array_grad.py) -- pass-throughs (Identity,
ReadVariableOp ...), reshapes, concat/pack/split, slices, gathers, tile, pad, space/batch."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.gradient_registry import RegisterGradient
from client.framework.indexed_slices import IndexedSlices, to_dense
from client.framework.op_builder import apply_op, constant
from client.framework.shape_fns import constant_value, handle_shape
from client.ops import array_ops, math_ops
from client.ops.gradients.util import attrs_of, op1


@RegisterGradient("Identity")
@RegisterGradient("Snapshot")
@RegisterGradient("EnsureShape")
def _identity_grad(op: Any, grad: Any) -> Any:
    return [grad] + [None] * (len(op.inputs) - 1)


@RegisterGradient("IdentityN")
def _identity_n_grad(op: Any, *grads: Any) -> Any:
    return list(grads)


@RegisterGradient("CheckNumerics")
def _check_numerics_grad(op: Any, grad: Any) -> Any:
    """TF's _CheckNumericsGrad: the gradient is checked too, under the op's message."""
    message = op.get_attr("message")
    message = message.decode() if isinstance(message, bytes) else message
    return array_ops.check_numerics(
        grad, f"Not a number (NaN) or infinity (Inf) values detected in gradient. {message}"
    )


@RegisterGradient("ReadVariableOp")
def _read_grad(op: Any, grad: Any) -> Any:
    return [grad]


@RegisterGradient("PlaceholderWithDefault")
def _pwd_grad(op: Any, grad: Any) -> Any:
    return [grad]


def _reshape_to_input(op: Any, grad: Any) -> Any:
    return array_ops.reshape(grad, array_ops.shape(op.inputs[0]))


@RegisterGradient("Reshape")
def _reshape_grad(op: Any, grad: Any) -> Any:
    """TF's _ReshapeGrad: an input shape with exactly one unknown dim (and no zero dim)
    becomes a constant shape with a -1 wildcard, sparing a data dependency on Shape."""
    dims = op.inputs[0].shape.as_list() if op.inputs[0].shape.ndims is not None else None
    if dims is not None and dims.count(None) == 1 and 0 not in dims:
        return [array_ops.reshape(grad, [-1 if d is None else d for d in dims]), None]
    return [_reshape_to_input(op, grad), None]


@RegisterGradient("ExpandDims")
def _expand_dims_grad(op: Any, grad: Any) -> Any:
    return [_reshape_to_input(op, grad), None]


@RegisterGradient("Squeeze")
def _squeeze_grad(op: Any, grad: Any) -> Any:
    return _reshape_to_input(op, grad)


@RegisterGradient("Transpose")
def _transpose_grad(op: Any, grad: Any) -> Any:
    perm = op.inputs[1]
    return [array_ops.transpose(grad, apply_op("InvertPermutation", [perm]).outputs[0]), None]


def _output_context(op: Any) -> Any:
    """TF's control_flow_util.GetOutputContext: the op's context, or a loop Exit's outer."""
    ctx = op._get_control_flow_context()
    if ctx is not None and op.type in ("Exit", "RefExit"):
        ctx = ctx.outer_context
    return ctx


@RegisterGradient("ConcatV2")
def _concat_grad(op: Any, grad: Any) -> Any:
    values = op.inputs[:-1]
    axis = op.inputs[-1]
    if axis.op.type == "Const" and _output_context(axis.op) is not _output_context(grad.op):
        # As TF: a constant axis from another (loop) context is duplicated here rather
        # than passed in through an Enter.
        axis = constant(constant_value(axis), dtype=axis.dtype)
    rank = array_ops.rank(values[0])
    axis_mod = math_ops.floormod(axis, rank, name="mod")
    shapes = []  # TF's _ExtractInputShapes: static Shapes, else one ShapeN
    for v in values:
        shapes.append(array_ops.shape(v))
        if shapes[-1].op.type != "Const":
            shapes = array_ops.shape_n(list(values))
            break
    offsets = apply_op("ConcatOffset", [axis_mod, shapes]).outputs
    out = [array_ops.slice(grad, begin, size) for begin, size in zip(offsets, shapes)]
    return out + [None]


@RegisterGradient("Pack")
def _pack_grad(op: Any, grad: Any) -> Any:
    return array_ops.unstack(grad, num=op.get_attr("N"), axis=op.get_attr("axis"))


@RegisterGradient("Unpack")
def _unpack_grad(op: Any, *grads: Any) -> Any:
    return array_ops.stack(list(grads), axis=op.get_attr("axis"))


@RegisterGradient("Split")
def _split_grad(op: Any, *grads: Any) -> Any:
    return None, array_ops.concat(list(grads), op.inputs[0])


@RegisterGradient("SplitV")
def _split_v_grad(op: Any, *grads: Any) -> Any:
    return array_ops.concat(list(grads), op.inputs[2]), None, None


@RegisterGradient("Slice")
def _slice_grad(op: Any, grad: Any) -> Any:
    """TF's _SliceGrad: pads the gradient back by begin and by what lies after."""
    x, begin = op.inputs[0], op.inputs[1]
    rank = array_ops.rank(x)
    out_shape = array_ops.shape(op.outputs[0], out_type=begin.dtype)
    shape = array_ops.stack([rank, 1])
    before = array_ops.reshape(begin, shape)
    after = array_ops.reshape(array_ops.shape(x, out_type=begin.dtype) - out_shape - begin, shape)
    paddings = array_ops.concat([before, after], 1)
    return array_ops.pad(grad, paddings), None, None


@RegisterGradient("StridedSlice")
def _strided_slice_grad(op: Any, grad: Any) -> Any:
    """TF's _StridedSliceGrad: the input's Shape, and its begin/end/strides, each passed
    by value when constant (so they become Consts under StridedSliceGrad's scope)."""
    x, begin, end, strides = op.inputs
    shape: Any = array_ops.shape(x, out_type=begin.dtype)
    args = [shape, begin, end, strides]
    args = [a if constant_value(a) is None else constant_value(a) for a in args]
    attrs = attrs_of(
        op, "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"
    )
    return op1("StridedSliceGrad", [*args, grad], attrs), None, None, None


@RegisterGradient("StridedSliceGrad")
def _strided_slice_grad_grad(op: Any, grad: Any) -> Any:
    _, begin, end, strides, _ = op.inputs
    attrs = attrs_of(
        op, "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"
    )
    return None, None, None, None, op1("StridedSlice", [grad, begin, end, strides], attrs)


def _indexed_slices_gather_grad(
    params_shape: Any, indices: Any, grad: Any, size: Any = None
) -> IndexedSlices:
    """TF's axis-0 gather gradient: IndexedSlices whose values are `grad` reshaped to
    [size(indices)] + params_shape[1:] (`size` when the caller took it) and whose
    indices are `indices` flattened."""
    if size is None:
        size = array_ops.expand_dims(array_ops.size(indices), 0)
    values_shape = array_ops.concat([size, params_shape[1:]], 0)
    values = array_ops.reshape(to_dense(grad), values_shape)
    return IndexedSlices(values, array_ops.reshape(indices, size), params_shape)


def _params_shape(params: Any) -> Any:
    # params can be large: the shape is computed where they live (as TF does).
    with _ops.colocate_with(params):
        return array_ops.shape(params)


def _batch_indices(params_shape: Any, indices: Any, batch_dims: int) -> Any:
    """TF's _GetBatchIndices: `indices` offset by each batch position, so they index the
    params with their batch dimensions flattened into the gather dimension."""
    dtype = indices.dtype.base_dtype
    shape = math_ops.cast(params_shape, dtype)
    batch_indices = indices
    accum = array_ops.ones((), dtype=dtype)
    for dim in range(batch_dims, 0, -1):
        dim_value = shape[dim - 1]
        accum = accum * shape[dim]
        dim_indices = math_ops.range(
            array_ops.zeros((), dtype=dtype), dim_value, array_ops.ones((), dtype=dtype)
        )
        dim_shape = array_ops.concat(
            [
                array_ops.tile([1], [dim - 1]),
                array_ops.reshape(math_ops.cast(dim_value, dtypes.int32), [1]),
                array_ops.tile([1], array_ops.reshape(array_ops.rank(indices) - dim, [1])),
            ],
            0,
        )
        batch_indices = batch_indices + array_ops.reshape(dim_indices * accum, dim_shape)
    return batch_indices


def _batch_gather_grad(
    params_shape: Any, values: Any, indices: Any, batch_dims: int, gather_dim_size: Any
) -> Any:
    """TF's _BatchGatherGrad, dense: UnsortedSegmentSum of `values` (gather dimension at
    `batch_dims`) over `indices`, the batch dimensions flattened in and put back."""
    indices_size = array_ops.expand_dims(array_ops.size(indices), 0)
    if batch_dims:
        values_shape = array_ops.shape(values)
        outer_shape = values_shape[:batch_dims]
        inner_shape = values_shape[batch_dims:][1:]
        batch_size = op1("Prod", [outer_shape, [0]], {"keep_dims": False})
        flat_values_shape = array_ops.concat([[-1], inner_shape], 0)
        gather_dim_size *= batch_size
        indices = _batch_indices(params_shape, indices, batch_dims)
        values = array_ops.reshape(values, flat_values_shape)
    indices = array_ops.reshape(indices, indices_size)
    params_grad = op1("UnsortedSegmentSum", [values, indices, gather_dim_size])
    if batch_dims:
        params_grad = array_ops.reshape(
            params_grad, array_ops.concat([outer_shape, flat_values_shape], 0)
        )
    return params_grad


def _gather_axis_grad(
    params_shape: Any, indices: Any, axis: Any, batch_dims: int, grad: Any
) -> Any:
    """TF's _GatherV2Grad for axis != 0: the gathered axis moved to `batch_dims`, segment-
    summed, and moved back; `axis` is the op's axis tensor, which slices the shape."""
    outer_shape = params_shape[:axis]
    inner_shape = params_shape[axis:][1:]
    values_shape = array_ops.concat([outer_shape, [-1], inner_shape], 0)
    values_dims = array_ops.size(values_shape)
    axis_dims = array_ops.size(outer_shape)
    outer_batches = math_ops.range(batch_dims)
    batch_axes = math_ops.range(batch_dims, axis_dims)
    inner_axes = math_ops.range(axis_dims + 1, values_dims)
    values = array_ops.reshape(to_dense(grad), values_shape)
    perm = array_ops.concat([outer_batches, [axis_dims], batch_axes, inner_axes], 0)
    values_transpose = array_ops.transpose(values, perm)
    params_shape_transpose = array_ops.gather(params_shape, perm)
    params_grad = _batch_gather_grad(
        params_shape_transpose, values_transpose, indices, batch_dims, params_shape[axis]
    )
    inverse = array_ops.concat([outer_batches, batch_axes + 1, [batch_dims], inner_axes], 0)
    return array_ops.transpose(params_grad, inverse)


@RegisterGradient("GatherV2")
def _gather_v2_grad(op: Any, grad: Any) -> Any:
    params, indices, axis = op.inputs
    params_shape = _params_shape(params)
    indices_size = array_ops.expand_dims(array_ops.size(indices), 0)
    batch_dims = int(op.get_attr("batch_dims"))
    if batch_dims < 0:
        if indices.shape.ndims is None:
            raise ValueError(
                f"{op.name}: batch_dims={batch_dims} is negative and the rank of indices is unknown"
            )
        batch_dims += indices.shape.ndims
    a = constant_value(axis)
    if a is not None and int(a) == 0:
        return _indexed_slices_gather_grad(params_shape, indices, grad, indices_size), None, None
    params_grad = _gather_axis_grad(params_shape, indices, axis, batch_dims, grad)
    # As TF: a Reshape to the params' shape, for dimensions of size zero.
    return array_ops.reshape(params_grad, array_ops.shape(params)), None, None


@RegisterGradient("Gather")
def _gather_grad(op: Any, grad: Any) -> Any:
    return _indexed_slices_gather_grad(_params_shape(op.inputs[0]), op.inputs[1], grad), None


@RegisterGradient("ResourceGather")
def _resource_gather_grad(op: Any, grad: Any) -> Any:
    handle = op.inputs[0]
    shape = handle_shape(handle)
    if shape is None or not shape.is_fully_defined():
        params_shape = apply_op("VariableShape", [handle]).outputs[0]
    else:
        params_shape = constant(np.array(shape.as_list(), np.int32))
    return _indexed_slices_gather_grad(params_shape, op.inputs[1], grad), None


@RegisterGradient("Tile")
def _tile_grad(op: Any, grad: Any) -> Any:
    input_shape = array_ops.shape(op.inputs[0])
    split_shape = array_ops.reshape(
        array_ops.transpose(array_ops.stack([op.inputs[1], input_shape])), [-1]
    )
    axes = math_ops.range(0, array_ops.size(split_shape), 2)
    input_grad = math_ops.reduce_sum(array_ops.reshape(grad, split_shape), axes)
    input_grad.set_shape(op.inputs[0].shape)  # TF sets the static shape, no Reshape
    return [input_grad, None]


@RegisterGradient("Pad")
@RegisterGradient("PadV2")
def _pad_grad(op: Any, grad: Any) -> Any:
    x, a = op.inputs[0], op.inputs[1]
    pad_before = array_ops.slice(a, [0, 0], array_ops.stack([array_ops.rank(x), 1]))
    begin = array_ops.reshape(pad_before, [-1])
    sizes = array_ops.shape(x)
    x_grad = array_ops.slice(grad, begin, sizes)
    return [x_grad, None] + ([None] if op.type == "PadV2" else [])


@RegisterGradient("SpaceToBatchND")
def _space_to_batch_nd_grad(op: Any, grad: Any) -> Any:
    # The opposite op, the paddings becoming the crops (TF's array_grad.py).
    return [array_ops.batch_to_space_nd(grad, op.inputs[1], op.inputs[2]), None, None]


@RegisterGradient("BatchToSpaceND")
def _batch_to_space_nd_grad(op: Any, grad: Any) -> Any:
    return [array_ops.space_to_batch_nd(grad, op.inputs[1], op.inputs[2]), None, None]


@RegisterGradient("SpaceToBatch")
def _space_to_batch_grad(op: Any, grad: Any) -> Any:
    block_size = op.get_attr("block_size")
    return [array_ops.batch_to_space(grad, op.inputs[1], block_size=block_size), None]


@RegisterGradient("BatchToSpace")
def _batch_to_space_grad(op: Any, grad: Any) -> Any:
    block_size = op.get_attr("block_size")
    return [array_ops.space_to_batch(grad, op.inputs[1], block_size=block_size), None]


@RegisterGradient("BroadcastTo")
def _broadcast_to_grad(op: Any, grad: Any) -> Any:
    """TF's _BroadcastToGrad: the target shape as a Const when static, the reduction
    axes from BroadcastGradientArgs(target, input), summed with keepdims."""
    x, target = op.inputs
    sx = array_ops.shape(x, out_type=target.dtype)
    static = constant_value(target)
    if static is not None:
        target = constant(np.asarray(static).tolist(), dtype=target.dtype)
    _, axes = apply_op("BroadcastGradientArgs", [target, sx]).outputs
    summed = math_ops.reduce_sum(grad, axes, keepdims=True)
    return [array_ops.reshape(summed, sx), None]


@RegisterGradient("ReverseV2")
def _reverse_grad(op: Any, grad: Any) -> Any:
    return array_ops.reverse(grad, op.inputs[1]), None


@RegisterGradient("ReverseSequence")
def _reverse_sequence_grad(op: Any, grad: Any) -> Any:
    from client.ops.rnn import reverse_sequence

    return [
        reverse_sequence(grad, op.inputs[1], op.get_attr("seq_dim"), op.get_attr("batch_dim")),
        None,
    ]


@RegisterGradient("MirrorPad")
def _mirror_pad_grad(op: Any, grad: Any) -> Any:
    return [op1("MirrorPadGrad", [grad, op.inputs[1]], attrs_of(op, "mode")), None]
