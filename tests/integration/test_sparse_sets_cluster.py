"""Integration, SparseTensors and sets through a real cluster: sparse features are made
on one worker, and another joins (SparseConcat), reshapes, slices, splits, normalizes
(SparseSoftmax, with its gradient back on the first worker), takes element-wise maxima
and set operations of them; the triples also cross tasks serialized, as strings and as
variants. Built once by TensorFlow's own client (tf.compat.v1.Session against OUR master,
processes started through the CLIs) and once by ours; both compared with TensorFlow's
local session."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import client as ours

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

W0, W1, PS = "/job:worker/task:0", "/job:worker/task:1", "/job:ps/task:0"
TOKENS = np.array([[3, 1, 1, 7], [2, 2, 5, 0], [6, 4, 4, 4]], np.int64)
SCORES = np.array([0.5, -1.0, 2.0, 0.25, 1.5, -0.5], np.float64)


def _build(api, dev):
    """(feeds, fetches) of the same program under either client."""
    with dev(W1):
        tokens = api.placeholder(api.int64, [3, 4], name="tokens")
        scores = api.placeholder(api.float64, [6], name="scores")
        mask = api.not_equal(tokens, 0)
        where = api.where(mask)
        ids = api.SparseTensor(where, api.gather_nd(tokens, where), [3, 4])
        feats = api.SparseTensor([[0, 0], [0, 2], [1, 1], [1, 3], [2, 0], [2, 2]], scores, [3, 4])
        as_strings = api.serialize_many_sparse(feats)
        as_variant = api.serialize_sparse(feats, out_type=api.variant)
    with dev(W0):
        joined = api.sparse_concat(1, [feats, api.sparse_slice(feats, [0, 1], [3, 2])])
        probs = api.sparse.softmax(joined)
        # SparseConcat is not differentiable: the gradient goes through a softmax of feats.
        own = api.sparse.softmax(api.sparse_slice(feats, [0, 0], [3, 4]))
        (dscores,) = api.gradients(api.reduce_sum(own.values * own.values), [scores])
        cut = api.sparse_slice(feats, [1, 1], [2, 3])
        halves = api.sparse_split(sp_input=feats, num_split=2, axis=1)
        biggest = api.sparse_maximum(halves[0], api.sparse_reshape(halves[1], [3, 2]))
        reshaped = api.sparse_reshape(feats, [2, -1])
        common_ids = api.sets.intersection(tokens, ids)
        union = api.sets.union(ids, api.constant([[1, 9], [2, 8], [4, 4]], api.int64))
        sizes = api.sets.size(ids)
        back = api.deserialize_many_sparse(as_strings, api.float64, rank=2)
    with dev(PS):
        from_variant = _deserialize_variant(api, as_variant)

    def parts(sp):
        return [sp.indices, sp.values, sp.dense_shape]

    fetches = [
        parts(joined), probs.values, dscores, parts(cut), [parts(h) for h in halves],
        parts(biggest), parts(reshaped), parts(common_ids), parts(union), sizes,
        parts(back), from_variant,
    ]  # fmt: skip
    return {tokens: TOKENS, scores: SCORES}, fetches


def _deserialize_variant(api, serialized):
    """TensorFlow's public API has no v1 deserialize_sparse; both build the raw op."""
    if api is tf1:
        out = tf.raw_ops.DeserializeSparse(serialized_sparse=serialized, dtype=tf.float64)
    else:
        from client.ops.sparse_extra_ops import deserialize_sparse

        out = deserialize_sparse(serialized, api.float64)
        out = [out.indices, out.values, out.dense_shape]
    return list(out)


def _no_device(name):
    return contextlib.nullcontext()  # the local oracle has only /job:localhost


def _run(api, target: str, dev) -> list:
    g = api.Graph()
    with g.as_default():
        feeds, fetches = _build(api, dev)
    with api.Session(target, graph=g) as sess:
        return sess.run(fetches, feeds)


def _assert_same(a, b) -> None:
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    if a.dtype.kind == "f":
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(a, b)


def test_sparse_features_and_sets_across_workers_with_both_clients(shared_cluster):
    expected = _run(tf1, "", _no_device)
    for api in (tf1, ours):
        got = _run(api, shared_cluster.target, api.device)
        _assert_same(got, expected)
