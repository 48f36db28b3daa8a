"""Integration, TF2-style control flow across tasks: an unmodified TensorFlow client runs
tf.compat.v1.train.MonitoredTrainingSession, a v2 while loop and a v2 cond through OUR
master (real processes started through the CLIs), the functional If/While lowered to v1
control flow before placement (common.optimizer.lower_functional) so every body node is
placed with its own resources and partitioned across tasks, as TensorFlow does.

The motivating failure: MonitoredTrainingSession's `global_step/cond` is an If without a
device taking the global step's handle; run as one function on the default task, its
ReadVariableOp looked for the variable on the wrong task (FailedPrecondition).
"""

from __future__ import annotations

import contextlib
import os

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

PS, W0, W1 = "/job:ps/task:0", "/job:worker/task:0", "/job:worker/task:1"
X = (np.arange(48, dtype=np.float32).reshape(16, 3) % 7) / 7.0
Y = X.sum(axis=1, keepdims=True) * np.float32(0.5) - np.float32(0.25)


def _no_device(name):
    return contextlib.nullcontext()  # TensorFlow's in-process session has /job:localhost only


def _build_model(dev):
    """Global step on worker 1, weights on ps, the loss and training on worker 0."""
    with dev(W1):
        step = tf1.train.get_or_create_global_step()
    with dev(PS):
        w = tf1.get_variable("w", [3, 1], initializer=tf1.zeros_initializer(), use_resource=True)
        b = tf1.get_variable("b", [1], initializer=tf1.zeros_initializer(), use_resource=True)
    with dev(W0):
        loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(X), w) + b - tf.constant(Y)))
        tf1.summary.scalar("loss", loss)
        train = tf1.train.AdamOptimizer(0.05).minimize(loss, global_step=step)
    return train, loss, step


def _train(master: str, dev, checkpoint_dir: str) -> tuple[int, float]:
    g = tf.Graph()
    with g.as_default():
        train, loss, _ = _build_model(dev)
        hooks = [tf1.train.StopAtStepHook(last_step=30)]
        runs = 0
        with tf1.train.MonitoredTrainingSession(
            master=master,
            is_chief=True,
            checkpoint_dir=checkpoint_dir,
            save_checkpoint_steps=10,
            save_summaries_steps=5,
            hooks=hooks,
            log_step_count_steps=None,
        ) as sess:
            while not sess.should_stop():
                _, last_loss = sess.run([train, loss])
                runs += 1
    return runs, float(last_loss)


def test_monitored_training_session_with_the_global_step_on_another_task(shared_cluster, tmp_path):
    ours_dir, tf_dir = tmp_path / "ours", tmp_path / "tf"
    runs, loss = _train(shared_cluster.target, tf.device, str(ours_dir))
    want_runs, want_loss = _train("", _no_device, str(tf_dir))
    assert runs == want_runs == 30
    assert loss == pytest.approx(want_loss, rel=1e-5)
    files = sorted(os.listdir(ours_dir))
    assert "checkpoint" in files
    assert "model.ckpt-30.index" in files
    # Sharded by device: the ps's variables and worker 1's global step.
    assert [f for f in files if f.startswith("model.ckpt-30.data-")] == [
        "model.ckpt-30.data-00000-of-00002",
        "model.ckpt-30.data-00001-of-00002",
    ]
    assert [f for f in files if f.startswith("events.out.tfevents.")]
    assert tf1.train.latest_checkpoint(str(ours_dir)).endswith("model.ckpt-30")
    reader = tf1.train.load_checkpoint(str(ours_dir))
    assert reader.get_tensor("global_step") == 30


def _partition_devices(run_metadata, op: str) -> set[str]:
    """Devices of the partition nodes that run `op`, a member of a fused elementwise node
    (fusion is on by default) counting as its op."""
    return {
        nd.device
        for gd in run_metadata.partition_graphs
        for nd in gd.node
        if nd.op == op
        or (
            nd.op == "_FusedElementwise"
            and any(step.decode().split()[0] == op for step in nd.attr["program"].list.s)
        )
    }


def _run_both(shared_cluster, build, feeds_list):
    """(ours, TensorFlow's) results for each feed dict, and one traced RunMetadata."""
    results = []
    metadata = tf1.RunMetadata()
    for target, dev in ((shared_cluster.target, tf.device), ("", _no_device)):
        g = tf.Graph()
        with g.as_default():
            fetch, feed_keys = build(dev)
            init = tf1.global_variables_initializer()
        assert any(op.type in ("While", "If") for op in g.get_operations())
        with tf1.Session(target, graph=g) as sess:
            sess.run(init)
            options = tf1.RunOptions(output_partition_graphs=True) if target else None
            outs = []
            for i, feeds in enumerate(feeds_list):
                fd = {g.get_tensor_by_name(k): v for k, v in feeds.items()}
                if target and i == 0:
                    outs.append(sess.run(fetch, fd, options=options, run_metadata=metadata))
                else:
                    outs.append(sess.run(fetch, fd))
            results.append(outs)
        del feed_keys
    return results[0], results[1], metadata


def test_while_loop_reads_a_ps_variable_and_computes_on_worker_1(shared_cluster):
    def build(dev):
        with dev(PS):
            v = tf1.get_variable("v", initializer=np.float32([1.0, -2.0, 0.5]), use_resource=True)
        with dev(W1):
            n = tf1.placeholder(tf.int32, [], name="n")
            x = tf.constant(np.float32([0.5, 1.0, 2.0]))
            _, acc = tf.while_loop(
                lambda i, a: i < n,
                lambda i, a: (i + 1, a * 0.5 + v * tf.cast(i, tf.float32)),
                [0, x],
                parallel_iterations=3,
            )
        return acc, ["n:0"]

    feeds = [{"n:0": np.int32(k)} for k in (4, 0, 7)]
    ours, theirs, metadata = _run_both(shared_cluster, build, feeds)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    reads = _partition_devices(metadata, "ReadVariableOp")
    assert reads and all("/job:ps/" in d for d in reads), reads
    assert any("/job:worker/replica:0/task:1" in d for d in _partition_devices(metadata, "Mul"))
    assert _partition_devices(metadata, "While") == set()  # lowered: frames, not a function


def test_cond_branches_on_different_tasks(shared_cluster):
    def build(dev):
        with dev(PS):
            a = tf1.get_variable("a", initializer=np.float32([2.0, 3.0]), use_resource=True)
        with dev(W1):
            b = tf1.get_variable("b", initializer=np.float32([-1.0, 4.0]), use_resource=True)
        p = tf1.placeholder(tf.bool, [], name="p")
        x = tf1.placeholder(tf.float32, [2], name="x")

        def then():
            with dev(PS):
                return tf.square(x) * a

        def otherwise():
            with dev(W1):
                return x - b

        with dev(W0):
            y = tf.cond(p, then, otherwise) + 1.0
        return y, ["p:0", "x:0"]

    x = np.float32([1.5, -0.5])
    feeds = [{"p:0": True, "x:0": x}, {"p:0": False, "x:0": x}]
    ours, theirs, metadata = _run_both(shared_cluster, build, feeds)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(ours[0], np.square(x) * [2.0, 3.0] + 1.0, rtol=1e-6)
    np.testing.assert_allclose(ours[1], x - [-1.0, 4.0] + 1.0, rtol=1e-6)
    squares = _partition_devices(metadata, "Square")
    subs = _partition_devices(metadata, "Sub")
    assert squares and all("/job:ps/" in d for d in squares), squares
    assert subs and all("/job:worker/replica:0/task:1/" in d for d in subs), subs
