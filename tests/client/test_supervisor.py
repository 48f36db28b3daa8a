"""tf.train.Supervisor against tensorflow.compat.v1: managed_session trains to the same
losses, the chief's checkpoint service writes logdir's checkpoints, a second Supervisor
resumes from them, and an input pipeline's OutOfRange ends the session cleanly."""

from __future__ import annotations

import numpy as np
import pytest

import client

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True

XS = np.random.RandomState(0).rand(16, 3).astype(np.float32)
YS = (XS @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)


def _train(tf, logdir, steps):
    g = tf.Graph()
    with g.as_default():
        gs = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.get_variable("w", initializer=np.zeros((3, 1), np.float32))
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        train = tf.train.GradientDescentOptimizer(0.3).minimize(loss, global_step=gs)
        sv = tf.train.Supervisor(logdir=logdir, global_step=gs, save_model_secs=600)
        losses = []
        with sv.managed_session() as sess:
            start = int(sess.run(gs))
            for _ in range(steps):
                if sv.should_stop():
                    break
                losses.append(float(sess.run([loss, train], {x: XS, y: YS})[0]))
            sv.saver.save(sess, sv.save_path, global_step=gs)
        return start, losses


def test_managed_session_trains_and_resumes_like_tensorflow(tmp_path):
    ours, theirs = _train(client, str(tmp_path / "a"), 5), _train(tf1, str(tmp_path / "b"), 5)
    assert ours[0] == theirs[0] == 0
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5)
    assert client.train.latest_checkpoint(str(tmp_path / "a")).endswith("model.ckpt-5")
    ours, theirs = _train(client, str(tmp_path / "a"), 3), _train(tf1, str(tmp_path / "b"), 3)
    assert ours[0] == theirs[0] == 5  # restored from logdir
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5)


def _pipeline(tf):
    g = tf.Graph()
    with g.as_default():
        x = tf.train.limit_epochs(tf.constant([1.0, 2.0, 3.0]), num_epochs=1)
        batch = tf.train.batch([x], batch_size=2, enqueue_many=True,
                               allow_smaller_final_batch=True)  # fmt: skip
        sv = tf.train.Supervisor()
        got = []
        with sv.managed_session() as sess:
            while not sv.should_stop():
                got.append(sess.run(batch).tolist())
        return got


def test_out_of_range_stops_the_managed_session_cleanly():
    assert _pipeline(client) == _pipeline(tf1) == [[1.0, 2.0], [3.0]]
