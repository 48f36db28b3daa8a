"""Ops (executor stage): grayscale morphological dilation, Dilation2D (tf.nn.dilation2d),
and its gradients Dilation2DBackpropInput and Dilation2DBackpropFilter, as TF's CPU
kernels compute them: out[b, y, x, c] is the largest input + filter over the window's
taps that fall inside the input (NumTraits<T>::lowest() when none does). A gradient goes
whole to the first tap, in row-major filter order, holding the strict maximum (the first
in-bounds tap when none beats lowest), added in output order. The work loops over the
filter's taps, each a vectorized pass over all pixels. Stateless, safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import ml_dtypes
import numpy as np

from common.errors import InvalidArgumentError, UnimplementedError
from common.ops import math_util as mu
from common.ops.conv_ops import output_size
from common.ops.registry import KernelConstruction, register_kernel, register_op

_T = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}"
_ATTRS = [_T, "strides: list(int) >= 4", "rates: list(int) >= 4", "padding: {'SAME', 'VALID'}"]


def lowest(d: np.dtype):
    """Eigen's NumTraits<T>::lowest(): the most negative finite value."""
    if mu.is_integer(d):
        return np.iinfo(d).min
    return ml_dtypes.finfo(d).min  # numpy's finfo does not know bfloat16


def _spatial(values: list[int], what: str) -> tuple[int, int]:
    if values[0] != 1 or values[3] != 1:
        raise UnimplementedError(f"{what} is only supported across spatial dimensions.")
    return values[1], values[2]


class _Geometry:
    """The checked shapes of one call and the window origin of every output pixel."""

    def __init__(
        self,
        x: np.ndarray,
        f: np.ndarray,
        strides: tuple[int, int],
        rates: tuple[int, int],
        padding: str,
    ) -> None:
        if x.ndim != 4:
            raise InvalidArgumentError(f"input must be 4-dimensional{mu.shape_str(x.shape)}")
        if f.ndim != 3:
            raise InvalidArgumentError(f"filter must be 3-dimensional: {mu.shape_str(f.shape)}")
        if x.shape[3] != f.shape[2]:
            raise InvalidArgumentError(
                f"input and filter must have the same depth: {x.shape[3]} vs {f.shape[2]}"
            )
        dims = [
            output_size(x.shape[1 + i], f.shape[i], strides[i], rates[i], padding, (0, 0))
            for i in range(2)
        ]
        self.out_shape = (x.shape[0], dims[0][0], dims[1][0], x.shape[3])
        self.starts = [np.arange(d[0]) * s - d[1] for d, s in zip(dims, strides)]
        self.rates = rates
        self.in_hw = x.shape[1:3]
        self.k_hw = f.shape[:2]

    def taps(self) -> Iterator[tuple[int, int, np.ndarray, np.ndarray, np.ndarray]]:
        """(i, j, rows, cols, inside) per filter tap, in row-major order: the input row
        and column each output pixel reads (clipped) and whether it lies in the input."""
        (h, w), (rh, rw) = self.in_hw, self.rates
        for i in range(self.k_hw[0]):
            rows = self.starts[0] + i * rh
            rv = (rows >= 0) & (rows < h)
            for j in range(self.k_hw[1]):
                cols = self.starts[1] + j * rw
                cv = (cols >= 0) & (cols < w)
                inside = (rv[:, None] & cv[None, :])[None, :, :, None]
                yield i, j, np.clip(rows, 0, max(h - 1, 0)), np.clip(cols, 0, max(w - 1, 0)), inside


def _argmax(
    x: np.ndarray, f: np.ndarray, g: _Geometry
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(max, in_row, in_col, f_row, f_col) per output element, TF's first strict max."""
    shape = g.out_shape
    best = np.full(shape, lowest(x.dtype), x.dtype)
    rows0 = np.broadcast_to(np.maximum(g.starts[0], 0)[None, :, None, None], shape).copy()
    cols0 = np.broadcast_to(np.maximum(g.starts[1], 0)[None, None, :, None], shape).copy()
    fi, fj = np.zeros(shape, np.int64), np.zeros(shape, np.int64)
    with np.errstate(over="ignore"):  # integer sums wrap as in C++
        for i, j, rows, cols, inside in g.taps():
            v = x[:, rows][:, :, cols] + f[i, j]
            take = inside & (v > best)
            best = np.where(take, v, best)
            rows0 = np.where(take, rows[None, :, None, None], rows0)
            cols0 = np.where(take, cols[None, None, :, None], cols0)
            fi = np.where(take, i, fi)
            fj = np.where(take, j, fj)
    return best, rows0, cols0, fi, fj


def dilation2d(x: np.ndarray, f: np.ndarray, g: _Geometry) -> np.ndarray:
    return _argmax(x, f, g)[0]


def _check_backprop(grad: np.ndarray, g: _Geometry) -> None:
    if grad.shape != g.out_shape:
        raise InvalidArgumentError("out_backprop has incompatible size.")


def dilation2d_backprop_input(
    x: np.ndarray, f: np.ndarray, grad: np.ndarray, g: _Geometry
) -> np.ndarray:
    _check_backprop(grad, g)
    _, rows, cols, _, _ = _argmax(x, f, g)
    b = np.arange(x.shape[0])[:, None, None, None]
    c = np.arange(x.shape[3])[None, None, None, :]
    flat = ((b * x.shape[1] + rows) * x.shape[2] + cols) * x.shape[3] + c
    out = np.zeros(x.size, x.dtype)
    np.add.at(out, flat.reshape(-1), grad.reshape(-1))
    return out.reshape(x.shape)


def dilation2d_backprop_filter(
    x: np.ndarray, f: np.ndarray, grad: np.ndarray, g: _Geometry
) -> np.ndarray:
    _check_backprop(grad, g)
    _, _, _, fi, fj = _argmax(x, f, g)
    c = np.broadcast_to(np.arange(f.shape[2]), grad.shape)
    flat = (fi * f.shape[1] + fj) * f.shape[2] + c
    out = np.zeros(f.size, f.dtype)
    np.add.at(out, flat.reshape(-1), grad.reshape(-1))
    return out.reshape(f.shape)


def _factory(op: Callable[..., np.ndarray]) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        strides = _spatial(list(kc.attr("strides")), "Stride")
        rates = _spatial(list(kc.attr("rates")), "Rate")
        padding = kc.attr("padding")

        def compute(ctx, inputs: list) -> list:
            x, f, *rest = (np.asarray(v) for v in inputs)
            return [op(x, f, *rest, _Geometry(x, f, strides, rates, padding))]

        return compute

    return factory


register_op("Dilation2D", ["input: T", "filter: T"], ["output: T"], _ATTRS)
register_kernel("Dilation2D", expensive=True)(_factory(dilation2d))
for _name, _out, _fn in (
    ("Dilation2DBackpropInput", "in_backprop: T", dilation2d_backprop_input),
    ("Dilation2DBackpropFilter", "filter_backprop: T", dilation2d_backprop_filter),
):
    register_op(_name, ["input: T", "filter: T", "out_backprop: T"], [_out], _ATTRS)
    register_kernel(_name, expensive=True)(_factory(_fn))
