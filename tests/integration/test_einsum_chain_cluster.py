"""Integration, tf.einsum of three operands through a real cluster: the operands are made on
one worker and the ps, the chain of pairwise Einsum ops (opt_einsum's path) and its
gradient run on the other worker; TensorFlow's own client (tf.compat.v1.Session against OUR
master, processes started through the CLIs) and ours, both compared with TensorFlow's
local session."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import client as ours

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

W0, W1, PS = "/job:worker/task:0", "/job:worker/task:1", "/job:ps/task:0"
RNG = np.random.default_rng(17)
A = RNG.standard_normal((2, 4, 3))
B = RNG.standard_normal((3, 5))
C = RNG.standard_normal((4, 5, 2))


def _no_device(name):
    return contextlib.nullcontext()  # the local oracle has only /job:localhost


def _build(api, dev):
    """Returns (feeds, fetches): the chain's value and each operand's gradient."""
    with dev(PS):
        b = api.Variable(B, use_resource=True, name="b")
    with dev(W0):
        a = api.placeholder(api.float64, [None, 4, 3], name="a")
        c = api.constant(C) * 2.0
    with dev(W1):
        y = api.einsum("...ij,jk,ikl->...l", a, b, c)
        grads = api.gradients(api.reduce_sum(api.square(y)), [a, b, c])
    return {a: A}, [y, *grads]


def _run(api, session, target: str, dev) -> list[np.ndarray]:
    g = api.Graph()
    with g.as_default():
        feeds, fetches = _build(api, dev)
        init = api.global_variables_initializer()
    with session(target, graph=g) as sess:
        sess.run(init)
        return sess.run(fetches, feeds)


@pytest.mark.parametrize("which", ["tensorflow_client", "our_client"])
def test_einsum_chain_and_gradients_through_our_master(shared_cluster, which):
    expected = _run(tf1, tf1.Session, "", _no_device)
    np.testing.assert_allclose(expected[0], np.einsum("...ij,jk,ikl->...l", A, B, 2 * C))
    api, session = (tf1, tf1.Session) if which == "tensorflow_client" else (ours, ours.Session)
    got = _run(api, session, shared_cluster.target, api.device)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
