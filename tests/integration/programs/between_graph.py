"""An unmodified TensorFlow 1.x between-graph replication program (not flowrt code).

Each client process is one worker's program: it reads TF_CONFIG as TensorFlow's own
tooling does, builds the model with `tf.train.replica_device_setter` (variables on the ps,
compute on its own worker task), dials the cluster's chief (else worker 0) and trains
asynchronously with GradientDescent. The chief initializes; the others wait for it.
Prints one JSON line: the task, the global step, the weights and the final loss.

    TF_CONFIG=... python between_graph.py STEPS
"""

import json
import os
import sys
import time

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()

config = json.loads(os.environ["TF_CONFIG"])
task = config["task"]
cluster = tf.train.ClusterSpec(config["cluster"])
index = int(task["index"])
steps = int(sys.argv[1])
chief_job = "chief" if "chief" in config["cluster"] else "worker"
target = "grpc://" + config["cluster"][chief_job][0]
is_chief = task["type"] == chief_job and index == 0

rng = np.random.RandomState(0)
x_data = rng.rand(64, 4).astype(np.float32)
true_w = np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)
y_data = x_data @ true_w + 0.25

with tf.device(
    tf.train.replica_device_setter(
        worker_device=f"/job:{task['type']}/task:{index}", cluster=cluster
    )
):
    global_step = tf.train.get_or_create_global_step()
    w = tf.get_variable("w", [4, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
    x = tf.constant(x_data)
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y_data))
    train = tf.train.GradientDescentOptimizer(0.3).minimize(loss, global_step=global_step)
    init = tf.global_variables_initializer()
    uninitialized = tf.report_uninitialized_variables()

session_config = tf.ConfigProto(device_filters=["/job:ps", f"/job:{task['type']}/task:{index}"])
with tf.Session(target, config=session_config) as sess:
    if is_chief:
        sess.run(init)
    else:
        deadline = time.time() + 60
        while len(sess.run(uninitialized)) and time.time() < deadline:
            time.sleep(0.2)
    first = float(sess.run(loss))
    for _ in range(steps):
        sess.run(train)
    print(
        json.dumps(
            {
                "task": f"/job:{task['type']}/task:{index}",
                "first_loss": first,
                "loss": float(sess.run(loss)),
                "global_step": int(sess.run(global_step)),
                "w": sess.run(w).ravel().tolist(),
                "devices": sorted(
                    {op.device for op in tf.get_default_graph().get_operations() if op.device}
                ),
            }
        ),
        flush=True,
    )
