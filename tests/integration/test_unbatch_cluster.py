"""Integration, UnbatchDataset on the cluster: TensorFlow's client on our master reads an
unbatched pipeline built on /job:worker/task:1 from slices made on /job:ps/task:0, and
gets TensorFlow's in-process rows."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

ROWS = np.arange(12, dtype=np.float32).reshape(3, 2, 2)


def _rows(target: str, dev) -> list[np.ndarray]:
    g = tf1.Graph()
    with g.as_default():
        with dev("/job:ps/task:0"):
            x = tf.constant(ROWS) * 2.0
        with dev("/job:worker/task:1"):
            ds = tf.data.Dataset.from_tensors(x).unbatch().unbatch().batch(3)
            nxt = tf1.data.make_one_shot_iterator(ds).get_next()
        out = []
        with tf1.Session(target, graph=g) as sess:
            while True:
                try:
                    out.append(sess.run(nxt))
                except tf.errors.OutOfRangeError:
                    return out


def test_unbatched_rows_on_a_worker_match_tensorflow(shared_cluster) -> None:
    ours = _rows(shared_cluster.target, tf.device)
    theirs = _rows("", lambda name: contextlib.nullcontext())
    assert len(ours) == len(theirs) == 2
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
