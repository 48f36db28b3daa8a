"""tf.keras.layers SimpleRNN, LSTM and GRU in graph mode against tf_keras: weight names
("lstm/lstm_cell/kernel"), initial values (the orthogonal recurrent kernel included),
outputs, final states, and gradients of a loss with respect to every weight. With v1
control flow (a TF1 program's disable_v2_behavior) the GraphDefs are compared node for
node too; with control flow v2 tf_keras builds a functional While, so by value only."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.keras_oracle import build_both, compare, run, tf1

RNG = np.random.default_rng(4)
X = RNG.standard_normal((3, 5, 4)).astype(np.float32)


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU"])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_recurrent_layer_values_and_gradients(kind, go_backwards):
    def build(api, keras):
        x = api.placeholder(api.float32, [None, 5, 4], name="x")
        layer = getattr(keras.layers, kind)(
            6, return_sequences=True, return_state=True, go_backwards=go_backwards
        )
        outputs, *states = layer(x)
        last = getattr(keras.layers, kind)(3)(outputs)
        loss = api.reduce_sum(last * last) + api.reduce_sum(states[-1])
        weights = api.trainable_variables()
        return [v.name for v in weights], [outputs, *states, last, *weights] + api.gradients(
            loss, weights
        )

    (g, (names, ours)), (t, (tnames, theirs)) = build_both(build)
    assert names == tnames
    cell = {"SimpleRNN": "simple_rnn/simple_rnn_cell", "LSTM": "lstm/lstm_cell"}.get(
        kind, "gru/gru_cell"
    )
    assert names[:2] == [f"{cell}/kernel:0", f"{cell}/recurrent_kernel:0"]
    got, want = run(client, g, ours, {"x": X}), run(tf1, t, theirs, {"x": X})
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU"])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_recurrent_graph_with_v1_control_flow(kind, go_backwards):
    """return_sequences here: tf_keras keeps one output element without it when tf2 is
    on, which TensorFlow's v1 TensorArray refuses; keras_v1_program covers tf2 off."""

    def build(api, keras):
        x = api.placeholder(api.float32, [None, 5, 4], name="x")
        layer = getattr(keras.layers, kind)(
            3, return_sequences=True, return_state=True, go_backwards=go_backwards
        )
        return layer(x)

    compare(build, {"x": X}, v1_control_flow=True, rtol=2e-5, atol=2e-5)
