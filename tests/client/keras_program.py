"""A small TF1 training program built from tf.keras pieces, the same source for
tensorflow.compat.v1 + tf.keras and for client + client.keras: a Sequential of Dense,
BatchNormalization (training=True, its moving-average updates run with the train op, as
tf_keras' `model.updates`) and a functional head, trained by tf.compat.v1.train's Adam
on a sparse softmax cross-entropy (the Keras loss class). Every initializer is seeded
explicitly; tf_keras would otherwise draw the seeds from Python's `random`."""

from __future__ import annotations

from typing import Any

import numpy as np

RNG = np.random.default_rng(7)
X = RNG.standard_normal((16, 6)).astype(np.float32)
LABELS = (X[:, 0] + X[:, 1] > 0).astype(np.int32) + (X[:, 2] > 1).astype(np.int32)
STEPS = 5


def build(api: Any, keras: Any, device: Any = None) -> tuple[Any, Any, Any, Any]:
    """(train_op, loss, feeds, trainable variable names). `device` (a device function
    or name) is the scope the model's first call, and so its variables, are built in."""
    init = keras.initializers
    x = api.placeholder(api.float32, [None, 6], name="x")
    y = api.placeholder(api.int32, [None], name="y")
    body = keras.Sequential(
        [
            keras.layers.Dense(8, activation="relu", kernel_initializer=init.GlorotUniform(1)),
            keras.layers.BatchNormalization(),
        ]
    )
    inp = keras.Input(shape=(8,))
    hidden = keras.layers.Dense(8, activation="tanh", kernel_initializer=init.HeNormal(2))(inp)
    logits = keras.layers.Dense(3, kernel_initializer=init.GlorotNormal(3))(
        keras.layers.Concatenate()([inp, hidden])
    )
    head = keras.Model(inp, logits)
    with api.device(device):
        out = head(body(x, training=True))
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(y, out)
        variables = body.trainable_variables + head.trainable_variables
        with api.control_dependencies(body.updates):
            train = api.train.AdamOptimizer(0.05).minimize(loss, var_list=variables)
    return train, loss, {x: X, y: LABELS}, [v.name for v in variables]


def train(api: Any, keras: Any, target: str = "", device: Any = None) -> tuple[list, list]:
    """(losses of each step, final weights) after STEPS steps."""
    g = api.Graph()
    with g.as_default():
        train_op, loss, feeds, _ = build(api, keras, device)
        weights = api.trainable_variables()
        with api.Session(target, graph=g) as sess:
            sess.run(api.global_variables_initializer())
            losses = [sess.run([train_op, loss], feeds)[1] for _ in range(STEPS)]
            return losses, sess.run(weights)
