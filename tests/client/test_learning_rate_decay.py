"""tf.train's learning-rate decays and tf.case against tensorflow.compat.v1: the same
nodes (graph_diff) and the same rates at global steps before, at and past the decay
boundaries."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, run_both

STEPS = [0, 1, 4, 5, 6, 10, 11, 25, 100]


def _decays(api, step):
    t = api.train
    return [
        t.exponential_decay(0.1, step, 10, 0.9),
        t.exponential_decay(0.1, step, 10, 0.9, staircase=True, name="stair"),
        t.natural_exp_decay(0.1, step, 10, 0.5),
        t.polynomial_decay(0.1, step, 10),
        t.polynomial_decay(0.1, step, 10, end_learning_rate=0.01, power=0.5, cycle=True),
        t.inverse_time_decay(0.1, step, 10, 0.5),
        t.inverse_time_decay(0.1, step, 10, 0.5, staircase=True),
        t.cosine_decay(0.1, step, 10, alpha=0.1),
        t.linear_cosine_decay(0.1, step, 10),
        t.linear_cosine_decay(0.1, step, 10, num_periods=2.0, alpha=0.1, beta=0.01),
    ]


def test_decays_build_tensorflows_nodes():
    def build(api):
        _decays(api, api.placeholder(api.int64, [], name="step"))

    ours, theirs = build_both(build)
    assert graph_diff(ours, theirs) == []


def test_decays_through_conds_build_tensorflows_v1_nodes():
    def build(api):
        step = api.placeholder(api.int64, [], name="step")
        api.train.piecewise_constant(step, [5, 10], [1.0, 0.5, 0.1])
        api.train.cosine_decay_restarts(0.1, step, 10, m_mul=0.5)

    build.v1_control_flow = True
    ours, theirs = build_both(build)
    assert graph_diff(ours, theirs) == []


def test_natural_exp_decay_of_a_tensor_rate_builds_tensorflows_nodes():
    def build(api):
        step = api.placeholder(api.int32, [], name="step")
        rate = api.placeholder(api.float32, [], name="rate")
        api.train.natural_exp_decay(api.constant(0.5), step, 3, rate, staircase=True)

    ours, theirs = build_both(build)
    assert graph_diff(ours, theirs) == []


def _over_steps(make):
    def build(api):
        step = api.train.get_or_create_global_step()
        rates = make(api, step)
        set_step = api.placeholder(api.int64, [])
        assign = api.assign(step, set_step)

        def steps(sess):
            out = []
            for s in STEPS:
                sess.run(assign, {set_step: s})
                out.append(sess.run(rates))
            return out

        return steps

    return build


def test_decays_follow_the_global_step_as_tensorflow():
    ours, theirs, _, _ = run_both(_over_steps(_decays))
    assert_close(ours, theirs, rtol=1e-6, atol=1e-7)


def test_piecewise_constant_and_cosine_restarts_values():
    def make(api, step):
        return [
            api.train.piecewise_constant(step, [5, 10], [1.0, 0.5, 0.1]),
            api.train.piecewise_constant_decay(step, [np.int64(4)], [0.3, 0.2], name="pc"),
            api.train.cosine_decay_restarts(0.1, step, 5),
            api.train.cosine_decay_restarts(0.1, step, 5, t_mul=1.0, m_mul=0.5, alpha=0.1),
        ]

    ours, theirs, _, _ = run_both(_over_steps(make))
    assert_close(ours, theirs, rtol=1e-6, atol=1e-7)
    assert [o[0] for o in ours] == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.1, 0.1, 0.1]


def test_piecewise_constant_refuses_mixed_dtypes_as_tensorflow():
    import client

    with client.Graph().as_default():
        step = client.placeholder(client.int32, [])
        with pytest.raises(ValueError, match="Boundaries .* must have the same dtype as x"):
            client.train.piecewise_constant(step, [1.5], [1.0, 0.5])
        with pytest.raises(ValueError, match="Values must have elements all with the same"):
            client.train.piecewise_constant(step, [1], [1.0, 2])


def test_case_picks_the_first_true_branch_and_default():
    def build(api):
        x = api.placeholder(api.int32, [])
        r = api.case(
            [(x < 0, lambda: api.constant(-1.0)), (x > 5, lambda: api.constant(1.0))],
            default=lambda: api.constant(0.0),
        )
        r2 = api.case(
            {x < 0: lambda: api.constant(-1), x >= 0: lambda: api.constant(1)}, exclusive=True
        )
        return lambda sess: [sess.run([r, r2], {x: v}) for v in (-3, 2, 9)]

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs)
    assert ours == [[-1.0, -1], [0.0, 1], [1.0, 1]]
