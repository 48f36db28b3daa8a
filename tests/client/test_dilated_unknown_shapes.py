"""Dilated convolutions whose input spatial sizes (or filter shape) are unknown while
building: TF's with_space_to_batch computes the paddings and crops at run time
(Shape, strided slices, required_space_to_batch_paddings ops). depthwise_conv2d,
separable_conv2d, atrous_conv2d, tf.nn.with_space_to_batch and the separable layers
against TensorFlow 2.21: the same graph node for node, the same values and gradients."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, need_tf_keras, run_both

pytest.importorskip("tensorflow")
TF_GRAPH_MODE = True

RNG = np.random.RandomState(21)
X = RNG.randn(2, 9, 7, 3).astype(np.float32)
F_DW = RNG.randn(3, 2, 3, 2).astype(np.float32)
F_PW = RNG.randn(1, 1, 6, 4).astype(np.float32)
F_CONV = RNG.randn(3, 3, 3, 2).astype(np.float32)


def _depthwise(rate, padding):
    return lambda api, x, f: api.nn.depthwise_conv2d(x, f(F_DW), [1, 1, 1, 1], padding, rate=rate)


def _separable(rate, padding):
    return lambda api, x, f: api.nn.separable_conv2d(
        x, f(F_DW), api.constant(F_PW), [1, 1, 1, 1], padding, rate=rate
    )


def _atrous(rate, padding):
    return lambda api, x, f: api.nn.atrous_conv2d(x, api.constant(F_CONV), rate, padding)


def _with_space_to_batch(api, x, f):
    w = api.constant(F_CONV)

    def op(inp, num_spatial_dims, padding):
        return api.nn.conv2d(inp, w, [1, 1, 1, 1], padding)

    return api.nn.with_space_to_batch(x, [2, 3], "SAME", op, filter_shape=[3, 3])


OPS = {
    "depthwise_same_rate_2": _depthwise([2, 2], "SAME"),
    "depthwise_valid_rate_2_1": _depthwise([2, 1], "VALID"),
    "separable_same_rate_3_2": _separable([3, 2], "SAME"),
    "separable_valid_rate_2": _separable([2, 2], "VALID"),
    "atrous_same": _atrous(2, "SAME"),
    "atrous_valid": _atrous(3, "VALID"),
    "with_space_to_batch": _with_space_to_batch,
}
SHAPES = {"unknown_hw": [None, None, None, 3], "unknown_w": [2, 9, None, 3], "known": X.shape}


def _build(name, shape, filter_known=True):
    def build(api):
        x = api.placeholder(api.float32, list(shape), name="x")

        def make_filter(value):
            if filter_known:
                return api.constant(value)
            f = api.placeholder(api.float32, [None, None, *value.shape[2:]], name="f")
            return f

        y = OPS[name](api, x, make_filter)
        loss = api.reduce_sum(y * y)
        grads = api.gradients(loss, [x])
        return x, y, grads

    return build


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("name", sorted(OPS))
def test_graph_matches_tf(name, shape):
    ours, theirs = build_both(_build(name, SHAPES[shape]))
    assert graph_diff(ours, theirs) == []


@pytest.mark.parametrize("name", ["depthwise_valid_rate_2_1", "separable_valid_rate_2"])
def test_graph_with_filter_shape_known_at_run_time_matches_tf(name):
    ours, theirs = build_both(_build(name, SHAPES["unknown_hw"], filter_known=False))
    assert graph_diff(ours, theirs) == []


def test_same_padding_needs_a_filter_shape_as_in_tf():
    """TF's with_space_to_batch reads SAME's base paddings from the shape of a filter it
    is not given (None) when the static shape is unknown: a ValueError, as here."""
    import tensorflow as tf_real

    import client

    for api in (client, tf_real.compat.v1):
        with api.Graph().as_default(), pytest.raises(ValueError):
            _build("depthwise_same_rate_2", SHAPES["unknown_hw"], False)(api)


@pytest.mark.parametrize("name", sorted(OPS))
def test_values_and_gradients_like_tf(name):
    def build(tf):
        x, y, grads = _build(name, SHAPES["unknown_hw"])(tf)
        return lambda sess: sess.run([y, grads], {x: X})

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-4, atol=1e-4)


def test_filter_known_at_run_time_values_like_tf():
    def build(tf):
        x, y, grads = _build("depthwise_valid_rate_2_1", SHAPES["unknown_hw"], False)(tf)
        f = tf.get_default_graph().get_tensor_by_name("f:0")
        return lambda sess: sess.run([y, grads], {x: X, f: F_DW})

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-4, atol=1e-4)


def test_dilated_separable_layer_with_unknown_spatial_sizes_like_tf():
    need_tf_keras()

    def build(tf):
        x = tf.placeholder(tf.float32, [None, None, None, 3], name="x")
        y = tf.layers.separable_conv2d(x, 4, 3, dilation_rate=2, padding="same")
        grads = tf.gradients(tf.reduce_sum(y * y), [x] + tf.trainable_variables())
        return lambda sess: sess.run([y, grads], {x: X})

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert_close(ours, theirs, rtol=1e-4, atol=1e-4)


CF = "channels_first"
LAYERS = {
    "conv2d_same": (lambda api, x: api.layers.conv2d(x, 2, 3, dilation_rate=2, padding="same")),
    "conv2d_valid_rate_2_3": (lambda api, x: api.layers.conv2d(x, 2, 2, dilation_rate=(2, 3))),
    "conv1d_same": (
        lambda api, x: api.layers.conv1d(
            api.reduce_sum(x, 2), 2, 3, dilation_rate=2, padding="same"
        )
    ),
    "conv3d_same": (
        lambda api, x: api.layers.conv3d(
            api.expand_dims(x, 1), 2, 2, dilation_rate=(1, 2, 2), padding="same"
        )
    ),
}
# TF builds these NC* graphs (its CPU kernels then refuse NCHW/NCDHW convolutions); the
# 1-D layer adds its bias by Reshape and add.
LAYERS_GRAPH_ONLY = {
    "conv2d_channels_first": (
        lambda api, x: api.layers.conv2d(x, 2, 2, dilation_rate=2, padding="same", data_format=CF)
    ),
    "conv1d_channels_first": (
        lambda api, x: api.layers.conv1d(
            api.reduce_sum(x, 2), 2, 2, dilation_rate=2, data_format=CF
        )
    ),
    "conv1d_channels_first_undilated": (
        lambda api, x: api.layers.conv1d(api.reduce_sum(x, 2), 2, 3, data_format=CF)
    ),
    "conv3d_channels_first": (
        lambda api, x: api.layers.conv3d(
            api.expand_dims(x, 1), 2, 2, dilation_rate=2, padding="same", data_format=CF
        )
    ),
}


def _layer_build(layer, shape):
    def build(api):
        api.set_random_seed(1)
        x = api.placeholder(api.float32, list(shape), name="x")
        with api.variable_scope("", initializer=api.glorot_uniform_initializer(seed=3)):
            y = layer(api, x)
        grads = api.gradients(api.reduce_sum(y * y), [x] + api.trainable_variables())
        return x, y, grads

    return build


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("name", sorted({**LAYERS, **LAYERS_GRAPH_ONLY}))
def test_dilated_layer_graph_matches_tf(name, shape):
    need_tf_keras()
    layer = {**LAYERS, **LAYERS_GRAPH_ONLY}[name]
    dims = SHAPES[shape]
    if name in LAYERS_GRAPH_ONLY and shape == "unknown_hw":  # channels (axis 1) known
        dims = [None, X.shape[1], None, None]
    ours, theirs = build_both(_layer_build(layer, dims))
    assert graph_diff(ours, theirs) == []


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_dilated_layer_values_and_gradients_like_tf(name):
    need_tf_keras()

    def build(tf):
        x, y, grads = _layer_build(LAYERS[name], SHAPES["unknown_hw"])(tf)
        return lambda sess: sess.run([y, grads], {x: X})

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-4, atol=1e-4)
