"""Ops (executor stage): DenseBincount (tf.math.bincount in TF2-built graphs), counting
values of a rank-1 or rank-2 integer tensor into `size` bins, optionally weighted or as
presence flags (binary_output). Stateless numpy kernel, safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common import memory
from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

register_op(
    "DenseBincount",
    inputs=["input: Tidx", "size: Tidx", "weights: T"],
    outputs=["output: T"],
    attrs=[
        "Tidx: {int32, int64}",
        "T: {int32, int64, float, double}",
        "binary_output: bool = false",
    ],
)


def _count_row(
    values: np.ndarray, weights: np.ndarray | None, size: int, binary: bool, out: np.dtype
) -> np.ndarray:
    keep = values < size
    if binary:
        row = np.zeros(size, out)
        row[values[keep]] = 1
        return row
    w = None if weights is None else weights[keep].astype(np.float64)
    counts = np.bincount(values[keep], weights=w, minlength=size)[:size]
    return counts.astype(out)


def dense_bincount(
    arr: np.ndarray,
    size: np.ndarray,
    weights: np.ndarray,
    binary: bool,
    out: np.dtype,
    k: KernelConstruction | None = None,
) -> np.ndarray:
    if size.ndim != 0:
        raise InvalidArgumentError(f"Shape must be rank 0 but is rank {size.ndim}")
    n = int(size)
    if n < 0:
        raise InvalidArgumentError(f"size ({n}) must be non-negative")
    if arr.ndim not in (1, 2):
        raise InvalidArgumentError(f"Shape must be at most rank 2 but is rank {arr.ndim}")
    values = arr.astype(np.int64)
    if values.size and values.min() < 0:
        raise InvalidArgumentError("Input arr must be non-negative!")
    # The bins' count comes from an input value: the output and one row's float64 bins
    # are checked against the budget before they exist.
    memory.check_allocation(k, [*arr.shape[:-1], n], np.dtype(out))
    memory.check_allocation(k, [n], np.dtype(np.float64))
    w = None
    if weights.size:
        if weights.shape != arr.shape:
            raise InvalidArgumentError(
                "`weights` must be the same shape as `arr` or a length-0 `Tensor`, in which "
                f"case it acts as all weights equal to 1. Received {mu.shape_str(weights.shape)}"
            )
        w = weights
    if arr.ndim == 1:
        return _count_row(values, w, n, binary, out)
    rows = [
        _count_row(values[r], None if w is None else w[r], n, binary, out)
        for r in range(values.shape[0])
    ]
    return np.stack(rows) if rows else np.zeros((0, n), out)


@register_kernel("DenseBincount")
def _dense_bincount(k: KernelConstruction) -> Callable:
    out = mu.np_type(k.attr("T"))
    binary = bool(k.attr("binary_output"))

    def compute(ctx, inputs: list) -> list:
        arr, size, weights = (np.asarray(v) for v in inputs)
        return [dense_bincount(arr, size, weights, binary, out, k)]

    return compute
