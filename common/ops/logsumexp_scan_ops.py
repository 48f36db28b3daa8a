"""Ops (executor stage): CumulativeLogsumexp (tf.math.cumulative_logsumexp), the scan of
Cumsum/Cumprod with log(exp(a) + exp(b)) as the reduction and -inf as its identity.
numpy's logaddexp (max + log1p(exp(-|a - b|))) and Eigen's LogSumExp reducer round
differently, so results match TensorFlow's within float tolerance, not bit for bit;
half and bfloat16 are scanned in float32 and rounded once. Stateless and thread-safe."""

from __future__ import annotations

import numpy as np

from common.ops.math_ops import _scan  # one scan kernel for every cumulative op
from common.ops.registry import register_kernel, register_op

register_op(
    "CumulativeLogsumexp",
    ["x: T", "axis: Tidx"],
    ["out: T"],
    [
        "exclusive: bool = false",
        "reverse: bool = false",
        "T: {bfloat16, half, float, double}",
        "Tidx: {int32, int64} = DT_INT32",
    ],
)
register_kernel("CumulativeLogsumexp", expensive=True)(_scan(np.logaddexp, -np.inf))
