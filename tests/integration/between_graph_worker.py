"""One worker's client in a between-graph replication test: `python
tests/integration/between_graph_worker.py --api client|tf --task I --workers N --target
grpc://MASTER --steps S`. Builds the model under replica_device_setter (variables on
/job:ps/task:0, compute on /job:worker/task:I), trains with MonitoredTrainingSession
(task 0 is the chief) until the shared global step reaches S, and prints one JSON line:
the losses it saw, the global steps it ran and where its model ops were placed. With
`--sync N`, the optimizer is SyncReplicasOptimizer aggregating N replicas, every task
trains on the same data, and the line also holds the final variables."""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--api", choices=["client", "tf"], required=True)
    p.add_argument("--task", type=int, required=True)
    p.add_argument("--target", required=True)
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--sync", type=int, default=0, help="replicas to aggregate (0: async)")
    args = p.parse_args()
    if args.api == "tf":
        import tensorflow.compat.v1 as tf

        tf.disable_eager_execution()
    else:
        import client as tf  # type: ignore[no-redef]

    # Synchronous replicas on one data set: each update averages gradients taken at the
    # same variables, so the values do not depend on which replica was faster.
    rng = np.random.RandomState(0 if args.sync else args.task)
    xs = rng.rand(32, 3).astype(np.float32)
    ys = (xs @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    with tf.device(
        tf.train.replica_device_setter(ps_tasks=1, worker_device=f"/job:worker/task:{args.task}")
    ):
        gs = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.get_variable("w", initializer=np.zeros((3, 1), np.float32))
        b = tf.get_variable("b", initializer=np.zeros((1,), np.float32))
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        opt = tf.train.GradientDescentOptimizer(0.2)
        if args.sync:
            opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=args.sync,
                                                 total_num_replicas=args.sync)  # fmt: skip
        train = opt.minimize(loss, global_step=gs)
    losses, steps = [], []
    hooks = [tf.train.StopAtStepHook(last_step=args.steps)]
    if args.sync:
        hooks.append(opt.make_session_run_hook(args.task == 0))
    with tf.train.MonitoredTrainingSession(
        master=args.target, is_chief=args.task == 0, hooks=hooks, max_wait_secs=60,
        log_step_count_steps=0, save_summaries_steps=None, save_summaries_secs=None,
        # The chief's sync queue runner waits for gradients no replica will send once
        # the step is reached: closing the session ends its step (TensorFlow's too).
        stop_grace_period_secs=2 if args.sync else 120,
    ) as sess:  # fmt: skip
        while not sess.should_stop():
            value, _, step = sess.run([loss, train, gs], {x: xs, y: ys})
            losses.append(float(value))
            steps.append(int(step))
    names = (
        "w",
        "b",
        "global_step",
        "MatMul",
        "GradientDescent/update_w/ResourceApplyGradientDescent",
    )
    devices = {
        op.name: op.device for op in tf.get_default_graph().get_operations() if op.name in names
    }
    result = {"losses": losses, "steps": steps, "devices": devices}
    if args.sync:  # the variables on ps once this worker stopped, read by a plain session
        with tf.Session(args.target) as plain:
            final = plain.run([w, b, gs])
            result["final"] = {"w": final[0].ravel().tolist(), "b": final[1].tolist(),
                               "global_step": int(final[2])}  # fmt: skip
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
