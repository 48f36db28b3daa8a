"""Integration, histogram / bucketing / layout / base64 ops through OUR master (real
processes started through the CLIs): an unmodified tf.compat.v1.Session("grpc://...") and
our client run tf.histogram_fixed_width, tf.io.encode_base64 / decode_base64 (and, from
TF's client, the raw Bucketize, DataFormatVecPermute and DataFormatDimMap) split over two
workers; the fetches equal TensorFlow's own in-process session's."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

W0, W1 = "/job:worker/task:0", "/job:worker/task:1"
VALUES = (np.random.default_rng(2).standard_normal((6, 50)) * 3).astype(np.float32)
TEXTS = np.array([b"", b"a", b"flowrt", b"\xff\xfe?", b"0123456789"], dtype=object)


def _build(api, dev, raw: bool) -> tuple[dict, list]:
    values = api.placeholder(api.float32, [None, 50], name="values")
    texts = api.placeholder(api.string, [None], name="texts")
    with dev(W0):
        hist = api.histogram_fixed_width(values, [-4.0, 4.0], nbins=9)
        hist64 = api.histogram_fixed_width(values * 2.0, [-1.0, 1.0], nbins=5, dtype=api.int64)
    with dev(W1):
        encoded = api.io.encode_base64(texts, pad=True)
        decoded = api.io.decode_base64(api.io.encode_base64(texts))
    fetches = [hist, hist64, encoded, decoded]
    if raw:
        with dev(W1):
            fetches.append(tf.raw_ops.Bucketize(input=values, boundaries=[-1.0, 0.0, 2.5]))
            shape = tf.shape(values, out_type=tf.int64)
            fetches.append(tf.raw_ops.DataFormatVecPermute(x=tf.concat([shape, shape], 0)))
            fetches.append(tf.raw_ops.DataFormatDimMap(x=[-5, -1, 0, 3], dst_format="NCHW"))
    return {values: VALUES, texts: TEXTS}, fetches


def _run(api, target: str, dev, raw: bool) -> list:
    g = api.Graph()
    with g.as_default():
        feed, fetches = _build(api, dev, raw)
    with api.Session(target, graph=g) as sess:
        return sess.run(fetches, feed)


def _local(raw: bool) -> list:
    return _run(tf1, "", lambda name: contextlib.nullcontext(), raw)


def _assert_equal(got: list, want: list) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


def test_tensorflow_client_on_our_cluster(shared_cluster) -> None:
    got = _run(tf1, shared_cluster.target, tf.device, raw=True)
    _assert_equal(got, _local(raw=True))
    assert got[3].tolist() == TEXTS.tolist()
    assert int(got[0].sum()) == VALUES.size


def test_our_client_on_our_cluster(shared_cluster) -> None:
    import client

    _assert_equal(_run(client, shared_cluster.target, client.device, raw=False), _local(raw=False))
