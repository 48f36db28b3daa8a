"""The functional If the client builds (client.ops.cond_v2, tf.Assert's AssertGuard)
against tensorflow.compat.v1: the same branch FunctionDefs (arguments, results, body
nodes and their inputs), and an If the in-process runtime lowers and runs."""

from __future__ import annotations

import re

import numpy as np
import pytest

import client
from client.ops import check_ops

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1


def _functions(graph_def):
    """Per branch function, uid suffix dropped: its signature and body (private
    attrs aside: TF's auto control deps mark `_has_manual_control_dependencies`)."""
    out = {}
    for f in graph_def.library.function:
        sig = f.signature
        body = [
            (n.name, n.op, list(n.input), sorted(k for k in n.attr if not k.startswith("_")))
            for n in f.node_def
        ]
        key = re.sub(r"_\d+$", "", sig.name)
        out[key] = (
            [(a.name, a.type) for a in sig.input_arg],
            [(a.name, a.type) for a in sig.output_arg],
            sig.is_stateful,
            dict(f.ret),
            body,
        )
    return out


def _if_nodes(graph_def):
    return {
        n.name: (n.op, list(n.input), n.attr["then_branch"].func.name)
        for n in graph_def.node
        if n.op in ("If", "StatelessIf")
    }


def _build(api):
    preds = api.placeholder(api.float64, [3], name="preds")
    check_ops_of(api).assert_less_equal(preds, api.constant(1.0, api.float64), message="le")
    return api.metrics.auc(api.placeholder(api.int32, [3], name="labels"), preds)


def check_ops_of(api):
    if api is client:
        return check_ops
    from tensorflow.python.ops import check_ops as tf_check_ops

    return tf_check_ops


def test_assert_guard_functions_match_tf():
    g = client.Graph()
    with g.as_default():
        _build(client)
    t = tf_real.Graph()
    with t.as_default():
        _build(tf1)
    ours, theirs = g.as_graph_def(), t.as_graph_def()
    assert _functions(ours) == _functions(theirs)
    assert len(_functions(ours)) == 6
    ifs = _if_nodes(ours)
    assert {k: v[:2] for k, v in ifs.items()} == {k: v[:2] for k, v in _if_nodes(theirs).items()}
    names = {f.signature.name for f in ours.library.function}
    assert all(then in names for _, _, then in ifs.values())


def _guarded_steps(api, errors, target="", devices=(None, None)):
    g = api.Graph()
    with g.as_default():
        with api.device(devices[0]):
            x = api.placeholder(api.float32, [2], name="x")
        with api.device(devices[1]):
            guard = check_ops_of(api).assert_less_equal(x, 1.0, message="x too big")
            with api.control_dependencies([guard]):
                y = api.identity(x * 2.0)
        with api.Session(target, graph=g) as sess:
            out = [sess.run(y, {x: [0.5, 1.0]})]
            try:
                sess.run(y, {x: [0.5, 3.0]})
            except errors.InvalidArgumentError as e:
                out.append([ln for ln in e.message.splitlines() if "assertion failed" in ln])
    return out


def test_assert_guard_runs_the_taken_branch():
    """A float Assert's guard: a held condition runs the NoOp branch, a failed one the
    Assert, failing the step with TF's InvalidArgumentError and message."""
    ours = _guarded_steps(client, client.errors)
    theirs = _guarded_steps(tf1, tf_real.errors)
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert len(ours) == 2 and len(ours[1]) == 1
    assert ours[1] == theirs[1]


def test_assert_guard_runs_on_a_cluster():
    """The same through a master and two workers, the guard on the other worker than its
    input: the lowered If's Switch/Merge partition across tasks."""
    from tests.in_process import in_process_cluster

    theirs = _guarded_steps(tf1, tf_real.errors)
    with in_process_cluster({"worker": 2}) as master:
        ours = _guarded_steps(
            client,
            client.errors,
            master.target,
            ("/job:worker/task:0", "/job:worker/task:1"),
        )
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert ours[1] == theirs[1]
