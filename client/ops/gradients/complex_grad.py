"""Client, gradients: complex numbers (TensorFlow's math_grad.py rules for Complex, Real,
Imag, Conj, ComplexAbs, and ConjugateTranspose of its array_grad.py), built as TF builds
them."""

from __future__ import annotations

from typing import Any

from client.framework.gradient_registry import RegisterGradient
from client.framework.op_builder import apply_op, convert_to_tensor
from client.ops import array_ops, complex_ops, math_ops
from client.ops.gradients.math_grad import _reduce_gradient_args
from client.ops.linalg_norm_ops import conj


@RegisterGradient("Complex")
def _complex_grad(op: Any, grad: Any) -> Any:
    x, y = op.inputs
    return _reduce_gradient_args(x, y, complex_ops.real(grad), complex_ops.imag(grad))


@RegisterGradient("Real")
def _real_grad(op: Any, grad: Any) -> Any:
    zero = convert_to_tensor(0, dtype=grad.dtype)
    return complex_ops.complex(grad, zero)


@RegisterGradient("Imag")
def _imag_grad(op: Any, grad: Any) -> Any:
    zero = convert_to_tensor(0, dtype=grad.dtype)
    return complex_ops.complex(zero, grad)


@RegisterGradient("Conj")
def _conj_grad(op: Any, grad: Any) -> Any:
    return conj(grad)


@RegisterGradient("ComplexAbs")
def _complex_abs_grad(op: Any, grad: Any) -> Any:
    """grad * x / |x|, 0 where x is 0."""
    y = op.outputs[0]
    return math_ops.div_no_nan(
        complex_ops.complex(grad, array_ops.zeros_like(grad)) * op.inputs[0],
        complex_ops.complex(y, array_ops.zeros_like(y)),
    )


@RegisterGradient("ConjugateTranspose")
def _conjugate_transpose_grad(op: Any, grad: Any) -> Any:
    perm = apply_op("InvertPermutation", [op.inputs[1]]).outputs[0]
    return [array_ops.transpose(grad, perm, conjugate=True), None]
