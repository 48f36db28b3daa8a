"""Integration, a seeded shuffle_batch pipeline on the cluster: the queue and its
QueueRunner on worker 0, the model's consumer on worker 1, driven by an unmodified
tf.compat.v1 client and by our own client (`import client as tf`) against OUR master
(real processes started by their CLIs). Both yield TensorFlow's own batches, in
TensorFlow's order, to the final short batch: RandomShuffleQueue picks elements with
TensorFlow's seeded Philox stream."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import client

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True

W0, W1 = "/job:worker/task:0", "/job:worker/task:1"


def _pipeline(tf_mod, dev, seed: int, graph_seed: int | None):
    if graph_seed is not None:
        tf_mod.set_random_seed(graph_seed)
    with dev(W0):
        x = tf_mod.train.limit_epochs(tf_mod.range(43), num_epochs=1)
        label = x * 10
        batch = tf_mod.train.shuffle_batch(
            [x, label], 4, capacity=12, min_after_dequeue=6, enqueue_many=True, seed=seed,
            allow_smaller_final_batch=True,
        )  # fmt: skip
    with dev(W1):
        return [tf_mod.identity(batch[0]), batch[1] + 1]


def _drain(tf_mod, target: str, seed: int, graph_seed: int | None) -> list:
    remote = bool(target)

    def dev(name):
        return tf_mod.device(name) if remote else contextlib.nullcontext()

    g = tf_mod.Graph()
    with g.as_default():
        fetch = _pipeline(tf_mod, dev, seed, graph_seed)
        init = [tf_mod.global_variables_initializer(), tf_mod.local_variables_initializer()]
        with tf_mod.Session(target, graph=g) as sess:
            sess.run(init)
            coord = tf_mod.train.Coordinator()
            threads = tf_mod.train.start_queue_runners(sess, coord=coord)
            got = []
            try:
                while not coord.should_stop():
                    got.append(sess.run(fetch))
            except tf_mod.errors.OutOfRangeError:
                pass
            finally:
                coord.request_stop()
            coord.join(threads)
            return got


@pytest.mark.parametrize("tf_mod", [tf1, client], ids=["tf_client", "our_client"])
@pytest.mark.parametrize("seed,graph_seed", [(3, None), (11, 42)])
def test_seeded_shuffle_batch_gives_tensorflows_batches(shared_cluster, tf_mod, seed, graph_seed):
    want = _drain(tf1, "", seed, graph_seed)
    got = _drain(tf_mod, shared_cluster.target, seed, graph_seed)
    assert [len(b[0]) for b in got] == [len(b[0]) for b in want] == [4] * 10 + [3]
    for i, (ours, theirs) in enumerate(zip(got, want)):
        for o, t in zip(ours, theirs):
            np.testing.assert_array_equal(o, t, err_msg=f"batch {i}")
