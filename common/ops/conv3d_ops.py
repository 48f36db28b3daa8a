"""Ops (executor stage): 3-D convolution and pooling — Conv3D, Conv3DBackpropInputV2,
Conv3DBackpropFilterV2, MaxPool3D, AvgPool3D, MaxPool3DGrad, AvgPool3DGrad — NDHWC only,
as TensorFlow's CPU kernels (NCDHW is refused with their InvalidArgument messages). Each
sums over the kernel taps (one tensordot per tap). Pure kernels: safe from any thread."""

from __future__ import annotations

from itertools import product
from typing import Any

import numpy as np

from common.errors import InvalidArgumentError, UnimplementedError
from common.ops.registry import KernelConstruction, one_output_kernel, register_op

_FLOAT = "T: {half, bfloat16, float, double}"
_CONV_ATTRS = [
    _FLOAT,
    "strides: list(int) >= 5",
    "padding: {'SAME', 'VALID'}",
    "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'",
    "dilations: list(int) = [1, 1, 1, 1, 1]",
]
_POOL_ATTRS = [
    "ksize: list(int) >= 5",
    "strides: list(int) >= 5",
    "padding: {'SAME', 'VALID'}",
    "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'",
]


# TensorFlow's CPU kernels refuse NCDHW (InvalidArgument), each in its own words.
_NDHWC_ONLY = {
    "Conv3D": "CPU implementation of Conv3D currently only supports the NHWC tensor format.",
    "Conv3DBackpropInputV2": "Conv3DBackpropInputOpV2 only supports NDHWC on the CPU.",
    "Conv3DBackpropFilterV2": "Conv3DBackpropFilterOpV2 only supports NDHWC on the CPU.",
    "MaxPool3D": "Default Pooling3DOp only supports NDHWC on device type CPU",
    "AvgPool3D": "Default Pooling3DOp only supports NDHWC on device type CPU",
    "MaxPool3DGrad": "Default MaxPooling3dGradOp only supports NDHWC on device type CPU",
    "AvgPool3DGrad": "Default AvgPooling3dGradOp only supports NDHWC on device type CPU",
}


def _spatial(k: KernelConstruction, name: str, op: str) -> tuple[int, int, int]:
    if str(k.attr("data_format")) != "NDHWC":
        raise InvalidArgumentError(_NDHWC_ONLY[op])
    v = [int(x) for x in k.attr(name)]
    if len(v) != 5:
        raise InvalidArgumentError(f"Sliding window {name} field must specify 5 dimensions")
    if v[0] != 1 or v[4] != 1:
        raise UnimplementedError(
            f"Current implementation does not yet support {name} in the batch and depth dimensions."
        )
    return v[1], v[2], v[3]


def _geometry(
    size: tuple[int, ...],
    window: tuple[int, ...],
    strides: tuple[int, ...],
    dil: tuple[int, ...],
    padding: str,
) -> tuple[list[int], list[int]]:
    """(output sizes, padding before) per spatial dimension, TF's SAME/VALID rules."""
    outs, before = [], []
    for n, w, s, d in zip(size, window, strides, dil):
        eff = (w - 1) * d + 1
        if padding == "VALID":
            out = (n - eff + s) // s
            pad = 0
        else:
            out = (n + s - 1) // s
            pad = max((out - 1) * s + eff - n, 0) // 2
        if out <= 0:
            raise InvalidArgumentError(
                f"Computed output size would be negative: {out} [input_size: {n}, "
                f"effective_filter_size: {eff}, stride: {s}]"
            )
        outs.append(out)
        before.append(pad)
    return outs, before


def _padded(
    x: np.ndarray,
    outs: list[int],
    before: list[int],
    window: Any,
    strides: Any,
    dil: Any,
    fill: float,
) -> np.ndarray:
    pads = [(0, 0)]
    for n, o, b, w, s, d in zip(x.shape[1:4], outs, before, window, strides, dil):
        need = (o - 1) * s + (w - 1) * d + 1
        pads.append((b, max(need - n - b, 0)))
    pads.append((0, 0))
    return np.pad(x, pads, constant_values=fill)


def _tap(xp: np.ndarray, tap: tuple[int, ...], outs: list[int], strides: Any, dil: Any) -> tuple:
    return (
        (slice(None),)
        + tuple(
            slice(t * d, t * d + (o - 1) * s + 1, s) for t, o, s, d in zip(tap, outs, strides, dil)
        )
        + (slice(None),)
    )


def _conv_setup(k: KernelConstruction, op: str) -> tuple[Any, Any, str]:
    strides = _spatial(k, "strides", op)
    dil = _spatial(k, "dilations", op)
    return strides, dil, str(k.attr("padding"))


def _conv3d(k: KernelConstruction, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    strides, dil, padding = _conv_setup(k, "Conv3D")
    if x.ndim != 5 or w.ndim != 5:
        raise InvalidArgumentError("input and filter must be 5-dimensional")
    if x.shape[4] != w.shape[3]:
        raise InvalidArgumentError(
            f"Input depth must be evenly divisible by filter depth: {x.shape[4]} vs {w.shape[3]}"
        )
    outs, before = _geometry(x.shape[1:4], w.shape[:3], strides, dil, padding)
    xp = _padded(x, outs, before, w.shape[:3], strides, dil, 0.0)
    out = np.zeros((x.shape[0], *outs, w.shape[4]), dtype=np.float64)
    for tap in product(*(range(n) for n in w.shape[:3])):
        out += np.tensordot(xp[_tap(xp, tap, outs, strides, dil)], w[tap], axes=([4], [0]))
    return out.astype(x.dtype)


def _conv3d_backprop_input(
    k: KernelConstruction, sizes: np.ndarray, w: np.ndarray, grad: np.ndarray
) -> np.ndarray:
    strides, dil, padding = _conv_setup(k, "Conv3DBackpropInputV2")
    shape = [int(s) for s in np.asarray(sizes).reshape(-1)]
    outs, before = _geometry(tuple(shape[1:4]), w.shape[:3], strides, dil, padding)
    dxp = np.zeros(
        _padded(np.zeros(shape, np.float32), outs, before, w.shape[:3], strides, dil, 0.0).shape,
        np.float64,
    )
    for tap in product(*(range(n) for n in w.shape[:3])):
        dxp[_tap(dxp, tap, outs, strides, dil)] += np.tensordot(grad, w[tap], axes=([4], [1]))
    crop = (
        (slice(None),) + tuple(slice(b, b + n) for b, n in zip(before, shape[1:4])) + (slice(None),)
    )
    return dxp[crop].astype(grad.dtype)


def _conv3d_backprop_filter(
    k: KernelConstruction, x: np.ndarray, sizes: np.ndarray, grad: np.ndarray
) -> np.ndarray:
    strides, dil, padding = _conv_setup(k, "Conv3DBackpropFilterV2")
    fshape = [int(s) for s in np.asarray(sizes).reshape(-1)]
    outs, before = _geometry(x.shape[1:4], tuple(fshape[:3]), strides, dil, padding)
    xp = _padded(x, outs, before, fshape[:3], strides, dil, 0.0)
    dw = np.zeros(fshape, np.float64)
    for tap in product(*(range(n) for n in fshape[:3])):
        dw[tap] = np.tensordot(
            xp[_tap(xp, tap, outs, strides, dil)], grad, axes=([0, 1, 2, 3], [0, 1, 2, 3])
        )
    return dw.astype(x.dtype)


def _pool_setup(
    k: KernelConstruction, x_shape: tuple[int, ...], op: str
) -> tuple[Any, Any, list[int], list[int]]:
    window = _spatial(k, "ksize", op)
    strides = _spatial(k, "strides", op)
    outs, before = _geometry(
        tuple(x_shape[1:4]), window, strides, (1, 1, 1), str(k.attr("padding"))
    )
    return window, strides, outs, before


def _max_pool3d(k: KernelConstruction, x: np.ndarray) -> np.ndarray:
    window, strides, outs, before = _pool_setup(k, x.shape, "MaxPool3D")
    xp = _padded(x.astype(np.float64), outs, before, window, strides, (1, 1, 1), -np.inf)
    out = np.full((x.shape[0], *outs, x.shape[4]), -np.inf)
    for tap in product(*(range(n) for n in window)):
        np.maximum(out, xp[_tap(xp, tap, outs, strides, (1, 1, 1))], out=out)
    return out.astype(x.dtype)


def _avg_counts(
    x_shape: tuple[int, ...], window: Any, strides: Any, outs: list[int], before: list[int]
) -> np.ndarray:
    ones = _padded(np.ones((1, *x_shape[1:4], 1)), outs, before, window, strides, (1, 1, 1), 0.0)
    counts = np.zeros((1, *outs, 1))
    for tap in product(*(range(n) for n in window)):
        counts += ones[_tap(ones, tap, outs, strides, (1, 1, 1))]
    return counts


def _avg_pool3d(k: KernelConstruction, x: np.ndarray) -> np.ndarray:
    window, strides, outs, before = _pool_setup(k, x.shape, "AvgPool3D")
    xp = _padded(x.astype(np.float64), outs, before, window, strides, (1, 1, 1), 0.0)
    total = np.zeros((x.shape[0], *outs, x.shape[4]))
    for tap in product(*(range(n) for n in window)):
        total += xp[_tap(xp, tap, outs, strides, (1, 1, 1))]
    return (total / _avg_counts(x.shape, window, strides, outs, before)).astype(x.dtype)


def _avg_pool3d_grad(k: KernelConstruction, shape: np.ndarray, grad: np.ndarray) -> np.ndarray:
    x_shape = tuple(int(s) for s in np.asarray(shape).reshape(-1))
    window, strides, outs, before = _pool_setup(k, x_shape, "AvgPool3DGrad")
    share = grad / _avg_counts(x_shape, window, strides, outs, before)
    dxp = np.zeros(_padded(np.zeros(x_shape), outs, before, window, strides, (1, 1, 1), 0.0).shape)
    for tap in product(*(range(n) for n in window)):
        dxp[_tap(dxp, tap, outs, strides, (1, 1, 1))] += share
    crop = (
        (slice(None),)
        + tuple(slice(b, b + n) for b, n in zip(before, x_shape[1:4]))
        + (slice(None),)
    )
    return dxp[crop].astype(grad.dtype)


def _max_pool3d_grad(
    k: KernelConstruction, x: np.ndarray, y: np.ndarray, grad: np.ndarray
) -> np.ndarray:
    """Each output's gradient goes to the first input (in window order) equal to the max."""
    window, strides, outs, before = _pool_setup(k, x.shape, "MaxPool3DGrad")
    xp = _padded(x.astype(np.float64), outs, before, window, strides, (1, 1, 1), -np.inf)
    dxp = np.zeros(xp.shape)
    taken = np.zeros(y.shape, bool)
    for tap in product(*(range(n) for n in window)):
        idx = _tap(xp, tap, outs, strides, (1, 1, 1))
        hit = (xp[idx] == y) & ~taken
        dxp[idx] += np.where(hit, grad, 0.0)
        taken |= hit
    crop = (
        (slice(None),)
        + tuple(slice(b, b + n) for b, n in zip(before, x.shape[1:4]))
        + (slice(None),)
    )
    return dxp[crop].astype(grad.dtype)


def _register() -> None:
    register_op("Conv3D", ["input: T", "filter: T"], ["output: T"], _CONV_ATTRS)
    one_output_kernel("Conv3D", expensive=True)(_conv3d)
    register_op(
        "Conv3DBackpropInputV2",
        ["input_sizes: Tshape", "filter: T", "out_backprop: T"],
        ["output: T"],
        [*_CONV_ATTRS, "Tshape: {int32, int64} = DT_INT32"],
    )
    one_output_kernel("Conv3DBackpropInputV2", expensive=True)(_conv3d_backprop_input)
    register_op(
        "Conv3DBackpropFilterV2",
        ["input: T", "filter_sizes: int32", "out_backprop: T"],
        ["output: T"],
        _CONV_ATTRS,
    )
    one_output_kernel("Conv3DBackpropFilterV2", expensive=True)(_conv3d_backprop_filter)
    register_op(
        "MaxPool3D", ["input: T"], ["output: T"], [*_POOL_ATTRS, "T: {half, bfloat16, float}"]
    )
    one_output_kernel("MaxPool3D", expensive=True)(_max_pool3d)
    register_op("AvgPool3D", ["input: T"], ["output: T"], [*_POOL_ATTRS, _FLOAT])
    one_output_kernel("AvgPool3D", expensive=True)(_avg_pool3d)
    register_op(
        "AvgPool3DGrad",
        ["orig_input_shape: int32", "grad: T"],
        ["output: T"],
        [*_POOL_ATTRS, _FLOAT],
    )
    one_output_kernel("AvgPool3DGrad", expensive=True)(_avg_pool3d_grad)
    register_op(
        "MaxPool3DGrad",
        ["orig_input: TInput", "orig_output: TInput", "grad: T"],
        ["output: T"],
        [
            *_POOL_ATTRS,
            "T: {half, bfloat16, float} = DT_FLOAT",
            "TInput: {half, bfloat16, float} = DT_FLOAT",
        ],
    )
    one_output_kernel("MaxPool3DGrad", expensive=True)(_max_pool3d_grad)


_register()
