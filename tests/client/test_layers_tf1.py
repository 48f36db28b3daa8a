"""tf.compat.v1.layers through `client` against tensorflow.compat.v1 (TF 2.21 serves them
from tf_keras): variable names, output tensor names, values in training and inference,
gradients, batch-norm update ops in UPDATE_OPS."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.tf1_oracle import assert_close, need_tf_keras, run_both

TF_GRAPH_MODE = True

IMG = np.random.RandomState(1).randn(2, 7, 6, 3).astype(np.float32)
SEQ = np.random.RandomState(2).randn(2, 9, 3).astype(np.float32)


@pytest.fixture(autouse=True)
def _tf_keras():
    need_tf_keras()


def _run(build):
    out, want, _, _ = run_both(build)
    assert_close(out, want, rtol=2e-5, atol=2e-5)


def _with_grads(tf, y, x, feed, extra=()):
    loss = tf.reduce_sum(tf.square(y))
    grads = tf.gradients(loss, [x] + tf.trainable_variables())
    variables = [v.name for v in tf.global_variables()]

    def steps(sess):
        return sess.run([y, grads, *extra], feed), variables, y.name

    return steps


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_conv_and_pool_2d_like_tf(padding):
    def build(tf):
        x = tf.placeholder(tf.float32, [None, 7, 6, 3], name="x")
        h = tf.layers.conv2d(x, 4, 3, strides=(1, 1), padding=padding, activation=tf.nn.relu)
        h = tf.layers.max_pooling2d(h, 2, 1, padding=padding)
        h = tf.layers.conv2d(h, 2, (2, 2), dilation_rate=1, use_bias=False, name="second")
        h = tf.layers.average_pooling2d(h, (2, 1), (1, 1))
        y = tf.layers.dense(tf.layers.flatten(h), 3)
        return _with_grads(tf, y, x, {x: IMG})

    _run(build)


def test_conv1d_and_pool1d_like_tf():
    def build(tf):
        x = tf.placeholder(tf.float32, [2, 9, 3], name="x")
        h = tf.layers.conv1d(x, 4, 3, padding="same", activation=tf.nn.tanh)
        h = tf.layers.max_pooling1d(h, 2, 2)
        h = tf.layers.conv1d(h, 2, 2, strides=2)
        y = tf.layers.average_pooling1d(h, 1, 1)
        return _with_grads(tf, y, x, {x: SEQ})

    _run(build)


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_conv2d_transpose_like_tf(padding):
    def build(tf):
        x = tf.placeholder(tf.float32, [None, 7, 6, 3], name="x")
        y = tf.layers.conv2d_transpose(x, 2, 3, strides=2, padding=padding, activation=tf.nn.relu)
        return _with_grads(tf, y, x, {x: IMG})

    _run(build)


def test_dropout_layer_inference_and_reuse_like_tf():
    def build(tf):
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        d = tf.layers.dropout(x, 0.5, training=False)
        with tf.variable_scope("shared"):
            a = tf.layers.dense(d, 4, name="fc")
        with tf.variable_scope("shared", reuse=True):
            b = tf.layers.dense(x, 4, name="fc")
        layer = tf.layers.Dense(2, activation=tf.nn.sigmoid)
        c1, c2 = layer(a), layer(b)
        y = c1 + c2
        return _with_grads(tf, y, x, {x: IMG[0, 0]})

    _run(build)


@pytest.mark.parametrize("shape,axis", [((2, 7, 6, 3), -1), ((2, 7, 6, 3), 1), ((6, 5), -1)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_normalization_like_tf(shape, axis, training):
    data = np.random.RandomState(3).randn(*shape).astype(np.float32) * 2 + 1

    def build(tf):
        x = tf.placeholder(tf.float32, shape, name="x")
        y = tf.layers.batch_normalization(x, axis=axis, training=training, momentum=0.9)
        y = tf.layers.batch_normalization(y, axis=axis, training=training, center=False)
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        loss = tf.reduce_sum(tf.square(y) * np.arange(y.shape[-1], dtype=np.float32))
        with tf.control_dependencies(updates):
            train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        variables = sorted(v.name for v in tf.global_variables())

        def steps(sess):
            out = [sess.run([y, loss, train], {x: data})[:2] for _ in range(3)]
            return out, sess.run(tf.global_variables()), variables, len(updates)

        return steps

    _run(build)


def test_batch_normalization_training_tensor_like_tf():
    data = np.random.RandomState(4).randn(4, 3).astype(np.float32)

    def build(tf):
        x = tf.placeholder(tf.float32, [4, 3], name="x")
        is_training = tf.placeholder(tf.bool, [], name="is_training")
        y = tf.layers.batch_normalization(x, training=is_training)
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)

        def steps(sess):
            a = sess.run([y, updates], {x: data, is_training: True})
            b = sess.run(y, {x: data, is_training: False})
            return a, b, sess.run(tf.global_variables())

        return steps

    _run(build)


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_conv3d_and_pool3d_like_tf(padding):
    vol = np.random.RandomState(5).randn(2, 5, 6, 4, 2).astype(np.float32)

    def build(tf):
        x = tf.placeholder(tf.float32, [None, 5, 6, 4, 2], name="x")
        h = tf.layers.conv3d(x, 3, (2, 3, 2), strides=(1, 1, 1), padding=padding)
        h = tf.layers.max_pooling3d(h, 2, 1, padding=padding)
        h = tf.layers.conv3d(h, 2, 2, dilation_rate=(1, 1, 1), activation=tf.nn.relu)
        y = tf.layers.average_pooling3d(h, (1, 2, 1), 1, padding="same")
        return _with_grads(tf, y, x, {x: vol})

    _run(build)


def test_conv3d_strided_same_like_tf():
    vol = np.random.RandomState(6).randn(1, 5, 7, 4, 2).astype(np.float32)

    def build(tf):
        x = tf.placeholder(tf.float32, [1, 5, 7, 4, 2], name="x")
        h = tf.layers.conv3d(x, 2, 3, strides=2, padding="same")
        y = tf.layers.max_pooling3d(h, 2, 2, padding="same")
        return _with_grads(tf, y, x, {x: vol})

    _run(build)
