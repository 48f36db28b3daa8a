"""Client, gradients: decompositions and least squares (TensorFlow's linalg_grad.py
rules for Svd, SelfAdjointEigV2, Eig and MatrixSolveLs), built as TF builds them. As
TF's, the eigen/singular vector rules are NaN-free through a Lorentz-broadened
reciprocal where values repeat, the Svd rule needs static inner dimensions, and
MatrixSolveLs has no gradient when fast=False."""

from __future__ import annotations

from typing import Any

from client.framework import ops as _ops
from client.framework.gradient_registry import RegisterGradient
from client.ops import array_ops, complex_ops, control_flow_ops, linalg_impl, linalg_ops, math_ops
from client.ops.linalg_norm_ops import conj


def _safe_reciprocal(x: Any, epsilon: float = 1e-20) -> Any:
    """x / (x^2 + eps): 1/x away from 0, 0 at 0 (degenerate eigen/singular values)."""
    return x * math_ops.reciprocal(x * x + epsilon)


def _pairwise_reciprocal(e: Any) -> Any:
    """f[i, j] = 1 / (e_j - e_i) off the diagonal, 0 on it."""
    diff = array_ops.expand_dims(e, -2) - array_ops.expand_dims(e, -1)
    return linalg_ops.matrix_set_diag(_safe_reciprocal(diff), array_ops.zeros_like(e))


@RegisterGradient("SelfAdjointEigV2")
def _self_adjoint_eig_grad(op: Any, grad_e: Any, grad_v: Any) -> Any:
    e = op.outputs[0]
    with _ops.control_dependencies([grad_e, grad_v]):
        if op.get_attr("compute_v"):
            v = op.outputs[1]
            f = _pairwise_reciprocal(e)
            inner = linalg_ops.matrix_diag(grad_e) + f * math_ops.matmul(v, grad_v, adjoint_a=True)
            grad_a = math_ops.matmul(v, math_ops.matmul(inner, v, adjoint_b=True))
        else:
            _, v = linalg_ops.self_adjoint_eig(op.inputs[0])
            grad_a = math_ops.matmul(
                v, math_ops.matmul(linalg_ops.matrix_diag(grad_e), v, adjoint_b=True)
            )
        # The kernel reads only the lower triangle: symmetrize, keep that triangle.
        grad_a = linalg_ops.matrix_band_part(grad_a + linalg_ops.adjoint(grad_a), -1, 0)
        return linalg_ops.matrix_set_diag(grad_a, 0.5 * linalg_ops.matrix_diag_part(grad_a))


@RegisterGradient("Eig")
def _eig_grad(op: Any, grad_e: Any, grad_v: Any) -> Any:
    """Boeddeker et al. eq. 4.77, for distinct eigenvalues."""
    e = op.outputs[0]
    with _ops.control_dependencies([grad_e, grad_v]):
        if op.get_attr("compute_v"):
            v = op.outputs[1]
            vt = linalg_ops.adjoint(v)
            f = conj(_pairwise_reciprocal(e))
            vgv = math_ops.matmul(vt, grad_v)
            mid = linalg_ops.matrix_diag(grad_e)
            real_diag = math_ops.cast(complex_ops.real(vgv), vgv.dtype)
            diag_grad_part = linalg_ops.matrix_diag(linalg_ops.matrix_diag_part(real_diag))
            mid += f * (vgv - math_ops.matmul(math_ops.matmul(vt, v), diag_grad_part))
            grad_a = linalg_ops.matrix_solve(vt, math_ops.matmul(mid, vt))
        else:
            _, v = linalg_impl.eig(op.inputs[0])
            vt = linalg_ops.adjoint(v)
            grad_a = linalg_ops.matrix_solve(
                vt, math_ops.matmul(linalg_ops.matrix_diag(grad_e), vt)
            )
        return math_ops.cast(grad_a, op.inputs[0].dtype)


@RegisterGradient("MatrixSolveLs")
def _matrix_solve_ls_grad(op: Any, grad: Any) -> Any:
    if op.get_attr("fast") is False:
        raise ValueError("Gradient not defined for fast=False")
    matrix_shape = op.inputs[0].shape[-2:]
    if matrix_shape.is_fully_defined():
        rows, cols = matrix_shape.as_list()
        return _solve_ls_overdetermined(op, grad) if rows >= cols else _solve_ls_under(op, grad)
    shape = array_ops.shape(op.inputs[0])[-2:]
    return control_flow_ops.cond(
        shape[-2] >= shape[-1],
        lambda: _solve_ls_overdetermined(op, grad),
        lambda: _solve_ls_under(op, grad),
    )


def _solve_ls_overdetermined(op: Any, grad: Any) -> Any:
    """Backprop of X = (A^H A + lambda I)^-1 A^H B."""
    a, b, x = op.inputs[0], op.inputs[1], op.outputs[0]
    l2 = math_ops.cast(op.inputs[2], a.dtype.base_dtype)
    chol = linalg_impl.regularized_gramian_cholesky(a, l2, first_kind=True)
    z = linalg_ops.cholesky_solve(chol, grad)
    xzt = math_ops.matmul(x, z, adjoint_b=True)
    zx_sym = xzt + array_ops.matrix_transpose(xzt)
    grad_a = -math_ops.matmul(a, zx_sym) + math_ops.matmul(b, z, adjoint_b=True)
    return grad_a, math_ops.matmul(a, z), None


def _solve_ls_under(op: Any, grad: Any) -> Any:
    """Backprop of X = A^H (A A^H + lambda I)^-1 B."""
    a, b = op.inputs[0], op.inputs[1]
    l2 = math_ops.cast(op.inputs[2], a.dtype.base_dtype)
    chol = linalg_impl.regularized_gramian_cholesky(a, l2, first_kind=False)
    grad_b = linalg_ops.cholesky_solve(chol, math_ops.matmul(a, grad))
    tmp = linalg_ops.cholesky_solve(chol, b)
    a1 = -math_ops.matmul(grad_b, math_ops.matmul(tmp, a, adjoint_a=True))
    a2 = math_ops.matmul(tmp, grad - math_ops.matmul(a, grad_b, adjoint_a=True), adjoint_b=True)
    return a1 + a2, grad_b, None


@RegisterGradient("Svd")
def _svd_grad(op: Any, grad_s: Any, grad_u: Any, grad_v: Any) -> Any:
    """Giles' rule (compute_uv=False, full matrices) and Townsend's (thin SVD), with the
    complex correction term."""
    a = op.inputs[0]
    a_shape = a.shape.with_rank_at_least(2)
    grad_s = math_ops.cast(grad_s, a.dtype)
    grad_s_mat = linalg_ops.matrix_diag(grad_s)
    if not op.get_attr("compute_uv"):
        _, u, v = linalg_ops.svd(a, compute_uv=True)
        grad_a = math_ops.matmul(u, math_ops.matmul(grad_s_mat, v, adjoint_b=True))
        grad_a.set_shape(a_shape)
        return grad_a
    full_matrices = op.get_attr("full_matrices")
    gu_shape = grad_u.shape.with_rank_at_least(2)
    gv_shape = grad_v.shape.with_rank_at_least(2)
    m_dim = a_shape.dims[-2].merge_with(gu_shape[-2])
    n_dim = a_shape.dims[-1].merge_with(gv_shape[-2])
    batch = a_shape[:-2].merge_with(gu_shape[:-2]).merge_with(gv_shape[:-2])
    a_shape = batch.concatenate([m_dim, n_dim])
    m, n = a_shape.dims[-2].value, a_shape.dims[-1].value
    if m is None or n is None:
        raise NotImplementedError(
            "SVD gradient has not been implemented for input with unknown inner matrix shape."
        )
    s, u, v = op.outputs
    s = math_ops.cast(s, a.dtype)
    use_adjoint = m > n
    if use_adjoint:  # differentiate A^H = V S U^H, take the adjoint at the end
        m, n, u, v, grad_u, grad_v = n, m, v, u, grad_v, grad_u
    with _ops.control_dependencies([grad_s, grad_u, grad_v]):
        if full_matrices and abs(m - n) > 1:
            raise NotImplementedError(
                "svd gradient is not implemented for abs(m - n) > 1 when full_matrices is "
                f"True. Received: m={m} and n={n} from op input={a} with shape={a_shape}."
            )
        grad_a = _svd_grad_wide(a, s, u, v, grad_s_mat, grad_u, grad_v, m, n, full_matrices)
        if use_adjoint:
            grad_a = array_ops.matrix_transpose(grad_a, conjugate=True)
        grad_a.set_shape(a_shape)
        return grad_a


def _svd_grad_wide(
    a: Any,
    s: Any,
    u: Any,
    v: Any,
    grad_s_mat: Any,
    grad_u: Any,
    grad_v: Any,
    m: int,
    n: int,
    full_matrices: bool,
) -> Any:
    """The rule for m <= n (the caller transposes a tall problem)."""
    s_mat = linalg_ops.matrix_diag(s)
    s2 = math_ops.square(s)
    s_shape = array_ops.shape(s)
    f = linalg_ops.matrix_set_diag(
        _safe_reciprocal(array_ops.expand_dims(s2, -2) - array_ops.expand_dims(s2, -1)),
        array_ops.zeros_like(s),
    )
    s_inv_mat = linalg_ops.matrix_diag(_safe_reciprocal(s))
    v1 = v[..., :, :m]
    grad_v1 = grad_v[..., :, :m]
    u_gu = math_ops.matmul(u, grad_u, adjoint_a=True)
    v_gv = math_ops.matmul(v1, grad_v1, adjoint_a=True)
    f_u = f * u_gu
    f_v = f * v_gv
    term1_nouv = (
        grad_s_mat
        + math_ops.matmul(f_u + linalg_ops.adjoint(f_u), s_mat)
        + math_ops.matmul(s_mat, f_v + linalg_ops.adjoint(f_v))
    )
    grad_a = math_ops.matmul(u, math_ops.matmul(term1_nouv, v1, adjoint_b=True))
    if m != n:
        gv1t = array_ops.matrix_transpose(grad_v1, conjugate=True)
        gv1t_v1 = math_ops.matmul(gv1t, v1)
        term2_nous = gv1t - math_ops.matmul(gv1t_v1, v1, adjoint_b=True)
        if full_matrices:
            v2 = v[..., :, m:n]
            grad_v2 = grad_v[..., :, m:n]
            v1t_gv2 = math_ops.matmul(v1, grad_v2, adjoint_a=True)
            term2_nous -= math_ops.matmul(v1t_gv2, v2, adjoint_b=True)
        u_s_inv = math_ops.matmul(u, s_inv_mat)
        grad_a = grad_a + math_ops.matmul(u_s_inv, term2_nous)
    if a.dtype.is_complex:
        eye = linalg_ops.eye(s_shape[-1], batch_shape=s_shape[:-1], dtype=a.dtype)
        lmat = eye * v_gv
        term3_nouv = math_ops.matmul(s_inv_mat, linalg_ops.adjoint(lmat) - lmat)
        grad_a += 1 / 2.0 * math_ops.matmul(u, math_ops.matmul(term3_nouv, v1, adjoint_b=True))
    return grad_a
