"""tf.assert_* and tf.debugging's asserts against tensorflow.compat.v1: TF's nodes
(graph_diff; float data guard the Assert with an AssertGuard cond), TF's build-time
errors for static operands, and the run-time InvalidArgumentError when a fed value
breaks the condition."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.test_graph_sweep import build_both, graph_diff, tf1

BINARY = [
    "assert_equal",
    "assert_none_equal",
    "assert_less",
    "assert_less_equal",
    "assert_greater",
    "assert_greater_equal",
]
UNARY = ["assert_positive", "assert_negative", "assert_non_negative", "assert_non_positive"]


def _v1(build):
    build.v1_control_flow = True
    return build


@pytest.mark.parametrize("fn", BINARY)
def test_binary_asserts_build_tensorflows_nodes(fn):
    @_v1
    def build(api):
        x = api.placeholder(api.float32, [3], name="x")
        y = api.placeholder(api.float32, [3], name="y")
        i = api.placeholder(api.int32, [2], name="i")
        getattr(api, fn)(x, y)
        getattr(api.debugging, fn)(i, [1, 2], message="ints", name="check")

    ours, theirs = build_both(build)
    assert graph_diff(ours, theirs) == []


@pytest.mark.parametrize("fn", UNARY)
def test_sign_asserts_build_tensorflows_nodes(fn):
    @_v1
    def build(api):
        x = api.placeholder(api.float32, [None], name="x")
        getattr(api, fn)(x, message="m")

    ours, theirs = build_both(build)
    assert graph_diff(ours, theirs) == []


def test_assert_rank_and_assert_build_tensorflows_nodes():
    @_v1
    def build(api):
        x = api.placeholder(api.float32, None, name="x")
        r = api.placeholder(api.int32, None, name="r")
        api.assert_rank(x, 2)
        api.assert_rank(x, r, message="dynamic")
        api.assert_rank(api.zeros([2, 3]), 2)
        api.Assert(api.reduce_all(x > 0), [x, "floats guarded"])
        api.debugging.Assert(r > 0, ["ints not", r])

    ours, theirs = build_both(build)
    assert graph_diff(ours, theirs) == []


def _run(api, make, feeds):
    g = api.Graph()
    with g.as_default():
        phs, check = make(api)
        with api.Session() as sess:
            out = []
            for value in feeds:
                try:
                    sess.run(check, dict(zip(phs, value)))
                    out.append("ok")
                except Exception as e:  # noqa: BLE001 (the error class is what is compared)
                    out.append(type(e).__name__)
            return out


CASES = {
    "equal": (lambda api, x, y: api.assert_equal(x, y), [([1.0, 2.0], [1.0, 2.0]), ([1.0, 2.0], [1.0, 3.0])]),
    "less": (lambda api, x, y: api.assert_less(x, y), [([1.0, 2.0], [2.0, 3.0]), ([1.0, 2.0], [2.0, 2.0])]),
    "greater_equal": (lambda api, x, y: api.assert_greater_equal(x, y), [([2.0, 2.0], [1.0, 2.0]), ([0.0, 2.0], [1.0, 2.0])]),
    "non_negative": (lambda api, x, y: api.assert_non_negative(x - y), [([2.0, 2.0], [1.0, 2.0]), ([0.0, 2.0], [1.0, 2.0])]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_run_time_failures_match_tensorflow(name):
    fn, feeds = CASES[name]

    def make(api):
        x = api.placeholder(api.float32, [2])
        y = api.placeholder(api.float32, [2])
        return (x, y), fn(api, x, y)

    ours = _run(client, make, feeds)
    assert ours == _run(tf1, make, feeds)
    assert ours == ["ok", "InvalidArgumentError"]


def test_rank_check_at_run_time_matches_tensorflow():
    def make(api):
        x = api.placeholder(api.float32, None)
        return (x,), api.assert_rank(x, 2)

    feeds = [(np.ones([2, 2], np.float32),), (np.ones([3], np.float32),)]
    assert _run(client, make, feeds) == _run(tf1, make, feeds) == ["ok", "InvalidArgumentError"]


def test_static_failures_raise_while_building_as_tensorflow():
    for api in (client, tf1):
        with api.Graph().as_default():
            with pytest.raises(api.errors.InvalidArgumentError, match="Condition x == y"):
                api.assert_equal(api.constant([1, 2]), api.constant([1, 3]))
            with pytest.raises(ValueError, match="must have rank 3.  Received rank 2"):
                api.assert_rank(api.zeros([2, 2]), 3, message="shape")
            assert api.assert_equal(api.constant(1), api.constant(1)).type == "Assert"
            x = api.constant(1.0)
            assert api.assert_equal(x, x).type == "NoOp"
