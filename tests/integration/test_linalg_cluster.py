"""Integration, linear algebra through a real cluster: closed-form linear regression
(normal equations by matrix_inverse and by cholesky_solve) and a Gaussian-process log
likelihood with its gradient (MatrixSolve, LogMatrixDeterminant and their gradients),
plus the other linalg and FFT kernels tf.norm (ComplexAbs for complex input) and tf.diag/diag_part, built once by TensorFlow's own client
(tf.compat.v1.Session against OUR master, processes started through the CLIs) and once
by ours; both compared with TensorFlow's local session."""

from __future__ import annotations

import numpy as np
import pytest

import client as ours

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

RNG = np.random.default_rng(3)
X = RNG.standard_normal((20, 3))
Y = X @ np.array([[1.5], [-2.0], [0.5]]) + 0.01 * RNG.standard_normal((20, 1))
POINTS = np.linspace(0, 3, 8).reshape(8, 1)
TARGETS = np.sin(POINTS)
SPD = (lambda a: a @ np.swapaxes(a, 1, 2) + 3 * np.eye(3))(RNG.standard_normal((2, 3, 3)))
SIGNAL = (RNG.standard_normal(8) + 1j * RNG.standard_normal(8)).astype(np.complex64)


def _build(api):
    """Returns (feeds, fetches) of the same program under either client."""
    x = api.placeholder(api.float64, [20, 3], name="x")
    y = api.placeholder(api.float64, [20, 1], name="y")
    xtx = api.matmul(x, x, transpose_a=True)
    xty = api.matmul(x, y, transpose_a=True)
    w_inverse = api.matmul(api.matrix_inverse(xtx), xty)
    w_cholesky = api.cholesky_solve(api.cholesky(xtx), xty)

    # A GP's log marginal likelihood in its lengthscale, with the gradient.
    ls = api.placeholder(api.float64, [], name="lengthscale")
    p = api.constant(POINTS)
    sqdist = api.reduce_sum(api.square(api.expand_dims(p, 1) - api.expand_dims(p, 0)), 2)
    k = api.exp(-0.5 * sqdist / (ls * ls)) + 0.1 * api.eye(8, dtype=api.float64)
    t = api.constant(TARGETS)
    alpha = api.matrix_solve(k, t)
    _, logdet = api.linalg.slogdet(k)
    loglik = -0.5 * api.reduce_sum(t * alpha) - 0.5 * logdet
    (dls,) = api.gradients(loglik, [ls])

    spd = api.constant(SPD)
    lower = api.cholesky(spd)
    others = [
        api.matrix_determinant(spd),
        api.matrix_triangular_solve(lower, api.constant(SPD[..., :1])),
        api.matrix_band_part(spd, 0, 1),
        api.trace(spd),
        api.svd(spd, compute_uv=False),
        api.self_adjoint_eigvals(spd),
        api.matrix_set_diag(spd, api.matrix_diag_part(spd) * 2.0),
        api.cross(api.constant(SPD[..., 0]), api.constant(SPD[..., 1])),
        api.signal.fft(api.constant(SIGNAL)),
        api.norm(spd, ord=1, axis=(1, 2)),
        api.norm(x, axis=0, keepdims=True),
        api.norm(api.constant(SIGNAL), ord=np.inf),
        api.diag_part(api.diag(api.constant(SIGNAL))),
        api.linalg.tensor_diag(api.trace(spd)),
    ]
    feeds = {x: X, y: Y, ls: 0.7}
    return feeds, [w_inverse, w_cholesky, loglik, dls, *others]


def _run(api, session, target: str) -> list[np.ndarray]:
    g = api.Graph()
    with g.as_default():
        feeds, fetches = _build(api)
    with session(target, graph=g) as sess:
        return sess.run(fetches, feeds)


def test_regression_and_gp_likelihood_through_our_master_with_both_clients(shared_cluster):
    expected = _run(tf1, tf1.Session, "")
    np.testing.assert_allclose(expected[0], [[1.5], [-2.0], [0.5]], atol=0.02)
    for api, session in ((tf1, tf1.Session), (ours, ours.Session)):
        got = _run(api, session, shared_cluster.target)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert np.asarray(g).dtype == np.asarray(e).dtype
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
