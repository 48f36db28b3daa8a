"""Integration, the TF1 probe's math gaps through a real cluster: tf.sort/argsort (TopKV2
and its gradient), tf.math.reduce_std, tf.meshgrid, tf.bitwise.*, tf.angle and tf.fft,
their inputs made on /job:ps and the ops run on /job:worker/task:1, built once by
TensorFlow's client and once by ours against OUR master, and compared with TensorFlow's
local session."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import client as ours

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

X = np.random.default_rng(4).standard_normal((3, 5))
INTS = np.array([5, 12, -3, 7], np.int32)


def _on(api, device: str, placed: bool):
    return api.device(device) if placed else contextlib.nullcontext()


def _build(api, placed: bool) -> list:
    with _on(api, "/job:ps/task:0", placed):
        x = api.constant(X)
        ints = api.constant(INTS)
    with _on(api, "/job:worker/task:1", placed):
        s = api.sort(x, axis=0)
        (g,) = api.gradients(api.reduce_sum(s * X), [x])
        a, b = api.meshgrid(ints, [1, 2])
        return [
            s,
            g,
            api.argsort(x, direction="DESCENDING"),
            api.math.reduce_std(x, axis=1),
            a * b,
            api.bitwise.bitwise_xor(ints, 6),
            api.bitwise.invert(ints),
            api.angle(api.complex(x, -x)),
            api.fft(api.complex(x, x)),
        ]


def _run(api, target: str) -> list[np.ndarray]:
    g = api.Graph()
    with g.as_default():
        fetches = _build(api, placed=bool(target))
    with api.Session(target, graph=g) as sess:
        return sess.run(fetches)


def test_sort_bitwise_angle_fft_through_our_master_with_both_clients(shared_cluster):
    expected = _run(tf1, "")
    for api in (tf1, ours):
        got = _run(api, shared_cluster.target)
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            assert np.asarray(g).dtype == np.asarray(e).dtype
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
