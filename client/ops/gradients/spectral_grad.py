"""Client, gradients: the FFT family (TensorFlow's fft_ops.py rules): FFT/IFFT and their
2D/3D forms are each other's adjoint up to the transform size; RFFT/IRFFT and RFFT2D/
IRFFT2D add the terms Hermitian symmetry dropped. As TF, RFFT3D/IRFFT3D have none, and
the RFFT rules assume fft_length equals the input's inner dims (TF's graph fails to
build otherwise, so does ours)."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes, shape_fns
from client.framework.gradient_registry import RegisterGradient
from client.ops import array_ops, complex_ops, linalg_ops, math_ops, spectral_ops
from client.ops.linalg_norm_ops import conj


def _fft_size(t: Any, rank: int) -> Any:
    return math_ops.reduce_prod(array_ops.shape(t)[-rank:])


def _forward(inverse_fn: Any, rank: int) -> Any:
    def grad_fn(op: Any, grad: Any) -> Any:
        size = math_ops.cast(_fft_size(grad, rank), grad.dtype)
        return inverse_fn(grad) * size

    return grad_fn


def _inverse(forward_fn: Any, rank: int) -> Any:
    def grad_fn(op: Any, grad: Any) -> Any:
        rsize = math_ops.cast(
            1.0 / math_ops.cast(_fft_size(grad, rank), grad.dtype.real_dtype), grad.dtype
        )
        return forward_fn(grad) * rsize

    return grad_fn


RegisterGradient("FFT")(_forward(linalg_ops.ifft, 1))
RegisterGradient("IFFT")(_inverse(linalg_ops.fft, 1))
RegisterGradient("FFT2D")(_forward(linalg_ops.ifft2d, 2))
RegisterGradient("IFFT2D")(_inverse(linalg_ops.fft2d, 2))
RegisterGradient("FFT3D")(_forward(linalg_ops.ifft3d, 3))
RegisterGradient("IFFT3D")(_inverse(linalg_ops.fft3d, 3))


def _tile_for_broadcasting(matrix: Any, t: Any) -> Any:
    expanded = array_ops.reshape(
        matrix,
        array_ops.concat(
            [array_ops.ones([array_ops.rank(t) - 2], dtypes.int32), array_ops.shape(matrix)], 0
        ),
    )
    return array_ops.tile(expanded, array_ops.concat([array_ops.shape(t)[:-2], [1, 1]], 0))


def _rfft_grad(rank: int, irfft_fn: Any) -> Any:
    def grad_fn(op: Any, grad: Any) -> Any:
        fft_length = op.inputs[1]
        complex_dtype = grad.dtype
        input_shape = array_ops.shape(op.inputs[0])
        is_even = math_ops.cast(1 - (fft_length[-1] % 2), complex_dtype)

        def mask_matrix(length: Any) -> Any:
            """t[a, b] = exp(-2 pi i a b / length)."""
            a = array_ops.tile(array_ops.expand_dims(math_ops.range(length), 0), (length, 1))
            b = array_ops.transpose(a, [1, 0])
            return math_ops.exp(
                -2j
                * np.pi
                * math_ops.cast(a * b, complex_dtype)
                / math_ops.cast(length, complex_dtype)
            )

        def ymask(length: Any) -> Any:
            """[1, -1, 1, -1, ...] of `length`."""
            return math_ops.cast(1 - 2 * (math_ops.range(length) % 2), complex_dtype)

        y0 = grad[..., 0:1]
        if rank == 1:
            ym = grad[..., -1:]
            extra_terms = y0 + is_even * ym * ymask(input_shape[-1])
        else:
            tiled_mask = _tile_for_broadcasting(mask_matrix(input_shape[-2]), y0)
            extra_terms = math_ops.matmul(tiled_mask, conj(y0))
            ym = grad[..., -1:]
            ym_term = math_ops.matmul(tiled_mask, conj(ym))
            inner_dim = input_shape[-1]
            ym_term = array_ops.tile(
                ym_term,
                array_ops.concat(
                    [array_ops.ones([array_ops.rank(grad) - 1], dtypes.int32), [inner_dim]], 0
                ),
            ) * ymask(inner_dim)
            extra_terms += is_even * ym_term
        input_size = math_ops.cast(_fft_size(op.inputs[0], rank), complex_dtype.real_dtype)
        the_irfft = irfft_fn(grad, fft_length)
        return 0.5 * (the_irfft * input_size + complex_ops.real(extra_terms)), None

    return grad_fn


def _irfft_grad(rank: int, rfft_fn: Any) -> Any:
    def grad_fn(op: Any, grad: Any) -> Any:
        """rfft(grad) / size, doubled on the bins Hermitian symmetry folded together."""
        fft_length = op.inputs[1]
        static = shape_fns.constant_value(fft_length)
        if static is not None:
            fft_length = static
        real_dtype = grad.dtype
        complex_dtype = dtypes.complex64 if real_dtype == dtypes.float32 else dtypes.complex128
        is_odd = math_ops.mod(fft_length[-1], 2, name="mod")  # TF's math_ops.mod scope
        last = array_ops.shape(op.inputs[0])[-1]
        mask = array_ops.concat(
            [
                [1.0],
                2.0 * array_ops.ones([last - 2 + is_odd], real_dtype),
                array_ops.ones([1 - is_odd], real_dtype),
            ],
            0,
        )
        rsize = math_ops.reciprocal(math_ops.cast(_fft_size(grad, rank), real_dtype))
        the_rfft = rfft_fn(grad, fft_length)
        return the_rfft * math_ops.cast(rsize * mask, complex_dtype), None

    return grad_fn


RegisterGradient("RFFT")(_rfft_grad(1, spectral_ops.irfft))
RegisterGradient("IRFFT")(_irfft_grad(1, spectral_ops.rfft))
RegisterGradient("RFFT2D")(_rfft_grad(2, spectral_ops.irfft2d))
RegisterGradient("IRFFT2D")(_irfft_grad(2, spectral_ops.rfft2d))
