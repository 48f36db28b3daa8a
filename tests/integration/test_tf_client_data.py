"""Integration, TensorFlow client tf.data: an unmodified tf.compat.v1.Session("grpc://...")
on OUR master (real processes started through the CLIs) trains a linear model fed by a
one-shot iterator (from_tensor_slices + shuffle with a seed + batch + repeat) on
/job:worker/task:1, its variables on /job:ps/task:0, looping until OutOfRangeError, and
gets TensorFlow's own in-process loss trajectory: the same batches in the same shuffled
order (our shuffle is TensorFlow's Philox order), the same updates, the same end."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

PS, W1 = "/job:ps/task:0", "/job:worker/task:1"
RNG = np.random.default_rng(7)
X = RNG.normal(size=(20, 3)).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
EPOCHS, BATCH = 3, 6  # 20 rows: batches of 6, 6, 6, 2 per epoch


def _no_device(name: str) -> contextlib.AbstractContextManager:
    return contextlib.nullcontext()  # TensorFlow's in-process session has /job:localhost only


def build(dev) -> tuple:
    """Linear regression: w, b on ps; the input pipeline, iterator and step on worker 1."""
    with dev(PS):
        w = tf1.get_variable("w", initializer=np.zeros((3, 1), np.float32), use_resource=True)
        b = tf1.get_variable("b", initializer=np.zeros(1, np.float32), use_resource=True)
    with dev(W1):
        ds = (tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(8, seed=42)
              .batch(BATCH).repeat(EPOCHS))  # fmt: skip
        x, y = tf1.data.make_one_shot_iterator(ds).get_next()
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        train = tf1.train.GradientDescentOptimizer(0.1).minimize(loss)
    return loss, train, tf1.global_variables_initializer(), (w, b)


def train_until_end(target: str, dev) -> tuple[list[float], list[np.ndarray], str]:
    g = tf.Graph()
    with g.as_default():
        loss, train, init, variables = build(dev)
    losses = []
    with tf1.Session(target, graph=g) as sess:
        sess.run(init)
        while True:
            try:
                value, _ = sess.run([loss, train])
            except tf.errors.OutOfRangeError as e:
                end = e.message
                break
            losses.append(float(value))
        final = sess.run(list(variables))
    return losses, final, end


def test_training_from_a_one_shot_iterator_matches_tensorflow(shared_cluster) -> None:
    ours, ours_vars, ours_end = train_until_end(shared_cluster.target, tf.device)
    theirs, theirs_vars, _ = train_until_end("", _no_device)
    assert len(ours) == len(theirs) == EPOCHS * 4
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    for a, b in zip(ours_vars, theirs_vars):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert ours[-1] < ours[0] / 2  # it trained
    assert "End of sequence" in ours_end  # an OUT_OF_RANGE status end to end
    assert "{{node IteratorGetNext}}" in ours_end  # the cause, not a _Recv that echoed it


def test_a_second_session_gets_a_fresh_one_shot_iterator(shared_cluster) -> None:
    """The first session ends on OutOfRange; its iterator (private to its kernels) goes
    with its graphs, so a second session over the same graph starts from the beginning.
    (This failed while a pooled call thread kept its first call, and so the failed step's
    kernels, alive: rpc.call_pool.)"""
    first, _, _ = train_until_end(shared_cluster.target, tf.device)
    second, _, _ = train_until_end(shared_cluster.target, tf.device)
    assert len(first) == len(second) == EPOCHS * 4
    assert first == second


def test_dataset_pinned_to_another_task_is_invalid_argument(shared_cluster) -> None:
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:0"):
            ds = tf.data.Dataset.range(10)
        with tf.device(W1):
            it = tf1.data.make_initializable_iterator(ds.map(lambda v: v * 2))
            nxt = it.get_next()
    with tf1.Session(shared_cluster.target, graph=g) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="a dataset cannot leave its process"):  # fmt: skip
            sess.run(it.initializer)
        del nxt
