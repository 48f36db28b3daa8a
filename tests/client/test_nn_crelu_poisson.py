"""tf.nn.crelu and tf.nn.log_poisson_loss against tensorflow.compat.v1: TF's nodes
(graph_diff), values and gradients."""

from __future__ import annotations

import numpy as np

from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, run_both

X = np.array([[-1.0, 0.5, 2.0], [0.3, -0.2, 1.5]], np.float32)
T = np.array([[0.0, 1.0, 3.0], [0.5, 2.0, 7.0]], np.float32)


def _build(api):
    x = api.placeholder(api.float32, [2, 3], name="x")
    t = api.placeholder(api.float32, [2, 3], name="t")
    outs = [
        api.nn.crelu(x),
        api.nn.crelu(x, axis=0, name="c0"),
        api.nn.log_poisson_loss(t, x),
        api.nn.log_poisson_loss(t, x, compute_full_loss=True),
    ]
    return x, t, outs


def test_builds_tensorflows_nodes():
    ours, theirs = build_both(lambda api: _build(api))
    assert graph_diff(ours, theirs) == []


def test_values_and_gradients_match_tensorflow():
    def build(api):
        x, t, outs = _build(api)
        grads = api.gradients(api.add_n([api.reduce_sum(o) for o in outs]), x)
        return lambda sess: sess.run([outs, grads], {x: X, t: T})

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs)
