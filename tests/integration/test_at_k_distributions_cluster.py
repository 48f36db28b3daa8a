"""Integration: the top-k metrics with SparseTensor labels and distributions of
run-time shapes through a real cluster. The labels are made on the ps task and the
metrics (their conds, set operations and local variables) run on worker 0; a Categorical
of unknown logits shape is sampled with a fed sample_shape; a Normal with validate_args
fails its assertion. Built once by TensorFlow's own client (tf.compat.v1.Session against
OUR master) and once by ours; values compared with TensorFlow's local session."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import client as ours

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

W0, PS = "/job:worker/task:0", "/job:ps/task:0"
SCORES = np.random.RandomState(4).rand(5, 6).astype(np.float32)
LABEL_INDICES = np.array([[0, 0], [0, 1], [1, 0], [3, 0], [3, 1], [3, 2], [4, 0]], np.int64)
LABEL_VALUES = np.array([1, 4, 0, 2, 5, 7, 3], np.int64)
LOGITS = np.random.RandomState(5).randn(3, 4)


def _build(api, device):
    with device(PS):
        labels = api.SparseTensor(
            api.constant(LABEL_INDICES), api.constant(LABEL_VALUES), api.constant([5, 3], api.int64)
        )
    with device(W0):
        scores = api.constant(SCORES)
        m = api.metrics
        metrics = [
            m.precision_at_k(labels, scores, 2),
            m.recall_at_k(labels, scores, 3, class_id=2),
            m.average_precision_at_k(labels, scores, 3),
        ]
        logits = api.placeholder(api.float64, None, name="logits")
        n = api.placeholder(api.int32, [None], name="n")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cat = api.distributions.Categorical(logits=logits)
            draws = cat.sample(n, seed=3)
            log_prob = cat.log_prob(np.array([1, 0, 3]))
            scale = api.placeholder(api.float64, [None], name="scale")
            normal = api.distributions.Normal(np.float64(0.0), scale, validate_args=True).log_prob(
                0.5
            )
    feeds = {logits: LOGITS, n: [2, 2]}
    return (
        feeds,
        [u for _, u in metrics],
        [v for v, _ in metrics],
        [draws, log_prob],
        (
            normal,
            scale,
        ),
    )


def _run(api, target, device):
    g = api.Graph()
    with g.as_default():
        api.set_random_seed(1)
        feeds, updates, values, dist, (normal, scale) = _build(api, device)
        init = api.local_variables_initializer()
    with api.Session(target, graph=g) as sess:
        sess.run(init)
        sess.run(updates)
        out = [sess.run(updates), sess.run(values), sess.run(dist, feeds)]
        out.append(sess.run(normal, {scale: [1.0, 2.0]}))
        with pytest.raises(api.errors.InvalidArgumentError, match="did not hold"):
            sess.run(normal, {scale: [1.0, -2.0]})
    return out


def test_at_k_and_distributions_through_our_master_with_both_clients(shared_cluster):
    expected = _run(tf1, "", lambda _: contextlib.nullcontext())
    for api in (tf1, ours):
        got = _run(api, shared_cluster.target, api.device)
        for g, e in zip(got, expected):
            for a, b in zip(g, e):
                np.testing.assert_allclose(a, b, rtol=1e-12)
