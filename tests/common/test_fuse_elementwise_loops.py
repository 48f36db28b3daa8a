"""Tests for elementwise fusion inside v1 control flow (common.optimizer.fuse_elementwise):
while loops, conds, a cond inside a loop, their gradients and a dynamic_rnn LSTM training
step give the same bits fused and unfused, the same errors, fewer executor nodes, and
the fused nodes are in the partition graphs."""

from __future__ import annotations

import numpy as np
import pytest

import client as tf
from common.errors import OpError
from common.session import Session
from protos import config_pb2, rewriter_config_pb2


def _config(fuse: bool) -> config_pb2.ConfigProto:
    config = config_pb2.ConfigProto()
    if not fuse:
        config.graph_options.rewrite_options.remapping = rewriter_config_pb2.RewriterConfig.OFF
    return config


def _run(graph, fetches, feeds, fuse: bool, targets=()):
    """Fetched values, the number of nodes executed and the partition graphs' ops."""
    with Session(graph.as_graph_def(), config=_config(fuse)) as sess:
        for init in targets:
            sess.run([], targets=[init])
        meta = config_pb2.RunMetadata()
        out = sess.run(
            [t.name for t in fetches],
            {k.name: v for k, v in feeds.items()},
            run_options=config_pb2.RunOptions(
                trace_level=config_pb2.RunOptions.FULL_TRACE, output_partition_graphs=True
            ),
            run_metadata=meta,
        )
    nodes = sum(len(d.node_stats) for d in meta.step_stats.dev_stats)
    ops = [n.op for g in meta.partition_graphs for n in g.node]
    return out, nodes, ops


def _same_bits(got: list, want: list) -> None:
    for a, b in zip(got, want, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        uint = np.dtype(f"u{a.dtype.itemsize}")
        np.testing.assert_array_equal(a.view(uint), b.view(uint))


def _compare(graph, fetches, feeds, targets=()) -> tuple[int, int]:
    fused, n_fused, ops = _run(graph, fetches, feeds, True, targets)
    plain, n_plain, plain_ops = _run(graph, fetches, feeds, False, targets)
    _same_bits(fused, plain)
    assert "_FusedElementwise" in ops and "_FusedElementwise" not in plain_ops
    assert n_fused < n_plain
    return n_fused, n_plain


def _loop_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        w = tf.constant(np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4), name="w")

        def body(i, h):
            z = tf.matmul(h, w)
            gate = tf.sigmoid(z + 1.0) * tf.tanh(z - 0.5)
            return i + 1, tf.maximum(gate * h + tf.exp(-tf.square(z)), -2.0)

        _, h = tf.while_loop(lambda i, h: i < 5, body, [tf.constant(0), x])
        loss = tf.reduce_sum(h * h)
        (gx,) = tf.gradients(loss, [x])
    return g, x, [h, loss, gx]


def test_while_loop_and_its_gradient_equal_unfused():
    g, x, fetches = _loop_graph()
    rng = np.random.default_rng(0)
    feeds = {x: rng.normal(0, 2, (3, 4)).astype(np.float32)}
    _compare(g, fetches, feeds)


def test_cond_both_branches_and_gradients_equal_unfused():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [5], name="x")
        p = tf.placeholder(tf.bool, [], name="p")
        y = tf.cond(
            p,
            lambda: tf.tanh(x * 2.0 + 1.0) * tf.sigmoid(x),
            lambda: tf.nn.relu(tf.log(tf.abs(x) + 1.0) - 0.3) / (x * x + 1.0),
        )
        (gx,) = tf.gradients(tf.reduce_sum(y), [x])
    xv = np.array([-3.0, -0.5, 0.0, 0.25, 4.0], np.float32)
    for pv in (True, False):
        _compare(g, [y, gx], {x: xv, p: pv})


def test_cond_inside_a_while_loop_equal_unfused():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3], name="x")

        def body(i, a):
            a = tf.cond(
                i % 2 < 1, lambda: tf.sigmoid(a * 3.0 - 1.0), lambda: tf.tanh(a + 0.5) * 2.0
            )
            return i + 1, a

        _, a = tf.while_loop(lambda i, a: i < 6, body, [tf.constant(0), x])
        (gx,) = tf.gradients(tf.reduce_sum(a), [x])
    _compare(g, [a, gx], {x: np.array([-1.0, 0.1, 2.0], np.float32)})


def test_an_error_inside_a_loop_is_the_members_own():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, None, name="x")
        y = tf.placeholder(tf.float32, None, name="y")
        _, a = tf.while_loop(
            lambda i, a: i < 3,
            lambda i, a: (i + 1, tf.tanh(a * y + 1.0) - 0.5),
            [tf.constant(0), x],
            shape_invariants=[tf.TensorShape([]), tf.TensorShape(None)],
        )
    feeds = {x: np.zeros((2, 3), np.float32), y: np.zeros((4,), np.float32)}
    errors = []
    for fuse in (True, False):
        with pytest.raises(OpError) as info:
            _run(g, [a], feeds, fuse)
        errors.append((type(info.value), info.value.message, info.value.node_name))
    assert errors[0] == errors[1]
    assert "Incompatible shapes" in errors[0][1]


def test_lstm_training_step_equal_unfused_with_fewer_nodes():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [4, 6, 8], name="x")
        cell = tf.nn.rnn_cell.BasicLSTMCell(8)
        h, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        loss = tf.reduce_mean(tf.square(h))
        params = tf.trainable_variables()
        grads = tf.gradients(loss, params)
        init = tf.global_variables_initializer()
    feeds = {x: np.random.default_rng(1).random((4, 6, 8), np.float32)}
    n_fused, n_plain = _compare(g, [h, loss, *grads], feeds, targets=[init.name])
    assert n_fused < n_plain * 0.95, (n_fused, n_plain)
