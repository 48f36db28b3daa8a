"""Client, tf.compat.v1.nn.convolution and tf.nn.pool: 1-D, 2-D and 3-D, strided, dilated
(TF's space-to-batch path) and channels-first, with SAME and VALID padding. Each builds
TensorFlow's graph node for node (names, ops, inputs, attrs), computes TensorFlow 2.21's
values (channels-last: TF's CPU kernels refuse channels-first) and gradients, and rejects
the arguments TF rejects with TF's error."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import run_both, tf1

pytest.importorskip("tensorflow")

RNG = np.random.default_rng(3)


def _data(shape):
    return RNG.standard_normal(shape).astype(np.float32)


# name -> (input shape, filter shape, kwargs to nn.convolution, values compared)
CONV_CASES = {
    "1d_valid": ((2, 9, 3), (3, 3, 4), {"padding": "VALID"}, True),
    "1d_same_strided": ((2, 9, 3), (3, 3, 4), {"padding": "SAME", "strides": [2]}, True),
    "1d_dilated_same": ((2, 9, 3), (3, 3, 4), {"padding": "SAME", "dilation_rate": [2]}, True),
    "1d_ncw_dilated": (
        (2, 3, 9),
        (3, 3, 4),
        {"padding": "VALID", "dilation_rate": [2], "data_format": "NCW"},
        False,
    ),
    "2d_same": ((2, 7, 6, 3), (3, 2, 3, 4), {"padding": "SAME"}, True),
    "2d_strided_valid": ((2, 7, 6, 3), (3, 2, 3, 4), {"padding": "VALID", "strides": [2, 1]}, True),
    "2d_dilated_same": (
        (2, 7, 6, 3),
        (3, 2, 3, 4),
        {"padding": "SAME", "dilation_rate": [2, 3]},
        True,
    ),
    "2d_dilated_valid_named": (
        (2, 9, 8, 3),
        (2, 2, 3, 2),
        {"padding": "VALID", "dilation_rate": [3, 2], "name": "dconv"},
        True,
    ),
    "2d_nchw_dilated": (
        (2, 3, 7, 6),
        (3, 2, 3, 4),
        {"padding": "SAME", "dilation_rate": [2, 2], "data_format": "NCHW"},
        False,
    ),
    "3d_valid": ((1, 5, 6, 4, 2), (2, 3, 2, 2, 3), {"padding": "VALID"}, True),
    "3d_dilated_same": (
        (1, 5, 6, 4, 2),
        (2, 3, 2, 2, 3),
        {"padding": "SAME", "dilation_rate": [2, 1, 2]},
        True,
    ),
    "2d_unknown_batch_dilated": ((None, 7, 6, 3), (3, 2, 3, 4), {"padding": "SAME", "dilation_rate": [2, 2]}, True),
}  # fmt: skip


def _conv_build(case, grads=True):
    in_shape, f_shape, kwargs, _ = CONV_CASES[case]
    feed_x = _data([2 if d is None else d for d in in_shape])
    f_value = _data(f_shape)

    def build(api):
        x = api.placeholder(api.float32, list(in_shape), name="x")
        f = api.constant(f_value, name="f")
        y = api.nn.convolution(x, f, **kwargs)
        outs = [y] + (api.gradients(api.reduce_sum(y * y), [x, f]) if grads else [])
        return lambda sess: sess.run(outs, {x: feed_x})

    return build


@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_convolution_graph_matches_tensorflow(case):
    ours, theirs = build_both(_conv_build(case))
    assert graph_diff(ours, theirs) == []


@pytest.mark.parametrize("case", sorted(c for c in CONV_CASES if CONV_CASES[c][3]))
def test_convolution_values_and_gradients_match_tensorflow(case):
    ours, theirs, _, _ = run_both(_conv_build(case))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_convolution_v2_argument_order():
    import tensorflow as tf

    from client.ops.nn_convolution import convolution_v2

    x, f = _data((2, 7, 6, 3)), _data((3, 2, 3, 4))
    want = tf.nn.convolution(x, f, strides=1, padding="SAME", dilations=2).numpy()
    with client.Graph().as_default():
        y = convolution_v2(client.constant(x), client.constant(f), 1, "SAME", None, 2)
        with client.Session() as sess:
            np.testing.assert_allclose(sess.run(y), want, rtol=1e-4, atol=1e-4)


# name -> (input shape, window, pooling type, kwargs to nn.pool, values compared)
POOL_CASES = {
    "1d_max_valid": ((2, 9, 3), [3], "MAX", {"padding": "VALID", "strides": [2]}, True),
    "1d_avg_dilated": ((2, 9, 3), [2], "AVG", {"padding": "VALID", "dilation_rate": [3]}, True),
    "1d_ncw_max": ((2, 3, 9), [3], "MAX", {"padding": "SAME", "data_format": "NCW"}, False),
    "2d_max_same": ((2, 7, 6, 3), [3, 2], "MAX", {"padding": "SAME", "strides": [2, 2]}, True),
    "2d_avg_dilated": ((2, 7, 6, 3), [2, 2], "AVG", {"padding": "VALID", "dilation_rate": [2, 2]}, True),
    "2d_max_named": ((2, 7, 6, 3), [2, 3], "MAX", {"padding": "VALID", "name": "mp"}, True),
    "2d_nchw_avg": ((2, 3, 7, 6), [2, 2], "AVG", {"padding": "VALID", "data_format": "NCHW"}, False),
    "3d_max_valid": ((1, 5, 6, 4, 2), [2, 2, 2], "MAX", {"padding": "VALID"}, True),
    "3d_avg_dilated": ((1, 5, 6, 4, 2), [2, 2, 1], "AVG", {"padding": "VALID", "dilation_rate": [2, 2, 1]}, True),
}  # fmt: skip


def _pool_build(case):
    in_shape, window, kind, kwargs, _ = POOL_CASES[case]
    feed_x = _data(in_shape)

    def build(api):
        x = api.placeholder(api.float32, list(in_shape), name="x")
        y = api.nn.pool(x, window, kind, **kwargs)
        outs = [y, *api.gradients(api.reduce_sum(y * y), [x])]
        return lambda sess: sess.run(outs, {x: feed_x})

    return build


@pytest.mark.parametrize("case", sorted(POOL_CASES))
def test_pool_graph_matches_tensorflow(case):
    ours, theirs = build_both(_pool_build(case))
    assert graph_diff(ours, theirs) == []


@pytest.mark.parametrize("case", sorted(c for c in POOL_CASES if POOL_CASES[c][4]))
def test_pool_values_and_gradients_match_tensorflow(case):
    ours, theirs, _, _ = run_both(_pool_build(case))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


BAD = {
    "conv_stride_and_rate": lambda api, x2, f2: api.nn.convolution(
        x2, f2, "SAME", strides=[2, 2], dilation_rate=[2, 2]
    ),
    "conv_rate_length": lambda api, x2, f2: api.nn.convolution(
        x2, f2, "SAME", dilation_rate=[2, 2, 2]
    ),
    "conv_rate_negative": lambda api, x2, f2: api.nn.convolution(
        x2, f2, "SAME", dilation_rate=[0, 2]
    ),
    "pool_same_dilated": lambda api, x2, f2: api.nn.pool(
        x2, [2, 2], "MAX", "SAME", dilation_rate=[2, 2]
    ),
    "pool_stride_over_window": lambda api, x2, f2: api.nn.pool(
        x2, [2, 2], "MAX", "VALID", strides=[3, 1]
    ),
    "pool_window_rank": lambda api, x2, f2: api.nn.pool(x2, [2, 2, 2, 2], "MAX", "VALID"),
    "pool_kind": lambda api, x2, f2: api.nn.pool(x2, [2, 2], "MIN", "VALID"),
    "pool_rank": lambda api, x2, f2: api.nn.pool(x2, [2], "MAX", "VALID"),
}


def _error(api, case):
    with api.Graph().as_default():
        x2 = api.placeholder(api.float32, [2, 7, 6, 3])
        f2 = api.constant(_data((3, 2, 3, 4)))
        try:
            BAD[case](api, x2, f2)
        except (ValueError, TypeError) as e:
            return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_arguments_fail_like_tensorflow(case):
    theirs = _error(tf1, case)
    assert theirs is not None
    assert _error(client, case) == theirs
