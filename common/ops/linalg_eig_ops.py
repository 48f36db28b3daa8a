"""Ops (executor stage): TensorFlow's general eigen solver and matrix functions: Eig,
MatrixSquareRoot, MatrixLogarithm, over batches of square matrices. Eig runs numpy's
LAPACK geev (TF runs Eigen's ComplexEigenSolver): the same eigenvalues in another
order, unit-norm eigenvectors up to a phase. TF's matrix functions use Eigen's Schur
based sqrt/log; here the principal square root comes from the scaled Denman-Beavers
iteration and the logarithm from inverse scaling and squaring (square roots until near
the identity, then the atanh series), both in double precision: values agree with TF's
within float tolerance. As TF's, a real matrix with a negative real eigenvalue has no
real square root (all NaN), and a singular matrix has no logarithm (NaN); for a
singular matrix's square root TF returns a mix of values, inf and NaN, we return NaN.
Stateless and thread-safe."""

from __future__ import annotations

import numpy as np

from common import dtypes
from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

_ITERATIONS = 100  # Denman-Beavers converges quadratically; this only bounds bad inputs


def _square(x: np.ndarray) -> None:
    """TF's LinearAlgebraOp input checks: rank >= 2, square matrices."""
    if x.ndim < 2:
        raise InvalidArgumentError(f"Input tensor 0 must have rank >= 2, got {x.ndim}")
    if x.shape[-1] != x.shape[-2]:
        raise InvalidArgumentError("Input matrix must be square.")


def _per_matrix(x: np.ndarray, fn) -> np.ndarray:
    """fn over each matrix of the batch in double precision, cast back to x's dtype."""
    if x.size == 0:
        return np.zeros(x.shape, x.dtype)
    wide = np.complex128 if np.iscomplexobj(x) else np.float64
    flat = x.astype(wide).reshape((-1,) + x.shape[-2:])
    out = np.stack([fn(m) for m in flat])
    return out.reshape(x.shape).astype(x.dtype)


def eig(x: np.ndarray, compute_v: bool, tout: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    _square(x)
    want = np.complex128 if x.dtype in (np.float64, np.complex128) else np.complex64
    if np.dtype(tout) != want:
        raise InvalidArgumentError(
            f"Invalid output dtype {int(dtypes.from_numpy(tout))} vs {int(dtypes.from_numpy(want))}"
        )
    empty = np.zeros((), tout)
    if x.size == 0:
        return np.zeros(x.shape[:-1], tout), np.zeros(x.shape if compute_v else (), tout)
    if not compute_v:
        return np.linalg.eigvals(x).astype(tout), empty
    e, v = np.linalg.eig(x)
    return e.astype(tout), v.astype(tout)


def _nan_like(a: np.ndarray) -> np.ndarray:
    """What Eigen answers where no root or logarithm exists: NaN, in both parts if complex."""
    return np.full(a.shape, complex(np.nan, np.nan) if np.iscomplexobj(a) else np.nan, a.dtype)


def _sqrtm(a: np.ndarray) -> np.ndarray:
    """Principal square root by the scaled product Denman-Beavers iteration."""
    n = a.shape[-1]
    nan = _nan_like(a)
    if not np.all(np.isfinite(a)):
        return nan  # numpy's LAPACK refuses NaN and Inf; Eigen's sqrtm gives NaN
    if not np.iscomplexobj(a):
        w = np.linalg.eigvals(a)
        if np.any((w.real < 0) & (np.abs(w.imag) <= 1e-12 * np.abs(w.real))):
            return nan  # no real principal root: Eigen's real sqrtm gives NaN too
    eye = np.eye(n, dtype=a.dtype)
    m, y = a.copy(), a.copy()
    try:
        for _ in range(_ITERATIONS):
            m_inv = np.linalg.inv(m)
            mu_ = np.abs(np.linalg.det(m)) ** (-1.0 / (2 * n))
            y = mu_ * y @ (eye + m_inv / mu_**2) / 2
            m = (eye + (mu_**2 * m + m_inv / mu_**2) / 2) / 2
            if np.linalg.norm(m - eye, 1) < 1e-15 * n:
                break
    except np.linalg.LinAlgError:
        return nan
    return y if np.all(np.isfinite(y)) else nan


def _logm(a: np.ndarray) -> np.ndarray:
    """Inverse scaling and squaring: log(A) = 2^k log(A^(1/2^k)), the last by the atanh
    series log(B) = 2 sum_j z^(2j+1) / (2j+1), z = (B - I)(B + I)^-1."""
    n = a.shape[-1]
    eye = np.eye(n, dtype=a.dtype)
    nan = _nan_like(a)
    if not np.all(np.isfinite(a)) or np.linalg.matrix_rank(a) < n:
        return nan
    k, b = 0, a
    while np.linalg.norm(b - eye, 1) > 0.25 and k < 64:
        b, k = _sqrtm(b), k + 1
        if not np.all(np.isfinite(b)):
            return nan
    z = np.linalg.solve((b + eye).T, (b - eye).T).T
    z2, term, total = z @ z, z, np.zeros_like(z)
    for j in range(60):
        total = total + term / (2 * j + 1)
        term = term @ z2
        if np.linalg.norm(term, 1) < 1e-18:
            break
    return 2.0 ** (k + 1) * total


def matrix_square_root(x: np.ndarray) -> np.ndarray:
    _square(x)
    if x.dtype == np.float16:  # half runs in float32, as Eigen does
        return _per_matrix(x.astype(np.float32), _sqrtm).astype(x.dtype)
    return _per_matrix(x, _sqrtm)


def matrix_logarithm(x: np.ndarray) -> np.ndarray:
    _square(x)
    return _per_matrix(x, _logm)


register_op(
    "Eig",
    ["input: T"],
    ["e: Tout", "v: Tout"],
    [
        "compute_v: bool = true",
        "T: {float, double, complex64, complex128}",
        "Tout: {complex64, complex128}",
    ],
)


@register_kernel("Eig", expensive=True)
def _eig(kc: KernelConstruction):
    compute_v, tout = bool(kc.attr("compute_v")), mu.np_type(kc.attr("Tout"))

    def compute(ctx, inputs: list) -> list:
        return list(eig(np.asarray(inputs[0]), compute_v, tout))

    return compute


register_op(
    "MatrixSquareRoot",
    ["input: T"],
    ["output: T"],
    ["T: {double, float, half, complex64, complex128}"],
)
register_op("MatrixLogarithm", ["input: T"], ["output: T"], ["T: {complex64, complex128}"])


def _unary(op: str, fn) -> None:
    def factory(kc: KernelConstruction):
        def compute(ctx, inputs: list) -> list:
            return [fn(np.asarray(inputs[0]))]

        return compute

    factory.__qualname__ = f"_{op}"
    register_kernel(op, expensive=True)(factory)


_unary("MatrixSquareRoot", matrix_square_root)
_unary("MatrixLogarithm", matrix_logarithm)
