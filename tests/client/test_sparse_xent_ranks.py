"""tf.nn.sparse_softmax_cross_entropy_with_logits on logits of rank other than 2 (a
char-RNN's [batch, time, classes]): TensorFlow's graph, values, gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest

import client

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1

LOGITS = (np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) % 5) / 3.0
LABELS = np.array([[0, 3, 1], [2, 2, 0]], dtype=np.int32)


def _run(tf, logits_shape, labels_shape, feed_labels=LABELS):
    g = tf.Graph()
    with g.as_default():
        logits = tf.placeholder(tf.float32, logits_shape, name="logits")
        labels = tf.placeholder(tf.int32, labels_shape, name="labels")
        cost = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        grad = tf.gradients(tf.reduce_sum(cost * cost), logits)[0]
        ops = [(o.name, o.type, [i.name for i in o.inputs]) for o in g.get_operations()]
        with tf.Session(graph=g) as sess:
            values = sess.run([cost, grad], {logits: LOGITS, labels: feed_labels})
        return ops, values, cost.shape.as_list()


@pytest.mark.parametrize(
    "logits_shape, labels_shape", [([2, 3, 4], [2, 3]), ([None, None, 4], [None, None])]
)
def test_rank3_matches_tensorflow(logits_shape, labels_shape) -> None:
    ops, (cost, grad), shape = _run(client, logits_shape, labels_shape)
    tf_ops, (tf_cost, tf_grad), tf_shape = _run(tf1, logits_shape, labels_shape)
    forward = [o for o in tf_ops if not o[0].startswith("gradients")]
    assert [o for o in ops if not o[0].startswith("gradients")] == forward
    assert shape == tf_shape
    np.testing.assert_allclose(cost, tf_cost, rtol=1e-6)
    np.testing.assert_allclose(grad, tf_grad, rtol=1e-5, atol=1e-6)


def test_dynamic_shape_mismatch_fails_as_in_tensorflow() -> None:
    bad = LABELS[:, :2]
    with pytest.raises(tf_real.errors.InvalidArgumentError) as theirs:
        _run(tf1, [None, None, 4], [None, None], bad)
    with pytest.raises(client.errors.InvalidArgumentError) as ours:
        _run(client, [None, None, 4], [None, None], bad)
    assert "assert_equal" in str(theirs.value) and "assert_equal" in str(ours.value)


@pytest.mark.parametrize(
    "logits_shape, labels_shape, words",
    [
        ([2, 3, 4], [2], "rank"),
        ([2, 3, 4], [2, 4], "except for the last dimension"),
        ([], [], "scalar"),
    ],
)
def test_static_errors_match_tensorflow(logits_shape, labels_shape, words) -> None:
    for tf in (tf1, client):
        with tf.Graph().as_default():
            logits = tf.placeholder(tf.float32, logits_shape)
            labels = tf.placeholder(tf.int32, labels_shape)
            with pytest.raises(ValueError, match=words):
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
