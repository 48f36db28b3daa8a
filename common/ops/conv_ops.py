"""Ops: 2-D convolution and pooling (TensorFlow's conv_ops / pooling_ops): Conv2D,
DepthwiseConv2dNative, MaxPool, MaxPoolV2, AvgPool.

Windows are gathered with `sliding_window_view` (strided views, no Python loops over
pixels); convolutions then contract with one `tensordot` (im2col + GEMM). NCHW inputs are
transposed to NHWC and back. Output sizes and SAME/VALID/EXPLICIT padding follow TF's
GetWindowedOutputSize; AvgPool divides by the number of non-padded elements, as TF.
Kernels are `expensive` (numpy releases the GIL); stateless and thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from common.errors import InvalidArgumentError, UnimplementedError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

Pads = tuple[tuple[int, int], tuple[int, int]]


def output_size(
    in_size: int, k: int, stride: int, dilation: int, padding: str, explicit: tuple[int, int]
) -> tuple[int, int, int]:
    """(output size, pad before, pad after) for one spatial dimension."""
    eff = (k - 1) * dilation + 1
    if stride <= 0:
        raise InvalidArgumentError(f"Stride must be > 0, but got {stride}")
    if padding == "VALID":
        out, before, after = (in_size - eff + stride) // stride, 0, 0
    elif padding == "SAME":
        out = (in_size + stride - 1) // stride
        needed = max(0, (out - 1) * stride + eff - in_size)
        before, after = needed // 2, needed - needed // 2
    else:
        before, after = explicit
        out = (in_size + before + after - eff + stride) // stride
    if out < 0:
        raise InvalidArgumentError(
            f"Computed output size would be negative: {out} [input_size: {in_size}, "
            f"effective_filter_size: {eff}, stride: {stride}]"
        )
    return out, before, after


def _spatial(values: Sequence[int], nchw: bool, what: str) -> tuple[int, int]:
    values = list(values)
    if len(values) != 4:
        raise InvalidArgumentError(f"Sliding window {what} field must specify 4 dimensions")
    n, c = values[0], values[1 if nchw else 3]
    if n != 1 or c != 1:
        raise InvalidArgumentError(
            f"Current implementation does not yet support {what} in the batch and depth dimensions."
        )
    return (values[2], values[3]) if nchw else (values[1], values[2])


def _explicit_pads(values: Sequence[int], nchw: bool) -> Pads:
    p = list(values) or [0] * 8
    if len(p) != 8:
        raise InvalidArgumentError(
            f"explicit_paddings attribute must contain 8 values, but got: {len(p)}"
        )
    h, w = (2, 3) if nchw else (1, 2)
    return (p[2 * h], p[2 * h + 1]), (p[2 * w], p[2 * w + 1])


def _to_nhwc(x: np.ndarray, nchw: bool, what: str = "input") -> np.ndarray:
    if x.ndim != 4:
        raise InvalidArgumentError(f"{what} must be 4-dimensional{mu.shape_str(x.shape)}")
    return np.transpose(x, (0, 2, 3, 1)) if nchw else x


def _from_nhwc(y: np.ndarray, nchw: bool) -> np.ndarray:
    return np.ascontiguousarray(np.transpose(y, (0, 3, 1, 2))) if nchw else y


def windows(
    x: np.ndarray,
    ksize: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int],
    padding: str,
    explicit: Pads,
    pad_value=0,
) -> np.ndarray:
    """[N, OH, OW, C, KH, KW] strided view of the windows of an NHWC input."""
    dims = [
        output_size(x.shape[1 + i], ksize[i], strides[i], dilations[i], padding, explicit[i])
        for i in range(2)
    ]
    (oh, pt, pb), (ow, pl, pr) = dims
    if pt or pb or pl or pr:
        x = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=pad_value)
    eff = [(ksize[i] - 1) * dilations[i] + 1 for i in range(2)]
    if x.shape[1] < eff[0] or x.shape[2] < eff[1] or oh <= 0 or ow <= 0:
        return np.zeros((x.shape[0], max(oh, 0), max(ow, 0), x.shape[3]) + ksize, x.dtype)
    w = sliding_window_view(x, tuple(eff), axis=(1, 2))
    w = w[:, :: strides[0], :: strides[1], :, :: dilations[0], :: dilations[1]]
    return w[:, :oh, :ow]


def im2col(
    x: np.ndarray,
    ksize: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int],
    padding: str,
    explicit: Pads,
) -> np.ndarray:
    """The patches of an NHWC input as a C-contiguous [N, OH, OW, KH, KW, C] array: one
    strided copy of the `windows` view with channels innermost, so that with the filter
    reshaped to [KH*KW*C, O] a convolution is one GEMM (and its filter gradient another)."""
    w = windows(x, ksize, strides, dilations, padding, explicit)
    return np.ascontiguousarray(w.transpose(0, 1, 2, 4, 5, 3))


def gemm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for 2-D operands, a large one split by rows over the compute pool."""
    from common.ops.math_ops import parallel_matmul

    return parallel_matmul(a, b)


# ---------------------------------------------------------------------------------------
# Convolutions
# ---------------------------------------------------------------------------------------


class _ConvParams:
    """The static attrs of a convolution, validated once at kernel construction."""

    def __init__(self, kc: KernelConstruction) -> None:
        self.nchw = kc.attrs.get("data_format", "NHWC") == "NCHW"
        self.strides = _spatial(kc.attr("strides"), self.nchw, "strides")
        self.dilations = _spatial(kc.attrs.get("dilations", [1, 1, 1, 1]), self.nchw, "dilations")
        self.padding = kc.attr("padding")
        self.explicit = (
            _explicit_pads(kc.attrs.get("explicit_paddings", []), self.nchw)
            if self.padding == "EXPLICIT"
            else ((0, 0), (0, 0))
        )
        self.out = mu.np_type(kc.output_types[0])

    def windows(self, x: np.ndarray, ksize: tuple[int, int]) -> np.ndarray:
        return windows(x, ksize, self.strides, self.dilations, self.padding, self.explicit)


def _conv2d(kc: KernelConstruction) -> Callable:
    p = _ConvParams(kc)

    def compute(ctx, inputs: list) -> list:
        x = mu.upcast(_to_nhwc(np.asarray(inputs[0]), p.nchw))
        f = mu.upcast(np.asarray(inputs[1]))
        if f.ndim != 4:
            raise InvalidArgumentError(f"filter must be 4-dimensional: {mu.shape_str(f.shape)}")
        kh, kw, fin, cout = f.shape
        c = x.shape[3]
        if fin == 0 or c % fin:
            raise InvalidArgumentError(
                f"input depth must be evenly divisible by filter depth: {c} vs {fin}"
            )
        groups = c // fin
        if cout % groups:
            raise InvalidArgumentError(
                f"output depth must be evenly divisible by number of groups: {cout} vs {groups}"
            )
        with np.errstate(all="ignore"):
            if groups == 1:
                cols = im2col(x, (kh, kw), p.strides, p.dilations, p.padding, p.explicit)
                n, oh, ow = cols.shape[:3]
                y = gemm(cols.reshape(n * oh * ow, kh * kw * c), f.reshape(kh * kw * c, cout))
                y = y.reshape(n, oh, ow, cout)
            else:
                w = p.windows(x, (kh, kw))
                n, oh, ow = w.shape[:3]
                wg = w.reshape(n, oh, ow, groups, fin, kh, kw)
                fg = f.reshape(kh, kw, fin, groups, cout // groups)
                y = np.einsum("nhwgcij,ijcgo->nhwgo", wg, fg, optimize=True)
                y = y.reshape(n, oh, ow, cout)
        return [mu.as_type(_from_nhwc(y, p.nchw), p.out)]

    return compute


def _depthwise_conv2d(kc: KernelConstruction) -> Callable:
    p = _ConvParams(kc)

    def compute(ctx, inputs: list) -> list:
        x = mu.upcast(_to_nhwc(np.asarray(inputs[0]), p.nchw))
        f = mu.upcast(np.asarray(inputs[1]))
        if f.ndim != 4:
            raise InvalidArgumentError(f"filter must be 4-dimensional: {mu.shape_str(f.shape)}")
        kh, kw, fin, m = f.shape
        if fin != x.shape[3]:
            raise InvalidArgumentError(
                f"input and filter must have the same depth: {x.shape[3]} vs {fin}"
            )
        w = p.windows(x, (kh, kw))
        with np.errstate(all="ignore"):
            y = np.einsum("nhwcij,ijcm->nhwcm", w, f, optimize=True)
        y = y.reshape(y.shape[:3] + (fin * m,))
        return [mu.as_type(_from_nhwc(y, p.nchw), p.out)]

    return compute


# ---------------------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------------------


def _pool_window(values: Iterable[int], nchw: bool, what: str) -> tuple[int, int]:
    window = [int(v) for v in values]
    if len(window) != 4:
        raise InvalidArgumentError(f"Sliding window {what} field must specify 4 dimensions")
    if window[0] != 1:
        raise UnimplementedError("Pooling is not yet supported on the batch dimension.")
    if window[1 if nchw else 3] != 1:
        raise UnimplementedError("Pooling across depth is not supported.")
    return (window[2], window[3]) if nchw else (window[1], window[2])


def pool(
    x: np.ndarray,
    ksize: tuple[int, int],
    strides: tuple[int, int],
    padding: str,
    explicit: Pads,
    nchw: bool,
    average: bool,
) -> np.ndarray:
    """Max or average pooling of a 4-D input in its data format; result in x's dtype."""
    xh = _to_nhwc(np.asarray(x), nchw)
    if average:
        v = mu.upcast(xh)
        s = windows(v, ksize, strides, (1, 1), padding, explicit).sum(axis=(-2, -1))
        ones = np.ones((1,) + xh.shape[1:3] + (1,), v.dtype)
        count = windows(ones, ksize, strides, (1, 1), padding, explicit).sum(axis=(-2, -1))
        with np.errstate(all="ignore"):
            y = s / count
    else:
        w = windows(xh, ksize, strides, (1, 1), padding, explicit, mu.lowest(xh.dtype))
        y = tap_max(w) if w.size else w.sum(axis=(-2, -1))
    return mu.as_type(_from_nhwc(y, nchw), x.dtype)


def tap_max(w: np.ndarray) -> np.ndarray:
    """The max over the last two (window) axes of a `windows` view, one np.maximum per
    kernel tap over whole [N, OH, OW, C] slices (a reduction over the view's small,
    strided trailing axes is several times slower); NaN propagates as in `max`."""
    y = w[..., 0, 0].copy()
    for i in range(w.shape[-2]):
        for j in range(w.shape[-1]):
            if i or j:
                np.maximum(y, w[..., i, j], out=y)
    return y


def _max_pool(kc: KernelConstruction) -> Callable:
    nchw = kc.attrs.get("data_format", "NHWC") == "NCHW"
    ksize = _pool_window(kc.attr("ksize"), nchw, "ksize")
    strides = _pool_window(kc.attr("strides"), nchw, "stride")
    padding = kc.attr("padding")
    explicit = (
        _explicit_pads(kc.attrs.get("explicit_paddings", []), nchw)
        if padding == "EXPLICIT"
        else ((0, 0), (0, 0))
    )

    def compute(ctx, inputs: list) -> list:
        return [pool(inputs[0], ksize, strides, padding, explicit, nchw, average=False)]

    return compute


def _max_pool_v2(kc: KernelConstruction) -> Callable:
    nchw = kc.attrs.get("data_format", "NHWC") == "NCHW"
    padding = kc.attr("padding")

    def compute(ctx, inputs: list) -> list:
        ksize = _pool_window(np.asarray(inputs[1]).reshape(-1), nchw, "ksize")
        strides = _pool_window(np.asarray(inputs[2]).reshape(-1), nchw, "stride")
        return [pool(inputs[0], ksize, strides, padding, ((0, 0), (0, 0)), nchw, False)]

    return compute


def _avg_pool(kc: KernelConstruction) -> Callable:
    nchw = kc.attrs.get("data_format", "NHWC") == "NCHW"
    ksize = _pool_window(kc.attr("ksize"), nchw, "ksize")
    strides = _pool_window(kc.attr("strides"), nchw, "stride")
    padding = kc.attr("padding")

    def compute(ctx, inputs: list) -> list:
        return [pool(inputs[0], ksize, strides, padding, ((0, 0), (0, 0)), nchw, True)]

    return compute


def _register() -> None:
    conv_common = [
        "padding: {'SAME', 'VALID', 'EXPLICIT'}",
        "explicit_paddings: list(int) = []",
        "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
        "dilations: list(int) = [1, 1, 1, 1]",
    ]
    register_op(
        "Conv2D",
        ["input: T", "filter: T"],
        ["output: T"],
        [
            "T: {half, bfloat16, float, double, int32}",
            "strides: list(int)",
            "use_cudnn_on_gpu: bool = true",
            *conv_common,
        ],
    )
    register_kernel("Conv2D", expensive=True)(_conv2d)
    register_op(
        "DepthwiseConv2dNative",
        ["input: T", "filter: T"],
        ["output: T"],
        ["T: {half, bfloat16, float, double}", "strides: list(int)", *conv_common],
    )
    register_kernel("DepthwiseConv2dNative", expensive=True)(_depthwise_conv2d)
    pool_t = (
        "T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16, "
        "qint8} = float"
    )
    formats = "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'"
    register_op(
        "MaxPool",
        ["input: T"],
        ["output: T"],
        [
            pool_t,
            "ksize: list(int) >= 4",
            "strides: list(int) >= 4",
            "padding: {'SAME', 'VALID', 'EXPLICIT'}",
            "explicit_paddings: list(int) = []",
            formats,
        ],
    )
    register_kernel("MaxPool", expensive=True)(_max_pool)
    register_op(
        "MaxPoolV2",
        ["input: T", "ksize: int32", "strides: int32"],
        ["output: T"],
        [pool_t, "padding: {'SAME', 'VALID'}", formats],
    )
    register_kernel("MaxPoolV2", expensive=True, host_memory=("ksize", "strides"))(_max_pool_v2)
    register_op(
        "AvgPool",
        ["value: T"],
        ["output: T"],
        [
            "ksize: list(int) >= 4",
            "strides: list(int) >= 4",
            "padding: {'SAME', 'VALID'}",
            "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
            "T: {half, bfloat16, float, double}",
        ],
    )
    register_kernel("AvgPool", expensive=True)(_avg_pool)


_register()
