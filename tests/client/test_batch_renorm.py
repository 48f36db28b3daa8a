"""Batch renormalization, tf.compat.v1.layers.batch_normalization(renorm=True,
renorm_clipping=..., renorm_momentum=...) and BatchNormalization(renorm=True), against
TensorFlow 2.21 (tf_keras): the same graph node for node (moving_stddev, renorm_mean,
renorm_stddev and their updates), the same outputs, gradients and variable values over
training steps, in training, inference and with a `training` tensor."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.graph_sweep_cases import _layer_case
from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, need_tf_keras, run_both

pytest.importorskip("tensorflow")
TF_GRAPH_MODE = True

CLIP = {"rmax": 1.5, "rmin": 0.5, "dmax": 0.3}


@pytest.fixture(autouse=True)
def _tf_keras():
    need_tf_keras()


def _bn(training, shape=(4, 3), **kwargs):
    return _layer_case(
        lambda api, x: api.layers.batch_normalization(x, training=training, renorm=True, **kwargs),
        shape,
    )


GRAPH_CASES = {
    "training": _bn(True, renorm_clipping=CLIP, renorm_momentum=0.9),
    "training_no_clipping": _bn(True),
    "training_rmax_only_no_center": _bn(True, renorm_clipping={"rmax": 2.0}, center=False),
    "training_no_scale": _bn(True, renorm_clipping={"dmax": 1.0}, scale=False),
    "training_channels_axis_1": _bn(True, (2, 3, 4, 2), axis=1, renorm_clipping=CLIP),
    "training_fused_true_falls_back": _bn(True, (2, 3, 4, 2), fused=True),
    "inference": _bn(False, renorm_clipping=CLIP),
    "inference_channels_axis_1": _bn(False, (2, 3, 4, 2), axis=1),
}


@pytest.mark.parametrize("name", sorted(GRAPH_CASES))
def test_graph_matches_tf(name):
    ours, theirs = build_both(GRAPH_CASES[name])
    assert graph_diff(ours, theirs) == []


def test_update_ops_and_variables_like_tf():
    def build(tf):
        x = tf.placeholder(tf.float32, [4, 3], name="x")
        layer = tf.layers.BatchNormalization(renorm=True, renorm_clipping=CLIP, momentum=0.8)
        layer(x, training=True)
        updates = [op.name for op in tf.get_collection(tf.GraphKeys.UPDATE_OPS)]
        variables = [(v.name, v in tf.trainable_variables()) for v in tf.global_variables()]
        return lambda sess: (updates, variables)

    ours, theirs, _, _ = run_both(build)
    assert ours == theirs


@pytest.mark.parametrize("shape,axis", [((6, 3), -1), ((3, 4, 5, 2), 1), ((3, 4, 2), -1)])
def test_training_steps_values_and_gradients_like_tf(shape, axis):
    data = [np.random.RandomState(i).randn(*shape).astype(np.float32) * 2 + 1 for i in range(4)]

    def build(tf):
        x = tf.placeholder(tf.float32, shape, name="x")
        y = tf.layers.batch_normalization(
            x,
            axis=axis,
            training=True,
            momentum=0.7,
            renorm=True,
            renorm_clipping={"rmax": 1.2, "rmin": 0.8, "dmax": 0.5},
            renorm_momentum=0.6,
        )
        y = tf.layers.batch_normalization(y, axis=axis, training=True, renorm=True, scale=False)
        weights = np.arange(y.shape[-1], dtype=np.float32) + 1
        loss = tf.reduce_mean(tf.square(y) * weights + y)
        grads = tf.gradients(loss, [x] + tf.trainable_variables())
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(updates):
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        names = [v.op.name for v in tf.global_variables()]

        def steps(sess):
            out = [sess.run([y, loss, grads, train], {x: d})[:3] for d in data]
            return out, dict(zip(names, sess.run(tf.global_variables())))

        return steps

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-4, atol=1e-4)


def test_training_tensor_switches_like_tf():
    """A `training` placeholder: TF builds smart_cond branches, the client one cond over
    the two graphs; the values (outputs, variable updates) are the same."""
    data = np.random.RandomState(7).randn(5, 3).astype(np.float32)

    def build(tf):
        x = tf.placeholder(tf.float32, [5, 3], name="x")
        is_training = tf.placeholder(tf.bool, [], name="is_training")
        y = tf.layers.batch_normalization(
            x, training=is_training, renorm=True, renorm_clipping=CLIP, momentum=0.5
        )
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        names = [v.op.name for v in tf.global_variables()]

        def steps(sess):
            out = []
            for flag in (True, True, False, True, False):
                out.append(sess.run([y, updates], {x: data * (1 + flag), is_training: flag})[0])
            return out, dict(zip(names, sess.run(tf.global_variables())))

        return steps

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


def test_refusals_like_tf():
    import tensorflow as tf_real

    import client

    for api in (client, tf_real.compat.v1):
        with pytest.raises(ValueError, match="renorm_clipping"):
            api.layers.BatchNormalization(renorm=True, renorm_clipping={"rmx": 1.0})
