"""A TF1 program as written for TensorFlow 1.x: `import tensorflow.compat.v1 as tf;
tf.disable_v2_behavior()`, then tf.keras layers (default initializers, Dropout and
BatchNormalization driven by the learning phase, an LSTM) trained by
tf.train.AdamOptimizer.
`run(tf)` takes the module (tensorflow.compat.v1 with tf_keras, or client) and returns
the GraphDef's node lines and the losses; test_keras_tf1_program runs TensorFlow's side
in a child process, since disable_v2_behavior() is process-wide."""

from __future__ import annotations

from typing import Any

import numpy as np

X = np.random.default_rng(5).standard_normal((8, 5)).astype(np.float32)
Y = X[:, :2] * 2.0 - X[:, 2:4]


def run(tf: Any) -> dict:
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(1)
        x = tf.placeholder(tf.float32, [None, 5], name="x")
        y = tf.placeholder(tf.float32, [None, 2], name="y")
        h = tf.keras.layers.Dense(6, activation="relu")(x)
        h = tf.keras.layers.Dropout(0.25)(h)
        bn = tf.keras.layers.BatchNormalization()
        h = bn(h)
        seq = tf.keras.layers.Reshape((3, 2))(h)
        h = tf.keras.layers.Concatenate()([h, tf.keras.layers.LSTM(4)(seq)])
        out = tf.keras.layers.Dense(2, kernel_initializer="he_normal")(h)
        loss = tf.reduce_mean(tf.keras.losses.mean_squared_error(y, out))
        with tf.control_dependencies(bn.updates):
            train = tf.train.AdamOptimizer(0.05).minimize(loss)
        lines = [f"{n.name} = {n.op}({', '.join(n.input)})" for n in g.as_graph_def().node]
        phase = tf.keras.backend.learning_phase()
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [
                float(sess.run([train, loss], {x: X, y: Y, phase: True})[1]) for _ in range(4)
            ]
            losses.append(float(sess.run(loss, {x: X, y: Y})))
    return {"nodes": lines, "losses": losses}
