"""Ops (executor stage): LRNGrad, the gradient of local response normalization (LRN's
kernel is in nn_ops). With norm_j = bias + alpha * sum of input_k^2 over the window
|k - j| <= depth_radius, TF's CPU kernel gives
  dx_k = grads_k * norm_k^-beta - 2 alpha beta x_k * sum_j (grads_j * out_j / norm_j)
over the j whose window holds k. Windowed sums are cumulative-sum differences in float
(T is half, bfloat16 or float), so values equal TF's within float rounding. Stateless,
safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.registry import KernelConstruction, register_kernel, register_op

_INT_MAX = 2**31 - 1


def window_sum(v: np.ndarray, r: int) -> np.ndarray:
    """Sum of v over the last axis within [j - r, j + r] (clipped), per j."""
    c = np.cumsum(np.pad(v, [(0, 0)] * (v.ndim - 1) + [(r + 1, r)]), axis=-1)
    return c[..., 2 * r + 1 :] - c[..., : v.shape[-1]]


def lrn_grad(
    grads: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    r: int,
    bias: float,
    alpha: float,
    beta: float,
) -> np.ndarray:
    if grads.ndim != 4 or x.ndim != 4 or y.ndim != 4:
        raise InvalidArgumentError("inputs must be 4-dimensional")
    if not (grads.shape == x.shape == y.shape):
        raise InvalidArgumentError(
            "input_grads, input_image, and out_image should have the same shape"
        )
    g, v, out = (t.astype(np.float64) for t in (grads, x, y))
    norm = bias + alpha * window_sum(v * v, r)
    dx = g * norm**-beta - 2 * alpha * beta * v * window_sum(g * out / norm, r)
    return dx.astype(x.dtype)


def _lrn_grad(kc: KernelConstruction) -> Callable:
    r = int(kc.attr("depth_radius"))
    bias, alpha, beta = (float(np.float32(kc.attr(a))) for a in ("bias", "alpha", "beta"))

    def compute(ctx, inputs: list) -> list:
        if not 0 <= r <= _INT_MAX:
            raise InvalidArgumentError(f"depth_radius = {r} larger than int max")
        grads, x, y = (np.asarray(t) for t in inputs)
        return [lrn_grad(grads, x, y, r, bias, alpha, beta)]

    return compute


register_op(
    "LRNGrad",
    ["input_grads: T", "input_image: T", "output_image: T"],
    ["output: T"],
    [
        "depth_radius: int = 5",
        "bias: float = 1.0",
        "alpha: float = 1.0",
        "beta: float = 0.5",
        "T: {half, bfloat16, float} = DT_FLOAT",
    ],
)
register_kernel("LRNGrad", expensive=True)(_lrn_grad)
