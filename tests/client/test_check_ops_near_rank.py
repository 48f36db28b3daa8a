"""tf.assert_near and tf.assert_rank_at_least (and tf.debugging's) against
tensorflow.compat.v1: TF's nodes, TF's build-time ValueError for a static rank, and the
run-time InvalidArgumentError with TF's message when a fed value breaks the check."""

from __future__ import annotations

import re

import numpy as np
import pytest

import client
from tests.client.test_graph_sweep import build_both, graph_diff, tf1

pytest.importorskip("tensorflow")


def _v1(build):
    build.v1_control_flow = True
    return build


def test_assert_near_and_rank_at_least_build_tensorflows_nodes():
    @_v1
    def build(api):
        x = api.placeholder(api.float32, [3], name="x")
        d = api.placeholder(api.float64, None, name="d")
        r = api.placeholder(api.int32, None, name="r")
        api.assert_near(x, [1.0, 2.0, 3.0])
        api.debugging.assert_near(d, 2.0, rtol=0.1, atol=0.01, message="near", name="close")
        api.assert_rank_at_least(d, 2)
        api.debugging.assert_rank_at_least(d, r, message="dynamic")
        api.assert_rank_at_least(api.zeros([2, 3]), 1)

    ours, theirs = build_both(build)
    assert graph_diff(ours, theirs) == []


def _messages(api, make, feeds):
    with api.Graph().as_default():
        phs, check = make(api)
        with api.Session() as sess:
            out = []
            for value in feeds:
                try:
                    sess.run(check, dict(zip(phs, value)))
                    out.append("ok")
                except api.errors.InvalidArgumentError as e:
                    out.append(e.message)
            return out


def same_assert_message(ours: str, theirs: str) -> bool:
    """Our error line (the first) is a line of TensorFlow's message, which adds "Graph
    execution error:" and node context. TensorFlow's Python message sometimes elides the
    middle of a long line with "...": that part matches anything."""
    first = ours.split("\n")[0]
    for line in theirs.split("\n"):
        pattern = ".*".join(re.escape(p) for p in line.split("..."))
        if line and re.fullmatch(pattern, first):
            return True
    return False


def _same_failures(make, feeds):
    ours, theirs = _messages(client, make, feeds), _messages(tf1, make, feeds)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if b == "ok":
            assert a == "ok"
        else:
            assert same_assert_message(a, b), (a, b)
    return ours


def test_assert_near_at_run_time_matches_tensorflow():
    def make(api):
        x = api.placeholder(api.float64, [2], name="x")
        return (x,), api.assert_near(x, [1.0, 2.0], rtol=1e-3, message="sum")

    feeds = [([1.0, 2.0001],), ([1.0, 2.01],)]
    out = _same_failures(make, feeds)
    assert out[0] == "ok" and out[1].startswith("assertion failed: [sum.  ] [x and y not")


def test_assert_rank_at_least_at_run_time_matches_tensorflow():
    def make(api):
        x = api.placeholder(api.float32, None, name="x")
        return (x,), api.assert_rank_at_least(x, 2, message="matrix")

    feeds = [(np.ones([2, 2, 1], np.float32),), (np.ones([3], np.float32),)]
    out = _same_failures(make, feeds)
    assert out[0] == "ok" and out[1].startswith("assertion failed: [matrix.  ] [Tensor x:0 ")


def test_static_rank_at_least_raises_while_building_as_tensorflow():
    messages = []
    for api in (client, tf1):
        with api.Graph().as_default():
            with pytest.raises(ValueError, match="must have rank at least 3.  Received rank 2"):
                api.assert_rank_at_least(api.zeros([2, 2], name="z"), 3, message="m")
            try:
                api.assert_rank_at_least(api.zeros([2, 2], name="z"), 3, message="m")
            except ValueError as e:
                messages.append(str(e))
            assert api.assert_rank_at_least(api.zeros([2]), 1).type == "NoOp"
    assert messages[0] == messages[1]
