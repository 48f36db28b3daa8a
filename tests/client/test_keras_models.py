"""client.keras models, learning-phase layers and losses against tf_keras in graph mode:
Sequential and functional Model as callables (names such as "sequential/dense/kernel",
"model/hid/MatMul"), their variables, Dropout and BatchNormalization with a training
argument or the learning phase, and tf.keras.losses' function and class forms."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.keras_oracle import build_both, compare

RNG = np.random.default_rng(1)
X2 = RNG.standard_normal((4, 3)).astype(np.float32)
X4 = RNG.standard_normal((2, 4, 4, 3)).astype(np.float32)


def _ph(api, x, name="x"):
    return api.placeholder(api.float32, [None, *x.shape[1:]], name=name)


def _names(vs):
    return [v.name for v in vs]


def test_sequential_deferred_and_variables():
    def build(api, keras):
        m = keras.Sequential([keras.layers.Dense(4, activation="relu"), keras.layers.Dense(2)])
        x = _ph(api, X2)
        y, y2 = m(x), m(x)
        return [y, y2], _names(m.trainable_variables), _names(m.variables), m.name

    (g, (ours, *meta)), (t, (theirs, *tmeta)) = build_both(build)
    assert meta == tmeta
    assert meta[0][0] == "sequential/dense/kernel:0"
    compare(lambda api, keras: build(api, keras)[0], {"x": X2})


def test_sequential_with_input_shape():
    def build(api, keras):
        m = keras.Sequential(
            [keras.layers.Dense(4, input_shape=(3,), activation="tanh"), keras.layers.Dense(1)]
        )
        return m(_ph(api, X2))

    compare(build, {"x": X2})


def test_functional_model_called_on_new_input():
    def build(api, keras):
        inp = keras.Input(shape=(3,))
        h = keras.layers.Dense(5, name="hid")(inp)
        a = keras.layers.Dense(2)(h)
        b = keras.layers.Dense(2, activation="sigmoid")(h)
        out = keras.layers.Concatenate()([a, b])
        model = keras.Model(inp, out)
        assert [v.name for v in model.trainable_weights][:2] == ["hid/kernel:0", "hid/bias:0"]
        return [model(_ph(api, X2)), model(_ph(api, X2, "x2"))]

    compare(build, {"x": X2, "x2": X2 + 1})


def test_functional_model_two_inputs_nested():
    def build(api, keras):
        a, b = keras.Input(shape=(3,), name="a"), keras.Input(shape=(3,), name="b")
        out = keras.layers.Dense(2)(keras.layers.Add()([a, b]))
        inner = keras.Model([a, b], out)
        c = keras.Input(shape=(3,))
        outer = keras.Model(c, inner([c, c]))
        return outer(_ph(api, X2))

    compare(build, {"x": X2})


@pytest.mark.parametrize("training", [True, False])
def test_dropout_and_batch_norm_with_training_argument(training):
    def build(api, keras):
        api.set_random_seed(3)
        x = _ph(api, X2)
        y = keras.layers.Dropout(0.5, seed=1)(x, training=training)
        bn = keras.layers.BatchNormalization()
        z = bn(y, training=training)
        return [y, z] + list(bn.updates)

    compare(build, {"x": X2})


def test_batch_norm_fused_with_training_argument():
    def build(api, keras):
        bn = keras.layers.BatchNormalization(momentum=0.9)
        return [bn(_ph(api, X4), training=True)] + list(bn.updates)

    compare(build, {"x": X4}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("phase", [None, 0, 1])
def test_learning_phase(phase):
    def build(api, keras):
        api.set_random_seed(3)
        if phase is not None:
            keras.backend.set_learning_phase(phase)
        x = _ph(api, X2)
        y = keras.layers.Dropout(0.5, seed=2)(x)
        bn = keras.layers.BatchNormalization()
        return [y, bn(y)]

    compare(build, {"x": X2}, v1_control_flow=True)


def test_fused_batch_norm_on_learning_phase():
    def build(api, keras):
        bn = keras.layers.BatchNormalization(momentum=0.8)
        y = bn(_ph(api, X4))
        return [y, *bn.updates]

    compare(build, {"x": X4}, v1_control_flow=True, rtol=1e-4, atol=1e-5)
    compare(
        build,
        {"x": X4, "keras_learning_phase": True},
        v1_control_flow=True,
        rtol=1e-4,
        atol=1e-5,
    )


def test_sequential_with_input_layer_and_frozen_layer():
    def build(api, keras):
        frozen = keras.layers.Dense(3, name="frozen", trainable=False)
        m = keras.Sequential([keras.layers.InputLayer(input_shape=(3,)), frozen])
        m.add(keras.layers.Dense(2))
        assert m.get_layer("frozen") is frozen and len(m.layers) == 2
        return [m(_ph(api, X2))], _names(m.trainable_weights), _names(m.non_trainable_weights)

    (g, (_, *meta)), (t, (_, *tmeta)) = build_both(build)
    assert meta == tmeta
    compare(lambda api, keras: build(api, keras)[0], {"x": X2})
