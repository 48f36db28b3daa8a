"""Client, tf.compat.v1.layers.batch_normalization(virtual_batch_size=...) (ghost batch
norm as tf_keras builds it): the same graph as TensorFlow's (reshape to virtual batches,
parameters of shape [1, 1, ..., C], one moving-average update from the virtual batches'
mean statistics), the same outputs, updates and gradients, and TF's errors for a bad
virtual_batch_size or axis."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, need_tf_keras, run_both, tf1

pytest.importorskip("tensorflow")

# name -> (input shape, virtual_batch_size, axis, training: True / False / "fed")
CASES = {
    "2d_training": ((8, 3), 2, -1, True),
    "2d_inference": ((8, 3), 4, -1, False),
    "4d_nhwc_training": ((8, 4, 4, 3), 4, -1, True),
    "4d_nchw_training": ((8, 3, 4, 4), 2, 1, True),
    "3d_middle_axis": ((6, 3, 5), 3, 1, True),
}


def _build(shape, vbs, axis, training, x_value, steps=2):
    def build(api):
        x = api.placeholder(api.float32, list(shape), name="x")
        fed = training == "fed"
        t = api.placeholder(api.bool, [], name="t") if fed else training
        y = api.layers.batch_normalization(
            x, axis=axis, training=t, virtual_batch_size=vbs, momentum=0.5,
            gamma_initializer=api.constant_initializer(1.5),
            beta_initializer=api.constant_initializer(-0.5),
        )  # fmt: skip
        loss = api.reduce_sum(y * y)
        grads = api.gradients(loss, [x, *api.trainable_variables()])
        updates = api.get_collection(api.GraphKeys.UPDATE_OPS)
        moving = [v for v in api.global_variables() if "moving" in v.op.name]

        def run(sess):
            feed = {x: x_value, **({t: True} if fed else {})}
            outs = []
            for _ in range(steps):
                outs.append(sess.run([y, *grads], feed))
                sess.run(updates, feed)
            if fed:
                outs.append(sess.run(y, {x: x_value, t: False}))
            return outs, sess.run(moving)

        return run

    return build


@pytest.mark.parametrize("case", sorted(CASES))
def test_graph_matches_tensorflow(case):
    need_tf_keras()
    shape, vbs, axis, training = CASES[case]
    x_value = np.zeros(shape, np.float32)
    ours, theirs = build_both(_build(shape, vbs, axis, training, x_value))
    assert graph_diff(ours, theirs) == []


@pytest.mark.parametrize("case", [*sorted(CASES), "2d_fed_training"])
def test_values_match_tensorflow(case):
    need_tf_keras()
    shape, vbs, axis, training = CASES.get(case, ((8, 3), 2, -1, "fed"))
    x_value = np.random.default_rng(5).standard_normal(shape).astype(np.float32) * 2 + 1
    ours, theirs, _, _ = run_both(_build(shape, vbs, axis, training, x_value))
    assert_close(ours, theirs, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "vbs, axis, match",
    [(0, -1, "must be a positive integer"), (-2, -1, "must be a positive"), (2, 0, "axis cannot include 0")],
)  # fmt: skip
def test_bad_virtual_batch_size_fails_like_tensorflow(vbs, axis, match):
    need_tf_keras()
    for api in (client, tf1):
        with api.Graph().as_default():
            x = api.placeholder(api.float32, [8, 3])
            with pytest.raises(ValueError, match=match):
                api.layers.batch_normalization(x, axis=axis, virtual_batch_size=vbs)
