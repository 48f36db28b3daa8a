"""tf.random.experimental.stateless_shuffle and tf.random.stateless_binomial in the client
against tensorflow.compat.v1: the same nodes and TensorFlow's values."""

from __future__ import annotations

import numpy as np
import pytest

import client

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True


def _both(body):
    results, graphs = [], []
    for tf in (client, tf1):
        g = tf.Graph()
        with g.as_default():
            fetches = body(tf)
            with tf.Session(graph=g) as sess:
                results.append(sess.run(fetches))
        graphs.append([(n.name, n.op, list(n.input)) for n in g.as_graph_def().node])
    return results, graphs


def test_stateless_shuffle_and_binomial_names_and_values():
    def body(tf):
        return [
            tf.random.experimental.stateless_shuffle(tf.range(12), seed=[1, 2]),
            tf.random.experimental.stateless_shuffle(
                tf.constant(np.arange(12.0).reshape(6, 2)), seed=tf.constant([7, -8])
            ),
            tf.random.stateless_binomial([4, 2], seed=[3, 4], counts=[5.0, 200.0], probs=0.4),
            tf.random.stateless_binomial(
                [3], seed=[5, 6], counts=np.float64(30), probs=np.float64(0.8),
                output_dtype=tf.float64,
            ),
        ]  # fmt: skip

    (ours, theirs), (g_ours, g_theirs) = _both(body)
    assert g_ours == g_theirs
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
