"""tf.gradients through v1 while_loop and cond: the gradient loop's structure and TF's
numbers, in-process and on a two-worker cluster."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.test_cluster import target  # noqa: F401  (fixture)

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module


def _tf_graph():
    """A fresh TF graph with v1 control flow (as tests/tf_oracle does), restored after."""
    from tensorflow.python.ops import control_flow_v2_toggles

    was_v2 = control_flow_v2_toggles.control_flow_v2_enabled()
    control_flow_v2_toggles.disable_control_flow_v2()
    return tf1.Graph(), was_v2


def _restore(was_v2):
    from tensorflow.python.ops import control_flow_v2_toggles

    if was_v2:
        control_flow_v2_toggles.enable_control_flow_v2()


def _power(tf):
    x = tf.placeholder(tf.float32, [], name="x")
    r = tf.while_loop(lambda i, p: i < 3, lambda i, p: (i + 1, p * x), [0, tf.constant(1.0)])
    (gx,) = tf.gradients(r[1], [x])
    return gx, {x: 2.0}


def _matmul_chain(tf):
    rng = np.random.RandomState(0)
    w = tf.constant(rng.randn(3, 3).astype(np.float32) * 0.5, name="w")
    h0 = tf.placeholder(tf.float32, [2, 3], name="h0")
    n = tf.placeholder(tf.int32, [], name="n")
    _, h = tf.while_loop(
        lambda i, h: i < n, lambda i, h: (i + 1, tf.tanh(tf.matmul(h, w))), [0, h0]
    )
    loss = tf.reduce_sum(h * h)
    gw, gh = tf.gradients(loss, [w, h0])
    return [loss, gw, gh], {h0: rng.randn(2, 3).astype(np.float32), n: 4}


def _two_accumulators(tf):
    x = tf.placeholder(tf.float32, [3], name="x")
    _, a, b = tf.while_loop(
        lambda i, a, b: i < 3,
        lambda i, a, b: (i + 1, a * x + b, tf.sin(b) + x),
        [0, tf.ones([3]), tf.zeros([3])],
    )
    (gx,) = tf.gradients(tf.reduce_sum(a) + tf.reduce_sum(b * b), [x])
    return gx, {x: np.array([0.5, -1.0, 2.0], np.float32)}


def _unused_exit_and_independent_var(tf):
    x = tf.placeholder(tf.float32, [], name="x")
    _, p, q = tf.while_loop(
        lambda i, p, q: i < 4,
        lambda i, p, q: (i + 1, p * x, x * 2.0),
        [0, tf.constant(1.0), tf.constant(0.0)],
    )
    (gx,) = tf.gradients(q, [x])
    (gp,) = tf.gradients(p + q, [x])
    return [gx, gp], {x: 1.5}


def _cond_in_loop(tf):
    x = tf.placeholder(tf.float32, [], name="x")
    _, y = tf.while_loop(
        lambda i, y: i < 5,
        lambda i, y: (i + 1, tf.cond(i % 2 < 1, lambda: y * x, lambda: y + x)),
        [0, tf.constant(1.0)],
    )
    (gx,) = tf.gradients(y, [x])
    return gx, {x: 3.0}


def _initial_value_read_in_body(tf):
    # The body reads x, which is also a loop variable's initial value: it enters the
    # loop a second time, as a constant (TF's _InitializeValues(enter_vars)).
    x = tf.placeholder(tf.float32, [2], name="x")
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.sin(y) * x), [0, x])
    (gx,) = tf.gradients(y, [x])
    return [y, gx], {x: np.array([0.5, -1.5], np.float32)}


def _loop_in_cond(tf):
    # The loop's initial value x comes through the cond's Switch (TF's outer AddValue).
    x = tf.placeholder(tf.float32, [], name="x")
    p = tf.placeholder(tf.bool, [], name="p")

    def loop():
        return tf.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, y * x), [0, x])[1]

    y = tf.cond(p, loop, lambda: x)
    (gx,) = tf.gradients(y, [x])
    return [y, gx], {x: 1.5, p: True}


def _cond_tuple(tf, take_true):
    # The untaken branch's gradient is zeros of a Switch's Shape (ZerosLikeOutsideLoop).
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    p = tf.placeholder(tf.bool, [], name="p")
    a, b = tf.cond(p, lambda: (x * 2.0, tf.reduce_sum(x)), lambda: (x, tf.constant(0.0)))
    (gx,) = tf.gradients([a * a, b], [x])
    return [a, b, gx], {x: np.arange(6, dtype=np.float32).reshape(2, 3), p: take_true}


def _cond_taken(tf):
    return _cond_tuple(tf, True)


def _cond_not_taken(tf):
    return _cond_tuple(tf, False)


def _nested(tf):
    x = tf.placeholder(tf.float32, [], name="x")

    def outer_body(i, y):
        _, z = tf.while_loop(lambda j, z: j < 2, lambda j, z: (j + 1, z * x), [0, y])
        return i + 1, z + 1.0

    _, y = tf.while_loop(lambda i, y: i < 3, outer_body, [0, tf.constant(1.0)])
    (gx,) = tf.gradients(y, [x])
    return gx, {x: 1.5}


CASES = [
    _power,
    _matmul_chain,
    _two_accumulators,
    _unused_exit_and_independent_var,
    _cond_in_loop,
    _nested,
    _cond_taken,
    _cond_not_taken,
    _initial_value_read_in_body,
    _loop_in_cond,
]


def _run(tf, case, session_target=""):
    g = tf.Graph()
    with g.as_default():
        fetches, feeds = case(tf)
        with tf.Session(session_target, graph=g) as sess:
            return sess.run(fetches, feeds)


def _tf_run(case):
    g, was_v2 = _tf_graph()
    try:
        with g.as_default():
            fetches, feeds = case(tf1)
            with tf1.Session(graph=g) as sess:
                return sess.run(fetches, feeds)
    finally:
        _restore(was_v2)


def _assert_close(ours, theirs):
    if isinstance(ours, list):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_close(a, b)
        return
    assert np.shape(ours) == np.shape(theirs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.strip("_"))
def test_same_numbers_as_tensorflow(case):
    _assert_close(_run(client, case), _tf_run(case))


@pytest.mark.parametrize(
    "case", [_power, _matmul_chain, _cond_in_loop], ids=lambda c: c.__name__.strip("_")
)
def test_same_numbers_on_cluster(case, target):  # noqa: F811
    _assert_close(_run(client, case, target), _tf_run(case))


def _layout(g):
    return [
        (
            op.name,
            op.type,
            [t.name for t in op.inputs],
            sorted(c.name for c in op.control_inputs),
            op.get_attr("frame_name") if op.type == "Enter" else b"",
        )
        for op in g.get_operations()
        if op.name.startswith("gradients/")
        and "grad_ys" not in op.name
        and op.name != "gradients/Shape"
    ]


def test_gradient_loop_layout_like_tensorflow():
    g = client.Graph()
    with g.as_default():
        _power(client)
    tg, was_v2 = _tf_graph()
    try:
        with tg.as_default():
            _power(tf1)
    finally:
        _restore(was_v2)
    assert _layout(g) == _layout(tg)
    push = g.get_operation_by_name("gradients/while/mul_grad/Mul_1/StackPushV2")
    assert push.inputs[1].name == "while/Identity_1:0"
    assert push.inputs[0].op.get_attr("frame_name") == b"while/while_context"


def test_second_order_through_loop_is_refused():
    g = client.Graph()
    with g.as_default():
        gx, _ = _power(client)
        with pytest.raises(TypeError, match="Second-order gradient for while loops not supported"):
            client.gradients(gx, [g.get_tensor_by_name("x:0")])
