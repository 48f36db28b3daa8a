"""Client, batch renormalization (tf.compat.v1.layers.batch_normalization(renorm=True))
on reference variables (resource variables off, as after disable_v2_behavior()): TF's
ref path (AssignSub "AssignMovingAvg" updates, moving_variance set by an Assign
"AssignNewValue" from the updated moving_stddev) node for node, and TensorFlow's
outputs, gradients and moving statistics after training steps."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.graph_sweep_cases import v1_control_flow
from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, need_tf_keras, run_both

pytest.importorskip("tensorflow")

CASES = {
    "clipped": ((8, 3), {"renorm_clipping": {"rmax": 2.0, "rmin": 0.5, "dmax": 1.0}}),
    "unclipped_4d": ((4, 2, 2, 3), {"renorm_momentum": 0.5}),
    "axis1_no_center": ((4, 3, 2), {"axis": 1, "center": False}),
}


def _build(case, x_value=None):
    shape, kwargs = CASES[case]

    @v1_control_flow
    def build(api):
        x = api.placeholder(api.float32, list(shape), name="x")
        y = api.layers.batch_normalization(x, training=True, renorm=True, momentum=0.5, **kwargs)
        infer = api.layers.batch_normalization(
            x, training=False, renorm=True, name="batch_normalization", reuse=True, **kwargs
        )
        loss = api.reduce_mean(y * y)
        grads = api.gradients(loss, [x, *api.trainable_variables()])
        updates = api.get_collection(api.GraphKeys.UPDATE_OPS)
        stats = [v for v in api.global_variables() if not v.trainable]

        def run(sess):
            outs = []
            for _ in range(3):
                outs.append(sess.run([y, *grads], {x: x_value}))
                sess.run(updates, {x: x_value})
            return outs, sess.run(infer, {x: x_value}), sess.run(stats)

        return run

    build.ref_variables = True
    return build


@pytest.mark.parametrize("case", sorted(CASES))
def test_graph_matches_tensorflow(case):
    need_tf_keras()
    ours, theirs = build_both(_build(case))
    assert graph_diff(ours, theirs) == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_match_tensorflow(case):
    need_tf_keras()
    import tensorflow as tf

    import client

    tf1 = tf.compat.v1
    x_value = np.random.default_rng(9).normal(1.0, 2.0, CASES[case][0])
    before = (client.resource_variables_enabled(), tf1.resource_variables_enabled())
    try:
        client.disable_resource_variables()
        tf1.disable_resource_variables()
        ours, theirs, _, _ = run_both(_build(case, x_value))
    finally:
        for api, was in ((client, before[0]), (tf1, before[1])):
            (api.enable_resource_variables if was else api.disable_resource_variables)()
    assert_close(ours, theirs, rtol=1e-4, atol=1e-5)
