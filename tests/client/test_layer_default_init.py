"""tf.layers and tf.nn.rnn_cell kernels without an initializer: TensorFlow 2.x's tf_keras
GlorotUniform, stateless and seeded from Python's `random`, value for value."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

import client

tf_real = pytest.importorskip("tensorflow")
pytest.importorskip("tf_keras")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
tf1 = tf_real.compat.v1


def _model(tf):
    tf.set_random_seed(14)  # no effect on these kernels in TensorFlow 2.x: the point
    tf.layers.dense(tf.ones([2, 5]), 3)
    tf.layers.conv2d(tf.ones([1, 4, 4, 2]), 3, 2)
    with tf.variable_scope("lstm"):
        tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(2), tf.ones([1, 2, 3]), dtype=tf.float32)
    with tf.variable_scope("gru"):
        tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(2), [tf.ones([1, 3])], dtype=tf.float32)
    with tf.variable_scope("scoped", initializer=tf.constant_initializer(0.5)):
        tf.layers.dense(tf.ones([2, 2]), 2, use_bias=False)


def _values(tf, build=_model):
    g = tf.Graph()
    with g.as_default():
        random.seed(0)
        build(tf)
        variables = tf.trainable_variables()
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            return [v.name for v in variables], sess.run(variables), g


def test_default_kernels_equal_tensorflow() -> None:
    names, ours, _ = _values(client)
    tf_names, theirs, _ = _values(tf1)
    assert names == tf_names
    for name, a, b in zip(names, ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=name)
    assert np.all(ours[-1] == 0.5)  # a scope's initializer still wins


def test_default_kernel_ops_match_tensorflow() -> None:
    def ops(tf):
        g = _values(tf, lambda tf: tf.layers.dense(tf.ones([2, 5]), 3))[2]
        return [
            (o.name, o.type)
            for o in g.get_operations()
            if o.name.startswith("dense/kernel/Initializer")
        ]

    assert ops(client) == ops(tf1)
    assert (
        "dense/kernel/Initializer/stateless_random_uniform/StatelessRandomUniformV2",
        "StatelessRandomUniformV2",
    ) in ops(client)


def test_seed_comes_from_python_random() -> None:
    def kernel(seed: int):
        g = client.Graph()
        with g.as_default():
            random.seed(seed)
            k = client.layers.dense(client.ones([1, 4]), 4).graph.get_collection("variables")[0]
            with client.Session(graph=g) as sess:
                sess.run(client.global_variables_initializer())
                return sess.run(k)

    assert np.array_equal(kernel(1), kernel(1))
    assert not np.array_equal(kernel(1), kernel(2))
