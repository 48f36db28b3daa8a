"""Ops (executor stage): matrix decompositions (TensorFlow's linalg kernels): Qr,
Cholesky, Svd, SelfAdjointEigV2, MatrixInverse, MatrixDeterminant, LogMatrixDeterminant,
over batches of matrices, with numpy's LAPACK. TF runs Eigen's algorithms (Householder
QR, LLT, partial-pivot LU, Jacobi/bidiagonal SVD, tridiagonal eigensolver); LAPACK's
agree to rounding, so results match TensorFlow's within float tolerance, not bit for bit.
Q and R are unique once R's diagonal signs are fixed; singular and eigen vectors are
unique up to a sign (a phase for complex). half is computed in float32, as Eigen does.
Stateless and thread-safe."""

from __future__ import annotations

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op


def qr(x: np.ndarray, full_matrices: bool) -> tuple[np.ndarray, np.ndarray]:
    if x.ndim < 2:
        raise InvalidArgumentError(
            f"Input tensor 0 must have rank >= 2, got shape {mu.shape_str(x.shape)}"
        )
    work = x.astype(np.float32) if x.dtype == np.float16 else x
    q, r = np.linalg.qr(work, mode="complete" if full_matrices else "reduced")
    return q.astype(x.dtype), r.astype(x.dtype)


def _qr(kc: KernelConstruction):
    full = bool(kc.attrs.get("full_matrices", False))

    def compute(ctx, inputs: list) -> list:
        return list(qr(np.asarray(inputs[0]), full))

    return compute


register_op(
    "Qr",
    ["input: T"],
    ["q: T", "r: T"],
    ["full_matrices: bool = false", "T: {double, float, half, complex64, complex128}"],
)
register_kernel("Qr")(_qr)


_DECOMP_TYPES = "T: {double, float, half, complex64, complex128}"
_DET_TYPES = "T: {half, float, double, complex64, complex128}"


def _square_batch(x: np.ndarray) -> np.ndarray:
    """TF's LinearAlgebraOp input checks: rank >= 2, square matrices."""
    if x.ndim < 2:
        raise InvalidArgumentError(f"Input tensor 0 must have rank >= 2, got {x.ndim}")
    if x.shape[-1] != x.shape[-2]:
        raise InvalidArgumentError("Input matrix must be square.")
    return x.astype(np.float32) if x.dtype == np.float16 else x


def matrix_inverse(x: np.ndarray, adjoint: bool) -> np.ndarray:
    work = _square_batch(x)
    if adjoint:
        work = np.conj(np.swapaxes(work, -1, -2))
    try:
        inv = np.linalg.inv(work)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError("Input is not invertible.") from None
    return inv.astype(x.dtype)


def matrix_determinant(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.linalg.det(_square_batch(x))).astype(x.dtype)


def log_matrix_determinant(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sign, logdet = np.linalg.slogdet(_square_batch(x))
    return np.asarray(sign).astype(x.dtype), np.asarray(logdet).astype(x.dtype)


def cholesky(x: np.ndarray) -> np.ndarray:
    """The lower factor L of x = L L^H, from x's lower triangle. Where a matrix is not
    positive definite TF's kernel leaves NaN on and below the diagonal (no error)."""
    work = _square_batch(x)
    if work.size == 0:
        return np.zeros(x.shape, x.dtype)
    batch = work.reshape((-1,) + work.shape[-2:])
    out = np.zeros_like(batch)
    for i, m in enumerate(batch):
        try:
            out[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            out[i] = np.tril(np.full(m.shape, np.nan, m.dtype))
    return out.reshape(x.shape).astype(x.dtype)


def svd(
    x: np.ndarray, compute_uv: bool, full_matrices: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """s (descending, real values in T), u and v (not v^H, as TF returns it); without
    compute_uv, u and v are scalars whose value TF leaves unset (we give 0)."""
    if x.ndim < 2:
        raise InvalidArgumentError(f"Input tensor 0 must have rank >= 2, got {x.ndim}")
    work = x.astype(np.float32) if x.dtype == np.float16 else x
    empty = np.zeros((), x.dtype)
    if not compute_uv:
        return np.linalg.svd(work, compute_uv=False).astype(x.dtype), empty, empty
    u, s, vh = np.linalg.svd(work, full_matrices=full_matrices)
    v = np.conj(np.swapaxes(vh, -1, -2))
    return s.astype(x.dtype), u.astype(x.dtype), v.astype(x.dtype)


def self_adjoint_eig(x: np.ndarray, compute_v: bool) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (ascending, real values in T) and eigenvectors of Hermitian matrices,
    read from the lower triangle; without compute_v, v is a scalar TF leaves unset (0)."""
    work = _square_batch(x)
    if not compute_v:
        return np.linalg.eigvalsh(work, UPLO="L").astype(x.dtype), np.zeros((), x.dtype)
    e, v = np.linalg.eigh(work, UPLO="L")
    return e.astype(x.dtype), v.astype(x.dtype)


def _unary(op: str, fn, attr: str | None = None) -> None:
    def factory(kc: KernelConstruction):
        flag = bool(kc.attrs.get(attr, False)) if attr else None

        def compute(ctx, inputs: list) -> list:
            x = np.asarray(inputs[0])
            return [fn(x, flag) if attr else fn(x)]

        return compute

    factory.__qualname__ = f"_{op}"
    register_kernel(op, expensive=True)(factory)


register_op("MatrixInverse", ["input: T"], ["output: T"], ["adjoint: bool = false", _DECOMP_TYPES])
_unary("MatrixInverse", matrix_inverse, "adjoint")
register_op("MatrixDeterminant", ["input: T"], ["output: T"], [_DET_TYPES])
_unary("MatrixDeterminant", matrix_determinant)
register_op("Cholesky", ["input: T"], ["output: T"], [_DECOMP_TYPES])
_unary("Cholesky", cholesky)

register_op(
    "LogMatrixDeterminant", ["input: T"], ["sign: T", "log_abs_determinant: T"], [_DET_TYPES]
)


@register_kernel("LogMatrixDeterminant", expensive=True)
def _log_matrix_determinant(kc: KernelConstruction):
    def compute(ctx, inputs: list) -> list:
        return list(log_matrix_determinant(np.asarray(inputs[0])))

    return compute


register_op(
    "Svd",
    ["input: T"],
    ["s: T", "u: T", "v: T"],
    ["compute_uv: bool = true", "full_matrices: bool = false", _DECOMP_TYPES],
)


@register_kernel("Svd", expensive=True)
def _svd(kc: KernelConstruction):
    compute_uv, full = bool(kc.attr("compute_uv")), bool(kc.attr("full_matrices"))

    def compute(ctx, inputs: list) -> list:
        return list(svd(np.asarray(inputs[0]), compute_uv, full))

    return compute


register_op(
    "SelfAdjointEigV2", ["input: T"], ["e: T", "v: T"], ["compute_v: bool = true", _DECOMP_TYPES]
)


@register_kernel("SelfAdjointEigV2", expensive=True)
def _self_adjoint_eig(kc: KernelConstruction):
    compute_v = bool(kc.attr("compute_v"))

    def compute(ctx, inputs: list) -> list:
        return list(self_adjoint_eig(np.asarray(inputs[0]), compute_v))

    return compute
