"""Client, gradients: the convolution and pooling variants of client.ops.nn_conv_variants
(TensorFlow's nn_grad.py / array_grad.py): DepthwiseConv2dNative, Conv3DBackpropInputV2,
SpaceToDepth / DepthToSpace, MaxPoolWithArgmax, FractionalMaxPool / FractionalAvgPool,
Dilation2D, LRN and ExtractImagePatches."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework.gradient_registry import RegisterGradient
from client.ops import array_ops, math_ops
from client.ops.gradients.util import attrs_of, op1
from client.ops.nn_conv_variants import depth_to_space, space_to_depth

_DEPTHWISE_ATTRS = ("dilations", "strides", "padding", "explicit_paddings", "data_format")


@RegisterGradient("DepthwiseConv2dNative")
def _depthwise_conv2d_native_grad(op: Any, grad: Any) -> Any:
    attrs = attrs_of(op, *_DEPTHWISE_ATTRS)
    x, f = op.inputs[0], op.inputs[1]
    return [
        op1("DepthwiseConv2dNativeBackpropInput", [array_ops.shape(x), f, grad], attrs),
        op1("DepthwiseConv2dNativeBackpropFilter", [x, array_ops.shape(f), grad], attrs),
    ]


@RegisterGradient("DepthwiseConv2dNativeBackpropInput")
def _depthwise_backprop_input_grad(op: Any, grad: Any) -> Any:
    attrs = attrs_of(op, *_DEPTHWISE_ATTRS)
    f, dy = op.inputs[1], op.inputs[2]
    return [
        None,
        op1("DepthwiseConv2dNativeBackpropFilter", [grad, array_ops.shape(f), dy], attrs),
        op1("DepthwiseConv2dNative", [grad, f], attrs),
    ]


@RegisterGradient("DepthwiseConv2dNativeBackpropFilter")
def _depthwise_backprop_filter_grad(op: Any, grad: Any) -> Any:
    attrs = attrs_of(op, *_DEPTHWISE_ATTRS)
    x, dy = op.inputs[0], op.inputs[2]
    return [
        op1("DepthwiseConv2dNativeBackpropInput", [array_ops.shape(x), grad, dy], attrs),
        None,
        op1("DepthwiseConv2dNative", [x, grad], attrs),
    ]


@RegisterGradient("Conv3DBackpropFilterV2")
def _conv3d_backprop_filter_grad(op: Any, grad: Any) -> Any:
    attrs = attrs_of(op, "dilations", "strides", "padding", "data_format")
    x, dy = op.inputs[0], op.inputs[2]
    return [
        op1("Conv3DBackpropInputV2", [array_ops.shape(x), grad, dy], attrs),
        None,
        op1("Conv3D", [x, grad], attrs),
    ]


@RegisterGradient("Conv3DBackpropInputV2")
def _conv3d_backprop_input_grad(op: Any, grad: Any) -> Any:
    attrs = attrs_of(op, "dilations", "strides", "padding", "data_format")
    return [
        None,
        op1("Conv3DBackpropFilterV2", [grad, array_ops.shape(op.inputs[1]), op.inputs[2]], attrs),
        op1("Conv3D", [grad, op.inputs[1]], attrs),
    ]


def _block_attrs(op: Any, what: str) -> tuple[int, str]:
    a = attrs_of(op, "block_size", "data_format")
    if a["data_format"] == "NCHW_VECT_C":
        raise ValueError(
            f"Cannot compute {what} gradient with NCHW_VECT_C. NCHW_VECT_C requires qint8 "
            "data type."
        )
    return a["block_size"], a["data_format"]


@RegisterGradient("SpaceToDepth")
def _space_to_depth_grad(op: Any, grad: Any) -> Any:
    block, fmt = _block_attrs(op, "SpaceToDepth")
    return depth_to_space(grad, block, data_format=fmt)


@RegisterGradient("DepthToSpace")
def _depth_to_space_grad(op: Any, grad: Any) -> Any:
    block, fmt = _block_attrs(op, "DepthToSpace")
    return space_to_depth(grad, block, data_format=fmt)


@RegisterGradient("MaxPoolWithArgmax")
def _max_pool_with_argmax_grad(op: Any, grad: Any, unused_argmax_grad: Any) -> Any:
    attrs = attrs_of(op, "ksize", "strides", "padding", "include_batch_in_index")
    return op1("MaxPoolGradWithArgmax", [op.inputs[0], grad, op.outputs[1]], attrs)


@RegisterGradient("FractionalMaxPool")
def _fractional_max_pool_grad(op: Any, grad_0: Any, unused_1: Any, unused_2: Any) -> Any:
    inputs = [op.inputs[0], op.outputs[0], grad_0, op.outputs[1], op.outputs[2]]
    return op1("FractionalMaxPoolGrad", inputs, attrs_of(op, "overlapping"))


@RegisterGradient("FractionalAvgPool")
def _fractional_avg_pool_grad(op: Any, grad_0: Any, unused_1: Any, unused_2: Any) -> Any:
    # TF passes the input's static shape (a TensorShape) as the shape input.
    shape = np.asarray(op.inputs[0].shape.as_list(), np.int64)
    inputs = [shape, grad_0, op.outputs[1], op.outputs[2]]
    return op1("FractionalAvgPoolGrad", inputs, attrs_of(op, "overlapping"))


@RegisterGradient("Dilation2D")
def _dilation2d_grad(op: Any, grad: Any) -> Any:
    attrs = attrs_of(op, "strides", "rates", "padding")
    x, f = op.inputs[0], op.inputs[1]
    return [
        op1("Dilation2DBackpropInput", [x, f, grad], attrs),
        op1("Dilation2DBackpropFilter", [x, f, grad], attrs),
    ]


@RegisterGradient("LRN")
def _lrn_grad(op: Any, grad: Any) -> Any:
    attrs = attrs_of(op, "depth_radius", "bias", "alpha", "beta")
    return [op1("LRNGrad", [grad, op.inputs[0], op.outputs[0]], attrs)]


@RegisterGradient("ExtractImagePatches")
def _extract_image_patches_grad(op: Any, grad: Any) -> Any:
    """TF's: patch the 1-based input pixel numbers (0 marks padding) the same way, then
    sum the gradient into the pixels with UnsortedSegmentSum."""
    input_bhwc = array_ops.shape(op.inputs[0], out_type=dtypes.int64)
    batch_size, rows_in, cols_in, channels = array_ops.unstack(input_bhwc)
    output_bhwc = array_ops.shape(op.outputs[0], out_type=dtypes.int64)
    rows_out, cols_out = array_ops.unstack(output_bhwc[1:3])
    a = attrs_of(op, "ksizes", "strides", "rates", "padding")
    _, ksize_r, ksize_c, _ = a["ksizes"]
    input_indices_num = rows_in * cols_in
    input_idx = array_ops.reshape(
        math_ops.range(1, input_indices_num + 1, dtype=dtypes.float32), (1, rows_in, cols_in, 1)
    )
    input_idx_patched = op1("ExtractImagePatches", [input_idx], a)
    input_idx_patched = math_ops.cast(input_idx_patched, dtypes.int64)
    grad_expanded = array_ops.transpose(
        array_ops.reshape(grad, (batch_size, rows_out, cols_out, ksize_r, ksize_c, channels)),
        (1, 2, 3, 4, 0, 5),
    )
    grad_flat = array_ops.reshape(grad_expanded, (-1, batch_size * channels))
    segment_ids = array_ops.reshape(input_idx_patched, [-1]) - 1
    grad_out = math_ops.unsorted_segment_sum(grad_flat, segment_ids, input_indices_num)
    grad_out = array_ops.reshape(grad_out, (rows_in, cols_in, batch_size, channels))
    return [array_ops.transpose(grad_out, (2, 0, 1, 3))]


@RegisterGradient("ExtractVolumePatches")
def _extract_volume_patches_grad(op: Any, grad: Any) -> Any:
    """TF's: a sparse (input pixel -> patch element) matrix from the 1-based pixel numbers
    patched the same way (row 0, padding, sliced off) times the gradient."""
    from client import sparse
    from client.framework.sparse_tensor import SparseTensor

    _, planes_in, rows_in, cols_in, _ = op.inputs[0].shape.as_list()
    input_bphwc = array_ops.shape(op.inputs[0])
    batch_size, channels = input_bphwc[0], input_bphwc[4]
    input_indices_num = 1 + planes_in * rows_in * cols_in
    input_idx = array_ops.reshape(
        math_ops.range(1, input_indices_num, dtype=dtypes.int64),
        (1, planes_in, rows_in, cols_in, 1),
    )
    a = attrs_of(op, "ksizes", "strides", "padding")
    input_idx_patched = op1("ExtractVolumePatches", [input_idx], a)
    _, planes_out, rows_out, cols_out, _ = op.outputs[0].shape.as_list()
    _, ksize_p, ksize_r, ksize_c, _ = a["ksizes"]
    prc_indices_num = planes_out * rows_out * cols_out
    output_indices_num = prc_indices_num * ksize_p * ksize_r * ksize_c
    output_idx = array_ops.reshape(
        math_ops.range(output_indices_num, dtype=dtypes.int64),
        (1, planes_out, rows_out, cols_out, ksize_p * ksize_r * ksize_c),
    )
    idx_matrix = array_ops.concat(
        [
            array_ops.expand_dims(input_idx_patched, axis=-1),
            array_ops.expand_dims(output_idx, axis=-1),
        ],
        axis=-1,
    )
    idx_map = array_ops.reshape(idx_matrix, (-1, 2))
    sp_shape = (input_indices_num, output_indices_num)
    sp_mat_full = SparseTensor(
        idx_map, array_ops.ones([output_indices_num], dtype=grad.dtype), sp_shape
    )
    sp_mat = sparse.sparse_slice(sp_mat_full, (1, 0), (input_indices_num - 1, output_indices_num))
    grad_expanded = array_ops.transpose(
        array_ops.reshape(
            grad,
            (batch_size, planes_out, rows_out, cols_out, ksize_p, ksize_r, ksize_c, channels),
        ),
        (1, 2, 3, 4, 5, 6, 0, 7),
    )
    grad_flat = array_ops.reshape(grad_expanded, (-1, batch_size * channels))
    jac = sparse.sparse_tensor_dense_matmul(sp_mat, grad_flat)
    grad_out = array_ops.reshape(jac, (planes_in, rows_in, cols_in, batch_size, channels))
    return [array_ops.transpose(grad_out, (3, 0, 1, 2, 4))]
