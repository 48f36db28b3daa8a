"""Integration: tf.py_func on a cluster, as TensorFlow runs it. The function lives in the
process that built the graph, so it runs on a task hosted there (an in-process
tf.train.Server: the between-graph layout, each client process also a worker) and its
inputs and outputs travel to and from the other tasks; on a task of another process it is
InvalidArgument "Could not find callback", TensorFlow's own answer (seen against
TensorFlow's servers), naming the node."""

from __future__ import annotations

import numpy as np
import pytest

import client
from deploy.launcher import Task, cluster_dict, server_argv, tf_config_env

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_MESSAGE = "ValueError: Could not find callback with key=pyfunc_0 in the registry."


@pytest.fixture
def ps_beside_this_process():
    """A ps task started as users start one (`python -m server` given TF_CONFIG), and this
    process hosting worker 0 of the same cluster (client.train.Server)."""
    data = cluster_dict({"worker": 1, "ps": 1}, layout="tensorflow")
    ps = Task("ps0", server_argv(), None, env=tf_config_env(data, "ps", 0))
    server = None
    try:
        ps.wait_listening(60)
        spec = client.train.ClusterSpec(data["jobs"])
        server = client.train.Server(spec, job_name="worker", task_index=0)
        yield server
    finally:
        if server is not None:
            server.stop()
        assert ps.stop() == 0


def test_py_func_on_the_in_process_worker_trains_a_ps_variable(ps_beside_this_process):
    calls: list[float] = []

    def clip_and_log(v):
        calls.append(float(v))
        return np.clip(v, -1.0, 1.0).astype(np.float32)

    g = client.Graph()
    with g.as_default():
        with client.device("/job:ps/task:0"):
            w = client.Variable(3.0, name="w")
        with client.device("/job:worker/task:0"):
            clipped = client.py_func(clip_and_log, [w.read_value()], client.float32, name="clip")
            clipped.set_shape([])
            step = w.assign_add(clipped - 0.5 * w)
        with client.Session(ps_beside_this_process.target) as sess:
            sess.run(w.initializer)
            got = [float(sess.run(step)) for _ in range(4)]
    # w <- w + clip(w) - w/2, starting from 3: the function ran on each step, in order.
    want, v = [], 3.0
    for _ in range(4):
        v = float(np.float32(v) + np.clip(np.float32(v), -1, 1) - np.float32(0.5) * np.float32(v))
        want.append(v)
    assert got == pytest.approx(want, rel=1e-6)
    assert calls == pytest.approx([3.0, *want[:3]], rel=1e-6)


def test_py_func_on_a_task_of_another_process_is_tensorflows_error(ps_beside_this_process):
    g = client.Graph()
    with g.as_default():
        with client.device("/job:ps/task:0"):
            y = client.py_func(np.negative, [client.constant([1.0])], client.float32, name="neg")
        with (
            client.Session(ps_beside_this_process.target) as sess,
            pytest.raises(client.errors.InvalidArgumentError) as info,
        ):
            sess.run(y)
    message = str(info.value)
    assert "ValueError: Could not find callback with key=pyfunc_" in message
    assert "neg" in message


def test_tensorflow_client_py_func_on_our_worker_fails_as_on_tensorflows(shared_cluster):
    g = tf1.Graph()
    with g.as_default():
        x = tf1.constant([1.0, 2.0])
        with tf1.device("/job:worker/task:1"):
            y = tf1.py_func(lambda a: a * 2, [x], tf1.float32, name="double")
        with (
            tf1.Session(shared_cluster.target) as sess,
            pytest.raises(tf_real.errors.InvalidArgumentError) as info,
        ):
            sess.run(y)
    message = str(info.value)
    token = y.op.get_attr("token").decode()
    assert TF_MESSAGE.replace("pyfunc_0", token) in message
    assert "double" in message
