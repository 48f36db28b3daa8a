"""Ops (executor stage): matrix decompositions (TensorFlow's linalg kernels): Qr, over
batches of matrices, with numpy's LAPACK. TF's Eigen Householder QR and LAPACK's agree
to rounding; Q and R are unique once R's diagonal signs are fixed (as the orthogonal
initializer does), so results match TensorFlow's within float tolerance, not bit for bit.
Stateless and thread-safe."""

from __future__ import annotations

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op


def qr(x: np.ndarray, full_matrices: bool) -> tuple[np.ndarray, np.ndarray]:
    if x.ndim < 2:
        raise InvalidArgumentError(
            f"Input tensor 0 must have rank >= 2, got shape {mu.shape_str(x.shape)}"
        )
    work = x.astype(np.float32) if x.dtype == np.float16 else x
    q, r = np.linalg.qr(work, mode="complete" if full_matrices else "reduced")
    return q.astype(x.dtype), r.astype(x.dtype)


def _qr(kc: KernelConstruction):
    full = bool(kc.attrs.get("full_matrices", False))

    def compute(ctx, inputs: list) -> list:
        return list(qr(np.asarray(inputs[0]), full))

    return compute


register_op(
    "Qr",
    ["input: T"],
    ["q: T", "r: T"],
    ["full_matrices: bool = false", "T: {double, float, half, complex64, complex128}"],
)
register_kernel("Qr")(_qr)
