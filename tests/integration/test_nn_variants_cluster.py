"""Integration, convolution and pooling variants through a real cluster: a small image
model (separable convolution with its filters on the ps, LRN, dilation2d, a seeded
fractional max pool, max_pool_with_argmax, extract_patches) trained three SGD steps on a
worker, built once by TensorFlow's own client (tf.compat.v1.Session against OUR master,
processes started through the CLIs) and once by ours; losses, pooled indices and the
trained weights are compared with TensorFlow's local session."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import client as ours

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

W0, PS = "/job:worker/task:0", "/job:ps/task:0"
RNG = np.random.default_rng(7)
IMAGES = RNG.standard_normal((2, 9, 8, 3)).astype(np.float32)
DEPTHWISE = (0.3 * RNG.standard_normal((2, 2, 3, 2))).astype(np.float32)
POINTWISE = (0.3 * RNG.standard_normal((1, 1, 6, 4))).astype(np.float32)
DILATION = (0.1 * RNG.standard_normal((2, 2, 4))).astype(np.float32)
STEPS = 3


def _build(api, dev):
    with dev(PS):
        dw = api.get_variable("depthwise", initializer=api.constant(DEPTHWISE))
        pw = api.get_variable("pointwise", initializer=api.constant(POINTWISE))
        dil = api.get_variable("dilation", initializer=api.constant(DILATION))
    with dev(W0):
        x = api.placeholder(api.float32, [2, 9, 8, 3], name="images")
        h = api.nn.separable_conv2d(x, dw, pw, [1, 1, 1, 1], "SAME")
        h = api.nn.lrn(h, depth_radius=1, bias=1.0, alpha=0.2, beta=0.75)
        h = api.nn.dilation2d(h, dil, [1, 1, 1, 1], [1, 2, 1, 1], "SAME")
        pooled, rows, cols = api.nn.fractional_max_pool(
            h,
            [1, 1.5, 1.4, 1],
            pseudo_random=True,
            overlapping=True,
            deterministic=True,
            seed=5,
            seed2=6,
        )
        top, argmax = api.nn.max_pool_with_argmax(pooled, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        patches = api.image.extract_patches(top, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
        loss = api.reduce_mean(api.square(patches - 0.5))
        train = api.train.GradientDescentOptimizer(0.5).minimize(loss)
    return x, loss, train, [rows, cols, argmax], [dw, pw, dil]


def _train(api, session, target: str, dev) -> list[np.ndarray]:
    g = api.Graph()
    with g.as_default():
        x, loss, train, indices, weights = _build(api, dev)
        init = api.global_variables_initializer()
    with session(target, graph=g) as sess:
        sess.run(init)
        losses = []
        for _ in range(STEPS):
            losses.append(sess.run([loss, train], {x: IMAGES})[0])
        return [np.array(losses), *sess.run(indices, {x: IMAGES}), *sess.run(weights)]


def _no_device(name):
    return contextlib.nullcontext()  # the local oracle has only /job:localhost


def test_image_model_trains_through_our_master_with_both_clients(shared_cluster):
    expected = _train(tf1, tf1.Session, "", _no_device)
    assert expected[0][-1] < expected[0][0]
    for api, session in ((tf1, tf1.Session), (ours, ours.Session)):
        got = _train(api, session, shared_cluster.target, api.device)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert np.asarray(g).dtype == np.asarray(e).dtype
            if np.asarray(e).dtype.kind == "i":
                np.testing.assert_array_equal(g, e)
            else:
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
