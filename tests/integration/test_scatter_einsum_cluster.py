"""Integration, N-d scatters and einsum through a real cluster: a worker scatters rows into a
table variable on the ps (scatter_nd_update / scatter_nd_add), an einsum layer on the other
worker trains one step against ps variables (Einsum and its gradient, the update applied on
the ps), plus TensorScatterMax, UniqueV2 and InplaceAdd; TensorFlow's own client
(tf.compat.v1.Session against OUR master, processes started through the CLIs, reference
variables too) and ours, both compared with TensorFlow's local session. A bad index fails
the step with TensorFlow's InvalidArgument naming the node."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import client as ours

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

W0, W1, PS = "/job:worker/task:0", "/job:worker/task:1", "/job:ps/task:0"
RNG = np.random.default_rng(7)
X = RNG.standard_normal((5, 3))
TARGET = RNG.standard_normal((5, 2))
W_INIT = RNG.standard_normal((3, 2))
ROWS = np.array([[1], [3], [1]], np.int32)
NEW_ROWS = RNG.standard_normal((3, 3))


def _no_device(name):
    return contextlib.nullcontext()  # the local oracle has only /job:localhost


def _build(api, dev, ref_variables: bool):
    """Returns (feeds, fetches before the step, train op, fetches after). Each update's
    read is fetched in a step of its own: TensorFlow orders a later update after an earlier
    one's update op, not after its read."""
    with dev(PS):
        table = api.Variable(np.zeros((4, 3)), use_resource=True, name="table")
        w = api.Variable(W_INIT, use_resource=True, name="w")
    with dev(W0):
        rows = api.placeholder(api.int32, [None, 1], name="rows")
        values = api.placeholder(api.float64, [None, 3], name="values")
        doubled = values * 2.0
    with dev(W1):
        scattered = api.scatter_nd_update(table, rows, doubled)
        added = api.scatter_nd_add(table, rows[:1], values[:1])  # run after `scattered`
        x = api.placeholder(api.float64, [None, 3], name="x")
        y = api.einsum("bi,ij->bj", x, w)
        loss = api.reduce_mean(api.square(y - TARGET))
        (grad,) = api.gradients(loss, [w])
        train = api.train.GradientDescentOptimizer(0.1).minimize(loss)
        maxed = api.tensor_scatter_nd_max(api.constant(X[:4]), rows, doubled)
    feeds = {rows: ROWS, values: NEW_ROWS, x: X}
    before = [scattered, y, loss, grad, maxed]
    if ref_variables:  # TensorFlow's client only: reference variables and raw ops
        with dev(PS):
            ref = api.Variable(np.ones((4, 3)), use_resource=False, name="ref")
        with dev(W1):
            before.append(api.scatter_nd_sub(ref, rows, doubled))
            before.extend(tf.raw_ops.UniqueV2(x=rows, axis=[0]))
            before.append(tf.raw_ops.InplaceAdd(x=api.constant(X), i=[0, 4, 0], v=X[:3]))
    return feeds, before, train, [added, w.read_value(), loss]


def _run(api, session, target: str, dev, ref_variables: bool) -> list[np.ndarray]:
    g = api.Graph()
    with g.as_default():
        feeds, before, train, after = _build(api, dev, ref_variables)
        init = api.global_variables_initializer()
    with session(target, graph=g) as sess:
        sess.run(init)
        first = sess.run(before, feeds)
        sess.run(train, feeds)
        return first + sess.run(after, feeds)


def _assert_same(got: list, expected: list) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("which", ["tensorflow_client", "our_client"])
def test_scatter_and_einsum_step_through_our_master(shared_cluster, which):
    tf_client = which == "tensorflow_client"
    expected = _run(tf1, tf1.Session, "", _no_device, tf_client)
    api, session = (tf1, tf1.Session) if tf_client else (ours, ours.Session)
    got = _run(api, session, shared_cluster.target, api.device, tf_client)
    _assert_same(got, expected)
    # The einsum layer's step moved the ps weights against the gradient (the learning
    # rate is a float32 0.1 in both optimizers).
    np.testing.assert_allclose(got[-2], W_INIT - np.float32(0.1) * got[3], rtol=1e-12)


def test_bad_index_fails_with_the_node_name(shared_cluster):
    g = tf1.Graph()
    with g.as_default():
        with tf1.device(PS):
            table = tf1.Variable(np.zeros((4, 3)), use_resource=True, name="table")
        with tf1.device(W1):
            rows = tf1.placeholder(tf.int32, [None, 1], name="rows")
            update = tf1.scatter_nd_update(table, rows, np.ones((1, 3)), name="bad_scatter")
        init = tf1.global_variables_initializer()
    with tf1.Session(shared_cluster.target, graph=g) as sess:
        sess.run(init)
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            sess.run(update, {rows: [[7]]})
    assert "indices[0] = [7] does not index into shape [4,3]" in e.value.message
    assert "bad_scatter" in e.value.message
