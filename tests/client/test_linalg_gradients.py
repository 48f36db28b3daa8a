"""Client, linear algebra gradients: the values of TF's gradient rules (Cholesky,
MatrixInverse, MatrixDeterminant, LogMatrixDeterminant, MatrixSolve,
MatrixTriangularSolve with broadcast batches, band/diagonal ops, Cross) run by our
in-process session equal TensorFlow's (the graphs are compared node for node in
test_graph_sweep)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.tf1_oracle import assert_close, run_both

RNG = np.random.default_rng(11)
A = RNG.standard_normal((2, 3, 3))
SPD = A @ np.swapaxes(A, 1, 2) + 3 * np.eye(3)
RHS = RNG.standard_normal((2, 3, 2))

CASES = {
    "cholesky": lambda api, a, b: api.cholesky(a),
    "inverse": lambda api, a, b: api.matrix_inverse(a),
    "inverse_adjoint": lambda api, a, b: api.matrix_inverse(a, adjoint=True),
    "determinant": lambda api, a, b: api.matrix_determinant(a),
    "slogdet": lambda api, a, b: api.linalg.slogdet(a)[1],
    "logdet": lambda api, a, b: api.linalg.logdet(a),
    "solve": lambda api, a, b: api.matrix_solve(a, b),
    "solve_adjoint": lambda api, a, b: api.matrix_solve(a, b, adjoint=True),
    "cholesky_solve": lambda api, a, b: api.cholesky_solve(api.cholesky(a), b),
    "triangular_upper": lambda api, a, b: api.matrix_triangular_solve(a, b, lower=False),
    "triangular_broadcast": lambda api, a, b: api.matrix_triangular_solve(a[:1], b, adjoint=True),
    "band_part": lambda api, a, b: api.matrix_band_part(a, 1, 0),
    "diag_part": lambda api, a, b: api.matrix_diag_part(a),
    "diag": lambda api, a, b: api.matrix_diag(b[..., 0]),
    "trace": lambda api, a, b: api.trace(a),
    "tensor_diag": lambda api, a, b: api.linalg.tensor_diag(b),
    "tensor_diag_part": lambda api, a, b: api.diag_part(
        api.reshape(api.tile(a, [2, 1, 1]), [3, 2, 3, 2])
    ),
    "cross": lambda api, a, b: api.cross(a, b[..., :1] * a),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_values_match_tensorflow(case):
    def build(api):
        a, b = api.constant(SPD), api.constant(RHS)
        y = CASES[case](api, a, b)
        loss = api.reduce_sum(y * y) * 0.75
        grads = [g for g in api.gradients(loss, [a, b]) if g is not None]
        return lambda sess: sess.run([y, *grads])

    ours, theirs, _, _ = run_both(build)
    assert len(ours) == len(theirs)
    for got, want in zip(ours, theirs):
        assert_close(got, want, rtol=1e-7, atol=1e-8)
