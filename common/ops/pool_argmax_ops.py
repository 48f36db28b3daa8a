"""Ops (executor stage): MaxPoolWithArgmax (tf.nn.max_pool_with_argmax) and its gradient
MaxPoolGradWithArgmax, NHWC only as on TF's CPU. The argmax of a window is the first
element, in row-major window order, strictly greater than the running maximum (TF's CPU
SpatialMaxPoolWithArgMaxHelper: the first valid element always starts it, so a leading NaN
wins and a later one never does); it is flattened as ((b * H + h) * W + w) * C + c, without
the batch term unless include_batch_in_index. Values bit for bit TF's. Stateless numpy
kernels, safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError, UnimplementedError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

_T = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}"
_ATTRS = [
    "ksize: list(int) >= 4",
    "strides: list(int) >= 4",
    "padding: {'SAME', 'VALID'}",
    "include_batch_in_index: bool = false",
]

register_op(
    "MaxPoolWithArgmax",
    inputs=["input: T"],
    outputs=["output: T", "argmax: Targmax"],
    attrs=[
        "ksize: list(int) >= 4",
        "strides: list(int) >= 4",
        "Targmax: {int32, int64} = DT_INT64",
        "padding: {'SAME', 'VALID'}",
        "include_batch_in_index: bool = false",
        _T,
    ],
)
register_op(
    "MaxPoolGradWithArgmax",
    inputs=["input: T", "grad: T", "argmax: Targmax"],
    outputs=["output: T"],
    attrs=[*_ATTRS, "Targmax: {int32, int64}", _T],
)


def _window(values: list[int], what: str) -> tuple[int, int]:
    if len(values) != 4:
        raise InvalidArgumentError(f"Sliding window {what} field must specify 4 dimensions")
    if values[0] != 1:
        raise UnimplementedError("Pooling is not yet supported on the batch dimension.")
    if values[3] != 1 and what == "ksize":
        raise UnimplementedError(
            "MaxPooling supports exactly one of pooling across depth or pooling across "
            "width/height."
        )
    return values[1], values[2]


def _out_dim(size: int, k: int, s: int, padding: str) -> tuple[int, int]:
    """Output size and padding before, as GetWindowedOutputSize computes them."""
    if padding == "VALID":
        return (size - k + s) // s, 0
    out = (size + s - 1) // s
    return out, max((out - 1) * s + k - size, 0) // 2


def max_pool_with_argmax(
    x: np.ndarray, ksize: tuple[int, int], strides: tuple[int, int], padding: str, batch: bool
) -> tuple[np.ndarray, np.ndarray]:
    if x.ndim != 4:
        raise InvalidArgumentError("tensor_in must be 4-dimensional")
    n, h, w, c = x.shape
    oh, pt = _out_dim(h, ksize[0], strides[0], padding)
    ow, pl = _out_dim(w, ksize[1], strides[1], padding)
    if not x.size:
        raise InvalidArgumentError("tensor_in must not be empty (2)")
    out = np.zeros((n, oh, ow, c), x.dtype)
    arg = np.zeros((n, oh, ow, c), np.int64)
    unset = np.ones((n, oh, ow, c), bool)
    rows0 = np.arange(oh) * strides[0] - pt
    cols0 = np.arange(ow) * strides[1] - pl
    for i in range(ksize[0]):
        rows = rows0 + i
        rv = (rows >= 0) & (rows < h)
        for j in range(ksize[1]):
            cols = cols0 + j
            cv = (cols >= 0) & (cols < w)
            v = x[:, np.clip(rows, 0, max(h - 1, 0))][:, :, np.clip(cols, 0, max(w - 1, 0))]
            valid = (rv[:, None] & cv[None, :])[None, :, :, None]
            take = valid & (unset | (out < v))
            out = np.where(take, v, out)
            flat = (rows[:, None] * w + cols[None, :])[None, :, :, None] * c + np.arange(c)
            arg = np.where(take, flat, arg)
            unset &= ~valid
    if batch:
        arg = arg + (np.arange(n) * (h * w * c)).reshape(-1, 1, 1, 1)
    return out, arg


def max_pool_grad_with_argmax(
    x: np.ndarray, grad: np.ndarray, argmax: np.ndarray, batch: bool
) -> np.ndarray:
    n = x.shape[0] if x.ndim else 0
    per_image = x.size // n if n else 0
    if grad.shape != argmax.shape:
        raise InvalidArgumentError(
            f"Expected grad shape to be {mu.shape_str(argmax.shape)}, but got "
            f"{mu.shape_str(grad.shape)}"
        )
    idx = argmax.reshape(n, -1).astype(np.int64) if n else argmax.reshape(-1)
    if not batch and n:
        idx = idx + (np.arange(n) * per_image).reshape(-1, 1)
    idx = idx.reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= x.size):
        raise InvalidArgumentError("Invalid max pooling index")
    dx = np.zeros(x.size, mu.compute_type(x.dtype))
    np.add.at(dx, idx, grad.reshape(-1).astype(dx.dtype))
    return dx.astype(x.dtype).reshape(x.shape)


@register_kernel("MaxPoolWithArgmax", expensive=True)
def _max_pool_with_argmax(k: KernelConstruction) -> Callable:
    ksize = _window(list(k.attr("ksize")), "ksize")
    strides = _window(list(k.attr("strides")), "stride")
    padding, batch = k.attr("padding"), bool(k.attr("include_batch_in_index"))
    targ = mu.np_type(k.attr("Targmax"))

    def compute(ctx, inputs: list) -> list:
        out, arg = max_pool_with_argmax(np.asarray(inputs[0]), ksize, strides, padding, batch)
        return [out, arg.astype(targ)]

    return compute


@register_kernel("MaxPoolGradWithArgmax", expensive=True)
def _max_pool_grad_with_argmax(k: KernelConstruction) -> Callable:
    batch = bool(k.attr("include_batch_in_index"))

    def compute(ctx, inputs: list) -> list:
        x, grad, argmax = (np.asarray(v) for v in inputs)
        return [max_pool_grad_with_argmax(x, grad, argmax, batch)]

    return compute
