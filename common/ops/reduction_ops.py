"""Ops: reductions (TensorFlow's reduction_ops): Sum, Mean, Max, Min, Prod, All, Any,
EuclideanNorm over `reduction_indices`, with `keep_dims`.

Result dtypes are TensorFlow's: the input's T (Mean of int32 is int32, truncating toward
zero). Indices are checked and normalised like TF's ReductionHelper (negatives allowed,
duplicates refused). Kernels are `expensive` (numpy releases the GIL); thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

_NUMBER = (
    "float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
    "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64"
)
_REAL = (
    "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64, "
    "qint8, quint8, qint32, qint16, quint16"
)

Reducer = Callable[[np.ndarray, tuple[int, ...]], np.ndarray]


def _sum(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return np.add.reduce(x, axis=axes, dtype=x.dtype)  # np.sum without its Python wrapper


def _mean(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    if mu.is_integer(x.dtype):  # TF accumulates integer means in a wider type
        s = np.sum(x, axis=axes, dtype=np.uint64 if x.dtype.kind == "u" else np.int64)
        if count == 0:
            return np.zeros_like(s)
        q = np.floor_divide(s, count)
        return q + ((np.remainder(s, count) != 0) & (s < 0)).astype(q.dtype)
    return np.sum(x, axis=axes, dtype=x.dtype) / x.dtype.type(count)


def _max(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if x.size == 0:
        return np.max(x, axis=axes, initial=mu.lowest(x.dtype))
    return np.max(x, axis=axes)


def _min(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if x.size == 0:
        return np.min(x, axis=axes, initial=mu.highest(x.dtype))
    return np.min(x, axis=axes)


def _prod(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return np.prod(x, axis=axes, dtype=x.dtype)


def _euclidean_norm(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    sq = np.sum(x * np.conj(x) if x.dtype.kind == "c" else x * x, axis=axes, dtype=x.dtype)
    if mu.is_integer(x.dtype):
        return np.sqrt(sq.astype(np.float64)).astype(x.dtype)
    return np.sqrt(sq)


def _reduction_kernel(fn: Reducer) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        keep_dims = bool(kc.attrs.get("keep_dims", False))
        out = mu.np_type(kc.output_types[0])

        def compute(ctx, inputs: list) -> list:
            x = np.asarray(inputs[0])
            axes = mu.reduction_axes(inputs[1], x.ndim)
            if mu.fp_errors_ignored():
                r = fn(mu.upcast(x), axes)
            else:
                with np.errstate(all="ignore"):
                    r = fn(mu.upcast(x), axes)
            if keep_dims:
                r = np.expand_dims(r, axes) if axes else r
            return [mu.as_type(r, out)]

        return compute

    return factory


def _register() -> None:
    reductions: list[tuple[str, str | None, Reducer]] = [
        ("Sum", _NUMBER, _sum),
        ("Mean", _NUMBER, _mean),
        ("Max", _REAL, _max),
        ("Min", _REAL, _min),
        ("Prod", _NUMBER, _prod),
        ("EuclideanNorm", _NUMBER, _euclidean_norm),
        ("All", None, lambda x, axes: np.all(x, axis=axes)),
        ("Any", None, lambda x, axes: np.any(x, axis=axes)),
    ]
    for name, types, fn in reductions:
        t = "T" if types else "bool"
        attrs = ["keep_dims: bool = false"]
        if types:
            attrs.append(f"T: {{{types}}}")
        attrs.append("Tidx: {int32, int64} = int32")
        register_op(name, [f"input: {t}", "reduction_indices: Tidx"], [f"output: {t}"], attrs)
        register_kernel(name, expensive=True)(_reduction_kernel(fn))


_register()
