"""Ops (executor stage): discrete Fourier transforms over the innermost 1, 2 or 3 axes
(TensorFlow's fft_ops kernels): FFT, IFFT, FFT2D, IFFT2D, FFT3D, IFFT3D, RFFT, IRFFT,
RFFT2D, IRFFT2D, RFFT3D, IRFFT3D. numpy's pocketfft computes them in the input's
precision; TF's Eigen/ducc FFT sums in another order, so values agree within float
tolerance, not bit for bit. The real transforms crop each transformed axis to
fft_length (IRFFT's innermost to fft_length[-1] // 2 + 1 bins) and, as TF's, refuse an
input shorter than that. Stateless and thread-safe."""

from __future__ import annotations

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

_COMPLEX = "Tcomplex: {complex64, complex128} = DT_COMPLEX64"
_REAL = "Treal: {float, double} = DT_FLOAT"


def _check_rank(x: np.ndarray, rank: int) -> None:
    if x.ndim < rank:
        raise InvalidArgumentError(
            f"Input must have rank of at least {rank} but got: {mu.shape_str(x.shape)}"
        )


def fft(x: np.ndarray, rank: int, inverse: bool) -> np.ndarray:
    _check_rank(x, rank)
    axes = tuple(range(-rank, 0))
    if x.size == 0:
        return np.zeros(x.shape, x.dtype)
    out = np.fft.ifftn(x, axes=axes) if inverse else np.fft.fftn(x, axes=axes)
    return out.astype(x.dtype)


def _fft_length(x: np.ndarray, fft_length: np.ndarray, rank: int, inverse: bool) -> tuple[int, ...]:
    if fft_length.shape != (rank,):
        raise InvalidArgumentError(f"fft_length must have shape [{rank}]")
    lengths = tuple(int(n) for n in fft_length)
    for j, n in enumerate(lengths):
        axis = x.ndim - rank + j
        need = n // 2 + 1 if inverse and j == rank - 1 else n
        if x.shape[axis] < need:
            raise InvalidArgumentError(
                f"Input dimension {axis} must have length of at least {need} but got: "
                f"{x.shape[axis]}"
            )
    return lengths


def rfft(x: np.ndarray, fft_length: np.ndarray, rank: int, out: np.dtype) -> np.ndarray:
    _check_rank(x, rank)
    lengths = _fft_length(x, fft_length, rank, False)
    shape = x.shape[:-rank] + lengths[:-1] + (lengths[-1] // 2 + 1,)
    if x.size == 0 or 0 in lengths:
        return np.zeros(shape if lengths[-1] else x.shape[:-rank] + lengths, out)
    return np.fft.rfftn(x, s=lengths, axes=tuple(range(-rank, 0))).astype(out)


def irfft(x: np.ndarray, fft_length: np.ndarray, rank: int, out: np.dtype) -> np.ndarray:
    _check_rank(x, rank)
    lengths = _fft_length(x, fft_length, rank, True)
    shape = x.shape[:-rank] + lengths
    if x.size == 0 or 0 in lengths:
        return np.zeros(shape, out)
    return np.fft.irfftn(x, s=lengths, axes=tuple(range(-rank, 0))).astype(out)


def _complex_kernel(op: str, rank: int, inverse: bool) -> None:
    register_op(op, ["input: Tcomplex"], ["output: Tcomplex"], [_COMPLEX])

    def factory(kc: KernelConstruction):
        def compute(ctx, inputs: list) -> list:
            return [fft(np.asarray(inputs[0]), rank, inverse)]

        return compute

    factory.__qualname__ = f"_{op}"
    register_kernel(op, expensive=True)(factory)


def _real_kernel(op: str, rank: int, inverse: bool) -> None:
    if inverse:
        register_op(
            op, ["input: Tcomplex", "fft_length: int32"], ["output: Treal"], [_REAL, _COMPLEX]
        )
    else:
        register_op(
            op, ["input: Treal", "fft_length: int32"], ["output: Tcomplex"], [_REAL, _COMPLEX]
        )

    def factory(kc: KernelConstruction):
        out = mu.np_type(kc.attr("Treal" if inverse else "Tcomplex"))
        transform = irfft if inverse else rfft

        def compute(ctx, inputs: list) -> list:
            return [transform(np.asarray(inputs[0]), np.asarray(inputs[1]), rank, out)]

        return compute

    factory.__qualname__ = f"_{op}"
    register_kernel(op, expensive=True, host_memory=("fft_length",))(factory)


for _rank, _suffix in ((1, ""), (2, "2D"), (3, "3D")):
    _complex_kernel(f"FFT{_suffix}", _rank, False)
    _complex_kernel(f"IFFT{_suffix}", _rank, True)
    _real_kernel(f"RFFT{_suffix}", _rank, False)
    _real_kernel(f"IRFFT{_suffix}", _rank, True)
