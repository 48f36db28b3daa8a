"""Ops: neural-network ops (TensorFlow's nn_ops.cc): activations, BiasAdd,
Softmax/LogSoftmax, L2Loss, LRN, TopKV2, InTopKV2, and the FusedBatchNorm family with its
gradients (fused_batch_norm_op.cc).

Convolution and pooling live in `conv_ops`. Signatures are TensorFlow's; kernels are
stateless numpy functions, safe from any thread. Half and bfloat16 compute in float32.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

_FLT = "half, bfloat16, float, double"
_RELU_T = "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64"
_NUMBER = (
    "float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
    "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64"
)
_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717


def _elementwise(fn: Callable[[np.ndarray, KernelConstruction], np.ndarray]):
    def factory(kc: KernelConstruction) -> Callable:
        out = mu.np_type(kc.output_types[0])

        def compute(ctx, inputs: list) -> list:
            with np.errstate(all="ignore"):
                y = fn(mu.upcast(np.asarray(inputs[0])), kc)
            return [mu.as_type(y, out)]

        return compute

    return factory


def _relu(x: np.ndarray, kc) -> np.ndarray:
    return np.maximum(x, np.zeros((), x.dtype))


def _relu6(x: np.ndarray, kc) -> np.ndarray:
    return np.minimum(np.maximum(x, np.zeros((), x.dtype)), x.dtype.type(6))


def _elu(x: np.ndarray, kc) -> np.ndarray:
    return np.where(x < 0, np.expm1(x), x)


def _selu(x: np.ndarray, kc) -> np.ndarray:
    scale, alpha = x.dtype.type(_SELU_SCALE), x.dtype.type(_SELU_ALPHA)
    return np.where(x > 0, scale * x, (scale * alpha) * np.expm1(x))


def _leaky_relu(x: np.ndarray, kc) -> np.ndarray:
    alpha = x.dtype.type(np.float32(kc.attrs.get("alpha", 0.2)))
    return np.where(x > 0, x, x * alpha)


def _softplus(x: np.ndarray, kc) -> np.ndarray:
    return np.logaddexp(np.zeros((), x.dtype), x)


def _softsign(x: np.ndarray, kc) -> np.ndarray:
    return x / (1 + np.abs(x))


def _register_activations() -> None:
    register_op("Relu", ["features: T"], ["activations: T"], [f"T: {{{_RELU_T}, qint8}}"])
    register_kernel("Relu")(_elementwise(_relu))
    register_op("Relu6", ["features: T"], ["activations: T"], [f"T: {{{_RELU_T}}}"])
    register_kernel("Relu6")(_elementwise(_relu6))
    for name, fn in (
        ("Elu", _elu),
        ("Selu", _selu),
        ("Softplus", _softplus),
        ("Softsign", _softsign),
    ):
        register_op(name, ["features: T"], ["activations: T"], [f"T: {{{_FLT}}}"])
        register_kernel(name)(_elementwise(fn))
    register_op(
        "LeakyRelu",
        ["features: T"],
        ["activations: T"],
        ["alpha: float = 0.2", f"T: {{{_FLT}}} = float"],
    )
    register_kernel("LeakyRelu")(_elementwise(_leaky_relu))


# ---------------------------------------------------------------------------------------
# BiasAdd
# ---------------------------------------------------------------------------------------


def _bias_add(kc: KernelConstruction) -> Callable:
    nchw = kc.attrs.get("data_format", "NHWC") == "NCHW"

    def compute(ctx, inputs: list) -> list:
        x, b = np.asarray(inputs[0]), np.asarray(inputs[1])
        if x.ndim < 2:
            raise InvalidArgumentError(f"Input tensor must be at least 2D: {mu.shape_str(x.shape)}")
        if b.ndim != 1:
            raise InvalidArgumentError(f"Biases must be 1D: {mu.shape_str(b.shape)}")
        axis = 1 if nchw else x.ndim - 1
        if b.shape[0] != x.shape[axis]:
            which = "channel" if nchw else "last"
            raise InvalidArgumentError(
                f"Must provide as many biases as the {which} dimension of the input tensor: "
                f"{mu.shape_str(b.shape)} vs. {mu.shape_str(x.shape)}"
            )
        if not nchw and x.dtype == b.dtype and mu.fp_errors_ignored():
            return [mu.as_type(np.add(mu.upcast(x), mu.upcast(b)), x.dtype)]  # the common case
        bb = b.reshape((-1,) + (1,) * (x.ndim - 1 - axis))
        with np.errstate(all="ignore"):
            return [mu.as_type(mu.upcast(x) + mu.upcast(bb), x.dtype)]

    return compute


# ---------------------------------------------------------------------------------------
# Softmax, LogSoftmax, L2Loss, LRN
# ---------------------------------------------------------------------------------------


def _softmax(log: bool) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        def compute(ctx, inputs: list) -> list:
            x = np.asarray(inputs[0])
            if x.ndim < 1:
                raise InvalidArgumentError(
                    f"logits must have >= 1 dimension, got {mu.shape_str(x.shape)}"
                )
            v = mu.upcast(x)
            with np.errstate(all="ignore"):
                shifted = v - np.max(v, axis=-1, keepdims=True)
                e = np.exp(shifted)
                s = np.sum(e, axis=-1, keepdims=True)
                y = shifted - np.log(s) if log else e / s
            return [mu.as_type(y, x.dtype)]

        return compute

    return factory


def _l2_loss(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        x = np.asarray(inputs[0])
        v = mu.upcast(x)
        return [mu.as_type(np.sum(v * v) / v.dtype.type(2), x.dtype)]

    return compute


def _lrn(kc: KernelConstruction) -> Callable:
    r = int(kc.attrs.get("depth_radius", 5))
    bias = float(kc.attrs.get("bias", 1.0))
    alpha = float(kc.attrs.get("alpha", 1.0))
    beta = float(kc.attrs.get("beta", 0.5))

    def compute(ctx, inputs: list) -> list:
        x = np.asarray(inputs[0])
        if x.ndim != 4:
            raise InvalidArgumentError(f"input must be 4-dimensional, got {x.ndim}")
        v = x.astype(np.float32)
        sq = np.pad(v * v, [(0, 0)] * 3 + [(r + 1, r)])
        c = np.cumsum(sq, axis=-1)
        window = c[..., 2 * r + 1 :] - c[..., : x.shape[-1]]
        return [(v / (bias + alpha * window) ** beta).astype(x.dtype)]

    return compute


# ---------------------------------------------------------------------------------------
# TopKV2, InTopKV2
# ---------------------------------------------------------------------------------------


def _top_k(kc: KernelConstruction) -> Callable:
    index_type = mu.np_type(kc.output_types[1])

    def compute(ctx, inputs: list) -> list:
        x = np.asarray(inputs[0])
        k = int(np.asarray(inputs[1]))
        if np.asarray(inputs[1]).ndim != 0:
            raise InvalidArgumentError(
                "k must be 0-D, got shape " + mu.shape_str(np.asarray(inputs[1]).shape)
            )
        if k < 0:
            raise InvalidArgumentError(f"Need k >= 0, got {k}")
        if x.ndim < 1:
            raise InvalidArgumentError(f"input must be >= 1-D, got shape {mu.shape_str(x.shape)}")
        n = x.shape[-1]
        if n < k:
            raise InvalidArgumentError(f"input must have at least k columns. Had {n}, needed {k}")
        # Descending and stable (ties keep the lower index first), as TF's TopK.
        order = np.argsort(mu.upcast(x)[..., ::-1], axis=-1, kind="stable")[..., ::-1]
        idx = (n - 1 - order[..., :k]).astype(index_type)
        return [np.take_along_axis(x, idx.astype(np.intp), axis=-1), idx]

    return compute


def _in_top_k(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        pred, targets = np.asarray(inputs[0]), np.asarray(inputs[1])
        k = int(np.asarray(inputs[2]))
        if pred.ndim != 2:
            raise InvalidArgumentError(
                f"predictions must be 2-dimensional, got {mu.shape_str(pred.shape)}"
            )
        if targets.ndim != 1 or targets.shape[0] != pred.shape[0]:
            raise InvalidArgumentError(
                "First dimension of predictions "
                + str(pred.shape[0])
                + " must match length of targets "
                + str(targets.shape[0] if targets.ndim else 0)
            )
        n = pred.shape[1]
        valid = (targets >= 0) & (targets < n)
        safe = np.where(valid, targets, 0).astype(np.intp)
        tv = pred[np.arange(pred.shape[0]), safe]
        more = np.sum(pred > tv[:, None], axis=1)
        # TF cannot say for a row holding any non-finite prediction: it is false.
        finite_row = np.all(np.isfinite(pred), axis=1)
        return [valid & finite_row & (more < k)]

    return compute


# ---------------------------------------------------------------------------------------
# FusedBatchNorm family (fused_batch_norm_op.cc, the Eigen CPU kernels)
# ---------------------------------------------------------------------------------------
#
# x is viewed as a [rest, depth] matrix (channels last; NCHW/NCDHW are moved there and
# back) and computed in float32 (U), as the CPU kernel casts x to U. Training normalizes
# with the biased batch variance but returns the Bessel-corrected one (n / (n - 1)) as
# batch_variance; reserve_space_1/2 hold the batch mean and the biased variance, which the
# gradient takes back. Where the CPU kernel leaves an output unspecified (the reserve
# spaces in inference mode, V3's reserve_space_3) we return the population mean/variance
# and a 0-d zero; the gradients' reserve_space_3/4 (4/5 for V3) are empty [0] tensors.


def _channels_last(x: np.ndarray, data_format: str) -> np.ndarray:
    return np.moveaxis(x, 1, -1) if data_format.startswith("NC") else x


def _from_channels_last(y: np.ndarray, data_format: str) -> np.ndarray:
    return np.moveaxis(y, -1, 1) if data_format.startswith("NC") else y


def _check_rank(name: str, t: np.ndarray, rank: int) -> None:
    if t.ndim != rank:
        what = "input must be 4 or 5-dimensional" if rank == 4 else f"{name} must be 1-dimensional"
        raise InvalidArgumentError(what + mu.shape_str(t.shape))


def _check_channels(name: str, t: np.ndarray, depth: int, prefix: str = "") -> None:
    if t.size != depth:
        raise InvalidArgumentError(
            f"{prefix}{name} must have the same number of elements as the channels of x, "
            f"got {t.size} and {depth}"
        )


def _check_4_or_5d(x: np.ndarray) -> None:
    if x.ndim not in (4, 5):
        raise InvalidArgumentError("input must be 4 or 5-dimensional" + mu.shape_str(x.shape))


def _check_fbn_inputs(
    x: np.ndarray, vectors: dict[str, np.ndarray], depth: int, stats_used: str
) -> None:
    """FusedBatchNormOpBase's checks; `stats_used` is the message prefix when the mean and
    variance inputs are read ("" when they are not)."""
    _check_4_or_5d(x)
    for name, v in vectors.items():
        _check_rank(name, v, 1)
    _check_channels("scale", vectors["scale"], depth)
    _check_channels("offset", vectors["offset"], depth)
    if stats_used:
        _check_channels("mean", vectors["estimated_mean"], depth, stats_used + ", ")
        _check_channels("variance", vectors["estimated_variance"], depth, stats_used + ", ")


def _fused_batch_norm(kc: KernelConstruction) -> Callable:
    epsilon = np.float32(kc.attrs.get("epsilon", 1e-4))
    factor = np.float32(kc.attrs.get("exponential_avg_factor", 1.0))
    training = bool(kc.attrs.get("is_training", True))
    data_format = str(kc.attrs.get("data_format", "NHWC"))
    t_type, u_type = mu.np_type(kc.output_types[0]), mu.np_type(kc.output_types[1])
    v3 = len(kc.output_types) == 6
    stats_used = (
        "When is_training=false"
        if not training
        else ("When exponential_avg_factor != 1" if factor != 1 else "")
    )
    f32 = np.float32

    def compute(ctx, inputs: list) -> list:
        x, scale, offset, mean, variance = (np.asarray(v) for v in inputs)
        depth = x.shape[1 if data_format.startswith("NC") else -1] if x.ndim >= 2 else 0
        vectors = {
            "scale": scale,
            "offset": offset,
            "estimated_mean": mean,
            "estimated_variance": variance,
        }
        _check_fbn_inputs(x, vectors, depth, stats_used)
        xl = _channels_last(x, data_format)
        rows = xl.reshape(-1, depth).astype(f32)
        s, o = scale.astype(f32), offset.astype(f32)
        with np.errstate(all="ignore"):
            if training:
                y, stats = _fbn_training(rows, s, o, mean.astype(f32), variance.astype(f32))
            else:
                m, v = mean.astype(f32), variance.astype(f32)
                y = (rows - m) * (s / np.sqrt(v + epsilon)) + o
                stats = (m, v, m, v)
        y_out = _from_channels_last(y.reshape(xl.shape).astype(t_type), data_format)
        outs = [np.ascontiguousarray(y_out), *(mu.as_type(a, u_type) for a in stats)]
        if v3:
            outs.append(np.zeros((), u_type))
        return outs

    def _fbn_training(rows, s, o, old_mean, old_var):
        n = rows.shape[0]
        if n == 0:
            nan = np.full(s.shape, np.nan, f32)
            return rows, (nan, nan, np.zeros_like(s), np.zeros_like(s))
        inv_n = f32(1.0) / f32(n)
        batch_mean = rows.sum(axis=0, dtype=f32) * inv_n
        centered = rows - batch_mean
        batch_var = np.square(centered).sum(axis=0, dtype=f32) * inv_n
        y = centered * (s / np.sqrt(batch_var + epsilon)) + o
        adjust = f32(n) / f32(max(n - 1, 1))
        if factor == 1:
            new_mean, new_var = batch_mean, batch_var * adjust
        else:
            keep = f32(1) - factor
            new_mean = keep * old_mean + factor * batch_mean
            new_var = keep * old_var + (factor * adjust) * batch_var
        return y, (new_mean, new_var, batch_mean, batch_var)

    return compute


def _check_fbn_grad_inputs(
    dy: np.ndarray, x: np.ndarray, scale: np.ndarray, mean: np.ndarray, var: np.ndarray, depth
) -> None:
    """FusedBatchNormGradOpBase's checks, in its order and words."""
    _check_4_or_5d(dy)
    _check_4_or_5d(x)
    _check_rank("scale", scale, 1)
    _check_rank("saved mean", mean, 1)
    _check_rank("saved variance", var, 1)
    if x.shape != dy.shape:
        raise InvalidArgumentError(
            f"x and y_backprop must have same shape, but x has shape {mu.shape_str(x.shape)} "
            f"and y_backprop has shape {mu.shape_str(dy.shape)}"
        )
    _check_channels("scale", scale, depth)
    _check_channels("reserve_space_1", mean, depth)
    _check_channels("reserve_space_2", var, depth)


def _fused_batch_norm_grad(kc: KernelConstruction) -> Callable:
    epsilon = np.float32(kc.attrs.get("epsilon", 1e-4))
    training = bool(kc.attrs.get("is_training", True))
    data_format = str(kc.attrs.get("data_format", "NHWC"))
    t_type, u_type = mu.np_type(kc.output_types[0]), mu.np_type(kc.output_types[1])
    f32 = np.float32

    def compute(ctx, inputs: list) -> list:
        dy, x, scale, mean, var = (np.asarray(v) for v in inputs[:5])
        depth = x.shape[1 if data_format.startswith("NC") else -1] if x.ndim >= 2 else 0
        _check_fbn_grad_inputs(dy, x, scale, mean, var, depth)
        xl = _channels_last(x, data_format)
        rows = xl.reshape(-1, depth).astype(f32)
        dy_rows = _channels_last(dy, data_format).reshape(-1, depth).astype(f32)
        s, m, v = scale.astype(f32), mean.astype(f32), var.astype(f32)
        with np.errstate(all="ignore"):
            inv_std = f32(1) / np.sqrt(v + epsilon)
            x_scaled = (rows - m) * inv_std
            offset_bp = dy_rows.sum(axis=0, dtype=f32)
            scale_bp = (dy_rows * x_scaled).sum(axis=0, dtype=f32)
            if training and rows.shape[0]:
                inv_n = f32(1.0) / f32(rows.shape[0])
                centered_dy = dy_rows - offset_bp * inv_n
                dx = (s * inv_std) * (centered_dy - x_scaled * (scale_bp * inv_n))
            else:
                dx = dy_rows * (s * inv_std)
        dx_out = _from_channels_last(dx.reshape(xl.shape).astype(t_type), data_format)
        empty = np.zeros((0,), u_type)
        return [
            np.ascontiguousarray(dx_out),
            mu.as_type(scale_bp, u_type),
            mu.as_type(offset_bp, u_type),
            empty,
            empty.copy(),
        ]

    return compute


def _register_fused_batch_norm() -> None:
    common = ["epsilon: float = 0.0001", "exponential_avg_factor: float = 1.0"]
    half_float = ["T: {half, bfloat16, float}", "U: {float}"]
    train = ["is_training: bool = true"]
    fmt4 = "data_format: {'NHWC', 'NCHW'} = 'NHWC'"
    fmt5 = "data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'"
    fwd_in = ["x: T", "scale: {u}", "offset: {u}", "mean: {u}", "variance: {u}"]
    fwd_out = ["y: T"] + [
        f"{n}: {{u}}"
        for n in ("batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2")
    ]
    variants = (
        ("FusedBatchNorm", "T", ["T: {float}"], fmt4, 0),
        ("FusedBatchNormV2", "U", half_float, fmt4, 0),
        ("FusedBatchNormV3", "U", ["T: {half, bfloat16, float}", "U: {bfloat16, float}"], fmt5, 1),
    )
    for op, u, types, fmt, extra in variants:
        outs = [a.format(u=u) for a in fwd_out] + [f"reserve_space_3: {u}"] * extra
        register_op(op, [a.format(u=u) for a in fwd_in], outs, types + common + [fmt] + train)
        register_kernel(op, expensive=True)(_fused_batch_norm)
    grads = (
        ("FusedBatchNormGrad", "T", "T", ["T: {float}"], fmt4, 0),
        ("FusedBatchNormGradV2", "float", "U", half_float, fmt4, 0),
        ("FusedBatchNormGradV3", "float", "U", half_float, fmt5, 1),
    )
    for op, scale, u, types, fmt, v3 in grads:
        ins = ["y_backprop: T", "x: T", f"scale: {scale}"]
        ins += [f"reserve_space_{i}: {u}" for i in range(1, 3 + v3)]
        outs = ["x_backprop: T", f"scale_backprop: {u}", f"offset_backprop: {u}"]
        outs += [f"reserve_space_{i}: {u}" for i in range(3 + v3, 5 + v3)]
        attrs = types + ["epsilon: float = 0.0001", fmt] + train
        register_op(op, ins, outs, attrs)
        register_kernel(op, expensive=True)(_fused_batch_norm_grad)


def _register() -> None:
    _register_activations()
    _register_fused_batch_norm()
    register_op(
        "BiasAdd",
        ["value: T", "bias: T"],
        ["output: T"],
        [f"T: {{{_NUMBER}}}", "data_format: {'NHWC', 'NCHW'} = 'NHWC'"],
    )
    register_kernel("BiasAdd")(_bias_add)
    register_op("BiasAddV1", ["value: T", "bias: T"], ["output: T"], [f"T: {{{_NUMBER}}}"])
    register_kernel("BiasAddV1")(_bias_add)
    register_op("Softmax", ["logits: T"], ["softmax: T"], [f"T: {{{_FLT}}}"])
    register_kernel("Softmax", expensive=True)(_softmax(log=False))
    register_op("LogSoftmax", ["logits: T"], ["logsoftmax: T"], [f"T: {{{_FLT}}}"])
    register_kernel("LogSoftmax", expensive=True)(_softmax(log=True))
    register_op("L2Loss", ["t: T"], ["output: T"], [f"T: {{{_FLT}}}"])
    register_kernel("L2Loss", expensive=True)(_l2_loss)
    register_op(
        "LRN",
        ["input: T"],
        ["output: T"],
        [
            "depth_radius: int = 5",
            "bias: float = 1.0",
            "alpha: float = 1.0",
            "beta: float = 0.5",
            "T: {half, bfloat16, float} = float",
        ],
    )
    register_kernel("LRN", expensive=True)(_lrn)
    register_op(
        "TopKV2",
        ["input: T", "k: Tk"],
        ["values: T", "indices: index_type"],
        [
            "sorted: bool = true",
            f"T: {{{_RELU_T}}}",
            "Tk: {int16, int32, int64} = int32",
            "index_type: {int16, int32, int64} = int32",
        ],
    )
    register_kernel("TopKV2", expensive=True)(_top_k)
    register_op(
        "InTopKV2",
        ["predictions: float", "targets: T", "k: T"],
        ["precision: bool"],
        ["T: {int32, int64} = int32"],
    )
    register_kernel("InTopKV2")(_in_top_k)


_register()
