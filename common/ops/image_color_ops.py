"""Ops (executor stage), image color adjustments: RGBToHSV, HSVToRGB, AdjustContrastv2,
AdjustHue, AdjustSaturation (TensorFlow's colorspace_op.h, adjust_contrast_op.cc,
adjust_hue_op.cc, adjust_saturation_op.cc), the per-pixel formulas in float32 in
TensorFlow's order, vectorized over the pixels. The last dimension holds the 3 channels.
Kernels keep no state; safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.registry import KernelConstruction, register_kernel, register_op

F32 = np.float32
register_op("RGBToHSV", inputs=["images: T"], outputs=["output: T"],
            attrs=["T: {half, bfloat16, float, double} = DT_FLOAT"])  # fmt: skip
register_op("HSVToRGB", inputs=["images: T"], outputs=["output: T"],
            attrs=["T: {half, bfloat16, float, double} = DT_FLOAT"])  # fmt: skip
register_op("AdjustContrastv2", inputs=["images: T", "contrast_factor: float"],
            outputs=["output: T"], attrs=["T: {half, float} = DT_FLOAT"])  # fmt: skip
register_op("AdjustHue", inputs=["images: T", "delta: float"], outputs=["output: T"],
            attrs=["T: {half, float} = DT_FLOAT"])  # fmt: skip
register_op("AdjustSaturation", inputs=["images: T", "scale: float"], outputs=["output: T"],
            attrs=["T: {half, float} = DT_FLOAT"])  # fmt: skip

Compute = Callable[..., list]


def _channels(images: np.ndarray, node: str) -> None:
    if images.ndim < 1 or images.shape[-1] != 3:
        have = images.shape[-1] if images.ndim else 0
        raise InvalidArgumentError(
            f"input must have 3 channels but input only has {have} channels.", node
        )


def rgb_to_hsv(rgb: np.ndarray) -> np.ndarray:
    """colorspace_op.h's RGBToHSV (in the input's precision)."""
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    one, six = rgb.dtype.type(1), rgb.dtype.type(6)
    v = np.maximum(np.maximum(r, g), b)
    vrange = v - np.minimum(np.minimum(r, g), b)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(v > 0, vrange / v, rgb.dtype.type(0))
        norm = (one / vrange) * (one / six)  # Eigen: range.inverse() * (1 / 6)
        h = np.where(
            r == v,
            norm * (g - b),
            np.where(g == v, norm * (b - r) + rgb.dtype.type(2) / six,
                     norm * (r - g) + rgb.dtype.type(4) / six),
        )  # fmt: skip
    h = np.where(vrange > 0, h, rgb.dtype.type(0))
    h = np.where(h < 0, h + one, h)
    return np.stack([h, s, v], axis=-1).astype(rgb.dtype)


def hsv_to_rgb(hsv: np.ndarray) -> np.ndarray:
    """colorspace_op.h's HSVToRGB."""
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    t = hsv.dtype.type
    dh = h * t(6)
    dr = np.clip(np.abs(dh - t(3)) - t(1), t(0), t(1))
    dg = np.clip(-np.abs(dh - t(2)) + t(2), t(0), t(1))
    db = np.clip(-np.abs(dh - t(4)) + t(2), t(0), t(1))
    one_minus_s = t(1) - s
    out = [(one_minus_s + s * d) * v for d in (dr, dg, db)]
    return np.stack(out, axis=-1).astype(hsv.dtype)


def _hsv_f32(r: np.ndarray, g: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    """adjust_saturation_op.cc's rgb_to_hsv: the +2/6 and +4/6 in double precision."""
    v = np.maximum(r, np.maximum(g, b))
    vrange = v - np.minimum(r, np.minimum(g, b))
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(v > 0, vrange / v, F32(0))
        norm = F32(1) / (F32(6) * vrange)
        h = np.where(
            r == v,
            norm * (g - b),
            np.where(g == v, ((norm * (b - r)).astype(np.float64) + 2.0 / 6.0).astype(F32),
                     ((norm * (r - g)).astype(np.float64) + 4.0 / 6.0).astype(F32)),
        )  # fmt: skip
    h = np.where(vrange <= 0, F32(0), h)
    h = np.where(h < 0, h + F32(1), h)
    return h.astype(F32), s.astype(F32), v


def _rgb_f32(h: np.ndarray, s: np.ndarray, v: np.ndarray) -> np.ndarray:
    """adjust_saturation_op.cc's hsv_to_rgb."""
    c = s * v
    m = v - c
    dh = h * F32(6)
    category = dh.astype(np.int64)
    fmodu = np.where(dh <= 0, dh + F32(2), dh)  # h is in [0, 1): dh <= 0 only at 0
    fmodu = np.where(fmodu >= 2, np.fmod(fmodu, F32(2)), fmodu).astype(F32)
    x = c * (F32(1) - np.abs(fmodu - F32(1)))
    zero = np.zeros_like(c)
    table = {0: (c, x, zero), 1: (x, c, zero), 2: (zero, c, x), 3: (zero, x, c),
             4: (x, zero, c), 5: (c, zero, x)}  # fmt: skip
    rgb = [np.zeros_like(c) for _ in range(3)]
    for cat, values in table.items():
        picked = category == cat
        for i in range(3):
            rgb[i] = np.where(picked, values[i], rgb[i])
    return np.stack([channel + m for channel in rgb], axis=-1)


def adjust_saturation(images: np.ndarray, scale: np.float32) -> np.ndarray:
    rgb = images.astype(F32)
    h, s, v = _hsv_f32(rgb[..., 0], rgb[..., 1], rgb[..., 2])
    s = np.minimum(F32(1), np.maximum(F32(0), s * scale))
    return _rgb_f32(h, s, v).astype(images.dtype)


def adjust_hue(images: np.ndarray, delta: np.float32) -> np.ndarray:
    """adjust_hue_op.cc: hue in [0, 6) from the value range, shifted by delta * 6."""
    rgb = images.astype(F32)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    v_max = np.maximum(r, np.maximum(g, b))
    v_min = np.minimum(r, np.minimum(g, b))
    # The middle value and the hue category of each ordering of r, g, b (TF's table).
    r_lt_g = r < g
    cat = np.where(
        r_lt_g,
        np.where(b < r, 1, np.where(b > g, 3, 2)),
        np.where(b < g, 0, np.where(b > r, 4, 5)),
    )
    v_mid = np.where(
        r_lt_g,
        np.where(b < r, r, np.where(b > g, g, b)),
        np.where(b < g, g, np.where(b > r, r, b)),
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (v_mid - v_min) / (v_max - v_min)
    increase = (cat & 1) == 0
    h = cat.astype(F32) + np.where(increase, ratio, F32(1) - ratio)
    h = np.where(v_max == v_min, F32(0), h).astype(F32)
    h = h + delta * F32(6)
    h = np.where(h < 0, h + F32(6) * np.ceil(-h / F32(6)), h).astype(F32)
    h = np.where(h >= 6, h - F32(6) * np.floor(h / F32(6)), h).astype(F32)
    category = h.astype(np.int64)
    ratio = h - category.astype(F32)
    ratio = np.where((category & 1) == 0, ratio, F32(1) - ratio)
    mid = v_min + ratio * (v_max - v_min)
    table = {0: (v_max, mid, v_min), 1: (mid, v_max, v_min), 2: (v_min, v_max, mid),
             3: (v_min, mid, v_max), 4: (mid, v_min, v_max)}  # fmt: skip
    out = [v_max.copy(), v_min.copy(), mid.copy()]  # category 5 and anything else
    for c, values in table.items():
        picked = category == c
        for i in range(3):
            out[i] = np.where(picked, values[i], out[i])
    return np.stack(out, axis=-1).astype(images.dtype)


def adjust_contrast(images: np.ndarray, factor: np.float32) -> np.ndarray:
    """(x - mean) * factor + mean, the mean per image and channel over height and width."""
    x = images.astype(F32)
    mean = x.mean(axis=(-3, -2), keepdims=True, dtype=np.float64).astype(F32)
    return ((x - mean) * factor + mean).astype(images.dtype)


def _unary(op: str, fn: Callable[[np.ndarray], np.ndarray]) -> None:
    @register_kernel(op)
    def factory(k: KernelConstruction) -> Compute:
        def compute(ctx, inputs: list) -> list:
            images = np.asarray(inputs[0])
            _channels(images, k.node_name)
            return [fn(images)]

        return compute

    factory.__qualname__ = factory.__name__ = f"_{op}"


_unary("RGBToHSV", rgb_to_hsv)
_unary("HSVToRGB", hsv_to_rgb)


def _adjust(op: str, fn: Callable[[np.ndarray, np.float32], np.ndarray], what: str,
            min_rank: int) -> None:  # fmt: skip
    @register_kernel(op)
    def factory(k: KernelConstruction) -> Compute:
        def compute(ctx, inputs: list) -> list:
            images, amount = np.asarray(inputs[0]), np.asarray(inputs[1])
            if images.ndim < min_rank:
                raise InvalidArgumentError(
                    f"input must be at least {min_rank}D{list(images.shape)}", k.node_name
                )
            if amount.ndim != 0:
                raise InvalidArgumentError(f"{what} must be scalar: {list(amount.shape)}",
                                           k.node_name)  # fmt: skip
            if op != "AdjustContrastv2":
                _channels(images, k.node_name)
            return [fn(images, F32(amount))]

        return compute

    factory.__qualname__ = factory.__name__ = f"_{op}"


_adjust("AdjustContrastv2", adjust_contrast, "contrast_factor", 3)
_adjust("AdjustHue", adjust_hue, "delta", 3)
_adjust("AdjustSaturation", adjust_saturation, "scale", 3)
