"""Ops (executor stage): ExtractImagePatches and ExtractVolumePatches (tf.image.
extract_patches, tf.extract_volume_patches). Each output pixel holds its window's values
flattened in (rows, cols, depth) order, or (planes, rows, cols, depth); SAME windows
read zeros outside the input. Windows are strided views of the zero-padded input (no
Python loops over pixels); output sizes follow TF's GetWindowedOutputSize. Values are
copies of the input's, so they equal TF's bit for bit. Stateless, safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from common.errors import InvalidArgumentError, OutOfRangeError, UnimplementedError
from common.ops import math_util as mu
from common.ops.conv_ops import output_size
from common.ops.registry import KernelConstruction, register_kernel, register_op

_REAL = "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64"


def spatial_attr(values: list[int], rank: int, what: str) -> tuple[int, ...]:
    """The spatial entries of a window attr; TF refuses windows over batch or depth."""
    if values[0] != 1 or values[rank - 1] != 1:
        raise UnimplementedError(f"Only support {what} across space.")
    return tuple(values[1 : rank - 1])


def extract_patches(
    x: np.ndarray,
    ksizes: tuple[int, ...],
    strides: tuple[int, ...],
    rates: tuple[int, ...],
    padding: str,
) -> np.ndarray:
    """[N, *out, prod(ksizes) * C] patches of an N-spatial-C input (2 or 3 spatial dims)."""
    nsp = len(ksizes)
    if any(k <= 0 for k in ksizes):
        raise OutOfRangeError("ksizes is out of range.")
    geo = [
        output_size(x.shape[1 + i], ksizes[i], strides[i], rates[i], padding, (0, 0))
        for i in range(nsp)
    ]
    out = tuple(o for o, _, _ in geo)
    shape = (x.shape[0], *out, int(np.prod(ksizes)) * x.shape[-1])
    if not x.size or not all(out):
        return np.zeros(shape, x.dtype)
    effs = [(k - 1) * r + 1 for k, r in zip(ksizes, rates)]
    # Pad so that every window lies inside (input rows no window reaches stay unread).
    pads = [
        (before, max(0, (o - 1) * s + e - n - before))
        for (o, before, _), s, e, n in zip(geo, strides, effs, x.shape[1:-1])
    ]
    xp = np.pad(x, [(0, 0), *pads, (0, 0)])
    w = sliding_window_view(xp, tuple(effs), axis=tuple(range(1, nsp + 1)))
    # w: [N, *positions, C, *window]; keep strided positions and dilated taps.
    positions = tuple(slice(None, o * s, s) for o, s in zip(out, strides))
    dilated = tuple(slice(None, None, r) for r in rates)
    w = w[(slice(None),) + positions + (slice(None),) + dilated]
    taps = tuple(range(nsp + 2, 2 * nsp + 2))
    w = np.transpose(w, (0, *range(1, nsp + 1), *taps, nsp + 1))
    return np.ascontiguousarray(w).reshape(shape)


def _factory(rank: int, rated: bool) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        ksizes = spatial_attr(list(kc.attr("ksizes")), rank, "ksizes")
        strides = spatial_attr(list(kc.attr("strides")), rank, "strides")
        rates = spatial_attr(list(kc.attr("rates")), rank, "rates") if rated else (1,) * 3
        padding = kc.attr("padding")

        def compute(ctx, inputs: list) -> list:
            x = np.asarray(inputs[0])
            if x.ndim != rank:
                raise InvalidArgumentError(
                    f"input must be {rank}-dimensional{mu.shape_str(x.shape)}"
                )
            return [extract_patches(x, ksizes, strides, rates[: rank - 2], padding)]

        return compute

    return factory


register_op(
    "ExtractImagePatches",
    ["images: T"],
    ["patches: T"],
    [
        "ksizes: list(int) >= 4",
        "strides: list(int) >= 4",
        "rates: list(int) >= 4",
        "T: {bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, uint32, "
        "uint64, complex64, complex128, bool}",
        "padding: {'SAME', 'VALID'}",
    ],
)
register_kernel("ExtractImagePatches", expensive=True)(_factory(4, rated=True))
register_op(
    "ExtractVolumePatches",
    ["input: T"],
    ["patches: T"],
    [
        "ksizes: list(int) >= 5",
        "strides: list(int) >= 5",
        f"T: {{{_REAL}}}",
        "padding: {'SAME', 'VALID'}",
    ],
)
register_kernel("ExtractVolumePatches", expensive=True)(_factory(5, rated=False))
