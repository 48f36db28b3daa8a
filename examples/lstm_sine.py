"""Example: an LSTM that learns to continue sine waves, trained on the cluster.

A TF1 tutorial-style sequence model written so that the same code runs with
`import client as tf` against a flowrt cluster and with `tensorflow.compat.v1` (the test
compares their losses step for step):

- data: batches of sine waves with random phase and frequency (numpy, seeded); the
  model sees x[t] and predicts x[t+1] at every step;
- model: tf.nn.rnn_cell.LSTMCell under tf.nn.dynamic_rnn (a while loop over
  TensorArrays), a tf.layers.dense read-out, tf.losses.mean_squared_error, Adam with
  gradient clipping; seeded Glorot initializers;
- placement: the LSTM and the read-out run on /job:worker/task:1, every variable (and
  Adam's slots, colocated with them) lives on /job:ps/task:0.

Run against a cluster with --target grpc://HOST:PORT, or without one to start a local
cluster (deploy.launcher.LocalCluster). Prints the loss every 20 steps and finally the
error of a 20-step free-running continuation.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PS = "/job:ps/task:0"
MODEL = "/job:worker/task:1"
STEPS_IN = 24  # time steps per training sequence


def sine_batch(rng: np.random.RandomState, batch: int, steps: int = STEPS_IN) -> np.ndarray:
    """[batch, steps + 1, 1] samples of sin(freq * t + phase)."""
    phase = rng.uniform(0, 2 * np.pi, (batch, 1))
    freq = rng.uniform(0.2, 0.6, (batch, 1))
    t = np.arange(steps + 1)[None, :]
    return np.sin(freq * t + phase)[:, :, None].astype(np.float32)


def placement(ps: str, worker: str) -> Any:
    """A device function: variables on `ps`, every other op on `worker`."""

    def fn(op: Any) -> str:
        return ps if op.type in ("VarHandleOp", "VariableV2") else worker

    return fn


def build(tf: Any, units: int, seed: int) -> dict[str, Any]:
    tf.set_random_seed(seed)
    x = tf.placeholder(tf.float32, [None, None, 1], name="x")
    y = tf.placeholder(tf.float32, [None, None, 1], name="y")
    cell = tf.nn.rnn_cell.LSTMCell(units, initializer=tf.glorot_uniform_initializer(seed=1))
    outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    pred = tf.layers.dense(
        outputs, 1, kernel_initializer=tf.glorot_uniform_initializer(seed=2), name="readout"
    )
    loss = tf.losses.mean_squared_error(y, pred)
    optimizer = tf.train.AdamOptimizer(0.01)
    grads, variables = zip(*optimizer.compute_gradients(loss))
    clipped, _ = tf.clip_by_global_norm(grads, 5.0)
    train_op = optimizer.apply_gradients(zip(clipped, variables))
    return {"x": x, "y": y, "pred": pred, "loss": loss, "train": train_op}


def continuation_error(sess: Any, model: dict[str, Any], wave: np.ndarray, steps: int) -> float:
    """Feeds the first STEPS_IN samples, then its own predictions for `steps` more;
    returns the mean absolute error against the true continuation."""
    seq = list(wave[:STEPS_IN, 0])
    for _ in range(steps):
        window = np.array(seq, np.float32)[None, :, None]
        seq.append(float(sess.run(model["pred"], {model["x"]: window})[0, -1, 0]))
    truth = wave[STEPS_IN : STEPS_IN + steps, 0]
    return float(np.mean(np.abs(np.array(seq[STEPS_IN:]) - truth)))


def train(
    tf: Any,
    target: str,
    steps: int = 100,
    batch: int = 16,
    units: int = 16,
    seed: int = 3,
    quiet: bool = False,
    devices: tuple[str, str] = (PS, MODEL),
) -> tuple[list[float], float]:
    """Returns (loss per step, continuation error). `devices` ("", "") runs without a
    cluster (the test runs TensorFlow's own session that way)."""
    rng = np.random.RandomState(seed)
    graph = tf.Graph()
    with graph.as_default():
        with tf.device(placement(*devices) if devices[0] else None):
            model = build(tf, units, seed)
            init = tf.global_variables_initializer()
        losses = []
        with tf.Session(target, graph=graph) as sess:
            sess.run(init)
            for step in range(steps):
                wave = sine_batch(rng, batch)
                feed = {model["x"]: wave[:, :-1], model["y"]: wave[:, 1:]}
                value, _ = sess.run([model["loss"], model["train"]], feed)
                losses.append(float(value))
                if not quiet and step % 20 == 0:
                    print(f"step {step}: loss {value:.5f}")
            test = sine_batch(np.random.RandomState(seed + 1), 1, STEPS_IN + 20)[0]
            error = continuation_error(sess, model, test, 20)
    if not quiet:
        print(f"final loss {losses[-1]:.5f}; 20-step continuation error {error:.4f}")
    return losses, error


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", help="grpc://HOST:PORT of a master; default: a local cluster")
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args(argv)
    import client as tf

    with contextlib.ExitStack() as stack:
        target = args.target
        if not target:
            from deploy.launcher import LocalCluster

            cluster = stack.enter_context(LocalCluster({"worker": 2, "ps": 1}))
            target = cluster.target
        train(tf, target, steps=args.steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
