"""Integration, this round's string and ragged kernels through OUR master (real processes
started through the CLIs): an unmodified tf.compat.v1.Session("grpc://...") and our client
run tf.strings.unicode_decode (+ to_tensor / to_sparse), unicode_split, bytes_split,
tf.strings.format and serialize_tensor / parse_tensor with each op on the worker that did
not make its input; the fetches equal TensorFlow's own in-process session's."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

W0, W1 = "/job:worker/task:0", "/job:worker/task:1"
TEXTS = np.array(["héllo".encode(), b"ab\xff", b"", "😀x".encode()], dtype=object)
VALUES = np.arange(6, dtype=np.float32).reshape(2, 3)


def _build(api, dev) -> tuple[dict, list]:
    texts = api.placeholder(api.string, [None], name="texts")
    values = api.placeholder(api.float32, [2, 3], name="values")
    with dev(W0):
        doubled = values * 2.0
        lowered = api.strings.regex_replace(texts, "x", "y")
    with dev(W1):
        rt = api.strings.unicode_decode(lowered, "UTF-8")
        dense = rt.to_tensor(default_value=-1)
        sparse = rt.to_sparse()
        pieces = api.strings.unicode_split(lowered, "UTF-8").to_tensor()
        byte_rows = api.strings.bytes_split(lowered).to_tensor()
        text = api.strings.format("v={}", doubled)
        parsed = api.io.parse_tensor(api.io.serialize_tensor(doubled), api.float32)
    fetches = [dense, sparse.indices, sparse.values, pieces, byte_rows, text, parsed]
    return {texts: TEXTS, values: VALUES}, fetches


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
        assert g.dtype == w.dtype or {g.dtype.kind, w.dtype.kind} <= set("OS")
        np.testing.assert_array_equal(g, w)


def test_tensorflow_client_on_our_cluster(shared_cluster) -> None:
    _assert_equal(_run(tf1, shared_cluster.target, tf.device), _local())


def test_our_client_on_our_cluster(shared_cluster) -> None:
    import client

    _assert_equal(_run(client, shared_cluster.target, client.device), _local())
