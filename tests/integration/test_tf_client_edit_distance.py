"""Integration, tf.edit_distance through OUR master (real processes started through the
CLIs): an unmodified tf.compat.v1.Session("grpc://...") and our client compute edit
distances of string and int sequences on two workers; the fetches equal TensorFlow's own
in-process session's."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

W0, W1 = "/job:worker/task:0", "/job:worker/task:1"
WORDS = [b"kitten", b"sitting", b"", b"flaw", b"lawn", b"abc"]


def _sparse(words: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Batch of words as a [batch, 1, max_len] SparseTensor of single bytes."""
    ix = [[b, 0, i] for b, w in enumerate(words) for i in range(len(w))]
    vals = [w[i : i + 1] for w in words for i in range(len(w))]
    shape = [len(words), 1, max(len(w) for w in words)]
    return np.array(ix, np.int64).reshape(-1, 3), np.array(vals, object), np.array(shape)


def _build(api, dev) -> tuple[dict, list]:
    ix = api.placeholder(api.int64, [None, 3], name="ix")
    vals = api.placeholder(api.string, [None], name="vals")
    shape = api.placeholder(api.int64, [3], name="shape")
    truth = api.SparseTensor(ix, vals, shape)
    h_ix, h_vals, h_shape = _sparse(WORDS[1:] + WORDS[:1])
    hyp = api.SparseTensorValue(h_ix, h_vals, h_shape)
    codes = api.SparseTensor(h_ix, np.arange(len(h_vals), dtype=np.int32) % 3, h_shape)
    with dev(W0):
        norm = api.edit_distance(hyp, truth)
    with dev(W1):
        raw = api.edit_distance(hyp, truth, normalize=False)
        ints = api.edit_distance(
            codes, api.SparseTensor(ix, api.ones_like(ix[:, 0], api.int32), shape)
        )
    t_ix, t_vals, t_shape = _sparse(WORDS)
    return {ix: t_ix, vals: t_vals, shape: t_shape}, [norm, raw, ints]


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
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


def test_tensorflow_client_on_our_cluster(shared_cluster) -> None:
    got = _run(tf1, shared_cluster.target, tf.device)
    _assert_equal(got, _local())
    assert got[1][:, 0].tolist() == [3.0, 7.0, 4.0, 2.0, 3.0, 6.0]


def test_our_client_on_our_cluster(shared_cluster) -> None:
    import client

    _assert_equal(_run(client, shared_cluster.target, client.device), _local())
