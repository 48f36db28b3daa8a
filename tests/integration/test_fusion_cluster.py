"""Integration, elementwise fusion on a cluster: a v1 while loop with a cond and the
gradient, its fusible chains on /job:worker/task:1 and its input made on task 0, driven by
TensorFlow's client (tf.compat.v1.Session against OUR master) and by ours. The fused
nodes are in the worker's partition graph (RunMetadata.partition_graphs); the values
equal those of the same run with fusion off bit for bit, and TensorFlow's local session's
to float tolerance."""

from __future__ import annotations

import numpy as np
import pytest

import client as ours

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

W0, W1 = "/job:worker/task:0", "/job:worker/task:1"
X = np.random.default_rng(5).normal(0, 1.5, (3, 4)).astype(np.float32)
WEIGHTS = np.linspace(-0.8, 0.8, 16, dtype=np.float32).reshape(4, 4)


def _build(api, placed: bool):
    with api.device(W0 if placed else None):
        x = api.placeholder(api.float32, [3, 4], name="x")
        x0 = x * 1.0
    with api.device(W1 if placed else None):
        w = api.constant(WEIGHTS, name="w")

        def body(i, h):
            z = api.matmul(h, w)
            gate = api.sigmoid(z + 1.0) * api.tanh(z - 0.5)
            h = api.cond(
                i % 2 < 1,
                lambda: api.maximum(gate * h + api.exp(-api.square(z)), -2.0),
                lambda: api.nn.relu(gate - h) * 0.5,
            )
            return i + 1, h

        _, h = api.while_loop(lambda i, h: i < 5, body, [api.constant(0), x0])
        loss = api.reduce_sum(h * h)
        (gx,) = api.gradients(loss, [x])
    return {x: X}, [h, loss, gx]


def _config(api, fuse: bool):
    config = api.ConfigProto()
    if not fuse:
        config.graph_options.rewrite_options.remapping = 2  # RewriterConfig.OFF
    return config


def _run(api, target: str, fuse: bool = True):
    from tensorflow.python.ops import control_flow_util

    was = control_flow_util.ENABLE_CONTROL_FLOW_V2
    tf1.disable_control_flow_v2()
    try:
        g = api.Graph()
        with g.as_default():
            feeds, fetches = _build(api, placed=bool(target))
    finally:
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = was
    with api.Session(target, graph=g, config=_config(api, fuse)) as sess:
        meta = api.RunMetadata()
        values = sess.run(
            fetches, feeds, options=api.RunOptions(output_partition_graphs=True), run_metadata=meta
        )
    fused = [
        n.name
        for p in meta.partition_graphs
        for n in p.node
        if n.op == "_FusedElementwise" and n.device.startswith("/job:worker/replica:0/task:1/")
    ]
    return values, fused


@pytest.mark.parametrize("api", [tf1, ours], ids=["tf_client", "our_client"])
def test_fused_loop_on_a_worker_equals_unfused_and_tensorflow(shared_cluster, api):
    expected, _ = _run(tf1, "")
    fused, names = _run(api, shared_cluster.target)
    plain, plain_names = _run(api, shared_cluster.target, fuse=False)
    assert names and not plain_names
    for got, want, tf_value in zip(fused, plain, expected, strict=True):
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype == np.asarray(tf_value).dtype
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
        np.testing.assert_allclose(got, tf_value, rtol=2e-5, atol=1e-6)
