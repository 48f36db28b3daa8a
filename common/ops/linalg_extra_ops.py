"""Ops (executor stage): more of TensorFlow's linalg kernels: Lu, MatrixExponential,
CholeskyGrad, TridiagonalMatMul, TridiagonalSolve, over batches of matrices. Lu pivots
as Eigen's PartialPivLU (the largest magnitude in the column); MatrixExponential fails
as TF's does (the op was removed in GraphDef version 27); CholeskyGrad is the
symmetrized rule of TF's linalg_grad applied to grad's lower triangle, as the kernel
reads it; TridiagonalSolve solves the dense system. Values agree with TensorFlow's
within float tolerance, not bit for bit. Stateless and thread-safe."""

from __future__ import annotations

import numpy as np

from common.errors import InvalidArgumentError, UnimplementedError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

_TYPES = "T: {double, float, half, complex64, complex128}"
_TRIDIAG_TYPES = "T: {double, float, complex64, complex128}"


def _square(x: np.ndarray) -> np.ndarray:
    if x.ndim < 2:
        raise InvalidArgumentError(f"Input tensor 0 must have rank >= 2, got {x.ndim}")
    if x.shape[-1] != x.shape[-2]:
        raise InvalidArgumentError("Input matrix must be square.")
    return x.astype(np.float32) if x.dtype == np.float16 else x


def lu(x: np.ndarray, idx: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """L (unit lower, below the diagonal) and U packed in one matrix, and the row
    permutation p with x[..., p, :] = L @ U."""
    a = _square(x).copy()
    n = a.shape[-1]
    perm = np.broadcast_to(np.arange(n), a.shape[:-1]).copy()
    rows = tuple(np.indices(a.shape[:-2]))
    for k in range(n):
        pivot = k + np.argmax(np.abs(a[..., k:, k]), axis=-1)
        for arr in (a, perm):
            at_k = arr[rows + (k,)].copy()
            arr[rows + (k,)] = arr[rows + (pivot,)]
            arr[rows + (pivot,)] = at_k
        if np.any(a[..., k, k] == 0):
            raise InvalidArgumentError("Input is not invertible.")
        a[..., k + 1 :, k] /= a[..., k, k, None]
        a[..., k + 1 :, k + 1 :] -= a[..., k + 1 :, k, None] * a[..., k, None, k + 1 :]
    return a.astype(x.dtype), perm.astype(idx)


def matrix_exponential(x: np.ndarray) -> np.ndarray:
    """TF keeps the op's signature but refuses to run it (tf.linalg.expm is a Python
    composite since GraphDef version 27): the same error here."""
    raise UnimplementedError(
        "Op MatrixExponential is not available in GraphDef version 2474. It has been "
        "removed in version 27. Use Python implementation tf.linalg.matrix_exponential "
        "instead."
    )


def cholesky_grad(chol: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """dL/dA for A = L L^T given the upstream gradient's lower triangle, symmetrized."""
    if chol.ndim < 2:
        raise InvalidArgumentError(f"Input tensor 0 must have rank >= 2, got {chol.ndim}")
    if chol.shape != grad.shape:
        raise InvalidArgumentError("All input tensors must have the same outer dimensions.")
    if chol.shape[-1] != chol.shape[-2]:
        raise InvalidArgumentError("Input matrix must be square.")
    work = chol.astype(np.float32) if chol.dtype == np.float16 else chol
    g = np.tril(grad.astype(work.dtype))
    n = work.shape[-1]
    if work.size == 0:
        return np.zeros(chol.shape, chol.dtype)
    lt = np.swapaxes(work, -1, -2)
    inv = np.linalg.solve(work, np.broadcast_to(np.eye(n, dtype=work.dtype), work.shape))
    middle = np.tril(lt @ g)
    middle[..., np.arange(n), np.arange(n)] *= 0.5
    out = np.swapaxes(inv, -1, -2) @ middle @ inv
    return (0.5 * (out + np.swapaxes(out, -1, -2))).astype(chol.dtype)


def tridiagonal_matmul(
    superdiag: np.ndarray, maindiag: np.ndarray, subdiag: np.ndarray, rhs: np.ndarray
) -> np.ndarray:
    if rhs.ndim < 2:
        raise InvalidArgumentError(f"Input must have rank >= 2, but got {rhs.ndim}")
    m = rhs.shape[-2]
    for name, d in (("superdiag", superdiag), ("maindiag", maindiag), ("subdiag", subdiag)):
        if d.shape[:-2] != rhs.shape[:-2] or d.shape[-2:] != (1, m):
            raise InvalidArgumentError(
                f"Expected {name} to have shape {mu.shape_str(rhs.shape[:-2] + (1, m))}, "
                f"but got {mu.shape_str(d.shape)}"
            )
    sup, main, sub = (d[..., 0, :, None] for d in (superdiag, maindiag, subdiag))
    out = main * rhs
    if m > 1:
        out[..., :-1, :] += sup[..., :-1, :] * rhs[..., 1:, :]
        out[..., 1:, :] += sub[..., 1:, :] * rhs[..., :-1, :]
    return out.astype(rhs.dtype)


def tridiagonal_solve(diagonals: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    if diagonals.ndim < 2 or diagonals.shape[-2] != 3:
        raise InvalidArgumentError(
            "Expected diagonals to be provided as a matrix with 3 rows, got "
            f"{diagonals.shape[-2] if diagonals.ndim >= 2 else diagonals.ndim} rows."
        )
    m = diagonals.shape[-1]
    if rhs.ndim < 2 or rhs.shape[-2] != m:
        raise InvalidArgumentError("Incompatible shapes of diagonals and rhs.")
    matrix = np.zeros(diagonals.shape[:-2] + (m, m), diagonals.dtype)
    i = np.arange(m)
    matrix[..., i, i] = diagonals[..., 1, :]
    matrix[..., i[:-1], i[1:]] = diagonals[..., 0, :-1]
    matrix[..., i[1:], i[:-1]] = diagonals[..., 2, 1:]
    if matrix.size == 0 or rhs.size == 0:
        return np.zeros(rhs.shape, rhs.dtype)
    try:
        return np.linalg.solve(matrix, rhs).astype(rhs.dtype)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError("The matrix is not invertible.") from None


register_op(
    "Lu",
    ["input: T"],
    ["lu: T", "p: output_idx_type"],
    [_TYPES, "output_idx_type: {int32, int64} = DT_INT32"],
)


@register_kernel("Lu", expensive=True)
def _lu(kc: KernelConstruction):
    idx = mu.np_type(kc.attr("output_idx_type"))

    def compute(ctx, inputs: list) -> list:
        return list(lu(np.asarray(inputs[0]), idx))

    return compute


register_op("MatrixExponential", ["input: T"], ["output: T"], [_TYPES])
register_op("CholeskyGrad", ["l: T", "grad: T"], ["output: T"], ["T: {half, float, double}"])
register_op(
    "TridiagonalMatMul",
    ["superdiag: T", "maindiag: T", "subdiag: T", "rhs: T"],
    ["output: T"],
    [_TRIDIAG_TYPES],
)
register_op(
    "TridiagonalSolve",
    ["diagonals: T", "rhs: T"],
    ["output: T"],
    ["partial_pivoting: bool = true", "perturb_singular: bool = false", _TRIDIAG_TYPES],
)


def _kernel(op: str, fn) -> None:
    def factory(kc: KernelConstruction):
        def compute(ctx, inputs: list) -> list:
            return [fn(*(np.asarray(v) for v in inputs))]

        return compute

    factory.__qualname__ = f"_{op}"
    register_kernel(op, expensive=True)(factory)


_kernel("MatrixExponential", matrix_exponential)
_kernel("CholeskyGrad", cholesky_grad)
_kernel("TridiagonalMatMul", tridiagonal_matmul)
_kernel("TridiagonalSolve", tridiagonal_solve)
