"""Client, graph building: linear algebra and FFTs as TensorFlow's linalg_ops,
array_ops (matrix diagonals and bands) and spectral ops build them (tf.linalg.*,
tf.signal.fft*, and the TF1 top-level aliases tf.matrix_inverse, tf.cholesky ...), with
TensorFlow's node names, and their static shape functions. Pure graph building; not
thread-safe (as a Graph)."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, math_ops


def _out(op: Any) -> Any:
    return op.outputs[0]


def matrix_inverse(input: Any, adjoint: bool = False, name: str | None = None) -> Any:
    return _out(apply_op("MatrixInverse", [input], {"adjoint": adjoint}, name))


def matrix_determinant(input: Any, name: str | None = None) -> Any:
    return _out(apply_op("MatrixDeterminant", [input], {}, name))


def slogdet(input: Any, name: str | None = None) -> tuple[Any, Any]:
    sign, log_abs = apply_op("LogMatrixDeterminant", [input], {}, name).outputs
    return sign, log_abs


def cholesky(input: Any, name: str | None = None) -> Any:
    return _out(apply_op("Cholesky", [input], {}, name))


def matrix_solve(matrix: Any, rhs: Any, adjoint: bool = False, name: str | None = None) -> Any:
    return _out(apply_op("MatrixSolve", [matrix, rhs], {"adjoint": adjoint}, name))


def _triangular_solve(matrix: Any, rhs: Any, lower: bool, adjoint: bool) -> Any:
    attrs = {"lower": lower, "adjoint": adjoint}
    return _out(apply_op("MatrixTriangularSolve", [matrix, rhs], attrs))


def matrix_triangular_solve(
    matrix: Any, rhs: Any, lower: bool = True, adjoint: bool = False, name: str | None = None
) -> Any:
    with _ops.name_scope(name, "triangular_solve", [matrix, rhs]):
        return _triangular_solve(matrix, rhs, lower, adjoint)


def cholesky_solve(chol: Any, rhs: Any, name: str | None = None) -> Any:
    """Solves A X = rhs given A's Cholesky factor: two triangular solves, as TF's."""
    with _ops.name_scope(name, "cholesky_solve", [chol, rhs]):
        y = _triangular_solve(chol, rhs, True, False)
        return _triangular_solve(chol, y, True, True)


def svd(
    tensor: Any, full_matrices: bool = False, compute_uv: bool = True, name: str | None = None
) -> Any:
    attrs = {"compute_uv": compute_uv, "full_matrices": full_matrices}
    s, u, v = apply_op("Svd", [tensor], attrs, name).outputs
    return (s, u, v) if compute_uv else s


def self_adjoint_eig(tensor: Any, name: str | None = None) -> tuple[Any, Any]:
    e, v = apply_op("SelfAdjointEigV2", [tensor], {"compute_v": True}, name).outputs
    return e, v


def self_adjoint_eigvals(tensor: Any, name: str | None = None) -> Any:
    return _out(apply_op("SelfAdjointEigV2", [tensor], {"compute_v": False}, name))


def qr(input: Any, full_matrices: bool = False, name: str | None = None) -> tuple[Any, Any]:
    q, r = apply_op("Qr", [input], {"full_matrices": full_matrices}, name).outputs
    return q, r


def matrix_band_part(input: Any, num_lower: Any, num_upper: Any, name: str | None = None) -> Any:
    return _out(apply_op("MatrixBandPart", [input, num_lower, num_upper], {}, name))


def matrix_diag(
    diagonal: Any,
    name: str = "diag",
    k: Any = 0,
    num_rows: Any = -1,
    num_cols: Any = -1,
    padding_value: Any = 0,
    align: str = "RIGHT_LEFT",
) -> Any:
    inputs = [diagonal, k, num_rows, num_cols, padding_value]
    return _out(apply_op("MatrixDiagV3", inputs, {"align": align}, name))


def matrix_diag_part(
    input: Any,
    name: str = "diag_part",
    k: Any = 0,
    padding_value: Any = 0,
    align: str = "RIGHT_LEFT",
) -> Any:
    return _out(apply_op("MatrixDiagPartV3", [input, k, padding_value], {"align": align}, name))


def matrix_set_diag(
    input: Any, diagonal: Any, name: str = "set_diag", k: Any = 0, align: str = "RIGHT_LEFT"
) -> Any:
    return _out(apply_op("MatrixSetDiagV3", [input, diagonal, k], {"align": align}, name))


def tensor_diag(diagonal: Any, name: str | None = None) -> Any:
    """tf.linalg.tensor_diag / TF1 tf.diag: the raw Diag op (rank k -> rank 2k)."""
    return _out(apply_op("Diag", [diagonal], {}, name))


def tensor_diag_part(input: Any, name: str | None = None) -> Any:
    """tf.linalg.tensor_diag_part / TF1 tf.diag_part: the raw DiagPart op."""
    return _out(apply_op("DiagPart", [input], {}, name))


def trace(x: Any, name: str | None = None) -> Any:
    with _ops.name_scope(name, "Trace", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return math_ops.reduce_sum(matrix_diag_part(x), [-1], name=scope)


def logdet(matrix: Any, name: str | None = None) -> Any:
    """log(det(matrix)) of Hermitian positive definite matrices, from their Cholesky
    factor's diagonal, as TF's tf.linalg.logdet."""
    with _ops.name_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        return 2.0 * math_ops.reduce_sum(math_ops.log(matrix_diag_part(chol)), axis=[-1])


def eye(
    num_rows: Any,
    num_columns: Any = None,
    batch_shape: Any = None,
    dtype: Any = dtypes.float32,
    name: str | None = None,
) -> Any:
    """TF's tf.eye: a MatrixDiagV3 of ones (square), or ones set on the diagonal of
    zeros; sizes given as tensors build the shapes in the graph, as TF does."""
    with _ops.name_scope(name, "eye", [num_rows, num_columns, batch_shape]):
        is_square = num_columns is None
        batch = [] if batch_shape is None else batch_shape
        cols = num_rows if num_columns is None else num_columns
        dynamic = isinstance(num_rows, _ops.Tensor) or isinstance(cols, _ops.Tensor)
        if dynamic:
            diag_size: Any = math_ops.minimum(num_rows, cols)
        else:
            is_square = num_rows == cols
            diag_size = min(num_rows, cols)
        if isinstance(batch, _ops.Tensor) or dynamic:
            batch = convert_to_tensor(batch, name="shape", dtype=dtypes.int32)
            diag_shape: Any = array_ops.concat((batch, [diag_size]), axis=0)
            if not is_square:
                shape: Any = array_ops.concat((batch, [num_rows, cols]), axis=0)
        else:
            diag_shape = list(batch) + [diag_size]
            shape = list(batch) + [num_rows, cols]
        ones = array_ops.ones(diag_shape, dtype=dtype)
        if is_square:
            return matrix_diag(ones)
        return matrix_set_diag(array_ops.zeros(shape, dtype=dtype), ones)


def adjoint(matrix: Any, name: str | None = None) -> Any:
    with _ops.name_scope(name, "adjoint", [matrix]):
        matrix = convert_to_tensor(matrix, name="matrix")
        return array_ops.matrix_transpose(matrix, conjugate=True)


def cross(a: Any, b: Any, name: str | None = None) -> Any:
    return _out(apply_op("Cross", [a, b], {}, name))


def _complex_fft(op_type: str):
    def fn(input: Any, name: str | None = None) -> Any:
        return _out(apply_op(op_type, [input], {}, name))

    fn.__name__ = fn.__qualname__ = op_type.lower()
    return fn


fft, ifft = _complex_fft("FFT"), _complex_fft("IFFT")
fft2d, ifft2d = _complex_fft("FFT2D"), _complex_fft("IFFT2D")
fft3d, ifft3d = _complex_fft("FFT3D"), _complex_fft("IFFT3D")


# -- static shapes -------------------------------------------------------------------------
def _in(op: Any, i: int = 0) -> TensorShape:
    return op.inputs[i].shape


def _matrices(op: Any) -> TensorShape | None:
    s = _in(op)
    return s if s.ndims is not None and s.ndims >= 2 else None


def _batch_of(op: Any) -> list[Any]:
    s = _matrices(op)
    return [TensorShape(None) if s is None else s[:-2]]


def _slogdet_shape(op: Any) -> list[Any]:
    return _batch_of(op) * 2


def _svd_shape(op: Any) -> list[Any]:
    s = _matrices(op)
    if s is None:
        return [TensorShape(None)] * 3
    *batch, m, n = s.as_list()
    p = None if m is None or n is None else min(m, n)
    if not op.get_attr("compute_uv"):
        return [TensorShape([*batch, p]), TensorShape([0]), TensorShape([0])]
    full = op.get_attr("full_matrices")
    u = TensorShape([*batch, m, m if full else p])
    v = TensorShape([*batch, n, n if full else p])
    return [TensorShape([*batch, p]), u, v]


def _eig_shape(op: Any) -> list[Any]:
    s = _matrices(op)
    if s is None:
        return [TensorShape(None)] * 2
    v = s if op.get_attr("compute_v") else TensorShape([0])
    return [s[:-1], v]


def _solve_shape(op: Any) -> list[Any]:
    m, r = _in(op, 0), _in(op, 1)
    if m.ndims is None or r.ndims is None or m.ndims < 2 or r.ndims < 2:
        return [TensorShape(None)]
    if op.type == "MatrixTriangularSolve":
        batch = shape_fns.broadcast_shapes(m[:-2], r[:-2])
    else:
        batch = m[:-2].merge_with(r[:-2])
    return [batch.concatenate([m[-1], r[-1]])]


def _diag_part_v3_shape(op: Any) -> list[Any]:
    s, k = _matrices(op), shape_fns.constant_value(op.inputs[1])
    if s is None or k is None or k.size != 1 or int(k.reshape(-1)[0]) != 0:
        return [TensorShape(None)]
    rows, cols = s[-2], s[-1]
    width = None if rows is None or cols is None else min(rows, cols)
    return [s[:-2].concatenate([width])]


def _diag_v3_shape(op: Any) -> list[Any]:
    d = _in(op)
    consts = [shape_fns.constant_value(t) for t in op.inputs[1:4]]
    known = [c.reshape(-1) for c in consts if c is not None]
    if d.ndims is None or d.ndims < 1 or len(known) != 3:
        return [TensorShape(None)]
    k, rows, cols = known
    if k.size != 1 or int(k[0]) != 0 or int(rows[0]) != -1 or int(cols[0]) != -1:
        return [TensorShape(None)]
    return [d.concatenate([d[-1]])]


def _tensor_diag_shape(op: Any) -> list[Any]:
    d = _in(op)
    return [d if d.ndims is None else d.concatenate(d)]


def _same_as_input(op: Any) -> list[Any]:
    return [_in(op)]


for _name in (
    "MatrixInverse",
    "Cholesky",
    "MatrixBandPart",
    "MatrixSetDiagV3",
    "Cross",
    "FFT",
    "IFFT",
    "FFT2D",
    "IFFT2D",
    "FFT3D",
    "IFFT3D",
):
    shape_fns.SHAPE_FNS.setdefault(_name, _same_as_input)
shape_fns.SHAPE_FNS.setdefault("Diag", _tensor_diag_shape)
shape_fns.SHAPE_FNS.setdefault("MatrixDeterminant", _batch_of)
shape_fns.SHAPE_FNS.setdefault("LogMatrixDeterminant", _slogdet_shape)
shape_fns.SHAPE_FNS.setdefault("Svd", _svd_shape)
shape_fns.SHAPE_FNS.setdefault("SelfAdjointEigV2", _eig_shape)
shape_fns.SHAPE_FNS.setdefault("MatrixSolve", _solve_shape)
shape_fns.SHAPE_FNS.setdefault("MatrixTriangularSolve", _solve_shape)
shape_fns.SHAPE_FNS.setdefault("MatrixDiagPartV3", _diag_part_v3_shape)
shape_fns.SHAPE_FNS.setdefault("MatrixDiagV3", _diag_v3_shape)
