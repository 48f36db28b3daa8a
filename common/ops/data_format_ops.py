"""Ops (executor stage): DataFormatVecPermute and DataFormatDimMap, the layout helpers
TensorFlow's layout optimizer and tf.nn code insert when a graph changes data format
(NHWC <-> NCHW, NDHWC <-> NCDHW): permute a shape-like vector, or map axis numbers from
one format to the other. Stateless numpy kernels, safe from any thread; values equal
TensorFlow's, errors carry its messages.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

_ATTRS = [
    "T: {int32, int64} = DT_INT32",
    "src_format: string = 'NHWC'",
    "dst_format: string = 'NCHW'",
]
register_op("DataFormatVecPermute", inputs=["x: T"], outputs=["y: T"], attrs=_ATTRS)
register_op("DataFormatDimMap", inputs=["x: T"], outputs=["y: T"], attrs=_ATTRS)


def check_formats(src: str, dst: str) -> None:
    if len(src) not in (4, 5):
        raise InvalidArgumentError(
            f"Source format must be of length 4 or 5, received src_format = {src}"
        )
    if len(dst) not in (4, 5):
        raise InvalidArgumentError(
            f"Destination format must be of length 4 or 5, received dst_format = {dst}"
        )
    if sorted(src) != sorted(dst):
        raise InvalidArgumentError(
            f"Destination and source format must determine a permutation, got {src} and {dst}"
        )


def _spatial(fmt: str) -> str:
    keep = "HW" if len(fmt) == 4 else "HWD"
    return "".join(c for c in fmt if c in keep)


def vec_permute(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    """y[i] = x[src.find(dst[i])]; a vector of only the spatial dims permutes those."""
    full, spatial = len(src), len(src) - 2
    shape = mu.shape_str(x.shape)
    if x.ndim not in (1, 2):
        raise InvalidArgumentError(f"input must be a vector or 2D tensor, but got shape {shape}")
    if x.shape[0] not in (spatial, full):
        what = "1D input" if x.ndim == 1 else "First dimension of 2D input"
        raise InvalidArgumentError(
            f"{what} must be of size {spatial} or {full}, but got shape {shape}"
        )
    if x.ndim == 2 and x.shape[1] != 2:
        raise InvalidArgumentError(
            f"Second dimension of 2D input must be of size 2, but got shape {shape}"
        )
    if x.shape[0] == spatial:
        src, dst = _spatial(src), _spatial(dst)
    return x[[src.find(c) for c in dst]]


def dim_map(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    """The axis of `dst` holding the dimension at axis x of `src`. TF's functor takes
    (x + n) % n with C's truncating % and selects the last axis for anything that is not
    0 .. n-2, so x below -n maps to the last source axis rather than wrapping again."""
    n = len(src)
    table = np.array([dst.find(c) for c in src], x.dtype)
    with np.errstate(over="ignore"):
        m = np.fmod(x + x.dtype.type(n), n)
    return table[np.where((m >= 0) & (m < n), m, n - 1)]


def _format_kernel(fn: Callable) -> Callable:
    def factory(k: KernelConstruction) -> Callable:
        src, dst = str(k.attr("src_format")), str(k.attr("dst_format"))
        check_formats(src, dst)

        def compute(ctx, inputs: list) -> list:
            return [fn(np.asarray(inputs[0]), src, dst)]

        return compute

    return factory


register_kernel("DataFormatVecPermute")(_format_kernel(vec_permute))
register_kernel("DataFormatDimMap")(_format_kernel(dim_map))
