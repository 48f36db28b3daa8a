"""client.keras layers against tf_keras in graph mode: the same GraphDef node for node
(names like "dense/kernel", "dense_1/MatMul", "dense_2/..." for a second call) and the
same values, unseeded initializers included (both draw their seeds from Python's
`random`, seeded alike; see keras_oracle)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.keras_oracle import compare

RNG = np.random.default_rng(0)
X2 = RNG.standard_normal((4, 3)).astype(np.float32)
X3 = RNG.standard_normal((2, 6, 3)).astype(np.float32)
X4 = RNG.standard_normal((2, 6, 6, 3)).astype(np.float32)
X5 = RNG.standard_normal((2, 4, 4, 4, 2)).astype(np.float32)


def _ph(api, x, name="x"):
    return api.placeholder(api.float32, [None, *x.shape[1:]], name=name)


def test_dense_named_and_called_twice():
    def build(api, keras):
        x = _ph(api, X2)
        d = keras.layers.Dense(4, activation="relu")
        y = keras.layers.Dense(2, kernel_initializer=keras.initializers.GlorotNormal(seed=3))(d(x))
        return [y, d(x), keras.layers.Dense(5, use_bias=False, name="top")(x)]

    compare(build, {"x": X2})


def test_dense_on_rank3_uses_tensordot():
    compare(lambda api, keras: keras.layers.Dense(4)(_ph(api, X3)), {"x": X3})


@pytest.mark.parametrize(
    "init",
    [
        "zeros",
        "ones",
        "he_normal",
        "he_uniform",
        "lecun_normal",
        "lecun_uniform",
        "glorot_normal",
        "random_normal",
        "truncated_normal",
        "random_uniform",
    ],
)
def test_initializers_by_name(init):
    compare(
        lambda api, keras: keras.layers.Dense(3, kernel_initializer=init)(_ph(api, X2)),
        {"x": X2},
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda k: k.initializers.RandomUniform(-1.0, 2.0, seed=7),
        lambda k: k.initializers.RandomNormal(1.0, 0.5, seed=7),
        lambda k: k.initializers.TruncatedNormal(0.0, 2.0, seed=7),
        lambda k: k.initializers.VarianceScaling(2.0, "fan_out", "untruncated_normal", seed=1),
        lambda k: k.initializers.Constant(0.25),
        lambda k: k.initializers.HeUniform(seed=5),
    ],
)
def test_initializer_objects(make):
    compare(
        lambda api, keras: keras.layers.Dense(3, kernel_initializer=make(keras))(_ph(api, X2)),
        {"x": X2},
    )


@pytest.mark.parametrize(
    "activation",
    [
        "relu",
        "sigmoid",
        "tanh",
        "softmax",
        "elu",
        "selu",
        "softplus",
        "softsign",
        "linear",
        "swish",
    ],
)
def test_activation_layer_and_function(activation):
    def build(api, keras):
        x = _ph(api, X2)
        return [keras.layers.Activation(activation)(x), keras.activations.get(activation)(x)]

    # TF's swish is a custom_gradient function (an IdentityN carries its gradient): the
    # client builds x * sigmoid(x) plainly, so for swish only the values are compared.
    compare(build, {"x": X2}, check_graph=activation != "swish")


@pytest.mark.parametrize(
    "make,x",
    [
        (lambda k: k.layers.Conv2D(4, 3, padding="same", activation="relu"), X4),
        (lambda k: k.layers.Conv2D(2, (2, 3), strides=2), X4),
        (lambda k: k.layers.Conv1D(3, 2, padding="same"), X3),
        (lambda k: k.layers.Conv2DTranspose(2, 3, strides=2, padding="same"), X4),
        (lambda k: k.layers.Conv3D(2, 2), X5),
        (lambda k: k.layers.MaxPooling2D(), X4),
        (lambda k: k.layers.AveragePooling2D(3, strides=1, padding="same"), X4),
        (lambda k: k.layers.MaxPooling1D(2), X3),
        (lambda k: k.layers.AveragePooling1D(3, padding="same"), X3),
        (lambda k: k.layers.GlobalAveragePooling2D(), X4),
        (lambda k: k.layers.GlobalMaxPooling2D(), X4),
        (lambda k: k.layers.Flatten(), X4),
        (lambda k: k.layers.Reshape((3, 6)), X3),
        (lambda k: k.layers.Reshape((-1, 2)), X3),
    ],
)
def test_conv_pool_shape_layers(make, x):
    def build(api, keras):
        layer = make(keras)
        inp = _ph(api, x)
        return [layer(inp), layer(inp)]

    compare(build, {"x": x})


def test_embedding():
    ids = np.array([[0, 3, 9], [2, 2, 1]], np.int32)

    def build(api, keras):
        x = api.placeholder(api.int32, [None, 3], name="x")
        f = api.placeholder(api.float32, [None, 3], name="f")
        e = keras.layers.Embedding(10, 4)
        return [e(x), e(f), keras.layers.Embedding(10, 2, embeddings_initializer="ones")(x)]

    compare(build, {"x": ids, "f": ids.astype(np.float32)})


def test_merge_layers_and_lambda():
    def build(api, keras):
        a, b = _ph(api, X2, "a"), _ph(api, X2, "b")
        return [
            keras.layers.Concatenate()([a, b]),
            keras.layers.Concatenate(axis=0)([a, b, a]),
            keras.layers.Add()([a, b, a]),
            keras.layers.Multiply()([a, b]),
            keras.layers.add([a, b]),
            keras.layers.concatenate([a, b]),
            keras.layers.Lambda(lambda t, k: t * k, arguments={"k": 3.0})(a),
        ]

    compare(build, {"a": X2, "b": X2 * 2})
