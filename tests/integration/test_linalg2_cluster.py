"""Integration, least squares and decompositions through a real cluster: the design
matrix is a variable on the ps; a worker fits it by tf.linalg.lstsq (the regularized
Cholesky graph, and the MatrixSolveLs op when not fast), descends on the matrix through
the gradients of the fit's residual and of its nuclear norm (the Svd gradient), and
reads its eigenvalues, square root and real FFT. Built once by TensorFlow's own client
(tf.compat.v1.Session against OUR master, processes started through the CLIs) and once
by ours; both compared with TensorFlow's local session."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import client as ours

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

W0, PS = "/job:worker/task:0", "/job:ps/task:0"
RNG = np.random.default_rng(23)
A0 = RNG.standard_normal((12, 3))
B = A0 @ np.array([[1.0], [-0.5], [2.0]]) + 0.05 * RNG.standard_normal((12, 1))
STEPS = 3


def _eig(api):
    return ours.linalg.eigvals if api is ours else tf.linalg.eigvals


def _build(api, dev):
    """(per-step fetches, final fetches) of the same program under either client."""
    with dev(PS):
        a = api.get_variable("a", dtype=api.float64, initializer=api.constant(A0))
    with dev(W0):
        b = api.constant(B)
        x = api.linalg.lstsq(a, b, l2_regularizer=0.01)
        x_exact = api.linalg.lstsq(a, b, fast=False)
        residual = api.reduce_sum(api.square(api.matmul(a, x) - b))
        nuclear = api.reduce_sum(api.svd(a, compute_uv=False))
        s, u, v = api.svd(a)
        spread = api.reduce_sum(api.abs(u) ** 3) + api.reduce_sum(s * s)
        grad_a = api.gradients(residual + 0.1 * nuclear + 0.01 * spread, a)[0]
        with api.control_dependencies([x, x_exact, residual, grad_a]):  # read, then step
            step = api.assign_sub(a, 0.05 * grad_a)
        gram = api.matmul(a, a, transpose_a=True)
        finals = [
            api.abs(_eig(api)(gram)),
            api.linalg.sqrtm(gram + 3.0 * api.eye(3, dtype=api.float64)),
            api.signal.rfft(api.transpose(a)),
        ]
    return [x, x_exact, residual, grad_a, step], finals


def _no_device(name):
    return contextlib.nullcontext()  # the local oracle has only /job:localhost


def _run(api, session, target: str, dev) -> list:
    g = api.Graph()
    with g.as_default():
        steps, finals = _build(api, dev)
        init = api.global_variables_initializer()
    with session(target, graph=g) as sess:
        sess.run(init)
        out = [sess.run(steps) for _ in range(STEPS)]
        last = sess.run(finals)
    last[0] = np.sort(last[0])  # eigenvalue order is the solver's choice
    return out + [last]


def test_lstsq_fit_and_svd_gradient_with_the_matrix_on_the_ps(shared_cluster):
    expected = _run(tf1, tf1.Session, "", _no_device)
    x_first = expected[0][1]
    np.testing.assert_allclose(x_first, [[1.0], [-0.5], [2.0]], atol=0.1)
    for api, session in ((tf1, tf1.Session), (ours, ours.Session)):
        got = _run(api, session, shared_cluster.target, api.device)
        assert len(got) == len(expected)
        for g_step, e_step in zip(got, expected):
            for g, e in zip(g_step, e_step):
                assert np.asarray(g).dtype == np.asarray(e).dtype
                np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)
