"""Ops (executor stage): the gradient kernels tf.gradients emits for nn and math ops —
activation grads (ReluGrad ... TanhGrad), BiasAddGrad, Conv2D/depthwise backprops,
MaxPool/AvgPool grads (and MaxPoolGradGrad), softmax cross-entropy losses, MirrorPadGrad.

Formulas and their evaluation order are TensorFlow's functors (so float32 results agree to
the last ulp or close). Convolution backprops are vectorised: one contraction produces the
per-window columns and a loop over the *kernel taps* (never the pixels) scatters them back
(col2im). Kernels are stateless, thread-safe; the big ones are `expensive`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.conv_ops import (
    _explicit_pads,
    _from_nhwc,
    _pool_window,
    _spatial,
    _to_nhwc,
    conv2d_filter_grad_padded,
    conv2d_input_grad_stride1,
    gemm,
    geometry,
    output_size,
    pad_nhwc,
    tap_max,
    windows,
)
from common.ops.registry import KernelConstruction, register_kernel, register_op

_REAL = "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64"
_FLT = "half, bfloat16, float, double"
_FLT_CPLX = "bfloat16, half, float, double, complex64, complex128"
_NUMBER = (
    "float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
    "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64"
)
_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717

Grad2 = Callable[[np.ndarray, np.ndarray, KernelConstruction], np.ndarray]


# ---------------------------------------------------------------------------------------
# Activation gradients: f(a, b) with both inputs of one shape
# ---------------------------------------------------------------------------------------


def _binary_grad(fn: Grad2) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        def compute(ctx, inputs: list) -> list:
            a, b = np.asarray(inputs[0]), np.asarray(inputs[1])
            if a.shape != b.shape:
                raise InvalidArgumentError(
                    f"{kc.op}: inputs must be of the same shape: {mu.shape_str(a.shape)} vs "
                    f"{mu.shape_str(b.shape)}"
                )
            if mu.fp_errors_ignored():
                y = fn(mu.upcast(a), mu.upcast(b), kc)
            else:
                with np.errstate(all="ignore"):
                    y = fn(mu.upcast(a), mu.upcast(b), kc)
            return [mu.as_type(y, a.dtype)]

        return compute

    return factory


def _zero(x: np.ndarray):
    return np.zeros((), x.dtype)


def _relu_grad(g, x, kc):
    # TF's `gradients * (features > 0)`: a NaN or infinite gradient at x <= 0 gives NaN
    # (np.where gave 0), and a multiply costs a tenth of np.where here.
    return np.multiply(g, x > 0)


def _relu6_grad(g, x, kc):
    return np.where((x > 0) & (x < 6), g, _zero(g))


def _elu_grad(g, y, kc):
    return np.where(y < 0, g * (y + y.dtype.type(1)), g)


def _selu_grad(g, y, kc):
    t = y.dtype.type
    return np.where(y < 0, g * (y + t(_SELU_SCALE * _SELU_ALPHA)), g * t(_SELU_SCALE))


def _softplus_grad(g, x, kc):
    return g / (np.exp(-x) + x.dtype.type(1))


def _softsign_grad(g, x, kc):
    d = x.dtype.type(1) + np.abs(x)
    return g / (d * d)


def _leaky_relu_grad(g, x, kc):
    alpha = x.dtype.type(np.float32(kc.attrs.get("alpha", 0.2)))
    return np.where(x > 0, g, g * alpha)


def _sigmoid_grad(y, dy, kc):
    # dy * y * (1 - y), evaluated in that order, with one temporary less.
    t = dy * y
    t *= y.dtype.type(1) - y
    return t


def _tanh_grad(y, dy, kc):
    # dy * (1 - y * y), evaluated in that order, in one buffer.
    if y.ndim == 0:
        return dy * (y.dtype.type(1) - y * y)
    t = y * y
    np.subtract(y.dtype.type(1), t, out=t)
    t *= dy
    return t


def _rsqrt_grad(y, dy, kc):
    c = np.conj(y)
    return y.dtype.type(-0.5) * (dy * c) * (c * c)


def _sqrt_grad(y, dy, kc):
    return y.dtype.type(0.5) * dy / np.conj(y)


def _reciprocal_grad(y, dy, kc):
    c = np.conj(y)
    return -dy * c * c


def _register_activation_grads() -> None:
    for name, fn, types in (
        ("ReluGrad", _relu_grad, _REAL),
        ("Relu6Grad", _relu6_grad, _REAL),
        ("SoftplusGrad", _softplus_grad, _FLT),
        ("SoftsignGrad", _softsign_grad, _FLT),
    ):
        register_op(name, ["gradients: T", "features: T"], ["backprops: T"], [f"T: {{{types}}}"])
        register_kernel(name)(_binary_grad(fn))
    for name, fn in (("EluGrad", _elu_grad), ("SeluGrad", _selu_grad)):
        register_op(name, ["gradients: T", "outputs: T"], ["backprops: T"], [f"T: {{{_FLT}}}"])
        register_kernel(name)(_binary_grad(fn))
    register_op(
        "LeakyReluGrad",
        ["gradients: T", "features: T"],
        ["backprops: T"],
        ["alpha: float = 0.2", f"T: {{{_FLT}}} = DT_FLOAT"],
    )
    register_kernel("LeakyReluGrad")(_binary_grad(_leaky_relu_grad))
    for name, fn in (
        ("SigmoidGrad", _sigmoid_grad),
        ("TanhGrad", _tanh_grad),
        ("RsqrtGrad", _rsqrt_grad),
        ("SqrtGrad", _sqrt_grad),
        ("ReciprocalGrad", _reciprocal_grad),
        ("InvGrad", _reciprocal_grad),
    ):
        register_op(name, ["y: T", "dy: T"], ["z: T"], [f"T: {{{_FLT_CPLX}}}"])
        register_kernel(name)(_binary_grad(fn))


# ---------------------------------------------------------------------------------------
# BiasAddGrad
# ---------------------------------------------------------------------------------------


def _bias_add_grad(kc: KernelConstruction) -> Callable:
    nchw = kc.attrs.get("data_format", "NHWC") == "NCHW"

    def compute(ctx, inputs: list) -> list:
        g = np.asarray(inputs[0])
        if g.ndim < 2:
            raise InvalidArgumentError(f"Input tensor must be at least 2D: {mu.shape_str(g.shape)}")
        axis = 1 if nchw else g.ndim - 1
        others = tuple(i for i in range(g.ndim) if i != axis)
        return [mu.as_type(np.add.reduce(mu.upcast(g), axis=others), g.dtype)]  # np.sum's

    return compute


# ---------------------------------------------------------------------------------------
# Convolution backprops
# ---------------------------------------------------------------------------------------


class _Geometry:
    """Static conv/pool attrs: strides, dilations, padding, data format."""

    def __init__(self, kc: KernelConstruction, pool: bool = False) -> None:
        self.nchw = kc.attrs.get("data_format", "NHWC") == "NCHW"
        if pool:
            self.strides = _pool_window(kc.attr("strides"), self.nchw, "stride")
            self.ksize = _pool_window(kc.attr("ksize"), self.nchw, "ksize")
            self.dilations = (1, 1)
        else:
            self.strides = _spatial(kc.attr("strides"), self.nchw, "strides")
            self.dilations = _spatial(
                kc.attrs.get("dilations", [1, 1, 1, 1]), self.nchw, "dilations"
            )
        self.padding = kc.attr("padding")
        self.explicit = (
            _explicit_pads(kc.attrs.get("explicit_paddings", []), self.nchw)
            if self.padding == "EXPLICIT"
            else ((0, 0), (0, 0))
        )

    def dims(self, in_hw: tuple[int, int], k_hw: tuple[int, int]) -> list[tuple[int, int, int]]:
        """(out, pad_before, pad_after) per spatial dimension."""
        return [
            output_size(
                in_hw[i],
                k_hw[i],
                self.strides[i],
                self.dilations[i],
                self.padding,
                self.explicit[i],
            )
            for i in range(2)
        ]


def _nhwc_sizes(sizes, nchw: bool, what: str) -> tuple[int, int, int, int]:
    s = [int(v) for v in np.asarray(sizes).reshape(-1)]
    if len(s) != 4:
        raise InvalidArgumentError(f"{what} must be 4-dimensional, got {len(s)}")
    return (s[0], s[2], s[3], s[1]) if nchw else (s[0], s[1], s[2], s[3])


def _check_backprop(dy: np.ndarray, expect: tuple[int, ...], label: str) -> None:
    if dy.shape != expect:
        raise InvalidArgumentError(
            f"{label}: Computed output size {mu.shape_str(expect)} does not match "
            f"out_backprop shape {mu.shape_str(dy.shape)}"
        )


def col2im(
    cols: np.ndarray, in_nhwc: tuple[int, int, int, int], geo: _Geometry, k_hw: tuple[int, int]
) -> np.ndarray:
    """Scatter-add per-window columns [N, OH, OW, KH, KW, C] back onto the input grid
    (the adjoint of `windows`); loops over kernel taps only."""
    return col2im_taps(lambda i, j: cols[:, :, :, i, j], cols.dtype, in_nhwc, geo, k_hw)


def col2im_taps(
    tap: Callable[[int, int], np.ndarray],
    dtype: np.dtype,
    in_nhwc: tuple[int, int, int, int],
    geo: _Geometry,
    k_hw: tuple[int, int],
    window_order: bool = False,
) -> np.ndarray:
    """`col2im` with the columns of kernel tap (i, j), [N, OH, OW, C], made on demand by
    `tap(i, j)` (a contiguous GEMM result per tap adds faster than strided slices of one
    [N, OH, OW, KH, KW, C] array). With `window_order`, the taps go last to first, so
    each input element adds its windows' terms in the windows' row-major order."""
    n, h, w, c = in_nhwc
    (oh, pt, pb), (ow, pl, pr) = geo.dims((h, w), k_hw)
    sh, sw = geo.strides
    dh, dw = geo.dilations
    eff_h, eff_w = (k_hw[0] - 1) * dh + 1, (k_hw[1] - 1) * dw + 1
    ph = max(h + pt + pb, (oh - 1) * sh + eff_h)
    pw = max(w + pl + pr, (ow - 1) * sw + eff_w)
    out = np.zeros((n, ph, pw, c), dtype)
    if oh > 0 and ow > 0:
        order_h, order_w = list(range(k_hw[0])), list(range(k_hw[1]))
        if window_order:
            order_h.reverse()
            order_w.reverse()
        for i in order_h:
            for j in order_w:
                r0, c0 = i * dh, j * dw
                out[:, r0 : r0 + (oh - 1) * sh + 1 : sh, c0 : c0 + (ow - 1) * sw + 1 : sw] += tap(
                    i, j
                )
    return out[:, pt : pt + h, pl : pl + w]


def _conv_backprop_input(depthwise: bool) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        geo = _Geometry(kc)
        label = kc.op

        def compute(ctx, inputs: list) -> list:
            sizes = _nhwc_sizes(inputs[0], geo.nchw, "input_sizes")
            f = mu.upcast(np.asarray(inputs[1]))
            raw = np.asarray(inputs[2])
            dy = mu.upcast(_to_nhwc(raw, geo.nchw, "out_backprop"))
            if f.ndim != 4:
                raise InvalidArgumentError(f"{label}: filter must be 4-dimensional")
            kh, kw = f.shape[:2]
            (oh, _, _), (ow, _, _) = geo.dims(sizes[1:3], (kh, kw))
            c = sizes[3]
            cout = c * f.shape[3] if depthwise else f.shape[3]
            _check_backprop(dy, (sizes[0], oh, ow, cout), label)
            with np.errstate(all="ignore"):
                if depthwise:
                    m = f.shape[3]
                    dyg = dy.reshape(dy.shape[:3] + (c, m))
                    cols = np.einsum("nhwcm,ijcm->nhwijc", dyg, f, optimize=True)
                else:
                    fin = f.shape[2]
                    if fin == 0 or c % fin:
                        raise InvalidArgumentError(
                            f"{label}: input depth must be evenly divisible by filter depth: "
                            f"{c} vs {fin}"
                        )
                    g = c // fin
                    stride1 = geo.strides == (1, 1)
                    (_, pt, _), (_, pl, _) = geo.dims(sizes[1:3], (kh, kw))
                    if (
                        g == 1
                        and stride1
                        and pt <= (kh - 1) * geo.dilations[0]
                        and (pl <= (kw - 1) * geo.dilations[1])
                    ):  # a convolution of dy with the turned filter
                        dx = conv2d_input_grad_stride1(dy, f, sizes[1:3], geo.dilations, (pt, pl))
                        return [mu.as_type(_from_nhwc(dx, geo.nchw), raw.dtype)]
                    if g == 1:  # per kernel tap, a GEMM [N*OH*OW, O] @ [O, C], added in
                        d = dy.reshape(dy.shape[0] * oh * ow, cout)
                        dx = col2im_taps(
                            lambda i, j: gemm(d, f[i, j].T).reshape(dy.shape[:3] + (c,)),
                            dy.dtype,
                            sizes,
                            geo,
                            (kh, kw),
                        )
                        return [mu.as_type(_from_nhwc(dx, geo.nchw), raw.dtype)]
                    dyg = dy.reshape(dy.shape[:3] + (g, cout // g))
                    fg = f.reshape(kh, kw, fin, g, cout // g)
                    cols = np.einsum("nhwgo,ijcgo->nhwijgc", dyg, fg, optimize=True)
                    cols = cols.reshape(cols.shape[:5] + (c,))
                dx = col2im(cols, sizes, geo, (kh, kw))
            return [mu.as_type(_from_nhwc(dx, geo.nchw), raw.dtype)]

        return compute

    return factory


def _conv_backprop_filter(depthwise: bool) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        geo = _Geometry(kc)
        label = kc.op

        def compute(ctx, inputs: list) -> list:
            raw = np.asarray(inputs[0])
            x = mu.upcast(_to_nhwc(raw, geo.nchw))
            fs = [int(v) for v in np.asarray(inputs[1]).reshape(-1)]
            if len(fs) != 4:
                raise InvalidArgumentError(f"{label}: filter_sizes must be 4-dimensional")
            kh, kw, fin, fo = fs
            dy = mu.upcast(_to_nhwc(np.asarray(inputs[2]), geo.nchw, "out_backprop"))
            c = x.shape[3]
            w = windows(x, (kh, kw), geo.strides, geo.dilations, geo.padding, geo.explicit)
            cout = c * fo if depthwise else fo
            _check_backprop(dy, w.shape[:3] + (cout,), label)
            with np.errstate(all="ignore"):
                if not depthwise and fin == c:  # GEMMs [KH*KW*C, rows] @ [rows, O], summed
                    _, pads = geometry(
                        x.shape[1:3],
                        (kh, kw),
                        geo.strides,
                        geo.dilations,
                        geo.padding,
                        geo.explicit,
                    )
                    df = conv2d_filter_grad_padded(
                        pad_nhwc(x, pads), dy, (kh, kw), geo.strides, geo.dilations
                    )
                elif depthwise:
                    dyg = dy.reshape(dy.shape[:3] + (c, fo))
                    df = np.einsum("nhwcij,nhwcm->ijcm", w, dyg, optimize=True)
                else:
                    if fin == 0 or c % fin:
                        raise InvalidArgumentError(
                            f"{label}: input depth must be evenly divisible by filter depth: "
                            f"{c} vs {fin}"
                        )
                    g = c // fin
                    n, oh, ow = w.shape[:3]
                    wg = w.reshape(n, oh, ow, g, fin, kh, kw)
                    dyg = dy.reshape(n, oh, ow, g, fo // g)
                    df = np.einsum("nhwgcij,nhwgo->ijcgo", wg, dyg, optimize=True)
                    df = df.reshape(kh, kw, fin, fo)
            return [mu.as_type(df, raw.dtype)]

        return compute

    return factory


# ---------------------------------------------------------------------------------------
# Pooling gradients
# ---------------------------------------------------------------------------------------


def _argmax_positions(x: np.ndarray, geo: _Geometry, ksize: tuple[int, int]):
    """For each pooling window of NHWC `x`: flat index (into the padded H*W grid) of the
    first maximum in row-major window order, as TF's CPU MaxPool argmax picks it."""
    (oh, pt, pb), (ow, pl, pr) = geo.dims(x.shape[1:3], ksize)
    w = windows(x, ksize, geo.strides, (1, 1), geo.padding, geo.explicit, mu.lowest(x.dtype))
    n, c = x.shape[0], x.shape[3]
    flat: np.ndarray = w.reshape(w.shape[:4] + (-1,))
    k = np.argmax(flat, axis=-1) if flat.shape[-1] else np.zeros(flat.shape[:4], np.intp)
    ki, kj = np.divmod(k, ksize[1])
    rows = np.arange(oh).reshape(1, -1, 1, 1) * geo.strides[0] + ki
    cols = np.arange(ow).reshape(1, 1, -1, 1) * geo.strides[1] + kj
    ph, pw = x.shape[1] + pt + pb, x.shape[2] + pl + pr
    ph = max(ph, (oh - 1) * geo.strides[0] + ksize[0])
    pw = max(pw, (ow - 1) * geo.strides[1] + ksize[1])
    return rows, cols, (n, ph, pw, c), (pt, pl)


def _max_pool_grad_taps(x, g, geo: _Geometry, ksize) -> np.ndarray | None:
    """MaxPoolGrad as one pass per kernel tap (row-major): each window's gradient goes to
    the first tap equal to the window's max, TF's argmax choice. None when `x` has NaNs
    (where `==` cannot find the max; the argmax path handles them).

    A tap's share is `g * hit` (a multiply: np.where on a bool mask costs several times
    more here), or np.where when `g` has infinities or NaNs (`inf * 0` is NaN, and only the
    argmax positions may receive them)."""
    if x.dtype.kind == "c" or (x.dtype.kind == "f" and np.isnan(x).any()):
        return None
    w = windows(x, ksize, geo.strides, (1, 1), geo.padding, geo.explicit, mu.lowest(x.dtype))
    if not w.size:
        return None
    (oh, pt, pb), (ow, pl, pr) = geo.dims(x.shape[1:3], ksize)
    _check_backprop(g, w.shape[:3] + (x.shape[3],), "MaxPoolGrad")
    y = tap_max(w)
    sh, sw = geo.strides
    ph = max(x.shape[1] + pt + pb, (oh - 1) * sh + ksize[0])
    pw = max(x.shape[2] + pl + pr, (ow - 1) * sw + ksize[1])
    dx = np.zeros((x.shape[0], ph, pw, x.shape[3]), g.dtype)
    overlap = sh < ksize[0] or sw < ksize[1]
    multiply = g.dtype.kind != "f" or bool(np.isfinite(g).all())
    zero = np.zeros((), g.dtype)
    open_ = np.ones(y.shape, bool)  # windows whose max no earlier tap took
    hit = np.empty(y.shape, bool)
    taps = [(i, j) for i in range(ksize[0]) for j in range(ksize[1])]
    for t, (i, j) in enumerate(taps):
        np.equal(w[..., i, j], y, out=hit)
        if t:
            hit &= open_
        dst = dx[:, i : i + (oh - 1) * sh + 1 : sh, j : j + (ow - 1) * sw + 1 : sw]
        if multiply and not overlap:
            np.multiply(g, hit, out=dst)
        else:
            share = np.multiply(g, hit) if multiply else np.where(hit, g, zero)
            if overlap:
                dst += share
            else:
                dst[...] = share
        if t < len(taps) - 1:
            open_ ^= hit
    return dx[:, pt : pt + x.shape[1], pl : pl + x.shape[2]]


def _max_pool_grad_nhwc(x, g, geo: _Geometry, ksize) -> np.ndarray:
    fast = _max_pool_grad_taps(x, g, geo, ksize)
    if fast is not None:
        return fast
    rows, cols, padded, (pt, pl) = _argmax_positions(x, geo, ksize)
    n, ph, pw, c = padded
    _check_backprop(g, rows.shape[:3] + (c,), "MaxPoolGrad")
    b = np.arange(n).reshape(-1, 1, 1, 1)
    ch = np.arange(c).reshape(1, 1, 1, -1)
    flat = ((b * ph + rows) * pw + cols) * c + ch
    acc = (
        np.bincount(
            flat.reshape(-1), weights=g.reshape(-1).astype(np.float64), minlength=n * ph * pw * c
        )
        if g.dtype.kind != "c"
        else None
    )
    if acc is None:
        out = np.zeros(n * ph * pw * c, g.dtype)
        np.add.at(out, flat.reshape(-1), g.reshape(-1))
        acc = out
    dx = acc.reshape(padded)[:, pt : pt + x.shape[1], pl : pl + x.shape[2]]
    return dx


def _max_pool_grad_grad_nhwc(x, gg, geo: _Geometry, ksize) -> np.ndarray:
    rows, cols, padded, (pt, pl) = _argmax_positions(x, geo, ksize)
    n, _ph, _pw, c = padded
    if gg.shape != x.shape:
        raise InvalidArgumentError(
            f"grad must have the shape of the input: {mu.shape_str(gg.shape)} vs "
            f"{mu.shape_str(x.shape)}"
        )
    gp = np.zeros(padded, gg.dtype)
    gp[:, pt : pt + x.shape[1], pl : pl + x.shape[2]] = gg
    b = np.arange(n).reshape(-1, 1, 1, 1)
    ch = np.arange(c).reshape(1, 1, 1, -1)
    return gp[b, rows, cols, ch]


def _pool_v2_geometry(kc: KernelConstruction, ksize, strides) -> _Geometry:
    """The geometry of a *V2 pooling op, whose window and strides are inputs."""
    geo = _Geometry.__new__(_Geometry)
    geo.nchw = kc.attrs.get("data_format", "NHWC") == "NCHW"
    geo.padding, geo.explicit, geo.dilations = kc.attr("padding"), ((0, 0), (0, 0)), (1, 1)
    geo.ksize = _pool_window(np.asarray(ksize).reshape(-1), geo.nchw, "ksize")
    geo.strides = _pool_window(np.asarray(strides).reshape(-1), geo.nchw, "stride")
    return geo


def _max_pool_grad(second_order: bool, v2: bool) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        static = None if v2 else _Geometry(kc, pool=True)

        def compute(ctx, inputs: list) -> list:
            geo = static or _pool_v2_geometry(kc, inputs[3], inputs[4])
            raw = np.asarray(inputs[0])
            x = _to_nhwc(raw, geo.nchw, "orig_input")
            g = mu.upcast(_to_nhwc(np.asarray(inputs[2]), geo.nchw, "grad"))
            fn = _max_pool_grad_grad_nhwc if second_order else _max_pool_grad_nhwc
            y = fn(mu.upcast(x), g, geo, geo.ksize)
            return [mu.as_type(_from_nhwc(y, geo.nchw), raw.dtype)]

        return compute

    return factory


def _avg_pool_grad(kc: KernelConstruction) -> Callable:
    geo = _Geometry(kc, pool=True)

    def compute(ctx, inputs: list) -> list:
        sizes = _nhwc_sizes(inputs[0], geo.nchw, "orig_input_shape")
        raw = np.asarray(inputs[1])
        g = mu.upcast(_to_nhwc(raw, geo.nchw, "grad"))
        ones = np.ones((1,) + sizes[1:3] + (1,), np.float64)
        count = windows(ones, geo.ksize, geo.strides, (1, 1), geo.padding, geo.explicit)
        count = count.sum(axis=(-2, -1))
        (oh, _, _), (ow, _, _) = geo.dims(sizes[1:3], geo.ksize)
        _check_backprop(g, (sizes[0], oh, ow, sizes[3]), "AvgPoolGrad")
        # TF's Eigen CPU kernel: each window adds grad * T(1.0 / count) to its elements,
        # windows in row-major order, in T. (TF's oneDNN kernel, on by default on x86,
        # sums in another order: a few ulps apart.)
        with np.errstate(all="ignore"):
            share = g * (1.0 / count).astype(g.dtype)
        dx = col2im_taps(lambda i, j: share, g.dtype, sizes, geo, geo.ksize, window_order=True)
        return [mu.as_type(_from_nhwc(dx, geo.nchw), raw.dtype)]

    return compute


# ---------------------------------------------------------------------------------------
# Softmax cross-entropy
# ---------------------------------------------------------------------------------------


def _softmax_xent(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        raw, labels = np.asarray(inputs[0]), np.asarray(inputs[1])
        try:
            shape = np.broadcast_shapes(raw.shape, labels.shape)
        except ValueError:
            shape = None
        if shape is None or len(shape) != 2:
            raise InvalidArgumentError(
                "logits and labels must be broadcastable: logits_size="
                f"{mu.shape_str(raw.shape)} labels_size={mu.shape_str(labels.shape)}"
                if shape is None
                else "logits and labels must be either 2-dimensional, or broadcasted to be "
                "2-dimensional"
            )
        x = np.broadcast_to(mu.upcast(raw), shape)
        y = np.broadcast_to(mu.upcast(labels), shape)
        with np.errstate(all="ignore"):
            shifted = x - np.max(x, axis=1, keepdims=True)
            e = np.exp(shifted)
            s = np.sum(e, axis=1, keepdims=True)
            loss = np.sum(y * (np.log(s) - shifted), axis=1)
            backprop = e / s - y
        return [mu.as_type(loss, raw.dtype), mu.as_type(backprop, raw.dtype)]

    return compute


def _sparse_softmax_xent(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        raw, labels = np.asarray(inputs[0]), np.asarray(inputs[1])
        if raw.ndim != 2:
            raise InvalidArgumentError(
                f"logits must be 2-D, but got shape {mu.shape_str(raw.shape)}"
            )
        if labels.ndim != 1:
            raise InvalidArgumentError(
                f"labels must be 1-D, but got shape {mu.shape_str(labels.shape)}"
            )
        if labels.shape[0] != raw.shape[0]:
            raise InvalidArgumentError(
                "logits and labels must have the same first dimension, got logits shape "
                f"{mu.shape_str(raw.shape)} and labels shape {mu.shape_str(labels.shape)}"
            )
        classes = raw.shape[1]
        bad = (labels < 0) | (labels >= classes)
        if np.any(bad):
            v = labels[np.argmax(bad)]
            raise InvalidArgumentError(
                f"Received a label value of {v} which is outside the valid range of "
                f"[0, {classes}).  Label values: " + " ".join(str(int(i)) for i in labels)
            )
        x = mu.upcast(raw)
        with np.errstate(all="ignore"):
            shifted = x - np.max(x, axis=1, keepdims=True)
            e = np.exp(shifted)
            s = np.sum(e, axis=1, keepdims=True)
            rows = np.arange(raw.shape[0])
            loss = np.log(s[:, 0]) - shifted[rows, labels]
            backprop = e / s
            backprop[rows, labels] -= x.dtype.type(1)
        return [mu.as_type(loss, raw.dtype), mu.as_type(backprop, raw.dtype)]

    return compute


# ---------------------------------------------------------------------------------------
# MirrorPadGrad
# ---------------------------------------------------------------------------------------


def mirror_pad_grad(g: np.ndarray, paddings: np.ndarray, symmetric: bool) -> np.ndarray:
    """Fold the padded borders of `g` back onto the interior they mirror."""
    out = mu.upcast(g)
    off = 0 if symmetric else 1
    for axis, (a, b) in enumerate(paddings.tolist()):
        n = out.shape[axis] - a - b
        if n < 0 or a < 0 or b < 0 or a > n - off or b > n - off:
            raise InvalidArgumentError(
                f"paddings must be less than the dimension size: {a}, {b} not less than "
                f"{n} (or equal when symmetric)"
            )
        core = np.array(np.take(out, np.arange(a, a + n), axis=axis))
        left = np.arange(a)  # padded index i mirrors interior a-1-i+off
        right = np.arange(b)  # padded index a+n+j mirrors interior n-1-j-off
        moved = np.moveaxis(core, axis, 0)
        np.add.at(moved, a - 1 - left + off, np.moveaxis(np.take(out, left, axis=axis), axis, 0))
        np.add.at(
            moved, n - 1 - right - off, np.moveaxis(np.take(out, a + n + right, axis=axis), axis, 0)
        )
        out = np.moveaxis(moved, 0, axis)
    return mu.as_type(out, g.dtype)


def _mirror_pad_grad(kc: KernelConstruction) -> Callable:
    symmetric = kc.attr("mode") == "SYMMETRIC"

    def compute(ctx, inputs: list) -> list:
        g, p = np.asarray(inputs[0]), np.asarray(inputs[1])
        if p.shape != (g.ndim, 2):
            raise InvalidArgumentError(
                f"paddings must be a matrix with 2 columns: {mu.shape_str(p.shape)}"
            )
        return [mirror_pad_grad(g, p, symmetric)]

    return compute


# ---------------------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------------------


def _register() -> None:
    _register_activation_grads()
    register_op(
        "BiasAddGrad",
        ["out_backprop: T"],
        ["output: T"],
        [f"T: {{{_NUMBER}}}", "data_format: {'NHWC', 'NCHW'} = 'NHWC'"],
    )
    register_kernel("BiasAddGrad")(_bias_add_grad)

    conv_tail = [
        "padding: {'SAME', 'VALID', 'EXPLICIT'}",
        "explicit_paddings: list(int) = []",
        "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
        "dilations: list(int) = [1, 1, 1, 1]",
    ]
    cudnn = "use_cudnn_on_gpu: bool = true"
    register_op(
        "Conv2DBackpropInput",
        ["input_sizes: int32", "filter: T", "out_backprop: T"],
        ["output: T"],
        ["T: {half, bfloat16, float, double, int32}", "strides: list(int)", cudnn, *conv_tail],
    )
    register_kernel("Conv2DBackpropInput", expensive=True, host_memory=("input_sizes",))(
        _conv_backprop_input(False)
    )
    register_op(
        "Conv2DBackpropFilter",
        ["input: T", "filter_sizes: int32", "out_backprop: T"],
        ["output: T"],
        ["T: {half, bfloat16, float, double}", "strides: list(int)", cudnn, *conv_tail],
    )
    register_kernel("Conv2DBackpropFilter", expensive=True, host_memory=("filter_sizes",))(
        _conv_backprop_filter(False)
    )
    register_op(
        "DepthwiseConv2dNativeBackpropInput",
        ["input_sizes: int32", "filter: T", "out_backprop: T"],
        ["output: T"],
        [f"T: {{{_FLT}}}", "strides: list(int)", *conv_tail],
    )
    register_kernel(
        "DepthwiseConv2dNativeBackpropInput", expensive=True, host_memory=("input_sizes",)
    )(_conv_backprop_input(True))
    register_op(
        "DepthwiseConv2dNativeBackpropFilter",
        ["input: T", "filter_sizes: int32", "out_backprop: T"],
        ["output: T"],
        [f"T: {{{_FLT}}}", "strides: list(int)", *conv_tail],
    )
    register_kernel(
        "DepthwiseConv2dNativeBackpropFilter", expensive=True, host_memory=("filter_sizes",)
    )(_conv_backprop_filter(True))

    fmt = "data_format: {'NHWC', 'NCHW'} = 'NHWC'"
    window = ["ksize: list(int) >= 4", "strides: list(int) >= 4"]
    pool_in = ["orig_input: T", "orig_output: T", "grad: T"]
    register_op(
        "MaxPoolGrad",
        pool_in,
        ["output: T"],
        [
            *window,
            "padding: {'SAME', 'VALID', 'EXPLICIT'}",
            "explicit_paddings: list(int) = []",
            fmt,
            f"T: {{{_REAL}}} = DT_FLOAT",
        ],
    )
    register_kernel("MaxPoolGrad", expensive=True)(_max_pool_grad(False, False))
    register_op(
        "MaxPoolGradV2",
        [*pool_in, "ksize: int32", "strides: int32"],
        ["output: T"],
        ["padding: {'SAME', 'VALID'}", fmt, f"T: {{{_REAL}}} = DT_FLOAT"],
    )
    register_kernel("MaxPoolGradV2", expensive=True, host_memory=("ksize", "strides"))(
        _max_pool_grad(False, True)
    )
    register_op(
        "MaxPoolGradGrad",
        pool_in,
        ["output: T"],
        [*window, "padding: {'SAME', 'VALID'}", fmt, f"T: {{{_REAL}}}"],
    )
    register_kernel("MaxPoolGradGrad", expensive=True)(_max_pool_grad(True, False))
    register_op(
        "MaxPoolGradGradV2",
        [*pool_in, "ksize: int32", "strides: int32"],
        ["output: T"],
        ["padding: {'SAME', 'VALID'}", fmt, f"T: {{{_REAL}}}"],
    )
    register_kernel("MaxPoolGradGradV2", expensive=True, host_memory=("ksize", "strides"))(
        _max_pool_grad(True, True)
    )
    register_op(
        "AvgPoolGrad",
        ["orig_input_shape: int32", "grad: T"],
        ["output: T"],
        [*window, "padding: {'SAME', 'VALID'}", fmt, f"T: {{{_FLT}}}"],
    )
    register_kernel("AvgPoolGrad", expensive=True, host_memory=("orig_input_shape",))(
        _avg_pool_grad
    )

    register_op(
        "SoftmaxCrossEntropyWithLogits",
        ["features: T", "labels: T"],
        ["loss: T", "backprop: T"],
        [f"T: {{{_FLT}}}"],
    )
    register_kernel("SoftmaxCrossEntropyWithLogits")(_softmax_xent)
    register_op(
        "SparseSoftmaxCrossEntropyWithLogits",
        ["features: T", "labels: Tlabels"],
        ["loss: T", "backprop: T"],
        [f"T: {{{_FLT}}}", "Tlabels: {int32, int64} = DT_INT64"],
    )
    register_kernel("SparseSoftmaxCrossEntropyWithLogits")(_sparse_softmax_xent)

    register_op(
        "MirrorPadGrad",
        ["input: T", "paddings: Tpaddings"],
        ["output: T"],
        ["T: type", "Tpaddings: {int32, int64} = DT_INT32", "mode: {'REFLECT', 'SYMMETRIC'}"],
    )
    register_kernel("MirrorPadGrad", host_memory=("paddings",))(_mirror_pad_grad)


_register()
