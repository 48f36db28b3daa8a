"""tf.TensorArray in a TF1 graph (v1 control flow): TensorFlow's numbers for the values
and their gradients, and TensorFlow's static shapes for what each program fetches."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.test_while_gradients import _assert_close, _restore, _tf_graph

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

_RNG = np.random.RandomState(0)
_X32 = _RNG.randn(3, 2).astype(np.float32)
_X42 = _RNG.randn(4, 2).astype(np.float32)
_W = _RNG.randn(3, 2).astype(np.float32)


def _unstack_write_stack(tf):
    x = tf.placeholder(tf.float32, [3, 2], name="x")
    ta = tf.TensorArray(tf.float32, size=3).unstack(x)
    out = tf.TensorArray(tf.float32, size=2).write(0, ta.read(1) * 2.0).write(1, ta.read(2))
    out = out.stack()
    (gx,) = tf.gradients(tf.reduce_sum(out * _W[:2]), x)
    return [out, gx], {x: _X32}


def _split_concat(tf):
    x = tf.placeholder(tf.float32, [4, 2], name="x")
    out = tf.TensorArray(tf.float32, size=2, infer_shape=False).split(x, [1, 3]).concat()
    (gx,) = tf.gradients(tf.reduce_sum(out * out), x)
    return [out, gx], {x: _X42}


def _split_equal_concat(tf):
    x = tf.placeholder(tf.float32, [4, 2], name="x")
    out = tf.TensorArray(tf.float32, size=2).split(x, [2, 2]).concat()
    (gx,) = tf.gradients(tf.reduce_sum(tf.sin(out)), x)
    return [out, gx], {x: _X42}


def _scatter_gather(tf):
    x = tf.placeholder(tf.float32, [3, 2], name="x")
    ta = tf.TensorArray(tf.float32, size=4, element_shape=[2]).scatter([0, 2, 3], x)
    out = ta.write(1, ta.read(0) * 3.0).gather([3, 1, 2])
    (gx,) = tf.gradients(tf.reduce_sum(out * _W), x)
    return [out, gx], {x: _X32}


def _written_in_while(tf):
    x = tf.placeholder(tf.float32, [2], name="x")
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)

    def body(i, ta):
        return i + 1, ta.write(i, x * tf.cast(i + 1, tf.float32))

    _, ta = tf.while_loop(lambda i, ta: i < 3, body, [tf.constant(0), ta])
    out = ta.stack()
    (gx,) = tf.gradients(tf.reduce_sum(out * out), x)
    return [out, gx], {x: _X32[0]}


def _read_in_while(tf):
    x = tf.placeholder(tf.float32, [3, 2], name="x")
    inputs = tf.TensorArray(tf.float32, size=3).unstack(x)

    def body(i, h):
        return i + 1, tf.tanh(h + inputs.read(i))

    _, h = tf.while_loop(lambda i, h: i < 3, body, [tf.constant(0), tf.zeros([2])])
    (gx,) = tf.gradients(tf.reduce_sum(h), x)
    return [h, gx], {x: _X32}


def _rnn_like(tf):
    x = tf.placeholder(tf.float32, [3, 2], name="x")
    inputs = tf.TensorArray(tf.float32, size=3).unstack(x)
    out = tf.TensorArray(tf.float32, size=0, dynamic_size=True)

    def body(i, h, out):
        h = tf.tanh(h * 0.5 + inputs.read(i))
        return i + 1, h, out.write(i, h)

    _, h, out = tf.while_loop(lambda i, h, out: i < 3, body, [tf.constant(0), tf.zeros([2]), out])
    stacked = out.stack()
    (gx,) = tf.gradients([h, stacked * _W], x)
    return [h, stacked, out.size(), gx], {x: _X32}


def _cond_written_in_while(tf):
    x = tf.placeholder(tf.float32, [2], name="x")
    ta = tf.TensorArray(tf.float32, size=3)

    def body(i, ta):
        v = tf.cond(i < 1, lambda: x * 2.0, lambda: tf.sin(x) * tf.cast(i, tf.float32))
        return i + 1, ta.write(i, v)

    _, ta = tf.while_loop(lambda i, ta: i < 3, body, [0, ta])
    out = ta.stack()
    (gx,) = tf.gradients(tf.reduce_sum(out * _W), x)
    return [out, gx], {x: _X32[1]}


CASES = [
    _unstack_write_stack,
    _split_concat,
    _split_equal_concat,
    _scatter_gather,
    _written_in_while,
    _read_in_while,
    _cond_written_in_while,
    _rnn_like,
]


def _run(tf, graph, case):
    with graph.as_default():
        fetches, feeds = case(tf)
        shapes = [t.shape.as_list() if t.shape.ndims is not None else None for t in fetches]
        with tf.Session(graph=graph) as sess:
            return sess.run(fetches, feeds), shapes


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.strip("_"))
def test_values_gradients_and_shapes_as_tensorflow(case):
    ours, our_shapes = _run(client, client.Graph(), case)
    g, was_v2 = _tf_graph()
    try:
        theirs, their_shapes = _run(tf1, g, case)
    finally:
        _restore(was_v2)
    assert our_shapes == their_shapes
    _assert_close(ours, theirs)
