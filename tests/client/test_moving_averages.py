"""tf.train.ExponentialMovingAverage against tensorflow.compat.v1: the shadow variables
and update nodes TF builds (graph_diff), the averages after several applies, and the
names average_name / variables_to_restore give a Saver."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, run_both


def _model(api):
    w = api.Variable([1.0, 2.0], name="w")
    with api.variable_scope("layer"):
        b = api.get_variable("b", [], initializer=api.constant_initializer(3.0))
    return w, b


def test_apply_builds_tensorflows_nodes():
    def build(api):
        w, b = _model(api)
        step = api.placeholder(api.int64, [], name="step")
        ema = api.train.ExponentialMovingAverage(0.9, num_updates=step)
        ema.apply([w, b])
        api.train.ExponentialMovingAverage(0.5, name="slow").apply()

    build.v1_control_flow = True
    ours, theirs = build_both(build)
    assert graph_diff(ours, theirs) == []


def test_averages_follow_tensorflow_over_steps():
    def build(api):
        w, b = _model(api)
        step = api.placeholder(api.int64, [])
        ema = api.train.ExponentialMovingAverage(0.9, num_updates=step)
        train = [api.assign_add(w, [0.5, -1.0]), api.assign_add(b, 2.0)]
        with api.control_dependencies(train):
            update = ema.apply([w, b])
        fixed = api.train.ExponentialMovingAverage(0.75, name="fixed")
        update_fixed = fixed.apply([w])
        shadows = [ema.average(w), ema.average(b), fixed.average(w)]

        def steps(sess):
            out = []
            for s in range(5):
                sess.run(update, {step: s * 10})
                sess.run(update_fixed)
                out.append(sess.run(shadows))
            return out

        return steps

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-6, atol=1e-6)


def test_names_for_restoring_averages_match_tensorflow():
    def build(api):
        w, b = _model(api)
        api.Variable(0, name="counter", trainable=False)
        ema = api.train.ExponentialMovingAverage(0.9)
        ema.apply([w])
        info = {
            "average_name": [ema.average_name(w), ema.average_name(b)],
            "average": [ema.average(w).name, ema.average(b)],
            "restore": sorted((k, v.name) for k, v in ema.variables_to_restore().items()),
            "collection": [v.name for v in api.moving_average_variables()],
        }
        return lambda sess: info

    ours, theirs, _, _ = run_both(build)
    assert ours == theirs
    assert ours["restore"][0] == ("counter", "counter:0")


def test_saver_restores_the_averages_into_the_model(tmp_path):
    import client as tf

    g = tf.Graph()
    with g.as_default():
        w, b = _model(tf)
        ema = tf.train.ExponentialMovingAverage(0.5)
        with tf.control_dependencies([tf.assign(w, [3.0, 6.0])]):
            update = ema.apply([w, b])
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(update)
            path = saver.save(sess, str(tmp_path / "model"))
        restorer = tf.train.Saver(ema.variables_to_restore())
        with tf.Session() as sess:
            restorer.restore(sess, path)
            np.testing.assert_allclose(sess.run(w), [2.0, 4.0])
            assert sess.run(b) == pytest.approx(3.0)


def test_apply_refuses_integer_variables_as_tensorflow():
    import client as tf

    with tf.Graph().as_default():
        v = tf.Variable(1, name="count")
        with pytest.raises(TypeError, match="The variables must be half, float, or double"):
            tf.train.ExponentialMovingAverage(0.9).apply([v])
