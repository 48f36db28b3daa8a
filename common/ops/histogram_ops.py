"""Ops (executor stage): Bucketize (tf.raw_ops.Bucketize, feature-column bucketing) and
HistogramFixedWidth (tf.histogram_fixed_width), counting values into bins the way
TensorFlow's CPU kernels do: Bucketize compares in the input's C++ promotion with float
boundaries (an integer input is converted to float first), HistogramFixedWidth computes
each bin index in double and clamps to [0, nbins - 1]. Stateless numpy kernels, safe from
any thread; values equal TensorFlow's bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

register_op(
    "Bucketize",
    inputs=["input: T"],
    outputs=["output: int32"],
    attrs=["T: {int32, int64, float, double}", "boundaries: list(float)"],
)

register_op(
    "HistogramFixedWidth",
    inputs=["values: T", "value_range: T", "nbins: int32"],
    outputs=["out: dtype"],
    attrs=["T: {int32, int64, float, double}", "dtype: {int32, int64} = DT_INT32"],
)


def bucketize(values: np.ndarray, boundaries: np.ndarray) -> np.ndarray:
    """Index of the first boundary greater than each value (std::upper_bound)."""
    if values.dtype != np.float64:
        values = values.astype(np.float32)  # C++: int -> float, float stays float
    return np.searchsorted(boundaries.astype(values.dtype), values, side="right").astype(np.int32)


@register_kernel("Bucketize")
def _bucketize(k: KernelConstruction) -> Callable:
    boundaries = np.asarray(k.attr("boundaries"), np.float32)
    if np.any(boundaries[1:] < boundaries[:-1]):
        raise InvalidArgumentError("Expected sorted boundaries")

    def compute(ctx, inputs: list) -> list:
        return [bucketize(np.asarray(inputs[0]), boundaries)]

    return compute


def _num(v: np.generic) -> str:
    if isinstance(v, np.floating):
        return np.format_float_positional(v, trim="-")
    return str(v)


def histogram_fixed_width(
    values: np.ndarray, value_range: np.ndarray, nbins: np.ndarray, out: np.dtype
) -> np.ndarray:
    if value_range.ndim != 1:
        raise InvalidArgumentError("value_range should be a vector.")
    if value_range.size != 2:
        raise InvalidArgumentError("value_range should be a vector of 2 elements.")
    if nbins.ndim != 0:
        raise InvalidArgumentError("nbins should be a scalar.")
    n = int(nbins)
    if n <= 0:
        raise InvalidArgumentError(f"nbins should be a positive number, but got '{n}'")
    lo, hi = value_range[0], value_range[1]
    if not lo < hi:
        raise InvalidArgumentError(
            "value_range should satisfy value_range[0] < value_range[1], "
            f"but got '[{_num(lo)}, {_num(hi)}]'"
        )
    step = float(hi - lo) / float(n)
    flat = values.reshape(-1)
    shifted = (np.maximum(flat, lo) - lo).astype(np.float64)
    index = np.minimum(shifted / step, float(n - 1)).astype(np.int32)
    return np.bincount(index, minlength=n).astype(out)


@register_kernel("HistogramFixedWidth")
def _histogram_fixed_width(k: KernelConstruction) -> Callable:
    out = mu.np_type(k.attr("dtype"))

    def compute(ctx, inputs: list) -> list:
        values, value_range, nbins = (np.asarray(v) for v in inputs)
        return [histogram_fixed_width(values, value_range, nbins, out)]

    return compute
