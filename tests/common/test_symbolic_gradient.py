"""Tests (function instantiation): SymbolicGradient — TF1 `tf.gradients` through a
`function.Defun` without a Python gradient, run by our in-process session against
TensorFlow's; an op without a runtime gradient is Unimplemented naming op, node and
function."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import UnimplementedError
from common.session import Session

tf = pytest.importorskip("tensorflow.compat.v1")
function = pytest.importorskip("tensorflow.python.framework.function")


def _both(build):
    graph = tf.Graph()
    with graph.as_default():
        fetches = build()
    assert any(n.op == "SymbolicGradient" for n in graph.as_graph_def().node)
    with tf.Session(graph=graph) as sess:
        theirs = sess.run(fetches)
    with Session(graph.as_graph_def().SerializeToString()) as sess:
        ours = sess.run([t.name for t in fetches])
    return theirs, ours


A = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
B = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)


def test_gradients_of_a_defun_match_tensorflow() -> None:
    def build():
        @function.Defun(tf.float32, tf.float32)
        def f(x, y):
            z = tf.matmul(x, y) + tf.tanh(x) * 2.0 - tf.sigmoid(y) / (x * x + 1.0)
            return z, tf.reduce_sum(tf.exp(x) * y, axis=1), tf.reduce_mean(tf.nn.relu(y - x))

        a, b = tf.constant(A), tf.constant(B)
        outs = f(a, b)
        return tf.gradients(outs, [a, b])

    theirs, ours = _both(build)
    for t, o in zip(theirs, ours, strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-6, atol=1e-6)


RATIONAL = {
    "matmul_mul": lambda x, y: (tf.matmul(x, y) * x, tf.reduce_sum(tf.square(x), axis=0)),
    "div_square": lambda x, y: y / (x * x + 1.0),
    "max_min": lambda x, y: tf.maximum(x, y) * tf.minimum(y, 1.5),
    "relu_mean": lambda x, y: tf.reduce_mean(tf.nn.relu(y - x)) - x,
    "array_ops": lambda x, y: tf.squeeze(
        tf.expand_dims(tf.nn.bias_add(tf.transpose(x), tf.reduce_sum(y, 0)), 0), [0]
    ),
}


@pytest.mark.parametrize("name", sorted(RATIONAL))
def test_rational_ops_match_tensorflow_bit_for_bit(name: str) -> None:
    """Without transcendental kernels (whose last bits differ from Eigen's) and with at
    most two gradients meeting at a tensor (TensorFlow's grappler may regroup longer
    sums), the gradient body computes TensorFlow's values exactly."""

    def build():
        f = function.Defun(tf.float32, tf.float32, func_name=f"f_{name}")(RATIONAL[name])
        a, b = tf.constant(A), tf.constant(B)
        return tf.gradients(f(a, b), [a, b])

    theirs, ours = _both(build)
    for t, o in zip(theirs, ours, strict=True):
        np.testing.assert_array_equal(o, t)


def test_softmax_matches_tensorflow() -> None:
    def build():
        @function.Defun(tf.float32, tf.float32)
        def f(x, y):
            return tf.nn.softmax(x * y)

        a, b = tf.constant(A), tf.constant(B)
        return tf.gradients(f(a, b), [a, b], grad_ys=tf.constant(B * 3.0))

    theirs, ours = _both(build)
    for t, o in zip(theirs, ours, strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-6, atol=1e-6)


def test_an_argument_no_result_depends_on_gets_zeros() -> None:
    def build():
        @function.Defun(tf.float32, tf.float32)
        def f(x, y):
            return tf.square(x) + tf.log(
                tf.cast(tf.cast(x, tf.float64), tf.float32) + 3.0
            ), y * 0.0 + 1.0

        a, b = tf.constant(A), tf.constant(B)
        z, _ = f(a, b)
        return tf.gradients(z, [a, b])

    theirs, ours = _both(build)
    for t, o in zip(theirs, ours, strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-6, atol=1e-6)


def test_an_op_without_runtime_gradient_is_unimplemented() -> None:
    graph = tf.Graph()
    with graph.as_default():

        @function.Defun(tf.float32)
        def f(x):
            return tf.cumsum(x, axis=0)

        a = tf.constant(A)
        (grad,) = tf.gradients(f(a), [a])
    sess = Session(graph.as_graph_def().SerializeToString())
    with sess, pytest.raises(UnimplementedError, match=r"op 'Cumsum' \(node 'Cumsum'"):
        sess.run([grad.name])


def test_signature_matches_tensorflow() -> None:
    from tests.common.ops.signatures import assert_signature_matches_tensorflow

    assert_signature_matches_tensorflow("SymbolicGradient")
