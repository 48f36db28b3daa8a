"""Ops (executor stage): linear solvers (TensorFlow's linalg kernels): MatrixSolve,
MatrixSolveLs, MatrixTriangularSolve, over batches of matrices, and Cross. Solvers run
numpy's LAPACK (LU with partial pivoting, as TF's Eigen PartialPivLU); MatrixSolveLs
solves TF's regularized normal equations (fast) or takes the minimum-norm least-squares
solution (not fast); MatrixTriangularSolve substitutes row by row as TF's Eigen
triangular solver does (a zero on the diagonal gives inf/nan, no error). Values agree
with TensorFlow's within float tolerance, not bit for bit; Cross is exact.
Stateless and thread-safe."""

from __future__ import annotations

import numpy as np

from common.errors import FailedPreconditionError, InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

_SOLVE_TYPES = "T: {double, float, half, complex64, complex128}"


def _adjoint(m: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(m, -1, -2))


def _work(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _solver_inputs(matrix: np.ndarray, rhs: np.ndarray) -> None:
    """TF's LinearAlgebraOp checks for two matrix inputs of the same batch shape."""
    if matrix.ndim < 2:
        raise InvalidArgumentError(f"Input tensor 0 must have rank >= 2, got {matrix.ndim}")
    if matrix.ndim != rhs.ndim:
        raise InvalidArgumentError("All input tensors must have the same rank.")
    if matrix.shape[:-2] != rhs.shape[:-2]:
        raise InvalidArgumentError("All input tensors must have the same outer dimensions.")


def matrix_solve(matrix: np.ndarray, rhs: np.ndarray, adjoint: bool) -> np.ndarray:
    _solver_inputs(matrix, rhs)
    if matrix.shape[-1] != matrix.shape[-2]:
        raise InvalidArgumentError("Input matrix must be square.")
    if matrix.shape[-2] != rhs.shape[-2]:
        raise InvalidArgumentError("Input matrix and rhs are incompatible.")
    a = _adjoint(_work(matrix)) if adjoint else _work(matrix)
    if a.size == 0 or rhs.size == 0:
        return np.zeros(rhs.shape, rhs.dtype)
    try:
        return np.linalg.solve(a, _work(rhs)).astype(rhs.dtype)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError("Input matrix is not invertible.") from None


def matrix_solve_ls(matrix: np.ndarray, rhs: np.ndarray, l2: np.ndarray, fast: bool) -> np.ndarray:
    _solver_inputs(matrix, rhs)
    if matrix.shape[-2] != rhs.shape[-2]:
        raise InvalidArgumentError("Input matrix and rhs are incompatible.")
    rows, cols = matrix.shape[-2:]
    out_shape = matrix.shape[:-2] + (cols, rhs.shape[-1])
    if matrix.size == 0 or rhs.size == 0:
        return np.zeros(out_shape, rhs.dtype)
    a, b = _work(matrix), _work(rhs)
    if not fast:
        flat_a = a.reshape((-1, rows, cols))
        flat_b = b.reshape((-1, rows, b.shape[-1]))
        xs = [np.linalg.lstsq(m, r, rcond=None)[0] for m, r in zip(flat_a, flat_b)]
        return np.stack(xs).reshape(out_shape).astype(rhs.dtype)
    lam = float(l2)
    ah = _adjoint(a)
    try:  # TF's normal equations, solved by Cholesky (LLT) in its kernel
        if rows >= cols:
            gram = ah @ a + lam * np.eye(cols, dtype=a.dtype)
            x = _cholesky_solve(gram, ah @ b)
        else:
            gram = a @ ah + lam * np.eye(rows, dtype=a.dtype)
            x = ah @ _cholesky_solve(gram, b)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError(
            "Input matrix was rank deficient or ill-conditioned. Try setting fast=False or "
            "provide a larger l2_regularizer > 0."
        ) from None
    return x.astype(rhs.dtype)


def _cholesky_solve(gram: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    chol = np.linalg.cholesky(gram)
    return np.linalg.solve(_adjoint(chol), np.linalg.solve(chol, rhs))


def matrix_triangular_solve(
    matrix: np.ndarray, rhs: np.ndarray, lower: bool, adjoint: bool
) -> np.ndarray:
    if matrix.ndim < 2:
        raise InvalidArgumentError(f"In[0] ndims must be >= 2: {matrix.ndim}")
    if rhs.ndim < 2:
        raise InvalidArgumentError(f"In[1] ndims must be >= 2: {rhs.ndim}")
    n = matrix.shape[-2]
    if matrix.shape[-1] != n:
        raise InvalidArgumentError(
            f"In[0] matrices in the last dimensions must be square ({matrix.shape[-1]} =/= {n})"
        )
    try:
        batch = mu.broadcast_shape(matrix.shape[:-2], rhs.shape[:-2])
    except InvalidArgumentError:
        raise InvalidArgumentError(
            "In[0] and In[1] must have compatible batch dimensions: "
            f"{mu.shape_str(matrix.shape)} vs. {mu.shape_str(rhs.shape)}"
        ) from None
    if rhs.shape[-2] != n:
        raise InvalidArgumentError(
            f"In[0] mismatch In[1] shape: {n} vs. {rhs.shape[-2]}: "
            f"{mu.shape_str(matrix.shape)} {mu.shape_str(rhs.shape)} {int(lower)} {int(adjoint)}"
        )
    a = np.tril(_work(matrix)) if lower else np.triu(_work(matrix))
    if adjoint:  # solving with A^H: the triangle flips
        a, lower = _adjoint(a), not lower
    a = np.broadcast_to(a, batch + (n, n))
    b = np.broadcast_to(_work(rhs), batch + rhs.shape[-2:])
    x = np.zeros(b.shape, np.result_type(a, b))
    order = range(n) if lower else range(n - 1, -1, -1)
    with np.errstate(all="ignore"):
        for i in order:
            acc = np.einsum("...j,...jk->...k", a[..., i, :], x)
            x[..., i, :] = (b[..., i, :] - acc) / a[..., i, i, None]
    return x.astype(rhs.dtype)


register_op(
    "MatrixSolve",
    ["matrix: T", "rhs: T"],
    ["output: T"],
    ["adjoint: bool = false", _SOLVE_TYPES],
)


@register_kernel("MatrixSolve", expensive=True)
def _matrix_solve(kc: KernelConstruction):
    adjoint = bool(kc.attr("adjoint"))

    def compute(ctx, inputs: list) -> list:
        return [matrix_solve(np.asarray(inputs[0]), np.asarray(inputs[1]), adjoint)]

    return compute


register_op(
    "MatrixSolveLs",
    ["matrix: T", "rhs: T", "l2_regularizer: double"],
    ["output: T"],
    [_SOLVE_TYPES, "fast: bool = true"],
)


@register_kernel("MatrixSolveLs", expensive=True)
def _matrix_solve_ls(kc: KernelConstruction):
    fast = bool(kc.attr("fast"))

    def compute(ctx, inputs: list) -> list:
        matrix, rhs, l2 = (np.asarray(v) for v in inputs)
        if l2.ndim != 0:
            raise InvalidArgumentError(
                f"l2_regularizer must be scalar, got shape {mu.shape_str(l2.shape)}"
            )
        return [matrix_solve_ls(matrix, rhs, l2, fast)]

    return compute


register_op(
    "MatrixTriangularSolve",
    ["matrix: T", "rhs: T"],
    ["output: T"],
    [
        "lower: bool = true",
        "adjoint: bool = false",
        "T: {bfloat16, double, float, half, complex64, complex128}",
    ],
)


@register_kernel("MatrixTriangularSolve", expensive=True)
def _matrix_triangular_solve(kc: KernelConstruction):
    lower, adjoint = bool(kc.attr("lower")), bool(kc.attr("adjoint"))

    def compute(ctx, inputs: list) -> list:
        m, r = np.asarray(inputs[0]), np.asarray(inputs[1])
        return [matrix_triangular_solve(m, r, lower, adjoint)]

    return compute


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.shape != b.shape:
        raise InvalidArgumentError(
            f"Both inputs must be of same shape: {mu.shape_str(a.shape)} vs. "
            f"{mu.shape_str(b.shape)}"
        )
    if a.ndim < 1:
        raise InvalidArgumentError(f"Input must be at least 1D{mu.shape_str(a.shape)}")
    if a.shape[-1] != 3:
        raise FailedPreconditionError("Cross-products are only defined for 3-element vectors.")
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    with np.errstate(all="ignore"):  # integer products wrap, as in TF's kernel
        out = np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return out.astype(a.dtype)


register_op("Cross", ["a: T", "b: T"], ["product: T"], ["T: realnumbertype"])


@register_kernel("Cross")
def _cross(kc: KernelConstruction):
    def compute(ctx, inputs: list) -> list:
        return [cross(np.asarray(inputs[0]), np.asarray(inputs[1]))]

    return compute
