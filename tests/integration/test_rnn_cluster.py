"""Integration: an LSTM (dynamic_rnn with sequence_length, v1 while loop over
TensorArrays) whose weights live on /job:ps/task:0 and whose cell runs on
/job:worker/task:1, trained with gradients through the loop on a real-process cluster
(CLIs on loopback). Driven twice, by `import client as tf` and by an unmodified
tensorflow.compat.v1 client; TensorFlow's local session is the oracle for the losses."""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pytest

import client
from deploy.launcher import LocalCluster
from tests.integration.conftest import _start, _stop

tf_real = pytest.importorskip("tensorflow")
pytest.importorskip("tf_keras")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True

PS, W1 = "/job:ps/task:0", "/job:worker/task:1"
RNG = np.random.RandomState(0)
KERNEL = (RNG.randn(3 + 4, 16) * 0.3).astype(np.float32)
OUT_W = (RNG.randn(4, 2) * 0.3).astype(np.float32)
X = RNG.randn(3, 6, 3).astype(np.float32)
LENGTHS = np.array([6, 3, 5], np.int32)
LABELS = np.array([0, 1, 1], np.int32)


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    started = _start()
    try:
        yield started
    finally:
        _stop(started)


def _placement(op) -> str:
    """Variables (their handles) on the ps task, everything else on worker 1."""
    return PS if op.type in ("VarHandleOp", "VariableV2") else W1


def _program(tf, target: str, placed: bool) -> list[float]:
    g = tf.Graph()
    with g.as_default(), tf.device(_placement if placed else None):
        x = tf.placeholder(tf.float32, [3, 6, 3], name="x")
        lengths = tf.placeholder(tf.int32, [3], name="lengths")
        labels = tf.placeholder(tf.int32, [3], name="labels")
        cell = tf.nn.rnn_cell.LSTMCell(4, initializer=tf.constant_initializer(KERNEL))
        _, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)
        logits = tf.layers.dense(
            state.h, 2, kernel_initializer=tf.constant_initializer(OUT_W), name="out"
        )
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        init = tf.global_variables_initializer()
        names = sorted(v.op.name for v in tf.global_variables())
        with tf.Session(target, graph=g) as sess:
            sess.run(init)
            feed = {x: X, lengths: LENGTHS, labels: LABELS}
            losses = [float(sess.run([loss, train], feed)[0]) for _ in range(4)]
            return losses, names


@pytest.fixture(scope="module")
def oracle() -> tuple[list[float], list[str]]:
    from tensorflow.python.ops import control_flow_util

    was = control_flow_util.ENABLE_CONTROL_FLOW_V2
    tf1.disable_control_flow_v2()
    try:
        return _program(tf1, "", placed=False)
    finally:
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = was


def test_rnn_on_ps_and_worker_through_our_client(cluster, oracle):
    losses, names = _program(client, cluster.target, placed=True)
    assert names == oracle[1]
    np.testing.assert_allclose(losses, oracle[0], rtol=1e-5)
    assert losses[-1] < losses[0]


def test_rnn_on_ps_and_worker_through_tensorflow_client(cluster, oracle):
    from tensorflow.python.ops import control_flow_util

    was = control_flow_util.ENABLE_CONTROL_FLOW_V2
    tf1.disable_control_flow_v2()  # a TF1 program's disable_v2_behavior()
    try:
        losses, names = _program(tf1, cluster.target, placed=True)
    finally:
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = was
    assert names == oracle[1]
    np.testing.assert_allclose(losses, oracle[0], rtol=1e-5)


def test_rnn_with_tf2_control_flow_through_tensorflow_client(cluster, oracle):
    """Without disable_v2_behavior TensorFlow builds a functional while loop over
    TensorLists (StatelessWhile); our master lowers and places it the same way."""
    losses, names = _program(tf1, cluster.target, placed=True)
    assert names == oracle[1]
    np.testing.assert_allclose(losses, oracle[0], rtol=1e-5)
