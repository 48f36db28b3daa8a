"""tf.metrics over the top k classes with SparseTensor labels and with dense labels of
unknown rank, through `client` against tensorflow.compat.v1: the same GraphDef (outer
nodes: the expand_labels / clean-out-of-range conds, SparseReshape, SparseConcat,
sparse retain) and the same values after several batches."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, run_both

pytest.importorskip("tensorflow")


def _sparse_labels(api, name="labels"):
    """A SparseTensor of int64 ids built from three placeholders (both clients)."""
    return api.SparseTensor(
        api.placeholder(api.int64, [None, 2], name=f"{name}_indices"),
        api.placeholder(api.int64, [None], name=f"{name}_values"),
        api.placeholder(api.int64, [2], name=f"{name}_shape"),
    )


def _ragged_ids(rng, n, num_classes):
    """Rows of 0..3 distinct ids (some past num_classes) as indices/values/dense_shape."""
    indices, values = [], []
    for row in range(n):
        ids = rng.choice(num_classes + 2, rng.randint(0, 4), replace=False)
        for col, v in enumerate(sorted(ids)):
            indices.append([row, col])
            values.append(v)
    return (
        np.array(indices, np.int64).reshape(-1, 2),
        np.array(values, np.int64),
        np.array([n, 3], np.int64),
    )


def _metrics(m, labels, scores, top, w):
    return {
        "p2": m.precision_at_k(labels, scores, 2),
        "p3_class": m.precision_at_k(labels, scores, 3, class_id=2),
        "r2_w": m.recall_at_k(labels, scores, 2, weights=w),
        "r3_class": m.recall_at_k(labels, scores, 3, class_id=4),
        "sp": m.sparse_precision_at_k(labels, scores, 1, name="sp"),
        "pt": m.precision_at_top_k(labels, top),
        "rt_class": m.recall_at_top_k(labels, top, class_id=1),
        "ap1": m.average_precision_at_k(labels, scores, 1),
        "ap3_w": m.average_precision_at_k(labels, scores, 3, weights=w),
        "sap5": m.sparse_average_precision_at_k(labels, scores, 5),
    }


def _run_batches(tf, metrics, feed_fn):
    updates = {k: v[1] for k, v in metrics.items()}
    values = {k: v[0] for k, v in metrics.items()}
    local = sorted(v.op.name for v in tf.local_variables())

    def steps(sess):
        rng = np.random.RandomState(5)
        seen = [sess.run(updates, feed_fn(rng, n)) for n in (6, 9, 4)]
        seen.append(sess.run(values))
        return seen, local

    return steps


def test_sparse_labels_like_tf():
    def build(tf):
        scores = tf.placeholder(tf.float32, [None, 5], name="scores")
        top = tf.placeholder(tf.int64, [None, 3], name="top")
        w = tf.placeholder(tf.float32, [None], name="w")
        labels = _sparse_labels(tf)
        metrics = _metrics(tf.metrics, labels, scores, top, w)

        def feed(rng, n):
            ind, val, shape = _ragged_ids(rng, n, 5)
            return {
                labels.indices: ind,
                labels.values: val,
                labels.dense_shape: shape,
                scores: rng.rand(n, 5).astype(np.float32),
                top: np.argsort(-rng.rand(n, 5), 1)[:, :3],
                w: rng.rand(n).astype(np.float32),
            }

        return _run_batches(tf, metrics, feed)

    out, want, _, _ = run_both(build)
    assert_close(out[0], want[0], rtol=1e-12, atol=1e-12)
    assert out[1] == want[1]


def test_unknown_rank_labels_like_tf():
    def build(tf):
        scores = tf.placeholder(tf.float32, [None, 5], name="scores")
        top = tf.placeholder(tf.int64, [None, 3], name="top")
        w = tf.placeholder(tf.float32, [None], name="w")
        one = tf.placeholder(tf.int64, None, name="one")  # fed [n]: expanded by the cond
        many = tf.placeholder(tf.int64, None, name="many")  # fed [n, 2]: kept
        metrics = {
            **{f"one_{k}": v for k, v in _metrics(tf.metrics, one, scores, top, w).items()},
            **{f"many_{k}": v for k, v in _metrics(tf.metrics, many, scores, top, w).items()},
        }

        def feed(rng, n):
            return {
                one: rng.randint(0, 6, n),
                many: rng.randint(0, 7, (n, 2)),
                scores: rng.rand(n, 5).astype(np.float32),
                top: np.argsort(-rng.rand(n, 5), 1)[:, :3],
                w: rng.rand(n).astype(np.float32),
            }

        return _run_batches(tf, metrics, feed)

    out, want, _, _ = run_both(build)
    assert_close(out[0], want[0], rtol=1e-12, atol=1e-12)
    assert out[1] == want[1]


def test_sparse_value_labels_like_tf():
    # A SparseTensorValue is converted to a SparseTensor (constants) first.
    def build(tf):
        scores = tf.constant([[0.1, 0.5, 0.2, 0.9], [0.8, 0.1, 0.3, 0.2]])
        labels = tf.SparseTensorValue([[0, 0], [0, 1], [1, 0]], np.array([3, 1, 2]), [2, 2])
        value, update = tf.metrics.recall_at_k(labels, scores, 2)
        ap_value, ap_update = tf.metrics.average_precision_at_k(labels, scores, 2)
        return lambda sess: (sess.run([update, ap_update]), sess.run([value, ap_value]))

    out, want, _, _ = run_both(build)
    assert_close(out, want, rtol=1e-12, atol=1e-12)


def _parity_case(metric):
    def build(api):
        scores = api.placeholder(api.float32, [4, 5], name="scores")
        metric(api, scores)

    return build


PARITY_CASES = {
    "precision_at_k_sparse": lambda api, s: api.metrics.precision_at_k(_sparse_labels(api), s, 2),
    "recall_at_k_sparse_class": lambda api, s: api.metrics.recall_at_k(
        _sparse_labels(api), s, 3, class_id=1
    ),
    "precision_at_top_k_sparse": lambda api, s: api.metrics.precision_at_top_k(
        _sparse_labels(api), api.placeholder(api.int32, [4, 2], name="top")
    ),
    "average_precision_at_k_sparse": lambda api, s: api.metrics.average_precision_at_k(
        _sparse_labels(api), s, 3
    ),
    "sparse_average_precision_at_k_1": lambda api, s: api.metrics.sparse_average_precision_at_k(
        _sparse_labels(api), s, 1
    ),
    "precision_at_k_unknown_rank": lambda api, s: api.metrics.precision_at_k(
        api.placeholder(api.int64, None, name="labels"), s, 2
    ),
    "recall_at_k_unknown_rank_class": lambda api, s: api.metrics.recall_at_k(
        api.placeholder(api.int64, None, name="labels"), s, 2, class_id=3
    ),
    "average_precision_at_k_unknown_rank": lambda api, s: api.metrics.average_precision_at_k(
        api.placeholder(api.int64, None, name="labels"), s, 2
    ),
}


@pytest.mark.parametrize("name", sorted(PARITY_CASES))
def test_graph_matches_tf(name):
    ours, theirs = build_both(_parity_case(PARITY_CASES[name]))
    assert graph_diff(ours, theirs) == []
