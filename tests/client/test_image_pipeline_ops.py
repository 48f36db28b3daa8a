"""Client tf.image functions that input pipelines use, and CropAndResize's gradients,
against tensorflow.compat.v1: the same graph node names and the same values (seeded
random adjustments included)."""

from __future__ import annotations

import numpy as np
import pytest

import client

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True


def _nodes(graph) -> list[tuple[str, str]]:
    return [(n.name, n.op) for n in graph.as_graph_def().node]


def _both(body, steps: int = 1):
    """(ours, theirs) fetched `steps` times, and the two graphs."""
    results, graphs = [], []
    for tf in (client, tf1):
        g = tf.Graph()
        with g.as_default():
            fetches = body(tf)
            with tf.Session(graph=g) as sess:
                results.append([sess.run(fetches) for _ in range(steps)])
        graphs.append(g)
    return results, graphs


def _assert_same(ours, theirs):
    if isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b)
        return
    a, b = np.asarray(ours), np.asarray(theirs)
    assert (a.dtype, a.shape) == (b.dtype, b.shape)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_crop_and_resize_gradients_names_and_values(method):
    image = np.random.default_rng(4).standard_normal((2, 6, 7, 3)).astype(np.float32)
    boxes = np.array([[0.1, 0.2, 0.8, 0.9], [0.0, 0.3, 1.0, 0.7]], np.float32)

    def body(tf):
        x = tf.constant(image)
        b = tf.constant(boxes)
        y = tf.image.crop_and_resize(x, b, [1, 0], [4, 5], method=method)
        w = tf.constant(np.arange(2 * 4 * 5 * 3, dtype=np.float32).reshape(2, 4, 5, 3))
        return tf.gradients(tf.reduce_sum(y * w), [x, b])

    (ours, theirs), (g_ours, g_theirs) = _both(body)
    _assert_same(ours, theirs)
    # The CropAndResize gradient's own nodes (the client names Sum's gradient otherwise).
    mine = [n for n in _nodes(g_ours) if "CropAndResize_grad" in n[0]]
    assert mine == [n for n in _nodes(g_theirs) if "CropAndResize_grad" in n[0]]
    assert len(mine) == 3
