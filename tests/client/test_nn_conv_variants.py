"""Client, tf.nn's convolution and pooling variants (client.ops.nn_conv_variants): each
API's forward values and gradients equal TensorFlow's, and the graphs name their nodes as
tf.compat.v1 does (node-for-node GraphDef parity is in test_graph_sweep's grad_ cases)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.tf1_oracle import assert_close, run_both

RNG = np.random.default_rng(11)


def _r(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


X4 = _r(2, 7, 6, 3)
F_DW = _r(3, 2, 3, 2)
F_PW = _r(1, 1, 6, 4)
X5 = _r(1, 2, 3, 3, 2)
F5 = _r(2, 2, 2, 4, 2)
F_DIL = _r(2, 3, 3)

APIS = {
    "depthwise_conv2d_native": lambda api, x: api.nn.depthwise_conv2d_native(
        x, api.constant(F_DW), [1, 2, 2, 1], "SAME"
    ),
    "depthwise_conv2d": lambda api, x: api.nn.depthwise_conv2d(
        x, api.constant(F_DW), [1, 1, 1, 1], "VALID"
    ),
    "depthwise_conv2d_rate": lambda api, x: api.nn.depthwise_conv2d(
        x, api.constant(F_DW), [1, 1, 1, 1], "SAME", rate=[2, 3]
    ),
    "separable_conv2d": lambda api, x: api.nn.separable_conv2d(
        x, api.constant(F_DW), api.constant(F_PW), [1, 1, 1, 1], "SAME"
    ),
    "separable_conv2d_rate": lambda api, x: api.nn.separable_conv2d(
        x, api.constant(F_DW), api.constant(F_PW), [1, 1, 1, 1], "VALID", rate=[2, 2]
    ),
    "atrous_conv2d": lambda api, x: api.nn.atrous_conv2d(x, api.constant(F_DW[..., :1]), 2, "SAME"),
    "atrous_conv2d_valid": lambda api, x: api.nn.atrous_conv2d(
        x, api.constant(F_DW[..., :1]), 3, "VALID"
    ),
    "space_to_depth": lambda api, x: api.nn.space_to_depth(x[:, :6], 2),
    "depth_to_space": lambda api, x: api.depth_to_space(api.concat([x, x, x, x], 3), 2),
    "max_pool_with_argmax": lambda api, x: api.nn.max_pool_with_argmax(
        x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"
    )[0],
    "fractional_max_pool": lambda api, x: api.nn.fractional_max_pool(
        x, [1, 1.5, 1.7, 1], True, True, True, 3, 4
    )[0],
    "fractional_avg_pool": lambda api, x: api.nn.fractional_avg_pool(
        x, [1, 1.44, 1.73, 1], False, True, True, 5, 1
    )[0],
    "dilation2d": lambda api, x: api.nn.dilation2d(
        x, api.constant(F_DIL), [1, 1, 2, 1], [1, 2, 1, 1], "SAME"
    ),
    "lrn": lambda api, x: api.nn.lrn(x, 1, 1.5, 0.3, 0.75),
    "extract_patches": lambda api, x: api.image.extract_patches(
        x, [1, 2, 3, 1], [1, 2, 1, 1], [1, 1, 2, 1], "SAME"
    ),
    "extract_image_patches": lambda api, x: api.extract_image_patches(
        x, [1, 3, 2, 1], [1, 1, 2, 1], [1, 2, 1, 1], "VALID"
    ),
}


@pytest.mark.parametrize("api_name", sorted(APIS))
def test_values_and_gradients_match_tensorflow(api_name: str) -> None:
    def build(api):
        x = api.constant(X4)
        y = APIS[api_name](api, x)
        w = api.constant(_weights(y))
        (g,) = api.gradients(api.reduce_sum(y * w), [x])
        return lambda sess: sess.run([y, g])

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert [o.shape for o in ours] == [t.shape for t in theirs]
    assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


def _weights(y) -> np.ndarray:
    dims = y.shape.as_list()
    return np.random.default_rng(3).standard_normal(dims).astype(np.float32)


def test_conv3d_transpose_and_gradients_match_tensorflow() -> None:
    def build(api):
        x, f = api.constant(X5), api.constant(F5)
        y = api.nn.conv3d_transpose(x, f, [1, 4, 6, 6, 4], [1, 2, 2, 2, 1])
        gx, gf = api.gradients(api.reduce_sum(y * y), [x, f])
        return lambda sess: sess.run([y, gx, gf])

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert_close(ours, theirs, rtol=1e-5, atol=1e-4)


def test_max_pool_with_argmax_indices_match_tensorflow() -> None:
    def build(api):
        x = api.constant(np.round(X4 * 2))  # ties
        out = api.nn.max_pool_with_argmax(x, [1, 3, 2, 1], [1, 2, 2, 1], "VALID", Targmax=api.int32)
        batch = api.nn.max_pool_with_argmax(
            x, [1, 2, 2, 1], [1, 1, 1, 1], "SAME", include_batch_in_index=True
        )
        return lambda sess: sess.run([*out, *batch])

    ours, theirs, _, _ = run_both(build)
    for o, t in zip(ours, theirs):
        assert o.dtype == t.dtype
        np.testing.assert_array_equal(o, t)


def test_fractional_pool_sequences_match_tensorflow() -> None:
    def build(api):
        x = api.constant(X4)
        outs = [
            api.nn.fractional_max_pool(x, [1, 1.3, 2.1, 1], p, o, True, 7, 8)
            for p in (False, True)
            for o in (False, True)
        ]
        return lambda sess: sess.run([t for out in outs for t in out])

    ours, theirs, _, _ = run_both(build)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o, t)


def test_filter_gradients_match_tensorflow() -> None:
    def build(api):
        x, d, p, f = (api.constant(v) for v in (X4, F_DW, F_PW, F_DIL))
        sep = api.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], "SAME", rate=[2, 1])
        dil = api.nn.dilation2d(x, f, [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
        grads = api.gradients(api.reduce_sum(sep * sep) + api.reduce_sum(dil), [d, p, f])
        return lambda sess: sess.run(grads)

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert_close(ours, theirs, rtol=1e-4, atol=1e-4)


LAYERS = {
    "separable_conv2d": lambda api, x: api.layers.separable_conv2d(
        x, 4, 2, padding="same", depth_multiplier=2, activation=api.nn.relu
    ),
    "separable_conv2d_dilated": lambda api, x: api.layers.separable_conv2d(
        x, 2, 3, dilation_rate=2
    ),
    "separable_conv1d": lambda api, x: api.layers.separable_conv1d(
        x[:, 0], 3, 2, strides=2, padding="same"
    ),
    "conv3d_transpose": lambda api, x: api.layers.conv3d_transpose(
        api.reshape(x, [2, 7, 2, 3, 3]), 2, [2, 3, 2], strides=[1, 2, 2]
    ),
}


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_layer_values_and_one_training_step_match_tensorflow(layer: str) -> None:
    """The layer's output, and its weights after one SGD step, equal TensorFlow's (TF's
    initial weights are copied in by run_both)."""

    def build(api):
        x = api.constant(X4)
        # A v1 initializer: the layers' default is a Keras one in TF 2.x (another graph).
        with api.variable_scope("", initializer=api.glorot_uniform_initializer(seed=3)):
            y = LAYERS[layer](api, x)
        loss = api.reduce_mean(y * y)
        train = api.train.GradientDescentOptimizer(0.1).minimize(loss)
        weights = api.trainable_variables()

        def steps(sess):
            before = sess.run(y)
            sess.run(train)
            return [before, *sess.run(weights)]

        return steps

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "rate,padding,out_shape",
    [(1, "SAME", [2, 7, 6, 2]), (2, "SAME", [2, 7, 6, 2]), (3, "VALID", [2, 13, 9, 2])],
)
def test_atrous_conv2d_transpose_matches_tensorflow(rate, padding, out_shape) -> None:
    f = _r(3, 2, 2, 3)

    def build(api):
        x = api.constant(X4)
        y = api.nn.atrous_conv2d_transpose(x, api.constant(f), out_shape, rate, padding)
        (g,) = api.gradients(api.reduce_sum(y * y), [x])
        return lambda sess: sess.run([y, g])

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert_close(ours, theirs, rtol=1e-5, atol=1e-4)


STATIC = {
    "depthwise": lambda api, x: api.nn.depthwise_conv2d_native(
        x, api.constant(F_DW), [1, 2, 2, 1], "SAME"
    ),
    "separable_rate": lambda api, x: api.nn.separable_conv2d(
        x, api.constant(F_DW), api.constant(F_PW), [1, 1, 1, 1], "VALID", rate=[2, 1]
    ),
    "space_to_depth": lambda api, x: api.nn.space_to_depth(x, 2),
    "depth_to_space": lambda api, x: api.nn.depth_to_space(api.concat([x, x, x, x], 3), 2),
    "argmax": lambda api, x: api.nn.max_pool_with_argmax(x, [1, 2, 3, 1], [1, 2, 2, 1], "VALID"),
    "fractional": lambda api, x: api.nn.fractional_avg_pool(x, [1, 1.5, 2.5, 1]),
    "dilation2d": lambda api, x: api.nn.dilation2d(
        x, api.constant(F_DIL), [1, 2, 1, 1], [1, 1, 2, 1], "VALID"
    ),
    "lrn": lambda api, x: api.nn.lrn(x),
    "patches": lambda api, x: api.image.extract_patches(
        x, [1, 2, 3, 1], [1, 2, 1, 1], [1, 1, 2, 1], "VALID"
    ),
    "volume_patches": lambda api, x: api.extract_volume_patches(
        api.expand_dims(x, 1), [1, 1, 2, 2, 1], [1, 1, 2, 1, 1], "SAME"
    ),
}


@pytest.mark.parametrize("shape", [(2, 8, 6, 3), (None, 8, None, 3), (None, None, None, None)])
@pytest.mark.parametrize("api_name", sorted(STATIC))
def test_static_shapes_match_tensorflow(api_name: str, shape: tuple) -> None:
    """Shape inference: the outputs' static shapes while building equal TF's."""
    import client

    tf1 = pytest.importorskip("tensorflow").compat.v1
    if api_name in ("fractional", "volume_patches") and None in shape:
        # Fractional pooling wants a known input, and TF's volume-patch shape function
        # returns rank 4 for a rank-5 output when sizes are unknown (we keep rank 5).
        shape = (2, 8, 6, 3)
    shapes = []
    for api in (client, tf1):
        with api.Graph().as_default():
            x = api.placeholder(api.float32, list(shape) if shape[0] or shape[1] else None)
            out = STATIC[api_name](api, x)
            outs = out if isinstance(out, tuple) else (out,)
            shapes.append([o.shape.as_list() if o.shape.ndims is not None else None for o in outs])
    assert shapes[0] == shapes[1]


def test_second_order_convolution_gradients_match_tensorflow() -> None:
    """The gradients of the depthwise and 3-D backprop ops (TF registers them)."""
    f3 = _r(2, 2, 2, 2, 3)

    def build(api):
        x, f = api.constant(X4), api.constant(F_DW)
        x5, w5 = api.constant(X5), api.constant(f3)
        y = api.nn.depthwise_conv2d_native(x, f, [1, 1, 1, 1], "SAME")
        gx, gf = api.gradients(api.reduce_sum(y * y), [x, f])
        second = api.gradients(api.reduce_sum(gx * gx) + api.reduce_sum(gf * gf), [x, f])
        y5 = api.nn.conv3d(x5, w5, [1, 1, 1, 1, 1], "VALID")
        (gw5,) = api.gradients(api.reduce_sum(y5 * y5), [w5])
        (gx5,) = api.gradients(api.reduce_sum(gw5 * gw5), [x5])
        return lambda sess: sess.run([*second, gx5])

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert_close(ours, theirs, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize(
    "ksizes,strides,padding",
    [([1, 2, 2, 3, 1], [1, 1, 2, 1, 1], "SAME"), ([1, 1, 3, 2, 1], [1, 1, 1, 2, 1], "VALID")],
)
def test_extract_volume_patches_and_gradient_match_tensorflow(ksizes, strides, padding) -> None:
    volume = _r(2, 3, 4, 5, 2)

    def build(api):
        x = api.constant(volume)
        y = api.extract_volume_patches(x, ksizes, strides, padding)
        w = api.constant(_weights(y))
        (g,) = api.gradients(api.reduce_sum(y * w), [x])
        return lambda sess: sess.run([y, g])

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert_close(ours, theirs, rtol=1e-5, atol=1e-5)
