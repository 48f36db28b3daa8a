"""Integration, tf.data unbatch() of SparseTensor elements on the cluster: a batched
SparseTensor made on /job:ps/task:0 is unbatched (TF's normalize_to_dense map, then
UnbatchDataset splitting the [N, 3] variant rows) by a pipeline on /job:worker/task:1;
TensorFlow's client and ours, both through our master, read TensorFlow's in-process
elements."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import client

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

INDICES = [[0, 0, 1], [1, 2, 0], [1, 3, 2], [3, 1, 1]]
VALUES = np.array([1.5, 2.0, -3.0, 4.0], np.float32)


def _elements(api, target: str, dev) -> list:
    g = api.Graph()
    with g.as_default():
        with dev("/job:ps/task:0"):
            st = api.SparseTensor(INDICES, api.constant(VALUES) * 2.0, [4, 5, 3])
            labels = api.constant([7, 8, 9, 10])
        with dev("/job:worker/task:1"):
            ds = api.data.Dataset.from_tensors((st, labels)).unbatch()
            it = api.data.make_initializable_iterator(ds)
            nxt = it.get_next()
        out = []
        with api.Session(target, graph=g) as sess:
            sess.run(it.initializer)
            while True:
                try:
                    out.append(sess.run(nxt))
                except api.errors.OutOfRangeError:
                    return out


def _local(name: str) -> contextlib.AbstractContextManager[None]:
    return contextlib.nullcontext()


@pytest.mark.parametrize("api", [tf1, client], ids=["tensorflow_client", "our_client"])
def test_unbatched_sparse_rows_on_a_worker_match_tensorflow(shared_cluster, api) -> None:
    ours = _elements(api, shared_cluster.target, api.device)
    theirs = _elements(tf1, "", _local)
    assert len(ours) == len(theirs) == 4
    for (s, label), (ts, tlabel) in zip(ours, theirs, strict=True):
        assert label == tlabel
        for x, y in zip(s, ts, strict=True):  # indices, values, dense_shape
            np.testing.assert_array_equal(x, y)
            assert np.asarray(x).dtype == np.asarray(y).dtype
