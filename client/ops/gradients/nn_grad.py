"""Client, gradients: nn ops (TensorFlow's nn_grad.py) -- activations, softmax and
cross-entropy, BiasAdd, L2Loss, Conv2DBackprop*, pooling, and their own gradients for
second order."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework.gradient_registry import RegisterGradient
from client.framework.indexed_slices import IndexedSlices
from client.framework.op_builder import apply_op
from client.ops import array_ops, math_ops, nn_ops, scatter_nd_ops
from client.ops.gradients.util import attrs_of, op1


@RegisterGradient("Relu")
def _relu_grad(op: Any, grad: Any) -> Any:
    return op1("ReluGrad", [grad, op.outputs[0]])


@RegisterGradient("Relu6")
def _relu6_grad(op: Any, grad: Any) -> Any:
    return op1("Relu6Grad", [grad, op.outputs[0]])


@RegisterGradient("Elu")
def _elu_grad(op: Any, grad: Any) -> Any:
    return op1("EluGrad", [grad, op.outputs[0]])


@RegisterGradient("Softplus")
def _softplus_grad(op: Any, grad: Any) -> Any:
    return grad * math_ops.sigmoid(op.inputs[0])  # TF's _SoftplusGrad


@RegisterGradient("LeakyRelu")
def _leaky_relu_grad(op: Any, grad: Any) -> Any:
    return op1("LeakyReluGrad", [grad, op.inputs[0]], {"alpha": op.get_attr("alpha")})


@RegisterGradient("ReluGrad")
def _relu_grad_grad(op: Any, grad: Any) -> Any:
    x = op.inputs[1]
    return op1("ReluGrad", [grad, x]), array_ops.zeros_like(x)


@RegisterGradient("Relu6Grad")
def _relu6_grad_grad(op: Any, grad: Any) -> Any:
    x = op.inputs[1]
    return op1("Relu6Grad", [grad, x]), array_ops.zeros_like(x)


@RegisterGradient("MaxPoolGrad")
def _max_pool_grad_grad(op: Any, grad: Any) -> Any:
    attrs = attrs_of(op, "ksize", "strides", "padding", "data_format")
    return (
        array_ops.zeros_like(op.inputs[0]),
        array_ops.zeros_like(op.inputs[1]),
        op1("MaxPoolGradGrad", [op.inputs[0], op.inputs[1], grad], attrs),
    )


@RegisterGradient("MaxPoolGradGrad")
def _max_pool_grad_grad_grad(op: Any, grad: Any) -> Any:
    attrs = attrs_of(op, "ksize", "strides", "padding", "data_format")
    return (
        array_ops.zeros_like(op.inputs[0]),
        array_ops.zeros_like(op.inputs[1]),
        op1("MaxPoolGrad", [op.inputs[0], op.inputs[1], grad], attrs),
    )


@RegisterGradient("BiasAddGrad")
def _bias_add_grad_grad(op: Any, received_grad: Any) -> Any:
    """TF's _BiasAddGradGrad: the bias gradient reshaped to broadcast along the channel
    dimension (last for NHWC, second for NCHW) and tiled over the others."""
    data_format = attrs_of(op, "data_format")["data_format"]
    shape = array_ops.shape(op.inputs[0])
    bias_shape = array_ops.shape(received_grad)
    if data_format == "NCHW":
        expanded_shape = array_ops.concat(
            [array_ops.ones_like(shape[:1]), bias_shape, array_ops.ones_like(shape[2:])], 0
        )
        tile_mults = array_ops.concat([shape[:1], [1], shape[2:]], 0)
    else:
        expanded_shape = array_ops.concat([array_ops.ones_like(shape[:-1]), bias_shape], 0)
        tile_mults = array_ops.concat([shape[:-1], [1]], 0)
    expanded = array_ops.reshape(received_grad, expanded_shape)
    return array_ops.tile(expanded, tile_mults)


@RegisterGradient("Softmax")
def _softmax_grad(op: Any, grad_softmax: Any) -> Any:
    softmax = op.outputs[0]
    sum_channels = math_ops.reduce_sum(grad_softmax * softmax, -1, keepdims=True)
    return (grad_softmax - sum_channels) * softmax


@RegisterGradient("LogSoftmax")
def _log_softmax_grad(op: Any, grad: Any) -> Any:
    softmax = math_ops.exp(op.outputs[0])
    return grad - math_ops.reduce_sum(grad, -1, keepdims=True) * softmax


def _broadcast_mul(vec: Any, mat: Any) -> Any:
    return array_ops.expand_dims(vec, -1) * mat


@RegisterGradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent_grad(op: Any, grad_loss: Any, grad_grad: Any) -> Any:
    return _with_softmax_grad_grad(op, _broadcast_mul(grad_loss, op.outputs[1]), grad_grad), None


def _with_softmax_grad_grad(op: Any, grad: Any, grad_grad: Any) -> Any:
    """TF's second-derivative term of the cross-entropy ops (the softmax's derivative
    applied to the backprop output's gradient), skipped when that gradient is zeros."""
    if grad_grad is None or getattr(grad_grad, "_is_zeros_tensor", False):
        return grad
    softmax = op1("Softmax", [op.inputs[0]])
    inner = math_ops.matmul(array_ops.expand_dims(grad_grad, 1), array_ops.expand_dims(softmax, 2))
    return grad + (grad_grad - array_ops.squeeze(inner, axis=1)) * softmax


@RegisterGradient("SoftmaxCrossEntropyWithLogits")
def _xent_grad(op: Any, grad_loss: Any, grad_grad: Any) -> Any:
    logits = op.inputs[0]
    grad = _with_softmax_grad_grad(op, _broadcast_mul(grad_loss, op.outputs[1]), grad_grad)
    return grad, _broadcast_mul(grad_loss, -nn_ops.log_softmax(logits))


@RegisterGradient("BiasAdd")
def _bias_add_grad(op: Any, received_grad: Any) -> Any:
    data_format = attrs_of(op, "data_format")["data_format"]
    return received_grad, op1("BiasAddGrad", [received_grad], {"data_format": data_format})


@RegisterGradient("L2Loss")
def _l2_loss_grad(op: Any, grad: Any) -> Any:
    return op.inputs[0] * grad


@RegisterGradient("Conv2D")
def _conv2d_grad(op: Any, grad: Any) -> Any:
    attrs = attrs_of(
        op,
        "strides",
        "padding",
        "data_format",
        "dilations",
        "use_cudnn_on_gpu",
        "explicit_paddings",
    )
    shape_0, shape_1 = array_ops.shape_n([op.inputs[0], op.inputs[1]])
    return [
        op1("Conv2DBackpropInput", [shape_0, op.inputs[1], grad], attrs),
        op1("Conv2DBackpropFilter", [op.inputs[0], shape_1, grad], attrs),
    ]


@RegisterGradient("Conv2DBackpropInput")
def _conv2d_backprop_input_grad(op: Any, grad: Any) -> Any:
    attrs = attrs_of(
        op,
        "strides",
        "padding",
        "data_format",
        "dilations",
        "use_cudnn_on_gpu",
        "explicit_paddings",
    )
    return [
        None,
        op1("Conv2DBackpropFilter", [grad, array_ops.shape(op.inputs[1]), op.inputs[2]], attrs),
        op1("Conv2D", [grad, op.inputs[1]], attrs),
    ]


@RegisterGradient("MaxPool")
def _max_pool_grad(op: Any, grad: Any) -> Any:
    attrs = attrs_of(op, "ksize", "strides", "padding", "data_format")
    return op1("MaxPoolGrad", [op.inputs[0], op.outputs[0], grad], attrs)


@RegisterGradient("AvgPool")
def _avg_pool_grad(op: Any, grad: Any) -> Any:
    attrs = attrs_of(op, "ksize", "strides", "padding", "data_format")
    return op1("AvgPoolGrad", [array_ops.shape(op.inputs[0]), grad], attrs)


@RegisterGradient("AvgPoolGrad")
def _avg_pool_grad_grad(op: Any, grad: Any) -> Any:
    attrs = attrs_of(op, "ksize", "strides", "padding", "data_format")
    return None, op1("AvgPool", [grad], attrs)


def _fused_batch_norm_grad(op: Any, *grad: Any) -> Any:
    """TF's _BaseFusedBatchNormGrad: FusedBatchNormGradV3 with the forward op's reserve
    spaces in training, with the population statistics (in NHWC) in inference."""
    x, grad_y, scale = op.inputs[0], grad[0], op.inputs[1]
    fmt = op.get_attr("data_format")
    fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
    is_training = op.get_attr("is_training")
    attrs = {"epsilon": op.get_attr("epsilon"), "is_training": is_training}
    if is_training:
        ins = [grad_y, x, scale, op.outputs[3], op.outputs[4], op.outputs[5]]
        attrs["data_format"] = fmt
    else:
        if fmt == "NCHW":
            x = array_ops.transpose(x, [0, 2, 3, 1])
            grad_y = array_ops.transpose(grad_y, [0, 2, 3, 1])
        ins = [grad_y, x, scale, op.inputs[3], op.inputs[4], op.outputs[5]]
        attrs["data_format"] = "NHWC"
    dx, dscale, doffset = apply_op("FusedBatchNormGradV3", ins, attrs).outputs[:3]
    if not is_training and fmt == "NCHW":
        dx = array_ops.transpose(dx, [0, 3, 1, 2])
    return [dx, dscale, doffset, None, None]


RegisterGradient("FusedBatchNormV3")(_fused_batch_norm_grad)


@RegisterGradient("Conv3D")
def _conv3d_grad(op: Any, grad: Any) -> Any:
    attrs = {
        "strides": op.get_attr("strides"),
        "padding": op.get_attr("padding"),
        "data_format": op.get_attr("data_format"),
        "dilations": op.get_attr("dilations"),
    }
    x, w = op.inputs[0], op.inputs[1]
    shape_x, shape_w = array_ops.shape_n([x, w])
    dx = apply_op("Conv3DBackpropInputV2", [shape_x, w, grad], attrs).outputs[0]
    dw = apply_op("Conv3DBackpropFilterV2", [x, shape_w, grad], attrs).outputs[0]
    return [dx, dw]


def _pool3d_attrs(op: Any) -> dict[str, Any]:
    return {
        "ksize": op.get_attr("ksize"),
        "strides": op.get_attr("strides"),
        "padding": op.get_attr("padding"),
        "data_format": op.get_attr("data_format"),
    }


@RegisterGradient("MaxPool3D")
def _max_pool3d_grad(op: Any, grad: Any) -> Any:
    return [
        apply_op("MaxPool3DGrad", [op.inputs[0], op.outputs[0], grad], _pool3d_attrs(op)).outputs[0]
    ]


@RegisterGradient("AvgPool3D")
def _avg_pool3d_grad(op: Any, grad: Any) -> Any:
    return [
        apply_op("AvgPool3DGrad", [array_ops.shape(op.inputs[0]), grad], _pool3d_attrs(op)).outputs[
            0
        ]
    ]


@RegisterGradient("Softsign")
def _softsign_grad(op: Any, grad: Any) -> Any:
    return [apply_op("SoftsignGrad", [grad, op.inputs[0]], {}).outputs[0]]


@RegisterGradient("Selu")
def _selu_grad(op: Any, grad: Any) -> Any:
    return [apply_op("SeluGrad", [grad, op.outputs[0]], {}).outputs[0]]


@RegisterGradient("GatherNd")
def _gather_nd_grad(op: Any, grad: Any) -> Any:
    params, indices = op.inputs[0], op.inputs[1]
    shape = array_ops.shape(params, out_type=indices.dtype)
    if indices.shape.ndims == 2 and indices.shape[-1] == 1:
        # TF's _GatherNdGrad: whole rows gathered give IndexedSlices, as gather's do.
        return [IndexedSlices(grad, array_ops.squeeze(indices, axis=-1), shape), None]
    return [apply_op("ScatterNd", [indices, grad, shape], {}).outputs[0], None]


@RegisterGradient("TopKV2")
def _top_k_grad(op: Any, grad: Any, _: Any) -> Any:
    # TF's _TopKGrad: scatter the values' gradient back to the flattened input positions
    # the indices name, one row of the innermost dimension at a time.
    in_shape = array_ops.shape(op.inputs[0])
    ind_shape = array_ops.shape(op.outputs[1])
    ind_lastdim = array_ops.gather(
        math_ops.cast(ind_shape, dtypes.int64), array_ops.size(ind_shape) - 1
    )
    ind_2d = array_ops.reshape(op.outputs[1], array_ops.stack([-1, ind_lastdim]))
    in_lastdim = array_ops.gather(
        math_ops.cast(in_shape, dtypes.int64), array_ops.size(in_shape) - 1
    )
    outerdim = array_ops.shape(ind_2d)[0]
    offsets = math_ops.range(0, math_ops.cast(outerdim, dtypes.int64) * in_lastdim, in_lastdim)
    ind = array_ops.reshape(
        ind_2d + math_ops.cast(array_ops.expand_dims(offsets, -1), dtypes.int32), [-1]
    )
    flat = scatter_nd_ops.scatter_nd(
        array_ops.expand_dims(ind, -1),
        array_ops.reshape(grad, [-1]),
        [math_ops.reduce_prod(in_shape)],
    )
    return [array_ops.reshape(flat, in_shape), array_ops.zeros([], dtype=dtypes.int32)]
