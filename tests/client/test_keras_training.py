"""A TF1 training program of tf.keras layers and models trained by tf.compat.v1.train's
Adam in a Session (tests/client/keras_program.py): client + client.keras against
tensorflow.compat.v1 + tf_keras, the whole graph (gradients and Adam included), step
losses and final weights."""

from __future__ import annotations

import client
from tests.client import keras_program
from tests.client.keras_oracle import assert_close, build_both, graph_diff, tf1, tf_real


def test_training_program_matches_tf_keras():
    want_losses, want_weights = keras_program.train(tf1, tf_real.keras)
    losses, weights = keras_program.train(client, client.keras)
    assert_close(losses, want_losses, rtol=1e-5, atol=1e-6)
    assert_close(weights, want_weights, rtol=1e-4, atol=1e-5)
    assert losses[-1] < losses[0]


def test_training_program_variables_named_as_tf_keras():
    def names(api, keras):
        with api.Graph().as_default():
            return keras_program.build(api, keras)[3]

    ours, theirs = names(client, client.keras), names(tf1, tf_real.keras)
    assert ours == theirs
    assert ours[0] == "sequential/dense/kernel:0"


def test_replica_device_setter_puts_keras_weights_on_ps():
    g = client.Graph()
    with g.as_default():
        setter = client.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:1")
        keras_program.build(client, client.keras, setter)
        ops = {op.name: op for op in g.get_operations()}
    assert ops["sequential/dense/kernel"].device == "/job:ps/task:0"
    assert ops["model/dense_1/MatMul"].device == "/job:worker/task:1"


def test_training_program_graph_equals_tf_keras():
    """Forward, gradients and Adam's update ops, node for node."""
    (g, _), (t, _) = build_both(lambda api, keras: keras_program.build(api, keras)[:2])
    diff = graph_diff(g.as_graph_def(), t.as_graph_def())
    assert diff == [], "\n".join(diff)
