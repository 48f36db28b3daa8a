"""Integration, tf.functions called from a v1 graph across tasks: an unmodified TensorFlow
client runs graphs whose StatefulPartitionedCall bodies read (and update) variables on
/job:ps/task:0 and compute on /job:worker/task:1, through OUR master (real processes
started through the CLIs). The calls are inlined before placement
(common.optimizer.lower_functional + inline_calls, TensorFlow's LowerFunctionCallOp), so
each body node is placed on its own: the ReadVariableOp with its variable on the ps, the
arithmetic on worker 1. Results equal TensorFlow's in-process session.

The motivating failure: run as one function on the call's task, the body's
ReadVariableOp looked for a ps variable on worker 1.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

PS, W1 = "/job:ps/task:0", "/job:worker/task:1"
X = (np.arange(24, dtype=np.float32).reshape(8, 3) % 5) / 5.0
Y = X @ np.float32([[1.0], [-0.5], [0.25]]) + np.float32(0.1)
CALL_OPS = {"PartitionedCall", "StatefulPartitionedCall"}


def _no_device(name):
    return contextlib.nullcontext()  # TensorFlow's in-process session has /job:localhost only


def _partition_ops(run_metadata) -> dict[str, set[str]]:
    """op -> the devices of its nodes over every partition graph of a traced step."""
    found: dict[str, set[str]] = {}
    for gd in run_metadata.partition_graphs:
        for nd in gd.node:
            found.setdefault(nd.op, set()).add(nd.device)
    return found


def _on(devices: set[str], task: str) -> bool:
    job, t = task.split("/")[1:]
    return bool(devices) and all(f"/{job}/replica:0/{t}/" in d for d in devices)


def _build_reader(dev):
    with dev(PS):
        v = tf1.get_variable("v", initializer=np.float32([1.0, -2.0, 0.5]), use_resource=True)

    @tf.function
    def scale(a):
        return a * v.read_value() + tf.reduce_sum(v)

    with dev(W1):
        x = tf1.placeholder(tf.float32, [3], name="x")
        y = scale(x)
    assert y.op.type == "StatefulPartitionedCall"
    return y.name


def test_function_body_reads_a_ps_variable_and_computes_on_worker_1(shared_cluster):
    feeds = [np.float32([0.5, 1.0, 2.0]), np.float32([-1.0, 0.0, 3.0])]
    results = []
    metadata = tf1.RunMetadata()
    for target, dev in ((shared_cluster.target, tf.device), ("", _no_device)):
        g = tf.Graph()
        with g.as_default():
            fetch = _build_reader(dev)  # fetched by name: "StatefulPartitionedCall:0"
            init = tf1.global_variables_initializer()
        with tf1.Session(target, graph=g) as sess:
            sess.run(init)
            outs = []
            for i, xv in enumerate(feeds):
                if target and i == 0:
                    options = tf1.RunOptions(output_partition_graphs=True)
                    outs.append(sess.run(fetch, {"x:0": xv}, options, metadata))
                else:
                    outs.append(sess.run(fetch, {"x:0": xv}))
            results.append(outs)
    ours, theirs = results
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(ours[0], np.float32([0.5, -2.0, 1.0]) - 0.5, rtol=1e-6)
    ops = _partition_ops(metadata)
    assert not CALL_OPS & set(ops)  # inlined: no function call left to run
    assert _on(ops["ReadVariableOp"], PS), ops["ReadVariableOp"]
    # The body's Mul and AddV2 run as one fused elementwise node (on by default).
    assert _on(ops["_FusedElementwise"], W1), ops["_FusedElementwise"]


def _build_trainer(dev):
    """Weights on ps; a tf.function computes the loss (through a nested tf.function),
    its gradients and the update, called on worker 1."""
    with dev(PS):
        w = tf1.get_variable("w", initializer=np.float32([[0.5], [-1.0], [2.0]]), use_resource=True)
        b = tf1.get_variable("b", initializer=np.float32([0.0]), use_resource=True)

    @tf.function
    def predict(a):
        return tf.matmul(a, w) + b

    @tf.function
    def train_step(a, labels):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(predict(a) - labels))
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.2 * gw)
        b.assign_sub(0.2 * gb)
        return loss

    with dev(W1):
        loss = train_step(tf.constant(X), tf.constant(Y))
    with tf.control_dependencies([loss.op]):  # after the update: exactly one per step
        weights = tf.concat([w.read_value(), tf.reshape(b.read_value(), [1, 1])], axis=0)
    return loss, weights


def test_training_through_a_function_matches_tensorflow(shared_cluster):
    results = []
    metadata = tf1.RunMetadata()
    for target, dev in ((shared_cluster.target, tf.device), ("", _no_device)):
        g = tf.Graph()
        with g.as_default():
            loss, weights = _build_trainer(dev)
            init = tf1.global_variables_initializer()
        with tf1.Session(target, graph=g) as sess:
            sess.run(init)
            steps = []
            for i in range(15):
                if target and i == 0:
                    options = tf1.RunOptions(output_partition_graphs=True)
                    steps.append(sess.run([loss, weights], options=options, run_metadata=metadata))
                else:
                    steps.append(sess.run([loss, weights]))
            results.append(steps)
    ours, theirs = results
    for (loss_a, w_a), (loss_b, w_b) in zip(ours, theirs):
        assert float(loss_a) == pytest.approx(float(loss_b), rel=1e-5)
        np.testing.assert_allclose(w_a, w_b, rtol=1e-5, atol=1e-6)
    assert float(ours[-1][0]) < float(ours[0][0]) / 2  # it trained
    ops = _partition_ops(metadata)
    assert not CALL_OPS & set(ops)
    assert _on(ops["ReadVariableOp"], PS), ops["ReadVariableOp"]
    assert _on(ops["AssignSubVariableOp"], PS), ops["AssignSubVariableOp"]
    assert _on(ops["MatMul"], W1), ops["MatMul"]
