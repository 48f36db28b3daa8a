"""Client, gradients: linear algebra ops (TensorFlow's linalg_grad.py, and the matrix
band/diagonal and Cross rules of its array_grad.py and math_grad.py): MatrixInverse,
MatrixDeterminant, LogMatrixDeterminant, MatrixSolve, MatrixTriangularSolve,
MatrixBandPart, MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3, Diag, DiagPart, Cross,
built as TF builds them."""

from __future__ import annotations

from typing import Any

from client.framework.gradient_registry import RegisterGradient
from client.framework.op_builder import apply_op
from client.ops import array_ops, linalg_ops, math_ops


@RegisterGradient("MatrixInverse")
def _matrix_inverse_grad(op: Any, grad: Any) -> Any:
    ainv = op.outputs[0]
    adjoint = op.get_attr("adjoint")
    inner = math_ops.matmul(grad, ainv, adjoint_a=adjoint, adjoint_b=not adjoint)
    return -math_ops.matmul(ainv, inner, adjoint_a=not adjoint)


def _det_multipliers(values: Any, c: Any) -> Any:
    shape = array_ops.concat([array_ops.shape(c), [1, 1]], 0)
    return array_ops.reshape(values, shape)


@RegisterGradient("MatrixDeterminant")
def _matrix_determinant_grad(op: Any, grad: Any) -> Any:
    a, c = op.inputs[0], op.outputs[0]
    a_adj_inv = linalg_ops.matrix_inverse(a, adjoint=True)
    return _det_multipliers(grad * c, c) * a_adj_inv


@RegisterGradient("LogMatrixDeterminant")
def _log_matrix_determinant_grad(op: Any, _: Any, grad_b: Any) -> Any:
    a, c = op.inputs[0], op.outputs[1]
    a_adj_inv = linalg_ops.matrix_inverse(a, adjoint=True)
    return _det_multipliers(grad_b, c) * a_adj_inv


def _solve_grad_a(op: Any, grad_b: Any) -> Any:
    c = op.outputs[0]
    if op.get_attr("adjoint"):
        return -math_ops.matmul(c, grad_b, adjoint_b=True)
    return -math_ops.matmul(grad_b, c, adjoint_b=True)


@RegisterGradient("Cholesky")
def _cholesky_grad(op: Any, grad: Any) -> Any:
    """l^{-H} ((l^H grad) * (tril(ones) - eye / 2)) l^{-1}, made Hermitian."""
    chol = op.outputs[0]
    num_rows = array_ops.shape(chol)[-1]
    batch_shape = array_ops.shape(chol)[:-2]
    eye = linalg_ops.eye(num_rows, batch_shape=batch_shape, dtype=chol.dtype)
    chol_inverse = linalg_ops.matrix_triangular_solve(chol, eye)
    middle = math_ops.matmul(chol, grad, adjoint_a=True)
    middle = linalg_ops.matrix_set_diag(middle, 0.5 * linalg_ops.matrix_diag_part(middle))
    middle = linalg_ops.matrix_band_part(middle, -1, 0)
    grad_a = math_ops.matmul(math_ops.matmul(chol_inverse, middle, adjoint_a=True), chol_inverse)
    grad_a += linalg_ops.adjoint(grad_a)
    return grad_a * 0.5


@RegisterGradient("MatrixSolve")
def _matrix_solve_grad(op: Any, grad: Any) -> Any:
    adjoint = op.get_attr("adjoint")
    grad_b = linalg_ops.matrix_solve(op.inputs[0], grad, adjoint=not adjoint)
    return _solve_grad_a(op, grad_b), grad_b


@RegisterGradient("MatrixTriangularSolve")
def _matrix_triangular_solve_grad(op: Any, grad: Any) -> Any:
    a, b = op.inputs
    adjoint, lower = op.get_attr("adjoint"), op.get_attr("lower")
    grad_b = linalg_ops.matrix_triangular_solve(a, grad, lower=lower, adjoint=not adjoint)
    grad_a = _solve_grad_a(op, grad_b)
    grad_a = (
        linalg_ops.matrix_band_part(grad_a, -1, 0)
        if lower
        else (linalg_ops.matrix_band_part(grad_a, 0, -1))
    )
    # Equal static batch shapes need no unbroadcasting.
    sa, sb = a.shape, b.shape
    if sa.is_fully_defined() and sb.is_fully_defined() and sa[:-2] == sb[:-2]:
        return grad_a, grad_b
    a_shape, b_shape = array_ops.shape(a), array_ops.shape(b)
    ra, rb = apply_op("BroadcastGradientArgs", [a_shape[:-2], b_shape[:-2]]).outputs
    grad_a = array_ops.reshape(math_ops.reduce_sum(grad_a, axis=ra), a_shape)
    grad_b = array_ops.reshape(math_ops.reduce_sum(grad_b, axis=rb), b_shape)
    return grad_a, grad_b


@RegisterGradient("MatrixBandPart")
def _matrix_band_part_grad(op: Any, grad: Any) -> Any:
    return linalg_ops.matrix_band_part(grad, op.inputs[1], op.inputs[2]), None, None


@RegisterGradient("MatrixDiagV3")
def _matrix_diag_v3_grad(op: Any, grad: Any) -> Any:
    align = op.get_attr("align")
    align = align.decode() if isinstance(align, bytes) else align
    part = linalg_ops.matrix_diag_part(grad, k=op.inputs[1], align=align)
    return part, None, None, None, None


@RegisterGradient("MatrixDiagPartV3")
def _matrix_diag_part_v3_grad(op: Any, grad: Any) -> Any:
    matrix_shape = op.inputs[0].shape[-2:]
    align = op.get_attr("align")
    align = align.decode() if isinstance(align, bytes) else align
    if matrix_shape.is_fully_defined():
        rows, cols = matrix_shape.as_list()
        diag = linalg_ops.matrix_diag(
            grad, k=op.inputs[1], num_rows=rows, num_cols=cols, align=align
        )
        return diag, None, None
    zeros = array_ops.zeros_like(op.inputs[0])
    return linalg_ops.matrix_set_diag(zeros, grad, k=op.inputs[1], align=align), None, None


@RegisterGradient("MatrixSetDiagV3")
def _matrix_set_diag_v3_grad(op: Any, grad: Any) -> Any:
    """The input's gradient with the set diagonals zeroed, the diagonals' gradient read
    off them; an unknown diagonal shape is computed from k as TF does (two conds)."""
    from client.framework.op_builder import convert_to_tensor
    from client.ops import control_flow_ops

    diag_shape: Any = op.inputs[1].shape
    align = op.get_attr("align")
    align = align.decode() if isinstance(align, bytes) else align
    if not diag_shape.is_fully_defined():
        grad_shape = array_ops.shape(grad)
        batch_shape, matrix_shape = grad_shape[:-2], grad_shape[-2:]
        diag_index = array_ops.reshape(op.inputs[2], [-1])
        d_lower, d_upper = diag_index[0], diag_index[-1]
        y_offset = control_flow_ops.cond(math_ops.less(d_upper, 0), lambda: d_upper, lambda: 0)
        x_offset = control_flow_ops.cond(math_ops.greater(d_lower, 0), lambda: -d_lower, lambda: 0)
        max_diag_len = math_ops.minimum(matrix_shape[0] + y_offset, matrix_shape[1] + x_offset)
        postfix = control_flow_ops.cond(
            math_ops.equal(d_lower, d_upper),
            lambda: convert_to_tensor([max_diag_len]),
            lambda: convert_to_tensor([d_upper - d_lower + 1, max_diag_len]),
        )
        diag_shape = array_ops.concat([batch_shape, postfix], 0)
    else:
        diag_shape = diag_shape.as_list()
    zeros = array_ops.zeros(diag_shape, dtype=grad.dtype)
    grad_input = linalg_ops.matrix_set_diag(grad, zeros, k=op.inputs[2], align=align)
    grad_diag = linalg_ops.matrix_diag_part(grad, k=op.inputs[2], align=align)
    return grad_input, grad_diag, None


@RegisterGradient("Diag")
def _diag_grad(op: Any, grad: Any) -> Any:
    return linalg_ops.tensor_diag_part(grad)


@RegisterGradient("DiagPart")
def _diag_part_grad(op: Any, grad: Any) -> Any:
    return linalg_ops.tensor_diag(grad)


@RegisterGradient("Cross")
def _cross_grad(op: Any, grad: Any) -> Any:
    u, v = op.inputs
    return linalg_ops.cross(v, grad), linalg_ops.cross(grad, u)
