"""Integration: the tf.layers / rnn_cell gaps on a real-process cluster (CLIs on loopback),
weights on /job:ps/task:0 and compute on /job:worker/task:1: channels_first 3-D pooling,
batch renormalization (training steps with its update ops), an LSTM with sharded weights
under dynamic_rnn, and dilated depthwise / separable / conv2d layers on inputs whose
spatial sizes are unknown while building (paddings computed at run time). Driven by
`import client as tf` and by tensorflow.compat.v1's own client; TensorFlow's local
session is the oracle (same initial values, copied by variable name)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pytest

from deploy.launcher import LocalCluster
from tests.client.tf1_oracle import _run, assert_close
from tests.integration.conftest import _start, _stop

tf_real = pytest.importorskip("tensorflow")
pytest.importorskip("tf_keras")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True

PS, W1 = "/job:ps/task:0", "/job:worker/task:1"
RNG = np.random.RandomState(3)
VOLUME = RNG.randn(2, 3, 4, 5, 4).astype(np.float32)  # N, C, D, H, W
IMAGE = RNG.randn(2, 9, 7, 3).astype(np.float32)
SEQ = RNG.randn(2, 5, 4).astype(np.float32)


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


def _program(tf, placed: bool = True):
    with tf.device(_placement if placed else None):
        volume = tf.placeholder(tf.float32, VOLUME.shape, name="volume")
        image = tf.placeholder(tf.float32, [None, None, None, 3], name="image")
        seq = tf.placeholder(tf.float32, SEQ.shape, name="seq")

        pooled = tf.layers.max_pooling3d(volume, 2, 1, padding="same", data_format="channels_first")
        pooled = tf.layers.average_pooling3d(pooled, 2, 2, data_format="channels_first")

        h = tf.layers.conv2d(image, 4, 3, dilation_rate=2, padding="same", name="dilated")
        h = tf.layers.separable_conv2d(h, 4, 2, dilation_rate=(2, 3), name="separable")
        h = tf.nn.depthwise_conv2d(
            h, tf.ones([2, 2, 4, 1]) * 0.1, [1, 1, 1, 1], "SAME", rate=[2, 2]
        )
        h = tf.layers.batch_normalization(
            tf.reduce_mean(h, [1, 2]),
            training=True,
            renorm=True,
            renorm_clipping={"rmax": 1.5, "rmin": 0.7, "dmax": 0.4},
            renorm_momentum=0.8,
        )

        cell = tf.nn.rnn_cell.LSTMCell(6, num_proj=4, num_unit_shards=3, num_proj_shards=2)
        out, state = tf.nn.dynamic_rnn(cell, seq, dtype=tf.float32)

        loss = (
            tf.reduce_mean(tf.square(h))
            + tf.reduce_mean(tf.square(out))
            + tf.reduce_mean(tf.square(pooled))
        )
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(updates):
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    names = [v.op.name for v in tf.global_variables()]
    feed = {volume: VOLUME, image: IMAGE, seq: SEQ}

    def steps(sess):
        values = [sess.run([loss, pooled, state, train], feed)[:3] for _ in range(3)]
        return values, dict(zip(names, sess.run(tf.global_variables())))

    return steps


@pytest.fixture(scope="module")
def oracle():
    return _run(tf1, lambda tf: _program(tf, placed=False), "", None)


def test_layers_gaps_on_ps_and_worker_through_our_client(cluster, oracle):
    import client

    want, values, _ = oracle
    got, _, _ = _run(client, _program, cluster.target, values)
    assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert got[0][-1][0] < got[0][0][0]


def test_layers_gaps_on_ps_and_worker_through_tensorflow_client(cluster, oracle):
    want, values, _ = oracle
    got, _, _ = _run(tf1, _program, cluster.target, values)
    assert_close(got, want, rtol=1e-4, atol=1e-4)
