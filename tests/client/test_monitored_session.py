"""tf.train.MonitoredTrainingSession and its hooks against tensorflow.compat.v1: the same
losses, global steps, stop points and checkpoints; a restarted session resumes from the
checkpoint; an input pipeline's OutOfRange ends the `with` block cleanly."""

from __future__ import annotations

import logging
import os

import numpy as np
import pytest

import client

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True

RNG = np.random.RandomState(0)
XS = RNG.rand(16, 3).astype(np.float32)
YS = (XS @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)


def _train(tf, checkpoint_dir, last_step, extra_hooks=()):
    g = tf.Graph()
    with g.as_default():
        gs = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.get_variable("w", initializer=np.zeros((3, 1), np.float32))
        b = tf.get_variable("b", initializer=np.zeros((1,), np.float32))
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        tf.summary.scalar("loss", loss)
        train = tf.train.GradientDescentOptimizer(0.3).minimize(loss, global_step=gs)
        hooks = [
            tf.train.StopAtStepHook(last_step=last_step),
            tf.train.NanTensorHook(loss),
            tf.train.LoggingTensorHook({"loss": loss, "step": gs}, every_n_iter=2),
            *[h(tf, loss) for h in extra_hooks],
        ]
        losses = []
        with tf.train.MonitoredTrainingSession(
            checkpoint_dir=checkpoint_dir,
            hooks=hooks,
            save_checkpoint_steps=3,
            save_summaries_steps=2,
            log_step_count_steps=4,
        ) as sess:
            while not sess.should_stop():
                losses.append(float(sess.run([loss, train], {x: XS, y: YS})[0]))
        return losses


def test_training_and_resuming_like_tensorflow(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="tensorflow")
    ours_dir, tf_dir = str(tmp_path / "ours"), str(tmp_path / "tf")
    ours, theirs = _train(client, ours_dir, 7), _train(tf1, tf_dir, 7)
    assert len(ours) == len(theirs) == 7
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    assert any("loss = " in r.getMessage() for r in caplog.records)
    for d in (ours_dir, tf_dir):
        names = sorted(f for f in os.listdir(d) if f.endswith(".index"))
        assert names == ["model.ckpt-0.index", "model.ckpt-3.index", "model.ckpt-6.index",
                         "model.ckpt-7.index"], (d, names)  # fmt: skip
        assert any(f.startswith("events.out.tfevents") for f in os.listdir(d))
    # A new session restores step 7 and its variables, and trains on to step 10.
    ours, theirs = _train(client, ours_dir, 10), _train(tf1, tf_dir, 10)
    assert len(ours) == len(theirs) == 3
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    assert tf1.train.latest_checkpoint(ours_dir).endswith("model.ckpt-10")


def test_nan_loss_stops_training_as_tensorflow():
    def nan_hook(tf, loss):
        return tf.train.NanTensorHook(loss * np.float32(np.nan))

    for tf in (client, tf1):
        with pytest.raises(tf.train.NanLossDuringTrainingError):
            _train(tf, None, 5, [nan_hook])


def _pipeline(tf):
    g = tf.Graph()
    with g.as_default():
        x = tf.train.limit_epochs(tf.constant([1.0, 2.0, 3.0]), num_epochs=2)
        batch = tf.train.batch([x], batch_size=2, enqueue_many=True)
        gs = tf.train.get_or_create_global_step()
        step = tf.assign_add(gs, 1)
        got = []
        with tf.train.MonitoredTrainingSession() as sess:
            while not sess.should_stop():
                got.append(sess.run([batch, step])[0].tolist())
        return got


def test_out_of_range_ends_the_session_cleanly():
    assert _pipeline(client) == _pipeline(tf1) == [[1.0, 2.0], [3.0, 1.0], [2.0, 3.0]]


def test_run_after_stop_is_refused_as_tensorflow():
    for tf in (client, tf1):
        g = tf.Graph()
        with g.as_default():
            gs = tf.train.get_or_create_global_step()
            step = tf.assign_add(gs, 1)
            hook = tf.train.StopAtStepHook(last_step=1)
            with tf.train.MonitoredTrainingSession(hooks=[hook]) as sess:
                sess.run(step)
                assert sess.should_stop()
                with pytest.raises(RuntimeError, match="Run called even after should_stop"):
                    sess.run(step)
