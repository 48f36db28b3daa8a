"""tf.metrics over the top k classes (precision_at_k, recall_at_k, precision_at_top_k,
recall_at_top_k, sparse_precision_at_k, average_precision_at_k and its alias) through `client` against
tensorflow.compat.v1: the same local variables and values after each of several batches,
with class_id and weights. Graph parity is swept in graph_sweep_cases.py (unweighted:
weighted, TF checks the weights against the SetSize counts, whose shape is unknown, with
a cond the client does not build; the values are the same)."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.tf1_oracle import assert_close, run_both

TF_GRAPH_MODE = True


def test_at_k_metrics_like_tf():
    def build(tf):
        scores = tf.placeholder(tf.float32, [None, 5], name="scores")
        one = tf.placeholder(tf.int64, [None], name="one")  # one label per row
        many = tf.placeholder(tf.int64, [None, 2], name="many")  # two labels per row
        top = tf.placeholder(tf.int32, [None, 3], name="top")
        w = tf.placeholder(tf.float32, [None], name="w")
        m = tf.metrics
        metrics = {
            "p1": m.precision_at_k(one, scores, 1),
            "p2_many": m.precision_at_k(many, scores, 2),
            "p3_class": m.precision_at_k(many, scores, 3, class_id=2),
            "p2_w": m.precision_at_k(one, scores, 2, weights=w, name="p2_w"),
            "r2": m.recall_at_k(one, scores, 2),
            "r3_many_w": m.recall_at_k(many, scores, 3, weights=w),
            "r2_class": m.recall_at_k(many, scores, 2, class_id=4),
            "sp": m.sparse_precision_at_k(many, scores, 2, name="sp"),
            "pt": m.precision_at_top_k(many, top),
            "pt_class_w": m.precision_at_top_k(one, top, k=3, class_id=1, weights=w),
            "rt": m.recall_at_top_k(one, top, k=3),
            "rt_class": m.recall_at_top_k(many, top, class_id=0),
            "ap1": m.average_precision_at_k(one, scores, 1),
            "ap3_many": m.average_precision_at_k(many, scores, 3),
            "ap5_w": m.sparse_average_precision_at_k(many, scores, 5, weights=w),
        }
        updates = {k: v[1] for k, v in metrics.items()}
        values = {k: v[0] for k, v in metrics.items()}
        local = sorted(v.op.name for v in tf.local_variables())
        rng = np.random.RandomState(3)

        def steps(sess):
            seen = []
            for n in (6, 9, 4):
                s = rng.rand(n, 5).astype(np.float32)
                feed = {
                    scores: s,
                    one: rng.randint(0, 5, n),
                    many: rng.randint(0, 6 if n == 9 else 5, (n, 2)),
                    top: np.argsort(-rng.rand(n, 5), 1)[:, :3].astype(np.int32),
                    w: rng.rand(n).astype(np.float32),
                }
                seen.append(sess.run(updates, feed))
            seen.append(sess.run(values))
            return seen, local

        return steps

    out, want, _, _ = run_both(build)
    assert_close(out[0], want[0], rtol=1e-12, atol=1e-12)
    assert out[1] == want[1]


def test_no_count_yet_is_nan_like_tf():
    # Before any positive, tp / (tp + fp) is 0 / 0: NaN in both.
    def build(tf):
        labels = tf.placeholder(tf.int64, [None])
        top = tf.placeholder(tf.int64, [None, 1])
        value, update = tf.metrics.precision_at_top_k(labels, top, class_id=3)
        return lambda sess: (sess.run(update, {labels: [1, 2], top: [[0], [1]]}), sess.run(value))

    out, want, _, _ = run_both(build)
    assert np.isnan(out[0]) and np.isnan(want[0]) and np.isnan(out[1]) and np.isnan(want[1])


def test_label_rank_error_like_tf():
    from tests.client.tf1_oracle import tf1

    errors = []
    for api in (client, tf1):
        with api.Graph().as_default():
            labels = api.placeholder(api.int64, [4, 2, 2])
            top = api.placeholder(api.int64, [4, 2])
            with pytest.raises(ValueError, match="Unexpected labels shape") as info:
                api.metrics.recall_at_top_k(labels, top)
            errors.append(str(info.value))
    assert errors[0] == errors[1]
