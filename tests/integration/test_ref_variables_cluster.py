"""Integration, reference variables through a real cluster: a TF1 training program with
resource variables off (as after disable_v2_behavior), its variables (VariableV2) and
Momentum/Adam slots on the ps and its compute on a worker, run by TensorFlow's own client
(tf.compat.v1.Session against OUR master) and by ours; both compared with TensorFlow's
local session. The updates (ApplyMomentum, ApplyAdam, AssignAdd ...) run on the ps by
colocation with their refs; a v1 loop writes a ps variable through RefEnter."""

from __future__ import annotations

import numpy as np
import pytest

import client as ours

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

W1, PS = "/job:worker/task:1", "/job:ps/task:0"
X = np.float32([[1.0, 2.0], [-1.0, 0.5], [0.25, -2.0], [0.0, 1.0]])
Y = np.float32([[1.0], [0.0], [-1.0], [0.5]])
IDS = np.int32([0, 2, 0])


@pytest.fixture
def v1_variables_and_control_flow():
    """Both clients as after disable_v2_behavior(): reference variables, v1 loops."""
    resource = (ours.resource_variables_enabled(), tf1.resource_variables_enabled())
    v2 = (ours.control_flow_v2_enabled(), tf1.control_flow_v2_enabled())
    ours.disable_resource_variables()
    tf1.disable_resource_variables()
    ours.disable_control_flow_v2()
    tf1.disable_control_flow_v2()
    yield
    (ours.enable_resource_variables if resource[0] else ours.disable_resource_variables)()
    (tf1.enable_resource_variables if resource[1] else tf1.disable_resource_variables)()
    (ours.enable_control_flow_v2 if v2[0] else ours.disable_control_flow_v2)()
    (tf1.enable_control_flow_v2 if v2[1] else tf1.disable_control_flow_v2)()


def _no_device(name):
    return tf1.device(None)


def _build(api, dev):
    with dev(PS):
        w = api.get_variable("w", initializer=np.float32([[0.5], [-1.0]]))
        b = api.Variable(np.zeros(1, np.float32), name="b")
        emb = api.Variable(np.float32([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), name="emb")
        counter = api.Variable(0.0, name="counter")
        step = api.train.get_or_create_global_step()
    with dev(W1):
        x = api.placeholder(api.float32, [None, 2], name="x")
        y = api.placeholder(api.float32, [None, 1], name="y")
        pred = api.matmul(x, w) + b
        loss = api.reduce_mean(api.square(pred - y))
        loss += 0.1 * api.reduce_sum(api.square(api.gather(emb, IDS)))
        momentum = api.train.MomentumOptimizer(0.1, 0.9).minimize(loss, var_list=[w, b, emb])
        adam = api.train.AdamOptimizer(0.05).minimize(loss, global_step=step)
    # The loop reads what it wrote on the ps: a read on another device would be a Send
    # not ordered after the write (a race in TensorFlow's runtime as in ours).
    with dev(PS):

        def body(i, total):
            with api.control_dependencies([api.assign_add(counter, 1.0)]):
                return i + 1, total + counter.read_value()

        _, counted = api.while_loop(lambda i, t: i < 3, body, [0, 0.0], parallel_iterations=1)
    feeds = {x: X, y: Y}
    return feeds, [momentum, adam], loss, counted


def _run(api, session, target: str, dev) -> list[np.ndarray]:
    g = api.Graph()
    with g.as_default():
        feeds, train, loss, counted = _build(api, dev)
        init = api.global_variables_initializer()
        variables = api.global_variables()
        kinds = {v.op.type for v in variables}
    assert kinds == {"VariableV2"}
    with session(target, graph=g) as sess:
        sess.run(init)
        for _ in range(3):
            sess.run(train, feeds)
        out = [sess.run(loss, feeds), sess.run(counted)]
        return out + sess.run(variables)


def test_ref_variable_training_on_ps_through_our_master(
    shared_cluster, v1_variables_and_control_flow
):
    expected = _run(tf1, tf1.Session, "", _no_device)
    for api, session in ((tf1, tf1.Session), (ours, ours.Session)):
        got = _run(api, session, shared_cluster.target, api.device)
        # Variables outlive a session on a cluster: the next client's start anew.
        session.reset(shared_cluster.target)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert np.asarray(g).dtype == np.asarray(e).dtype
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
