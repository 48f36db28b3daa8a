"""Client, tf.compat.v1.layers.batch_normalization with `training` a boolean tensor (v1
control flow, as a TF1 program after disable_v2_behavior()): as tf_keras' smart_cond,
one cond per training-dependent quantity (the batch or moving mean and variance, each
moving-average update; fused: the FusedBatchNorm op and the momentum), so the graph
matches TensorFlow's node for node, with resource and reference variables and virtual
batches and batch renorm (r and d, the renorm averages' updates), and outputs, updates
and gradients equal TensorFlow's."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.graph_sweep_cases import v1_control_flow
from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, need_tf_keras, run_both

pytest.importorskip("tensorflow")

# name -> (input shape, layer kwargs, reference variables)
CASES = {
    "plain": ((8, 3), {}, False),
    "plain_ref": ((8, 3), {}, True),
    "plain_4d_axis1": ((4, 3, 2, 2), {"axis": 1, "fused": False}, False),
    "fused_nhwc": ((4, 2, 2, 3), {"fused": True}, False),
    "fused_nchw_ref": ((4, 3, 2, 2), {"axis": 1, "fused": True}, True),
    "virtual_batch": ((8, 3), {"virtual_batch_size": 2}, False),
    "virtual_batch_ref": ((8, 2, 3), {"virtual_batch_size": 4}, True),
    "renorm": ((8, 3), {"renorm": True, "renorm_clipping": {"rmax": 2.0, "dmax": 1.0}}, False),
    "renorm_ref_4d": ((4, 2, 2, 3), {"renorm": True, "renorm_momentum": 0.5}, True),
}


def _build(case, x_value=None):
    shape, kwargs, ref = CASES[case]

    @v1_control_flow
    def build(api):
        x = api.placeholder(api.float32, list(shape), name="x")
        t = api.placeholder_with_default(True, [], name="t")
        y = api.layers.batch_normalization(x, training=t, momentum=0.5, **kwargs)
        loss = api.reduce_mean(y * y)
        grads = api.gradients(loss, [x, *api.trainable_variables()])
        updates = api.get_collection(api.GraphKeys.UPDATE_OPS)
        moving = [v for v in api.global_variables() if "moving" in v.op.name]

        def run(sess):
            outs = []
            for _ in range(2):
                outs.append(sess.run([y, *grads], {x: x_value}))
                sess.run(updates, {x: x_value})
            outs.append(sess.run([y, *grads, *updates], {x: x_value, t: False}))
            return outs, sess.run(moving)

        return run

    build.ref_variables = ref
    return build


@pytest.mark.parametrize("case", sorted(CASES))
def test_graph_matches_tensorflow(case):
    need_tf_keras()
    ours, theirs = build_both(_build(case))
    assert graph_diff(ours, theirs) == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_match_tensorflow(case, monkeypatch):
    need_tf_keras()
    import tensorflow as tf

    import client

    build = _build(case, np.random.default_rng(7).normal(1.0, 2.0, CASES[case][0]))
    tf1 = tf.compat.v1
    before = (client.resource_variables_enabled(), tf1.resource_variables_enabled())
    before_cf = (client.control_flow_v2_enabled(), tf1.control_flow_v2_enabled())
    try:
        for api in (client, tf1):
            api.disable_control_flow_v2()
            if build.ref_variables:
                api.disable_resource_variables()
        ours, theirs, _, _ = run_both(build)
    finally:
        for api, was, was_cf in ((client, before[0], before_cf[0]), (tf1, before[1], before_cf[1])):
            (api.enable_resource_variables if was else api.disable_resource_variables)()
            (api.enable_control_flow_v2 if was_cf else api.disable_control_flow_v2)()
    assert_close(ours, theirs, rtol=1e-4, atol=1e-5)
