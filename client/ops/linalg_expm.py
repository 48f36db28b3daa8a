"""Client, graph building: tf.linalg.expm as TensorFlow's linalg_impl builds it (the
MatrixExponential kernel was removed in GraphDef version 27): scaling and squaring with
Pade approximants of degrees 3/5/7 (single precision) or 3/5/7/9/13 (double), the
degree picked per matrix from its 1-norm by nested SelectV2s, one MatrixSolve, then a
v1 while loop of squarings, with TF's node names. Pure graph building; not thread-safe
(as a Graph)."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import constant, convert_to_tensor
from client.ops import array_ops, control_flow_ops, linalg_ops, math_ops

# TF's Pade coefficients b_0..b_k and 1-norm thresholds (Higham 2005, table 2.3).
_PADE = {
    3: [120.0, 60.0, 12.0],
    5: [30240.0, 15120.0, 3360.0, 420.0, 30.0],
    7: [17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0],
    9: [
        17643225600.0,
        8821612800.0,
        2075673600.0,
        302702400.0,
        30270240.0,
        2162160.0,
        110880.0,
        3960.0,
        90.0,
    ],
    13: [
        64764752532480000.0,
        32382376266240000.0,
        7771770303897600.0,
        1187353796428800.0,
        129060195264000.0,
        10559470521600.0,
        670442572800.0,
        33522128640.0,
        1323241920.0,
        40840800.0,
        960960.0,
        16380.0,
        182.0,
    ],
}
_Degrees = tuple[float, tuple[float, ...], tuple[int, ...]]
_SINGLE: _Degrees = (3.925724783138660, (4.258730016922831e-001, 1.880152677804762e000), (3, 5, 7))
_DOUBLE: _Degrees = (
    5.371920351148152,
    (1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001, 2.097847961257068),
    (3, 5, 7, 9, 13),
)


def _pade(matrix: Any, degree: int) -> tuple[Any, Any]:
    """(U, V) of the [degree/degree] Pade approximant, as TF's _matrix_exp_padeN."""
    b = [constant(x, matrix.dtype) for x in _PADE[degree]]
    ident = linalg_ops.eye(
        array_ops.shape(matrix)[-2], batch_shape=array_ops.shape(matrix)[:-2], dtype=matrix.dtype
    )
    m2 = math_ops.matmul(matrix, matrix)
    if degree == 3:
        u = math_ops.matmul(matrix, m2 + b[1] * ident)
        return u, b[2] * m2 + b[0] * ident
    m4 = math_ops.matmul(m2, m2)
    if degree == 5:
        u = math_ops.matmul(matrix, m4 + b[3] * m2 + b[1] * ident)
        return u, b[4] * m4 + b[2] * m2 + b[0] * ident
    m6 = math_ops.matmul(m4, m2)
    if degree == 7:
        u = math_ops.matmul(matrix, m6 + b[5] * m4 + b[3] * m2 + b[1] * ident)
        return u, b[6] * m6 + b[4] * m4 + b[2] * m2 + b[0] * ident
    if degree == 9:
        m8 = math_ops.matmul(m6, m2)
        u = math_ops.matmul(matrix, m8 + b[7] * m6 + b[5] * m4 + b[3] * m2 + b[1] * ident)
        return u, b[8] * m8 + b[6] * m6 + b[4] * m4 + b[2] * m2 + b[0] * ident
    tmp_u = (
        math_ops.matmul(m6, m6 + b[11] * m4 + b[9] * m2)
        + b[7] * m6
        + b[5] * m4
        + b[3] * m2
        + b[1] * ident
    )
    u = math_ops.matmul(matrix, tmp_u)
    tmp_v = b[12] * m6 + b[10] * m4 + b[8] * m2
    v = math_ops.matmul(m6, tmp_v) + b[6] * m6 + b[4] * m4 + b[2] * m2 + b[0] * ident
    return u, v


def matrix_exponential(input: Any, name: str | None = None) -> Any:
    """tf.linalg.expm."""
    with _ops.name_scope(name, "matrix_exponential", [input]):
        matrix = convert_to_tensor(input, name="input")
        if matrix.shape[-2:] == [0, 0]:
            return matrix
        batch_shape: Any = matrix.shape[:-2]
        if not batch_shape.is_fully_defined():
            batch_shape = array_ops.shape(matrix)[:-2]
        # One flat batch makes the SelectV2s below broadcast per matrix.
        matrix = array_ops.reshape(
            matrix, array_ops.concat(([-1], array_ops.shape(matrix)[-2:]), axis=0)
        )
        l1_norm = math_ops.reduce_max(
            math_ops.reduce_sum(
                math_ops.abs(matrix), axis=array_ops.size(array_ops.shape(matrix)) - 2
            ),
            axis=-1,
        )[..., array_ops.newaxis, array_ops.newaxis]

        def const(x: Any) -> Any:
            return constant(x, l1_norm.dtype)

        def nest_where(vals: Any, cases: Any) -> Any:
            pick = math_ops.less(l1_norm, const(vals[0]))
            if len(vals) == 1:
                return array_ops.where_v2(pick, cases[0], cases[1])
            return array_ops.where_v2(pick, cases[0], nest_where(vals[1:], cases[1:]))

        if matrix.dtype in (dtypes.float16, dtypes.float32, dtypes.complex64):
            maxnorm, conds, degrees = _SINGLE
        elif matrix.dtype in (dtypes.float64, dtypes.complex128):
            maxnorm, conds, degrees = _DOUBLE
        else:
            raise ValueError(f"tf.linalg.expm does not support matrices of type {matrix.dtype}")
        squarings = math_ops.maximum(
            math_ops.floor(math_ops.log(l1_norm / const(maxnorm)) / math_ops.log(const(2.0))),
            0,
        )
        pairs = [_pade(matrix, d) for d in degrees[:-1]]
        scale = math_ops.cast(math_ops.pow(const(2.0), squarings), matrix.dtype)
        pairs.append(_pade(matrix / scale, degrees[-1]))
        u = nest_where(conds, [p[0] for p in pairs])
        v = nest_where(conds, [p[1] for p in pairs])
        return _solve_and_square(matrix, u, v, l1_norm, squarings, batch_shape, const)


def _solve_and_square(
    matrix: Any, u: Any, v: Any, l1_norm: Any, squarings: Any, batch_shape: Any, const: Any
) -> Any:
    """r = (V - U)^-1 (V + U), squared `squarings` times per matrix in a while loop."""
    is_finite = math_ops.is_finite(math_ops.reduce_max(l1_norm))
    nan = constant(np.nan, matrix.dtype)
    result = control_flow_ops.cond(
        is_finite,
        lambda: linalg_ops.matrix_solve(-u + v, u + v),
        lambda: array_ops.fill(array_ops.shape(matrix), nan),
    )
    max_squarings = math_ops.reduce_max(squarings)
    i = const(0.0)

    def c(i: Any, _: Any) -> Any:
        return control_flow_ops.cond(
            is_finite, lambda: math_ops.less(i, max_squarings), lambda: constant(False)
        )

    def b(i: Any, r: Any) -> Any:
        return i + 1, array_ops.where_v2(math_ops.less(i, squarings), math_ops.matmul(r, r), r)

    _, result = control_flow_ops.while_loop(c, b, [i, result])
    if not matrix.shape.is_fully_defined():
        return array_ops.reshape(
            result, array_ops.concat((batch_shape, array_ops.shape(result)[-2:]), axis=0)
        )
    # TF reads result.shape[-2:], which its shape refiner knows equals the input's.
    return array_ops.reshape(result, batch_shape.concatenate(matrix.shape[-2:]).as_list())
