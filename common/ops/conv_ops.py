"""Ops: 2-D convolution and pooling (TensorFlow's conv_ops / pooling_ops): Conv2D,
DepthwiseConv2dNative, MaxPool, MaxPoolV2, AvgPool.

Windows are strided views (no Python loops over pixels). A convolution (and its filter
and, at stride 1, input gradients in grad_ops) runs by pieces of the batch: the piece's
patches copied into a cache-sized buffer (im2col) and one GEMM, the pieces split over the
compute pool (common.ops.parallel); grouped and depthwise ones contract with einsum.
NCHW inputs are transposed to NHWC and back. Output sizes and SAME/VALID/EXPLICIT
padding follow TF's GetWindowedOutputSize; AvgPool divides by the number of non-padded
elements, as TF.
Kernels are `expensive` (numpy releases the GIL); stateless and thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided, sliding_window_view

from common.errors import InternalError, InvalidArgumentError, UnimplementedError
from common.ops import math_util as mu
from common.ops import parallel
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


def gemm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for 2-D operands, a large one split by rows over the compute pool."""
    from common.ops.math_ops import parallel_matmul

    return parallel_matmul(a, b)


# ---------------------------------------------------------------------------------------
# Convolution by pieces: im2col into a small buffer, one GEMM per piece
# ---------------------------------------------------------------------------------------

# About this many bytes of patches per piece: a piece's patches stay in the core's cache
# between their copy and the GEMM that reads them. On this machine (2-core AMD EPYC,
# OpenBLAS) conv2 of the bench CNN ([64, 14, 14, 32] * [5, 5, 32, 64]) costs 14.8 ms of
# CPU in pieces of one image (627 KB) against 22.9 ms as one [12544, 800] im2col + GEMM.
PIECE_BYTES = 1 << 20
# Work below this many multiply-adds runs on the calling thread alone.
PARALLEL_MACS = 1 << 24


def geometry(
    in_hw: tuple[int, ...],
    ksize: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int],
    padding: str,
    explicit: Pads,
) -> tuple[tuple[int, int], Pads]:
    """((OH, OW), pads): the output size and the padding `pad_nhwc` needs so that every
    window lies inside the padded input (negative output sizes are errors, as TF's)."""
    out, pads = [], []
    for i in range(2):
        o, before, after = output_size(
            in_hw[i], ksize[i], strides[i], dilations[i], padding, explicit[i]
        )
        eff = (ksize[i] - 1) * dilations[i] + 1
        out.append(o)
        pads.append((before, max(after, (o - 1) * strides[i] + eff - in_hw[i] - before)))
    return (out[0], out[1]), (pads[0], pads[1])


def pad_nhwc(x: np.ndarray, pads: Pads) -> np.ndarray:
    """A C-contiguous copy of NHWC `x` with zero rows/columns added (a negative pad crops)."""
    (pt, pb), (pl, pr) = pads
    h, w = x.shape[1], x.shape[2]
    src = x[:, max(-pt, 0) : h - max(-pb, 0), max(-pl, 0) : w - max(-pr, 0)]
    pt, pb, pl, pr = max(pt, 0), max(pb, 0), max(pl, 0), max(pr, 0)
    if not (pt or pb or pl or pr):
        return np.ascontiguousarray(src)
    sh = src.shape
    out = np.zeros((sh[0], sh[1] + pt + pb, sh[2] + pl + pr, sh[3]), x.dtype)
    out[:, pt : pt + sh[1], pl : pl + sh[2]] = src
    return out


def patch_view(
    xp: np.ndarray,
    ksize: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int],
    out_hw: tuple[int, int],
) -> np.ndarray:
    """The [N, OH, OW, KH, KW, C] windows of a padded NHWC input as a read-only strided
    view (no copy). The caller sizes `xp` to hold every window."""
    (kh, kw), (sh, sw), (dh, dw) = ksize, strides, dilations
    n, h, w, c = xp.shape
    inside = (out_hw[0] - 1) * sh + (kh - 1) * dh < h and (out_hw[1] - 1) * sw + (kw - 1) * dw < w
    if out_hw[0] > 0 and out_hw[1] > 0 and not inside:
        raise InternalError(f"windows of {ksize} x {out_hw} outside a {h}x{w} input")
    s0, s1, s2, s3 = xp.strides
    return as_strided(
        xp,
        (n, out_hw[0], out_hw[1], kh, kw, c),
        (s0, s1 * sh, s2 * sw, s1 * dh, s2 * dw, s3),
        writeable=False,
    )


def _pieces(n: int, oh: int, row_bytes: int) -> list[tuple[int, int, int, int]]:
    """(n0, n1, r0, r1): the output [N, OH] cut into pieces of about PIECE_BYTES of
    patches, whole images at a time or, when one image is larger, rows of one image."""
    rows = max(1, PIECE_BYTES // max(row_bytes, 1))
    if rows >= oh:
        per = max(1, rows // max(oh, 1))
        return [(i, min(n, i + per), 0, oh) for i in range(0, n, per)]
    return [(i, i + 1, r, min(oh, r + rows)) for i in range(n) for r in range(0, oh, rows)]


def _matrix(a: np.ndarray) -> np.ndarray:
    """A [rows, last] view of a C-contiguous block (never a copy: GEMMs write into it)."""
    m = a.view()
    m.shape = (-1, a.shape[-1])
    return m


def _split(pieces: list, macs: int) -> list[list]:
    parts = 1 if macs < PARALLEL_MACS else min(parallel.cores(), len(pieces))
    return [pieces[lo:hi] for lo, hi in parallel.bounds(len(pieces), parts)]


def conv2d_padded(
    xp: np.ndarray,
    f: np.ndarray,
    strides: tuple[int, int],
    dilations: tuple[int, int],
    out_hw: tuple[int, int],
) -> np.ndarray:
    """The convolution of a padded NHWC input with an [KH, KW, C, O] filter, NHWC: per
    piece, the patches copied into a buffer [rows, KH*KW*C] and one GEMM with the filter
    as [KH*KW*C, O]; pieces split over the compute pool."""
    kh, kw, c, o = f.shape
    n, (oh, ow), k = xp.shape[0], out_hw, kh * kw * c
    dtype = np.result_type(xp, f)
    y = np.empty((n, oh, ow, o), dtype)
    if not y.size:
        return y
    if not k:
        y.fill(0)
        return y
    view = patch_view(xp, (kh, kw), strides, dilations, out_hw)
    fm = np.ascontiguousarray(f, dtype).reshape(k, o)
    pieces = _pieces(n, oh, ow * k * dtype.itemsize)

    def part(mine: list) -> None:
        buf = np.empty(max((n1 - n0) * (r1 - r0) for n0, n1, r0, r1 in mine) * ow * k, dtype)
        for n0, n1, r0, r1 in mine:
            src = view[n0:n1, r0:r1]
            cols = buf[: src.size].reshape(src.shape)
            np.copyto(cols, src)
            np.matmul(_matrix(cols.reshape(-1, k)), fm, out=_matrix(y[n0:n1, r0:r1]))

    split = _split(pieces, y.size * k)
    parallel.run_parts(lambda i: part(split[i]), len(split))
    return y


def conv2d_filter_grad_padded(
    xp: np.ndarray,
    dy: np.ndarray,
    ksize: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int],
) -> np.ndarray:
    """The [KH, KW, C, O] gradient of a convolution's filter from its padded NHWC input
    and its output gradient dy [N, OH, OW, O]: per piece, patches^T @ dy in one GEMM,
    summed in piece order within a part and then in part order (deterministic)."""
    kh, kw = ksize
    n, oh, ow, o = dy.shape
    c = xp.shape[3]
    k = kh * kw * c
    dtype = np.result_type(xp, dy)
    if not (dy.size and k):
        return np.zeros((kh, kw, c, o), dtype)
    view = patch_view(xp, ksize, strides, dilations, (oh, ow))
    dy = np.ascontiguousarray(dy, dtype)
    pieces = _pieces(n, oh, ow * k * dtype.itemsize)

    def part(mine: list) -> np.ndarray:
        buf = np.empty(max((n1 - n0) * (r1 - r0) for n0, n1, r0, r1 in mine) * ow * k, dtype)
        acc = np.zeros((k, o), dtype)
        tmp = np.empty((k, o), dtype)
        for n0, n1, r0, r1 in mine:
            src = view[n0:n1, r0:r1]
            cols = buf[: src.size].reshape(src.shape)
            np.copyto(cols, src)
            np.matmul(cols.reshape(-1, k).T, _matrix(dy[n0:n1, r0:r1]), out=tmp)
            acc += tmp
        return acc

    split = _split(pieces, dy.size * k)
    partials = parallel.run_parts(lambda i: part(split[i]), len(split))
    df = partials[0]
    for p in partials[1:]:
        df += p
    return df.reshape(kh, kw, c, o)


def conv2d_input_grad_stride1(
    dy: np.ndarray,
    f: np.ndarray,
    in_hw: tuple[int, int],
    dilations: tuple[int, int],
    before: tuple[int, int],
) -> np.ndarray:
    """The NHWC input gradient of a stride-1 convolution whose input was padded by
    `before` rows and columns (at most a window's extent less one): the convolution of
    dy, padded so that every input position sees each filter tap, with the filter turned
    180 degrees and its channels swapped ([KH, KW, O, C])."""
    kh, kw = f.shape[:2]
    (dh, dw), (h, w) = dilations, in_hw
    oh, ow = dy.shape[1], dy.shape[2]
    pads = (
        ((kh - 1) * dh - before[0], h + before[0] - oh),
        ((kw - 1) * dw - before[1], w + before[1] - ow),
    )
    flipped = f[::-1, ::-1].transpose(0, 1, 3, 2)
    return conv2d_padded(pad_nhwc(dy, pads), flipped, (1, 1), dilations, (h, w))


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

    def geometry(
        self, in_hw: tuple[int, ...], ksize: tuple[int, int]
    ) -> tuple[tuple[int, int], Pads]:
        return geometry(in_hw, ksize, self.strides, self.dilations, self.padding, self.explicit)


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
                (oh, ow), pads = p.geometry(x.shape[1:3], (kh, kw))
                y = conv2d_padded(pad_nhwc(x, pads), f, p.strides, p.dilations, (oh, ow))
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
