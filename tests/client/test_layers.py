"""variable_scope / get_variable reuse, tf.layers.dense and tf.nn.dropout, with TF's names."""

from __future__ import annotations

import numpy as np
import pytest

import client as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield


def test_get_variable_reuse_like_tf():
    with tf.variable_scope("layer"):
        w = tf.get_variable("w", [2, 3])
        with pytest.raises(
            ValueError,
            match="Variable layer/w already exists, disallowed. Did you mean to set reuse=True or reuse=tf.AUTO_REUSE in VarScope?",
        ):
            tf.get_variable("w", [2, 3])
        y = tf.identity(w.value())
    with tf.variable_scope("layer", reuse=True):
        assert tf.get_variable("w", [2, 3]) is w
        with pytest.raises(
            ValueError,
            match="Variable layer/v does not exist, or was not created with tf.get_variable",
        ):
            tf.get_variable("v", [1])
        z = tf.identity(w.value())
        with tf.variable_scope("inner", reuse=False):
            assert tf.get_variable_scope().reuse is True
    with tf.variable_scope("layer", reuse=tf.AUTO_REUSE):
        assert tf.get_variable("w") is w
        v = tf.get_variable("v", [1], initializer=tf.zeros_initializer())
        assert tf.get_variable("v") is v
    with (
        tf.variable_scope("layer", reuse=True),
        pytest.raises(ValueError, match="Trying to share variable layer/w, but specified shape"),
    ):
        tf.get_variable("w", [3, 3])
    assert (w.name, v.name) == ("layer/w:0", "layer/v:0")
    assert (y.name, z.name) == ("layer/Identity:0", "layer_1/Identity:0")
    assert tf.get_variable_scope().name == ""


def test_dense_layer_names_and_values():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    h = tf.layers.dense(x, 4, activation=tf.nn.relu, kernel_initializer=tf.ones_initializer())
    out = tf.compat.v1.layers.Dense(2, name="out", bias_initializer=tf.constant_initializer(0.5))
    o1 = out(h)
    o2 = out(h)  # the same variables again
    shared = tf.layers.dense(x, 4, name="dense", reuse=True)
    assert [v.name for v in tf.trainable_variables()] == [
        "dense/kernel:0",
        "dense/bias:0",
        "out/kernel:0",
        "out/bias:0",
    ]
    assert (h.op.name, h.op.inputs[0].op.name, h.op.inputs[0].op.inputs[0].op.name) == (
        "dense/Relu",
        "dense/BiasAdd",
        "dense/MatMul",
    )
    assert out.kernel.shape.as_list() == [4, 2] and len(out.trainable_variables) == 2
    assert h.shape.as_list() == [None, 4]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, 1.0]], np.float32)
        hv, o1v, o2v, sv, kv = sess.run([h, o1, o2, shared, out.kernel], {x: xv})
    np.testing.assert_allclose(hv, np.maximum(xv.sum(1, keepdims=True) * np.ones((1, 4)), 0))
    np.testing.assert_allclose(o1v, hv @ kv + 0.5, rtol=1e-6)
    np.testing.assert_array_equal(o1v, o2v)
    np.testing.assert_allclose(sv, xv.sum(1, keepdims=True) * np.ones((1, 4)))


def test_dense_on_rank3_inputs():
    x = tf.placeholder(tf.float32, [2, 5, 3])
    y = tf.layers.dense(x, 4, kernel_initializer=tf.ones_initializer())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        yv = sess.run(y, {x: np.ones((2, 5, 3), np.float32)})
    assert yv.shape == (2, 5, 4)
    np.testing.assert_array_equal(yv, np.full((2, 5, 4), 3.0, np.float32))


def test_dropout_rate():
    x = tf.ones([1000])
    y = tf.nn.dropout(x, rate=0.75)
    with tf.Session() as sess:
        yv = sess.run(y)
    assert set(np.unique(yv).tolist()) <= {0.0, 4.0}
    assert 100 < np.count_nonzero(yv) < 400
    assert y.op.name == "dropout/SelectV2"  # TF 2.x: where_v2(keep_mask, x * scale, 0)
    with pytest.raises(
        ValueError,
        match=r"`rate` must be a scalar tensor or a float in the range \[0, 1\). Received: rate=1",
    ):
        tf.nn.dropout(x, rate=1)
    with tf.Session() as sess:
        np.testing.assert_array_equal(
            sess.run(tf.nn.dropout(x, keep_prob=1.0)), np.ones(1000, np.float32)
        )
