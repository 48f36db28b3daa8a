"""Integration, dependency optimization on a cluster: a v1 while loop with a cond, a
`gate_gradients` tuple and the gradient, the loop on /job:worker/task:1 and its input made
on task 0, driven by TensorFlow's client (tf.compat.v1.Session against OUR master) and by
ours. With the pass on, the worker's partition holds fewer Identity and NoOp nodes and the
step executes fewer nodes than with RewriterConfig.dependency_optimization OFF; the values
are those of the run with it off bit for bit, and TensorFlow's local session's to float
tolerance."""

from __future__ import annotations

import numpy as np
import pytest

import client as ours

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

W0, W1 = "/job:worker/task:0", "/job:worker/task:1"
TASK1 = "/job:worker/replica:0/task:1/"
X = np.random.default_rng(7).normal(0, 1.0, (3, 4)).astype(np.float32)
WEIGHTS = np.linspace(-0.7, 0.9, 16, dtype=np.float32).reshape(4, 4)
OFF = 2  # RewriterConfig.Toggle.OFF


def _build(api, placed: bool):
    with api.device(W0 if placed else None):
        x = api.placeholder(api.float32, [3, 4], name="x")
        x0 = x * 1.0
    with api.device(W1 if placed else None):
        w = api.constant(WEIGHTS, name="w")

        def body(i, h):
            z = api.matmul(h, w)
            gate = api.sigmoid(z + 1.0) * api.tanh(z)
            h = api.cond(i % 2 < 1, lambda: gate * h + 0.25, lambda: api.nn.relu(gate - h))
            return i + 1, h

        _, h = api.while_loop(lambda i, h: i < 5, body, [api.constant(0), x0])
        loss = api.reduce_sum(h * h)
        (gx,) = api.gradients(loss, [x], gate_gradients=True)
    return {x: X}, [h, loss, gx]


def _run(api, target: str, dependency: bool = True):
    from tensorflow.python.ops import control_flow_util

    was = control_flow_util.ENABLE_CONTROL_FLOW_V2
    tf1.disable_control_flow_v2()
    try:
        g = api.Graph()
        with g.as_default():
            feeds, fetches = _build(api, placed=bool(target))
    finally:
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = was
    config = api.ConfigProto()
    if not dependency:
        config.graph_options.rewrite_options.dependency_optimization = OFF
    with api.Session(target, graph=g, config=config) as sess:
        meta = api.RunMetadata()
        options = api.RunOptions(trace_level=3, output_partition_graphs=True)
        values = sess.run(fetches, feeds, options=options, run_metadata=meta)
    bookkeeping = sum(
        1
        for p in meta.partition_graphs
        for n in p.node
        if n.op in ("Identity", "NoOp") and n.device.startswith(TASK1)
    )
    executed = sum(len(d.node_stats) for d in meta.step_stats.dev_stats)
    return values, bookkeeping, executed


@pytest.mark.parametrize("api", [tf1, ours], ids=["tf_client", "our_client"])
def test_loop_gradient_on_a_worker_equals_unoptimized_and_tensorflow(shared_cluster, api):
    expected, _, _ = _run(tf1, "")
    got, bookkeeping, executed = _run(api, shared_cluster.target)
    plain, plain_bookkeeping, plain_executed = _run(api, shared_cluster.target, False)
    assert bookkeeping < plain_bookkeeping
    assert executed < plain_executed
    for value, want, tf_value in zip(got, plain, expected, strict=True):
        value, want = np.asarray(value), np.asarray(want)
        assert value.dtype == want.dtype == np.asarray(tf_value).dtype
        np.testing.assert_array_equal(value.view(np.uint32), want.view(np.uint32))
        np.testing.assert_allclose(value, tf_value, rtol=2e-5, atol=1e-6)
