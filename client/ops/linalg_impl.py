"""Client, graph building: the linear algebra TensorFlow composes in Python
(linalg_ops.matrix_solve_ls, linalg_impl's expm and LU helpers) and the ops they wrap:
tf.linalg.lstsq (the regularized normal equations through Cholesky, or the
MatrixSolveLs op when not fast), expm (TF's scaling-and-squaring Pade graph: several
Pade degrees chosen per matrix by SelectV2, then a while loop of squarings), lu,
lu_solve, lu_matrix_inverse, sqrtm, logm, eig, eigvals, with TF's node names. Pure
graph building; not thread-safe (as a Graph)."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, control_flow_ops, linalg_ops, math_ops
from client.ops.tf1_extras import gather_nd

_L2_CACHE_SIZE_GUESSTIMATE = 256000  # TF's threshold for the composite lstsq


def regularized_gramian_cholesky(matrix: Any, l2_regularizer: Any, first_kind: bool) -> Any:
    """Cholesky of A^H A + l2 I (first kind) or A A^H + l2 I (second kind)."""
    gramian = math_ops.matmul(matrix, matrix, adjoint_a=first_kind, adjoint_b=not first_kind)
    if isinstance(l2_regularizer, _ops.Tensor) or l2_regularizer != 0:
        matrix_shape = array_ops.shape(matrix)
        batch_shape = matrix_shape[:-2]
        small_dim = matrix_shape[-1] if first_kind else matrix_shape[-2]
        identity = linalg_ops.eye(small_dim, batch_shape=batch_shape, dtype=matrix.dtype)
        small_static = matrix.shape[-1 if first_kind else -2]
        identity.set_shape(matrix.shape[:-2].concatenate([small_static, small_static]))
        gramian += l2_regularizer * identity
    return apply_op("Cholesky", [gramian], {}).outputs[0]


def _use_composite(fast: bool, matrix: Any) -> bool:
    """TF's choice: the composite graph unless not fast, or a large IO-bound batch."""
    if fast is False:
        return False
    shape = matrix.shape
    if not shape.is_fully_defined():
        return True
    size = shape.num_elements() * matrix.dtype.size
    io_bound = shape[:-2].num_elements() > np.min(shape[-2:].as_list())
    return not (size > _L2_CACHE_SIZE_GUESSTIMATE and io_bound)


def matrix_solve_ls(
    matrix: Any, rhs: Any, l2_regularizer: Any = 0.0, fast: bool = True, name: str | None = None
) -> Any:
    """tf.linalg.lstsq / tf.matrix_solve_ls."""

    def overdetermined() -> Any:
        chol = regularized_gramian_cholesky(matrix, l2_regularizer, first_kind=True)
        return linalg_ops.cholesky_solve(chol, math_ops.matmul(matrix, rhs, adjoint_a=True))

    def underdetermined() -> Any:
        chol = regularized_gramian_cholesky(matrix, l2_regularizer, first_kind=False)
        return math_ops.matmul(matrix, linalg_ops.cholesky_solve(chol, rhs), adjoint_a=True)

    matrix = convert_to_tensor(matrix, name="matrix")
    if matrix.dtype == dtypes.complex128 and l2_regularizer != 0:
        raise NotImplementedError(
            "matrix_solve_ls is currently disabled for complex128 and l2_regularizer != 0 "
            "due to poor accuracy."
        )
    if not _use_composite(fast, matrix):
        inputs = [matrix, rhs, l2_regularizer]
        return apply_op("MatrixSolveLs", inputs, {"fast": fast}, name).outputs[0]
    with _ops.name_scope(name, "matrix_solve_ls", [matrix, rhs, l2_regularizer]):
        inner = matrix.shape[-2:]
        if inner.is_fully_defined():
            return overdetermined() if inner[-2] >= inner[-1] else underdetermined()
        dims = array_ops.shape(matrix)[-2:]
        return control_flow_ops.cond(dims[-2] >= dims[-1], overdetermined, underdetermined)


def _eig_out(tensor: Any) -> Any:
    if tensor.dtype in (dtypes.float32, dtypes.complex64):
        return dtypes.complex64
    return dtypes.complex128


def eig(tensor: Any, name: str | None = None) -> tuple[Any, Any]:
    attrs = {"Tout": _eig_out(tensor).as_datatype_enum, "compute_v": True}
    e, v = apply_op("Eig", [tensor], attrs, name).outputs
    return e, v


def eigvals(tensor: Any, name: str | None = None) -> Any:
    attrs = {"Tout": _eig_out(tensor).as_datatype_enum, "compute_v": False}
    return apply_op("Eig", [tensor], attrs, name).outputs[0]


def sqrtm(input: Any, name: str | None = None) -> Any:
    return apply_op("MatrixSquareRoot", [input], {}, name).outputs[0]


def logm(input: Any, name: str | None = None) -> Any:
    return apply_op("MatrixLogarithm", [input], {}, name).outputs[0]


def lu(input: Any, output_idx_type: Any = dtypes.int32, name: str | None = None) -> Any:
    attrs = {"output_idx_type": dtypes.as_dtype(output_idx_type).as_datatype_enum}
    lu_, p = apply_op("Lu", [input], attrs, name).outputs
    return lu_, p


def lu_solve(
    lower_upper: Any, perm: Any, rhs: Any, validate_args: bool = False, name: str | None = None
) -> Any:
    """Solves A X = rhs from A's LU factors: permute rhs, then two triangular solves.
    validate_args adds no runtime assertions here (static checks only)."""
    with _ops.name_scope(name or "lu_solve"):
        lower_upper = convert_to_tensor(
            lower_upper, preferred_dtype=dtypes.float32, name="lower_upper"
        )
        perm = convert_to_tensor(perm, preferred_dtype=dtypes.int32, name="perm")
        rhs = convert_to_tensor(rhs, preferred_dtype=lower_upper.dtype, name="rhs")
        _lu_static_checks(lower_upper, perm, rhs)
        if rhs.shape.rank == 2 and perm.shape.rank == 1:
            permuted_rhs = array_ops.gather(rhs, perm, axis=-2)
        else:
            permuted_rhs = _batch_permute(rhs, perm)
        lower = linalg_ops.matrix_set_diag(
            linalg_ops.matrix_band_part(lower_upper, -1, 0),
            array_ops.ones(array_ops.shape(lower_upper)[:-1], dtype=lower_upper.dtype),
        )
        return linalg_ops.matrix_triangular_solve(
            lower_upper,  # only its upper triangle is read
            linalg_ops.matrix_triangular_solve(lower, permuted_rhs),
            lower=False,
        )


def _batch_permute(rhs: Any, perm: Any) -> Any:
    """rhs's rows gathered by perm over broadcast batches (TF's gather_nd route)."""
    rhs_shape = array_ops.shape(rhs)
    batch = apply_op("BroadcastArgs", [rhs_shape[:-2], array_ops.shape(perm)[:-1]]).outputs[0]
    d, m = rhs_shape[-2], rhs_shape[-1]
    rhs_broadcast_shape = array_ops.concat([batch, [d, m]], axis=0)
    flat_rhs = array_ops.reshape(array_ops.broadcast_to(rhs, rhs_broadcast_shape), [-1, d, m])
    flat_perm = array_ops.broadcast_to(perm, rhs_broadcast_shape[:-1])
    flat_perm = array_ops.reshape(flat_perm, [-1, d])
    batch_size = math_ops.reduce_prod(batch)
    batch_indices = array_ops.broadcast_to(
        math_ops.range(batch_size)[:, array_ops.newaxis], [batch_size, d]
    )
    indices = array_ops.stack([batch_indices, flat_perm], axis=-1)
    return array_ops.reshape(gather_nd(flat_rhs, indices), rhs_broadcast_shape)


def _lu_static_checks(lower_upper: Any, perm: Any, rhs: Any | None) -> None:
    """TF's static argument checks (lu_reconstruct_assertions, _lu_solve_assertions)."""
    lu_shape = lower_upper.shape
    if lu_shape.rank is not None and lu_shape.rank < 2:
        raise ValueError("Input `lower_upper` must have at least 2 dimensions.")
    known_ranks = lu_shape.rank is not None and perm.shape.rank is not None
    if known_ranks and lu_shape.rank != perm.shape.rank + 1:
        raise ValueError("`rank(lower_upper)` must equal `rank(perm) + 1`")
    batch_known = lu_shape.rank is not None and lu_shape[:-2].is_fully_defined()
    if batch_known and lu_shape[-2] != lu_shape[-1]:
        raise ValueError("`lower_upper` must be square.")
    if rhs is None:
        return
    if rhs.shape.rank is not None and rhs.shape.rank < 2:
        raise ValueError("Input `rhs` must have at least 2 dimensions.")
    if lu_shape[-1] is not None and rhs.shape[-2] is not None and lu_shape[-1] != rhs.shape[-2]:
        raise ValueError("`lower_upper.shape[-1]` must equal `rhs.shape[-1]`.")


def lu_matrix_inverse(
    lower_upper: Any, perm: Any, validate_args: bool = False, name: str | None = None
) -> Any:
    with _ops.name_scope(name or "lu_matrix_inverse"):
        lower_upper = convert_to_tensor(
            lower_upper, preferred_dtype=dtypes.float32, name="lower_upper"
        )
        perm = convert_to_tensor(perm, preferred_dtype=dtypes.int32, name="perm")
        _lu_static_checks(lower_upper, perm, None)
        shape = array_ops.shape(lower_upper)
        eye = linalg_ops.eye(shape[-1], batch_shape=shape[:-2], dtype=lower_upper.dtype)
        return lu_solve(lower_upper, perm, rhs=eye, validate_args=False)


# -- static shapes -------------------------------------------------------------------------
def _solve_ls_shape(op: Any) -> list[Any]:
    """MatrixSolveLs: batch + [matrix cols, rhs cols]."""
    m, r = op.inputs[0].shape, op.inputs[1].shape
    if m.ndims is None or r.ndims is None or m.ndims < 2 or r.ndims < 2:
        return [TensorShape(None)]
    return [m[:-2].merge_with(r[:-2]).concatenate([m[-1], r[-1]])]


def _square_input(op: Any) -> TensorShape | None:
    """TF's square-matrix shape checks (rank >= 2, equal inner dims); None when unknown."""
    s = op.inputs[0].shape
    if s.ndims is None:
        return None
    if s.ndims < 2:
        raise shape_fns.ShapeError(f"Shape must be at least rank 2 but is rank {s.ndims}")
    rows, cols = s[-2], s[-1]
    if rows is not None and cols is not None and rows != cols:
        raise shape_fns.ShapeError(f"Dimensions must be equal, but are {rows} and {cols}")
    return s


def _square_same_shape(op: Any) -> list[Any]:
    s = _square_input(op)
    return [TensorShape(None) if s is None else s]


def _eig_shape(op: Any) -> list[Any]:
    s = _square_input(op)
    if s is None:
        return [TensorShape(None)] * 2
    return [s[:-1], s if op.get_attr("compute_v") else TensorShape([0])]


def _lu_shape(op: Any) -> list[Any]:
    s = _square_input(op)
    if s is None:
        return [TensorShape(None)] * 2
    return [s, s[:-1]]


def _broadcast_args_shape(op: Any) -> list[Any]:
    """BroadcastArgs: a vector as long as the longer shape (lu_solve's batch shape)."""
    lengths = [t.shape[0] if t.shape.ndims == 1 else None for t in op.inputs]
    known = max(int(n) for n in lengths if n is not None) if None not in lengths else None
    return [TensorShape([known])]


shape_fns.SHAPE_FNS.setdefault("BroadcastArgs", _broadcast_args_shape)
shape_fns.SHAPE_FNS.setdefault("MatrixSolveLs", _solve_ls_shape)
shape_fns.SHAPE_FNS.setdefault("MatrixSquareRoot", _square_same_shape)
shape_fns.SHAPE_FNS.setdefault("MatrixLogarithm", _square_same_shape)
shape_fns.SHAPE_FNS.setdefault("Eig", _eig_shape)
shape_fns.SHAPE_FNS.setdefault("Lu", _lu_shape)
