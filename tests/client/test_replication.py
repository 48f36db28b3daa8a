"""tf.train.ClusterSpec, replica_device_setter and Server against tensorflow.compat.v1:
the same devices on every node of a model built under the setter, the same cluster
dicts and defs; a Server started in this process runs steps for tf.Session(target)."""

from __future__ import annotations

import numpy as np
import pytest

import client

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True

CLUSTER = {"ps": ["h:1", "h:2"], "worker": ["h:3", "h:4"]}


def test_cluster_spec_like_tensorflow():
    for spec in (CLUSTER, {"ps": {0: "h:1", 3: "h:9"}, "worker": ["h:3"]}):
        ours, theirs = client.train.ClusterSpec(spec), tf1.train.ClusterSpec(spec)
        assert ours.as_dict() == theirs.as_dict()
        assert ours.as_cluster_def().SerializeToString() == (
            theirs.as_cluster_def().SerializeToString()
        )
        assert ours.jobs == theirs.jobs
        for job in ours.jobs:
            assert ours.num_tasks(job) == theirs.num_tasks(job)
            assert ours.task_indices(job) == theirs.task_indices(job)
            assert ours.job_tasks(job) == theirs.job_tasks(job)
        assert client.train.ClusterSpec(theirs.as_cluster_def()) == ours


def _devices(tf, setter_kwargs) -> dict[str, str]:
    g = tf.Graph()
    with g.as_default(), tf.device(tf.train.replica_device_setter(**setter_kwargs)):
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w1 = tf.get_variable("w1", initializer=np.ones((3, 4), np.float32))
        b1 = tf.Variable(tf.zeros([4]), name="b1")
        with tf.device("/cpu:0"):
            h = tf.nn.relu(tf.matmul(x, w1) + b1)
        w2 = tf.get_variable("w2", initializer=np.ones((4, 1), np.float32))
        gs = tf.train.get_or_create_global_step()
        loss = tf.reduce_mean(tf.matmul(h, w2))
        tf.train.AdamOptimizer(0.1).minimize(loss, global_step=gs)
    return {n.name: n.device for n in g.as_graph_def().node}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"cluster": CLUSTER, "worker_device": "/job:worker/task:1"},
        {"ps_tasks": 3, "worker_device": "/job:worker/task:0/device:CPU:0"},
        {"cluster": {"worker": ["h:3"]}},  # no ps job: no device function
    ],
)
def test_replica_device_setter_places_as_tensorflow(kwargs):
    ours, theirs = _devices(client, kwargs), _devices(tf1, kwargs)
    for name in ("w1", "b1", "w2", "global_step", "w1/Adam", "beta1_power", "MatMul", "x"):
        assert ours[name] == theirs[name], name
    common = [n for n in theirs if n in ours]
    # Where TF leaves a variable's reads and initial values unplaced, or puts its
    # IsInitialized check on the worker, we keep them with the variable's handle.
    differ = {
        n: (ours[n], theirs[n])
        for n in common
        if ours[n] != theirs[n]
        and not (theirs[n] == "" or "Initializer" in n or "ReadVariableOp" in n)
        and "IsInitialized" not in n
    }
    assert not differ


def test_server_runs_steps_in_process():
    server = client.train.Server.create_local_server()
    try:
        assert server.target.startswith("grpc://127.0.0.1:")
        assert server.server_def.job_name == "localhost"
        g = client.Graph()
        with g.as_default():
            v = client.Variable(3.0, name="v")
            inc = v.assign_add(1.0)
            with client.Session(server.target) as sess:
                sess.run(v.initializer)
                assert sess.run(inc) == 4.0
        # TensorFlow's own client drives the same server.
        tg = tf_real.Graph()
        with tg.as_default(), tf1.Session(server.target) as sess:
            assert sess.run(tf_real.constant(2.0) * 3.0) == 6.0
    finally:
        server.stop()
