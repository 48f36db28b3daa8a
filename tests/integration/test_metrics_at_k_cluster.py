"""Integration: TensorFlow's own tf.compat.v1.metrics over the top k classes and the
careful PR-AUC run through OUR master: the scores and TopKV2 on one worker, the set ops
and metric state on another, the values equal to TensorFlow's local session's after each
batch."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True

W0, W1 = "/job:worker/task:0", "/job:worker/task:1"


def _run(target: str, place: bool) -> list:
    dev = tf1.device if place else (lambda _: tf1.device(None))
    g = tf1.Graph()
    with g.as_default():
        with dev(W0):
            scores = tf1.placeholder(tf1.float32, [None, 5])
            labels = tf1.placeholder(tf1.int64, [None, 2])
            w = tf1.placeholder(tf1.float32, [None])
            squashed = tf1.sigmoid(scores * 3.0 - 1.5)
        with dev(W1):
            updates = [
                tf1.metrics.precision_at_k(labels, squashed, 2)[1],
                tf1.metrics.recall_at_k(labels, squashed, 3, class_id=1, weights=w)[1],
                tf1.metrics.average_precision_at_k(labels, squashed, 3)[1],
                tf1.metrics.auc(
                    tf1.equal(labels[:, 0], 0),
                    squashed[:, 0],
                    curve="PR",
                    summation_method="careful_interpolation",
                )[1],
                tf1.metrics.specificity_at_sensitivity(
                    tf1.equal(labels[:, 1], 2), squashed[:, 2], 0.5
                )[1],
            ]
        init = tf1.local_variables_initializer()
    rng = np.random.RandomState(2)
    out = []
    with tf1.Session(target, graph=g) as sess:
        sess.run(init)
        for n in (5, 8):
            feed = {
                scores: rng.randn(n, 5).astype(np.float32),
                labels: rng.randint(0, 6, (n, 2)),
                w: rng.rand(n).astype(np.float32),
            }
            out.append(sess.run(updates, feed))
    return out


def test_at_k_metrics_across_workers(shared_cluster):
    remote = _run(shared_cluster.target, True)
    local = _run("", False)
    np.testing.assert_allclose(np.array(remote), np.array(local), rtol=1e-6, atol=1e-9)
