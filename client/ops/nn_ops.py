"""Client, graph building: tf.nn (activations, softmax and cross entropy, conv/pool)."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.errors import InvalidArgumentError
from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.framework.shape_fns import constant_value


def _out(op: Any, i: int = 0) -> Any:
    return op.outputs[i]


def relu(features: Any, name: str | None = None) -> Any:
    return _out(apply_op("Relu", [features], {}, name))


def relu6(features: Any, name: str | None = None) -> Any:
    return _out(apply_op("Relu6", [features], {}, name))


def elu(features: Any, name: str | None = None) -> Any:
    return _out(apply_op("Elu", [features], {}, name))


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Any:
    return _out(apply_op("LeakyRelu", [features], {"alpha": alpha}, name))


def softplus(features: Any, name: str | None = None) -> Any:
    return _out(apply_op("Softplus", [features], {}, name))


def sigmoid(x: Any, name: str | None = None) -> Any:
    return _out(apply_op("Sigmoid", [x], {}, name))


def tanh(x: Any, name: str | None = None) -> Any:
    return _out(apply_op("Tanh", [x], {}, name))


def softmax(logits: Any, axis: Any = None, name: str | None = None, dim: Any = None) -> Any:
    return _softmax("Softmax", logits, axis if axis is not None else dim, name)


def log_softmax(logits: Any, axis: Any = None, name: str | None = None, dim: Any = None) -> Any:
    return _softmax("LogSoftmax", logits, axis if axis is not None else dim, name)


def _softmax(op_type: str, logits: Any, axis: Any, name: str | None) -> Any:
    """TF's _wrap_2d_function: the op runs on the last axis; another axis is swapped
    there and back by Transposes whose perms are built in the graph (Rank, Range, Concat)."""
    from client.ops import array_ops, math_ops

    logits = convert_to_tensor(logits)
    shape = logits.shape
    dim = -1 if axis is None else axis
    if dim == -1 or dim == shape.ndims - 1:
        return _out(apply_op(op_type, [logits], {}, name))
    dim_val = dim
    if isinstance(dim, _ops.Tensor):
        dim_val = constant_value(dim)
    if dim_val is not None and not -shape.ndims <= dim_val < shape.ndims:
        raise InvalidArgumentError(
            f"`dim` must be in the range [{-shape.ndims}, {shape.ndims}) where "
            f"{shape.ndims} is the number of dimensions in the input. Received: dim={dim_val}"
        )
    ndims = array_ops.rank(logits)
    if not isinstance(dim, _ops.Tensor):
        if dim < 0:
            dim += ndims
    else:
        dim = array_ops.where(math_ops.less(dim, 0), dim + ndims, dim)
    input_rank = array_ops.rank(logits)
    dim_axis = dim % shape.ndims

    def swap(x: Any, swap_name: Any = "transpose") -> Any:
        last = math_ops.subtract(input_rank, 1)
        perm = array_ops.concat(
            [math_ops.range(dim_axis), [last], math_ops.range(dim_axis + 1, last), [dim_axis]],
            0,
        )
        return array_ops.transpose(x, perm, name=swap_name)

    out = swap(_out(apply_op(op_type, [swap(logits)], {})), name or "transpose")
    out.set_shape(shape)  # the Transposes lose the static shape
    return out


def bias_add(value: Any, bias: Any, data_format: Any = None, name: str | None = None) -> Any:
    with _ops.name_scope(name, "BiasAdd", [value, bias]) as scope:
        return _out(
            apply_op("BiasAdd", [value, bias], {"data_format": data_format or "NHWC"}, scope)
        )


def l2_loss(t: Any, name: str | None = None) -> Any:
    return _out(apply_op("L2Loss", [t], {}, name))


def sparse_softmax_cross_entropy_with_logits(
    _sentinel: Any = None, labels: Any = None, logits: Any = None, name: str | None = None
) -> Any:
    if _sentinel is not None:
        raise ValueError(
            "Only call `sparse_softmax_cross_entropy_with_logits` with named arguments "
            "(labels=..., logits=..., ...)."
        )
    from client.ops import array_ops

    with _ops.name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]):
        labels = convert_to_tensor(labels)
        logits = convert_to_tensor(logits)
        labels_shape = array_ops.shape(labels)
        _check_sparse_xent_shapes(labels.shape, logits.shape)
        if logits.shape.ndims == 2:
            # TF names the op by the caller's `name` inside its scope ("xentropy/xentropy").
            op = apply_op("SparseSoftmaxCrossEntropyWithLogits", [logits, labels], {}, name)
            return op.outputs[0]
        return _sparse_xent_flattened(labels, logits, labels_shape, name)


def _check_sparse_xent_shapes(labels_static: Any, logits_static: Any) -> None:
    """The static checks TF's wrapper makes before choosing the 2-D or flattened path."""
    if logits_static.ndims == 0:
        raise ValueError(f"`logits` cannot be a scalar. Received logits shape={logits_static}`")
    if (
        logits_static.ndims is not None
        and labels_static.ndims is not None
        and labels_static.ndims != logits_static.ndims - 1
    ):
        raise ValueError(
            "`labels.shape.rank` must equal `logits.shape.rank - 1`. "
            f"Received: labels.shape={labels_static} of rank {labels_static.ndims} and "
            f"logits.shape={logits_static} of rank {logits_static.ndims}"
        )
    if (
        labels_static.is_fully_defined()
        and logits_static[:-1].is_fully_defined()
        and labels_static != logits_static[:-1]
    ):
        raise ValueError(
            "`labels.shape` must equal `logits.shape` except for the last dimension. "
            f"Received: labels.shape={labels_static} and logits.shape={logits_static}"
        )


def _sparse_xent_flattened(labels: Any, logits: Any, labels_shape: Any, name: Any) -> Any:
    """TF's path for logits not statically of rank 2: logits made [-1, classes] and labels
    [-1] (after a dynamic shape check unless the static shapes settle it), the cost
    reshaped back to the labels' shape."""
    from client.ops import array_ops, check_ops

    labels_static = labels.shape
    static_fully_defined = labels.shape.is_fully_defined() and logits.shape[:-1].is_fully_defined()
    checks = []
    if not static_fully_defined:
        checks.append(check_ops.assert_equal(array_ops.shape(labels), array_ops.shape(logits)[:-1]))
    with _ops.control_dependencies(checks):
        num_classes = array_ops.shape(logits)[array_ops.rank(logits) - 1]
        logits = array_ops.reshape(logits, [-1, num_classes])
        labels = array_ops.reshape(labels, [-1])
        op = apply_op("SparseSoftmaxCrossEntropyWithLogits", [logits, labels], {}, name)
        cost = array_ops.reshape(op.outputs[0], labels_shape)
        cost.set_shape(labels_static)
        return cost


def softmax_cross_entropy_with_logits_v2(
    labels: Any = None, logits: Any = None, axis: int = -1, name: str | None = None, dim: Any = None
) -> Any:
    """TF's softmax_cross_entropy_with_logits_v2_helper: both inputs flattened to
    matrices (_flatten_outer_dims), the op named by the scope, the cost reshaped to the
    input's shape without the class axis."""
    from client.ops import array_ops, math_ops

    axis = dim if dim is not None else axis
    with _ops.name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        labels = math_ops.cast(labels, logits.dtype)
        input_rank = array_ops.rank(logits)
        static = logits.shape
        if axis != -1:  # the class axis moved last, as TF's helper does

            def move_to_end(t: Any) -> Any:
                perm = array_ops.concat(
                    [
                        math_ops.range(axis),
                        math_ops.range(axis + 1, input_rank),
                        [axis],
                    ],
                    0,
                )
                return array_ops.transpose(t, perm)

            logits = move_to_end(logits)
            labels = move_to_end(labels)
        input_shape = array_ops.shape(logits)
        flat_logits = _flatten_outer_dims(logits)
        flat_labels = _flatten_outer_dims(labels)
        cost = apply_op(
            "SoftmaxCrossEntropyWithLogits", [flat_logits, flat_labels], {}, scope
        ).outputs[0]
        output_shape = array_ops.slice(input_shape, [0], [math_ops.subtract(input_rank, 1)])
        cost = array_ops.reshape(cost, output_shape)
        if static.ndims is not None:
            dims = static.as_list()
            del dims[axis]
            cost.set_shape(dims)
        return cost


def _flatten_outer_dims(logits: Any) -> Any:
    """TF's _flatten_outer_dims: reshape to [-1, last dim], with the static shape set."""
    from client.ops import array_ops, math_ops

    rank = array_ops.rank(logits)
    last_dim = array_ops.slice(array_ops.shape(logits), [math_ops.subtract(rank, 1)], [1])
    out = array_ops.reshape(logits, array_ops.concat([[-1], last_dim], 0))
    dims = logits.shape.as_list() if logits.shape.ndims is not None else None
    if dims is not None and all(d is not None for d in dims[:-1]):
        out.set_shape([int(np.prod(dims[:-1], dtype=np.int64)), dims[-1]])
    return out


softmax_cross_entropy_with_logits = softmax_cross_entropy_with_logits_v2


def sigmoid_cross_entropy_with_logits(
    _sentinel: Any = None, labels: Any = None, logits: Any = None, name: str | None = None
) -> Any:
    from client.ops import array_ops, math_ops

    with _ops.name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits)
        labels = convert_to_tensor(labels, dtype=logits.dtype)
        zeros = array_ops.zeros_like(logits)
        cond = math_ops.greater_equal(logits, zeros)
        relu_logits = array_ops.where(cond, logits, zeros)
        neg_abs = array_ops.where(cond, -logits, logits)
        return math_ops.add(
            relu_logits - logits * labels, math_ops.log1p(math_ops.exp(neg_abs)), name=scope
        )


def _list4(v: Any, name: str) -> list[int]:
    if isinstance(v, int):
        return [1, v, v, 1]
    v = list(v)
    if len(v) == 1:
        return [1, v[0], v[0], 1]
    if len(v) == 2:
        return [1, v[0], v[1], 1]
    return v


def conv2d(
    input: Any,
    filter: Any = None,
    strides: Any = None,
    padding: Any = None,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = (1, 1, 1, 1),
    name: str | None = None,
    filters: Any = None,
) -> Any:
    filter = filters if filter is None else filter
    attrs = {
        "strides": _list4(strides, "strides"),
        "padding": padding,
        "data_format": data_format,
        "dilations": _list4(dilations, "dilations"),
        "use_cudnn_on_gpu": use_cudnn_on_gpu,
    }
    return _out(apply_op("Conv2D", [input, filter], attrs, name))


def _pool(op_type: str, py_name: str) -> Any:
    """tf.nn.max_pool / avg_pool (2-D, NHWC or NCHW): `value` may also be passed as `input`."""

    def fn(
        value: Any,
        ksize: Any,
        strides: Any,
        padding: str,
        data_format: str = "NHWC",
        name: str | None = None,
        input: Any = None,
    ) -> Any:
        value = input if value is None else value
        attrs = {
            "ksize": _list4(ksize, "ksize"),
            "strides": _list4(strides, "strides"),
            "padding": padding,
            "data_format": data_format,
        }
        return _out(apply_op(op_type, [value], attrs, name))

    fn.__name__ = fn.__qualname__ = py_name
    return fn


max_pool = _pool("MaxPool", "max_pool")
max_pool2d = max_pool
avg_pool = _pool("AvgPool", "avg_pool")
avg_pool2d = avg_pool


def dropout(
    x: Any,
    keep_prob: Any = None,
    noise_shape: Any = None,
    seed: Any = None,
    name: str | None = None,
    rate: Any = None,
) -> Any:
    """tf.compat.v1.nn.dropout: TF's dropout_v2 graph (x * (1 / keep), or x / (1 - rate)
    for a tensor rate, then SelectV2 on RandomUniform >= rate), so seeded masks and the
    scaled values are TensorFlow's."""
    if keep_prob is not None:
        rate_from_keep = 1.0 - keep_prob
        if rate is not None:
            raise ValueError("Cannot specify both 'rate' and 'keep_prob'.")
        rate = rate_from_keep
    if rate is None:
        raise ValueError("You must provide a rate to dropout.")
    return dropout_v2(x, rate, noise_shape=noise_shape, seed=seed, name=name)


def _noise_shape(x: Any, noise_shape: Any) -> Any:
    from client.ops import array_ops

    if noise_shape is None:
        return array_ops.shape(x)
    if isinstance(noise_shape, _ops.Tensor):
        return noise_shape
    dims = list(noise_shape)
    known = x.shape.dims if x.shape.ndims is not None else None
    if known is not None and len(known) == len(dims):
        dims = [
            k if (d is None and k is not None) else d
            for d, k in zip((None if d is None else int(d) for d in dims), x.shape.as_list())
        ]
    return dims


def dropout_v2(
    x: Any, rate: Any, noise_shape: Any = None, seed: Any = None, name: str | None = None
) -> Any:
    import numbers

    from client.ops import math_ops, random_ops

    with _ops.name_scope(name, "dropout", [x]):
        is_number = isinstance(rate, numbers.Real) and not isinstance(rate, _ops.Tensor)
        if is_number and (rate < 0 or rate >= 1):
            raise ValueError(
                "`rate` must be a scalar tensor or a float in the range [0, 1). "
                f"Received: rate={rate}"
            )
        x = convert_to_tensor(x, name="x")
        x_dtype = x.dtype
        if not x_dtype.is_floating:
            raise ValueError(
                "`x.dtype` must be a floating point tensor as `x` will be scaled. "
                f"Received: x_dtype={x_dtype}"
            )
        if is_number and rate == 0:
            random_ops.get_seed(seed)  # TF's dummy_rng_step: the op-seed counter advances
            return x
        if is_number:
            scale = convert_to_tensor(1 / (1 - rate), dtype=x_dtype)
            ret = apply_op("Mul", [x, scale], {}).outputs[0]
        else:
            rate = convert_to_tensor(rate)
            if rate.dtype != x_dtype:
                rate = math_ops.cast(rate, x_dtype, name="rate")
            one = constant(1, dtype=x_dtype)
            ret = apply_op("RealDiv", [x, apply_op("Sub", [one, rate], {}).outputs[0]], {})
            ret = ret.outputs[0]
        u = random_ops.random_uniform(_noise_shape(x, noise_shape), dtype=x_dtype, seed=seed)
        keep = u >= rate
        zero = constant(0, dtype=x_dtype)
        out = apply_op("SelectV2", [keep, ret, zero], {}).outputs[0]
        out.set_shape(x.shape)
        return out


def in_top_k(predictions: Any, targets: Any, k: int, name: str | None = None) -> Any:
    """TF1's in_top_k: InTopKV2 inside the scope "in_top_k", k taking targets' dtype."""
    with _ops.name_scope(name, "in_top_k"):
        return _out(apply_op("InTopKV2", [predictions, targets, k], {}, name))


def moments(
    x: Any,
    axes: Any,
    shift: Any = None,
    name: str | None = None,
    keep_dims: bool = False,
    keepdims: Any = None,
) -> Any:
    from client.ops import array_ops, math_ops

    keep = bool(keepdims if keepdims is not None else keep_dims)
    with _ops.name_scope(name, "moments", [x, axes]):
        mean = math_ops.reduce_mean(x, axes, keepdims=True, name="mean")
        var = math_ops.reduce_mean(
            math_ops.squared_difference(x, array_ops.stop_gradient(mean)),
            axes,
            keepdims=True,
            name="variance",
        )
        if not keep:
            mean = array_ops.squeeze(mean, axes)
            var = array_ops.squeeze(var, axes)
        return mean, var


_ = dtypes


def fused_batch_norm(
    x: Any,
    scale: Any,
    offset: Any,
    mean: Any = None,
    variance: Any = None,
    epsilon: float = 0.001,
    data_format: str = "NHWC",
    is_training: bool = True,
    name: str | None = None,
    exponential_avg_factor: float = 1.0,
) -> tuple[Any, Any, Any]:
    """tf.compat.v1.nn.fused_batch_norm: one FusedBatchNormV3 node, empty float Consts in
    place of the statistics when training computes them; returns (y, mean, variance)."""
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or variance is None):
        raise ValueError(
            "Both `mean` and `variance` must be a 1D tensor when `is_training` is False or "
            f"`exponential_avg_factor` != 1.0. Received: `mean` {mean!r} and `variance` "
            f"{variance!r}"
        )
    x = convert_to_tensor(x, name="input")
    scale = convert_to_tensor(scale, name="scale")
    offset = convert_to_tensor(offset, name="offset")
    if mean is None:
        mean = constant(np.zeros([0], np.float32))
    if variance is None:
        variance = constant(np.zeros([0], np.float32))
    op = apply_op(
        "FusedBatchNormV3",
        [x, scale, offset, mean, variance],
        {
            "epsilon": epsilon,
            "exponential_avg_factor": exponential_avg_factor,
            "data_format": data_format,
            "is_training": is_training,
        },
        name,
    )
    return op.outputs[0], op.outputs[1], op.outputs[2]


def get_sequence(v: Any, n: int, channel_index: int, name: str) -> list[int]:
    """TF's nn_ops._get_sequence: an int or n ints widened to n + 2 with 1s at the batch
    and channel positions, channels at 1 or last (a full n + 2 list is taken as is)."""
    if v is None:
        return [1] * (n + 2)
    if isinstance(v, int):
        v = [v]
    v = [int(x) for x in v]
    if len(v) == n + 2:
        return v
    if len(v) == 1:
        v = v * n
    elif len(v) != n:
        raise ValueError(
            f"{name} should be of length 1, {n} or {n + 2}. Received: {name}={v} of length {len(v)}"
        )
    return [1, 1, *v] if channel_index == 1 else [1, *v, 1]
