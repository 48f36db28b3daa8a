"""Ops (executor stage): NextAfter (tf.math.nextafter), C's std::nextafter elementwise
with broadcasting; numpy's nextafter is the same libm function, so results equal
TensorFlow's bit for bit (subnormals and NaNs included). Stateless and thread-safe."""

from __future__ import annotations

import numpy as np

from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, one_output_kernel, register_op

register_op(
    "NextAfter",
    ["x1: T", "x2: T"],
    ["output: T"],
    ["T: {double, float} = DT_FLOAT"],
)


@one_output_kernel("NextAfter")
def _next_after(k: KernelConstruction, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    x1, x2 = np.asarray(x1), np.asarray(x2)
    mu.broadcast_shape(x1.shape, x2.shape)
    return np.nextafter(x1, x2)
