"""Integration, RaggedTensors through OUR master (real processes started through the CLIs):
an unmodified tf.compat.v1.Session("grpc://...") and our client build tf.ragged.range,
tf.ragged.constant, the validated RaggedTensor factories and tf.gather of ragged rows, with each ragged op on the
worker that did not make its input; the fetches equal TensorFlow's own in-process
session's, and a bad or hostile input fails as TensorFlow's kernel does, naming the node."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

W0, W1 = "/job:worker/task:0", "/job:worker/task:1"
LIMITS = np.array([3, 0, 5], np.int64)
VALUES = np.arange(6, dtype=np.float32)


def _build(api, dev) -> tuple[dict, list]:
    limits = api.placeholder(api.int64, [None], name="limits")
    values = api.placeholder(api.float32, [None], name="values")
    with dev(W0):
        doubled = values * 2.0
        lengths = limits - 1
    with dev(W1):
        rt = api.ragged.range(limits, name="rr")
        stepped = api.ragged.range(lengths, limits * 2, 2)
        by_lengths = api.RaggedTensor.from_row_lengths(doubled, [2, 0, 4])
        nested = api.RaggedTensor.from_nested_row_splits(doubled, [[0, 1, 3], [0, 2, 2, 6]])
        const = api.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6]]])
        picked = api.gather(by_lengths, [[2, 0], [0, 0]])
    fetches = [
        rt.values, rt.row_splits, rt.to_tensor(), stepped.to_tensor(default_value=-1),
        by_lengths.to_tensor(), by_lengths.bounding_shape(), by_lengths.row_lengths(),
        nested.to_sparse().indices, nested.to_tensor(), const.to_tensor(), const.nrows(),
        picked.to_tensor(), picked.values.row_splits,
    ]  # fmt: skip
    return {limits: LIMITS, values: VALUES}, fetches


def _run(api, target: str, dev) -> list:
    g = api.Graph()
    with g.as_default():
        feed, fetches = _build(api, dev)
    with api.Session(target, graph=g) as sess:
        return sess.run(fetches, feed)


def _local() -> list:
    return _run(tf1, "", lambda name: contextlib.nullcontext())


def _assert_equal(got: list, want: list) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, (g, w)
        np.testing.assert_array_equal(g, w)


def test_tensorflow_client_on_our_cluster(shared_cluster) -> None:
    _assert_equal(_run(tf1, shared_cluster.target, tf.device), _local())


def test_our_client_on_our_cluster(shared_cluster) -> None:
    import client

    _assert_equal(_run(client, shared_cluster.target, client.device), _local())


def _failure(target: str, starts, limits, deltas) -> Exception:
    g = tf1.Graph()
    with g.as_default():
        with tf1.device(W0):
            s = tf1.placeholder(tf.int64, [None], name="s")
        with tf1.device(W1):
            rt = tf1.ragged.range(s, limits, deltas, name="hostile")
        with tf1.Session(target, graph=g) as sess, pytest.raises(tf.errors.OpError) as e:
            sess.run(rt.values, {s: starts})
    return e.value


def test_bad_and_hostile_ranges_fail_naming_the_node(shared_cluster) -> None:
    e = _failure(shared_cluster.target, [0, 1], np.int64([3, 4]), np.int64([1, 0]))
    assert isinstance(e, tf.errors.InvalidArgumentError)
    assert "Requires delta != 0" in e.message and "hostile" in e.message
    # 2**62 int64 values: refused before allocating, not a worker killed by the OOM killer.
    e = _failure(shared_cluster.target, [0], np.int64([2**62]), np.int64(1))
    assert isinstance(e, tf.errors.ResourceExhaustedError)
    assert "OOM when allocating" in e.message and "hostile" in e.message
    # The workers are still serving.
    _assert_equal(_run(tf1, shared_cluster.target, tf.device), _local())
