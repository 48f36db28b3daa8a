"""Integration: a tiny OCR-like CTC model on a real-process cluster (CLIs on loopback) —
a dense layer whose weights live on /job:ps/task:0 turns per-frame features into logits
on /job:worker/task:1, CTC loss (batch-major logits, SparseTensor labels) trained with
gradient descent, and the greedy and beam search decoders run on /job:worker/task:0.
Driven by `import client as tf` and by an unmodified tensorflow.compat.v1 client;
TensorFlow's local session is the oracle for the losses, the decodes and the weights."""

from __future__ import annotations

import os

import numpy as np
import pytest

import client

tf_real = pytest.importorskip("tensorflow")
pytest.importorskip("tf_keras")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True

PS, W0, W1 = "/job:ps/task:0", "/job:worker/task:0", "/job:worker/task:1"
B, T, F, C = 3, 8, 4, 5  # batch, frames, features per frame, classes (blank = 4)
RNG = np.random.RandomState(3)
FEATURES = RNG.randn(B, T, F).astype(np.float32)
KERNEL = (RNG.randn(F, C) * 0.5).astype(np.float32)
LABELS = [[0, 1, 1], [2, 3], [3]]
IX = np.array([[b, i] for b, s in enumerate(LABELS) for i in range(len(s))], np.int64)
VALS = np.array([v for s in LABELS for v in s], np.int32)
LENGTHS = np.array([8, 6, 4], np.int32)


def _placement(op) -> str:
    if op.type in ("VarHandleOp", "VariableV2"):
        return PS
    if op.type.startswith("CTC") and "Decoder" in op.type:
        return W0
    return W1


def _program(tf, target: str, placed: bool) -> list:
    g = tf.Graph()
    with g.as_default(), tf.device(_placement if placed else None):
        feats = tf.placeholder(tf.float32, [B, T, F], name="features")
        lengths = tf.placeholder(tf.int32, [B], name="lengths")
        labels = tf.SparseTensor(IX, VALS, [B, 3])
        logits = tf.layers.dense(
            feats, C, kernel_initializer=tf.constant_initializer(KERNEL), name="frames"
        )
        loss = tf.reduce_mean(tf.nn.ctc_loss(labels, logits, lengths, time_major=False))
        train = tf.train.GradientDescentOptimizer(0.3).minimize(loss)
        time_major = tf.transpose(logits, [1, 0, 2])
        (greedy,), greedy_lp = tf.nn.ctc_greedy_decoder(time_major, lengths)
        (beam,), beam_lp = tf.nn.ctc_beam_search_decoder(time_major, lengths, beam_width=6)
        decodes = [greedy.indices, greedy.values, greedy_lp, beam.indices, beam.values, beam_lp]
        init = tf.global_variables_initializer()
        with tf.Session(target, graph=g) as sess:
            sess.run(init)
            feed = {feats: FEATURES, lengths: LENGTHS}
            losses = [float(sess.run([loss, train], feed)[0]) for _ in range(3)]
            weights = sess.run(tf.global_variables())
            return [losses, weights, sess.run(decodes, feed)]


@pytest.fixture(scope="module")
def oracle() -> list:
    return _program(tf1, "", placed=False)


def _assert_matches(got: list, want: list) -> None:
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    assert got[0][-1] < got[0][0]
    for a, b in zip(got[1], want[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for a, b in zip(got[2], want[2]):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        if np.asarray(a).dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(a, b)


def test_ctc_model_through_our_client(shared_cluster, oracle) -> None:
    _assert_matches(_program(client, shared_cluster.target, placed=True), oracle)


def test_ctc_model_through_tensorflow_client(shared_cluster, oracle) -> None:
    _assert_matches(_program(tf1, shared_cluster.target, placed=True), oracle)


@pytest.mark.parametrize("api", [client, tf1], ids=["ours", "tensorflow"])
def test_sequence_longer_than_logits_is_tensorflows_error_naming_the_node(
    shared_cluster, api
) -> None:
    with api.Graph().as_default() as g, api.device(W1):
        logits = api.constant(FEATURES[:, :, :C])
        lengths = api.placeholder(api.int32, [B])
        loss = api.nn.ctc_loss(
            api.SparseTensor(IX, VALS, [B, 3]), logits, lengths, time_major=False
        )
        with (
            api.Session(shared_cluster.target, graph=g) as sess,
            pytest.raises(api.errors.InvalidArgumentError) as info,
        ):
            sess.run(loss, {lengths: [9, 6, 4]})
    assert "sequence_length(0) <= 8" in str(info.value)
    assert "CTCLoss" in str(info.value)
