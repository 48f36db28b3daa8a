"""tf.layers.batch_normalization with resource variables off (a TF1 program after
disable_v2_behavior()), against tensorflow.compat.v1: the moving averages are reference
variables updated by AssignSub named "AssignMovingAvg" (tf_keras' ref path) colocated
as TF's, and the same outputs and moving statistics after training steps, fused and not."""

from __future__ import annotations

import os

import numpy as np
import pytest

import client

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module


@pytest.fixture
def v1_behavior():
    """What disable_v2_behavior() turns off in both clients (reference variables, control
    flow v1: TensorFlow itself cannot update a reference inside a cond_v2 branch); both
    switches restored after the test."""
    from tensorflow.python.ops import control_flow_util

    before = (
        client.resource_variables_enabled(),
        client.control_flow_v2_enabled(),
        tf1.resource_variables_enabled(),
        control_flow_util.ENABLE_CONTROL_FLOW_V2,
    )
    for tf in (client, tf1):
        tf.disable_resource_variables()
        tf.disable_control_flow_v2()
    yield
    (client.enable_resource_variables if before[0] else client.disable_resource_variables)()
    (client.enable_control_flow_v2 if before[1] else client.disable_control_flow_v2)()
    (tf1.enable_resource_variables if before[2] else tf1.disable_resource_variables)()
    control_flow_util.ENABLE_CONTROL_FLOW_V2 = before[3]


X = np.random.default_rng(3).normal(1.0, 2.0, (8, 4, 4, 3)).astype(np.float32)


def _build(tf, fused: bool):
    x = tf.placeholder(tf.float32, [8, 4, 4, 3], name="x")
    training = tf.placeholder_with_default(True, [], name="training")
    y = tf.layers.batch_normalization(x, training=training, fused=fused, momentum=0.9)
    loss = tf.reduce_mean(tf.square(y - 0.5))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return x, training, y, train


def _run(tf, fused: bool):
    with tf.Graph().as_default() as g:
        x, training, y, train = _build(tf, fused)
        stats = [v for v in tf.global_variables() if "moving" in v.name]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train, {x: X})
            out = sess.run([y, *stats], {x: X, training: False})
        return g.as_graph_def(), [type(v).__name__ for v in stats], out


def _updates(gd) -> list:
    """The moving-average updates: (op, colocation); node names are compared by
    test_batch_norm_training_tensor.py."""
    return sorted((n.op, list(n.attr["_class"].list.s)) for n in gd.node if n.op == "AssignSub")


@pytest.mark.parametrize("fused", [False, True], ids=["plain", "fused"])
def test_batch_norm_trains_on_reference_variables_as_tensorflow(v1_behavior, fused):
    ours_gd, our_kinds, ours = _run(client, fused)
    tf_gd, _, theirs = _run(tf1, fused)
    assert our_kinds == ["RefVariable", "RefVariable"]
    assert "AssignSub" in {n.op for n in ours_gd.node}
    assert _updates(ours_gd) == _updates(tf_gd)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)
