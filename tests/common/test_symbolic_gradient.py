"""Tests (function instantiation): SymbolicGradient — TF1 `tf.gradients` through a
`function.Defun` without a Python gradient, run by our in-process session against
TensorFlow's; an op without a runtime gradient is Unimplemented naming op, node and
function."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import NotFoundError
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


def test_an_op_without_runtime_gradient_is_not_found() -> None:
    graph = tf.Graph()
    with graph.as_default():

        @function.Defun(tf.float32)
        def f(x):
            return tf.cumsum(x, axis=0)

        a = tf.constant(A)
        (grad,) = tf.gradients(f(a), [a])
    sess = Session(graph.as_graph_def().SerializeToString())
    with (
        sess,
        pytest.raises(NotFoundError, match=r"No gradient defined for op: Cumsum \(node 'Cumsum'"),
    ):
        sess.run([grad.name])


X = np.random.RandomState(1).rand(2, 6, 6, 3).astype(np.float32) - 0.3
Y = np.random.RandomState(2).rand(2, 6, 6, 3).astype(np.float32) + 0.2
K = np.random.RandomState(3).rand(3, 3, 3, 4).astype(np.float32) - 0.5

# What TF1 Defun bodies commonly use, over NHWC tensors x (signed) and y (positive).
EXACT = {
    "avg_pool": lambda x, y: tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME") * 3.0,
    "max_pool": lambda x, y: tf.nn.max_pool(x * y, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
    "relu6": lambda x, y: tf.nn.relu6(x * 8.0) * y,
    "concat": lambda x, y: tf.concat([x, y, x], axis=2) * 2.0,
    "concat_v1": lambda x, y: tf.raw_ops.Concat(concat_dim=1, values=[y, x]),
    "split": lambda x, y: tf.split(x, 3, axis=1)[1] * tf.split(y, [1, 5], axis=2)[1][:, :2, :1],
    "slice": lambda x, y: tf.slice(x, [0, 1, 1, 0], [2, 3, 4, 2]) * y[:, :3, :4, :2],
    "strided_slice": lambda x, y: x[:, 1:5:2, ::-1, 1] - y[1, 1:3, :, 0],
    "select": lambda x, y: tf.where(x > 0.2, x, y),
    "square_mean": lambda x, y: tf.reduce_mean(tf.square(x - y), axis=[1, 2]),
    "squared_difference": lambda x, y: tf.squared_difference(x, y[:1]),
    "max_min": lambda x, y: tf.reduce_max(x, axis=2) - tf.reduce_min(y * 0.0 + 1.0, axis=[1]),
    "cast_identity": lambda x, y: tf.cast(tf.cast(tf.identity(x), tf.float64) * 2.0, tf.float32),
    "stop_gradient": lambda x, y: tf.stop_gradient(x) * y + x,
    "stack_reverse": lambda x, y: tf.reverse(tf.stack([x, y], axis=1), [2]),
    "fill_broadcast": lambda x, y: (
        tf.fill([2, 2], tf.reduce_sum(x)) + tf.broadcast_to(y[:, :1], [2, 4, 6, 3])[0, 0, :2, :2]
    ),
    "comparisons": lambda x, y: tf.cast(x < y, tf.float32) * x + tf.floor(y) * tf.sign(x),
}
# Conv2D's backprop-input kernel sums in another order than TF's: ulps apart.
CLOSE = {
    "conv2d": lambda x, y: tf.nn.conv2d(x, y[0, :3, :3, :, None] * K, [1, 1, 1, 1], "SAME"),
    "conv2d_strided": lambda x, y: tf.nn.conv2d(x, tf.constant(K), [1, 2, 2, 1], "VALID"),
    "pow": lambda x, y: tf.pow(y, x) + tf.pow(x, 2.0),
    "sqrt_rsqrt": lambda x, y: tf.sqrt(y) * tf.rsqrt(y + 1.0),
    "exp_log": lambda x, y: tf.exp(x) * tf.log(y),
    "log_softmax": lambda x, y: tf.nn.log_softmax(tf.reshape(x * y, [12, 18])),
    "expm1_log1p_atan": lambda x, y: tf.expm1(x) * tf.log1p(y) + tf.atan(x),
}


def _compare(name: str, body, exact: bool) -> None:
    def build():
        f = function.Defun(tf.float32, tf.float32, func_name=f"f_{name}")(body)
        a, b = tf.constant(X), tf.constant(Y)
        return tf.gradients(f(a, b), [a, b])

    theirs, ours = _both(build)
    for t, o in zip(theirs, ours, strict=True):
        if exact:
            np.testing.assert_array_equal(o, t)
        else:
            np.testing.assert_allclose(o, t, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(EXACT))
def test_common_defun_ops_match_tensorflow_bit_for_bit(name: str) -> None:
    _compare(name, EXACT[name], exact=True)


@pytest.mark.parametrize("name", sorted(CLOSE))
def test_transcendental_defun_ops_match_tensorflow(name: str) -> None:
    _compare(name, CLOSE[name], exact=False)


NO_GRADIENT = {
    "Elu": lambda x: tf.nn.elu(x),
    "Softplus": lambda x: tf.nn.softplus(x),
    "Pad": lambda x: tf.pad(x, [[0, 0], [1, 2]]),
    "Tile": lambda x: tf.tile(x, [1, 2]),
    "GatherV2": lambda x: tf.gather(x, [1, 0, 1]),
    "Prod": lambda x: tf.reduce_prod(x, axis=1),
    "ArgMax": lambda x: tf.cast(tf.argmax(x, axis=1), tf.float32),
    "AddN": lambda x: tf.add_n([x, x, x]),
}


@pytest.mark.parametrize("op", sorted(NO_GRADIENT))
def test_ops_tensorflow_has_no_gradient_for_are_not_found_as_there(op: str) -> None:
    graph = tf.Graph()
    with graph.as_default():
        f = function.Defun(tf.float32, func_name=f"f_{op}")(NO_GRADIENT[op])
        a = tf.constant(A)
        (grad,) = tf.gradients(f(a), [a])
        with tf.Session() as sess, pytest.raises(tf.errors.NotFoundError, match=op):
            sess.run(grad)
    sess = Session(graph.as_graph_def().SerializeToString())
    with sess, pytest.raises(NotFoundError, match=f"No gradient defined for op: {op} "):
        sess.run([grad.name])


def test_signature_matches_tensorflow() -> None:
    from tests.common.ops.signatures import assert_signature_matches_tensorflow

    assert_signature_matches_tensorflow("SymbolicGradient")
