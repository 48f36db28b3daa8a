"""tf_keras as the oracle for client.keras: `compare(build, feeds)` builds the same graph
program with (client, client.keras) and with (tf.compat.v1, tf.keras), compares the
GraphDefs node for node (name, op, inputs, key attributes: test_graph_sweep's graph_diff)
and, after initializing both, the values of what `build` returns.

TensorFlow runs tf_keras (TF_USE_LEGACY_KERAS=1, set before TensorFlow is imported) in
graph mode: a tf.Graph, not eager. tf_keras draws the seeds of unseeded initializers from
Python's `random` (random.randint(1, 1e9)), as client.keras does: both builds start from
the same state of it, so even unseeded weights start equal.
"""

from __future__ import annotations

import os
import random
from typing import Any

import numpy as np
import pytest

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import client  # noqa: E402

tf_real = pytest.importorskip("tensorflow")
pytest.importorskip("tf_keras")
tf1 = tf_real.compat.v1

from tests.client.test_graph_sweep import graph_diff  # noqa: E402


def _build(api: Any, keras: Any, graph: Any, build: Any, seed: int) -> Any:
    with graph.as_default():
        random.seed(seed)
        return build(api, keras)


def build_both(build: Any, v1_control_flow: bool = False, seed: int = 0) -> tuple:
    """((client graph, client outputs), (TF graph, TF outputs)), Python's `random`
    restored after; with v1_control_flow both build Switch/Merge conds, as a TF1 program
    after disable_v2_behavior()."""
    state = random.getstate()
    before = (client.control_flow_v2_enabled(), tf1.control_flow_v2_enabled())
    try:
        if v1_control_flow:
            client.disable_control_flow_v2()
            tf1.disable_control_flow_v2()
        g, t = client.Graph(), tf_real.Graph()
        ours = _build(client, client.keras, g, build, seed)
        theirs = _build(tf1, tf_real.keras, t, build, seed)
    finally:
        random.setstate(state)
        (client.enable_control_flow_v2 if before[0] else client.disable_control_flow_v2)()
        (tf1.enable_control_flow_v2 if before[1] else tf1.disable_control_flow_v2)()
    return (g, ours), (t, theirs)


def run(api: Any, graph: Any, fetches: Any, feeds: dict, target: str = "") -> Any:
    with graph.as_default(), api.Session(target, graph=graph) as sess:
        sess.run(api.global_variables_initializer())
        return sess.run(fetches, {f"{k}:0": v for k, v in feeds.items()})


def compare(
    build: Any,
    feeds: dict | None = None,
    v1_control_flow: bool = False,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    check_graph: bool = True,
) -> tuple[Any, Any]:
    """Same graph and same values (of what `build` returns) as tf_keras."""
    (g, ours), (t, theirs) = build_both(build, v1_control_flow)
    if check_graph:
        diff = graph_diff(g.as_graph_def(), t.as_graph_def())
        assert diff == [], "\n".join(diff)
    feeds = feeds or {}
    got, want = run(client, g, ours, feeds), run(tf1, t, theirs, feeds)
    assert_close(got, want, rtol, atol)
    return got, want


def assert_close(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            assert_close(a[k], b[k], rtol, atol)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_close(x, y, rtol, atol)
    elif a is None:
        assert b is None
    else:
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, (a.shape, b.shape)
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(a, b)
