"""Client, gradients: GatherV2 along any axis and with batch_dims, and the second-order
BiasAdd gradient (BiasAddGrad's own gradient) in NHWC and NCHW, compared with TensorFlow.
(batch_to_space / space_to_batch: tests/client/test_space_batch.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import client
from client.framework.op_builder import apply_op

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

PARAMS = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) / 7.0 - 1.0


def _run(tf, build, feeds):
    """Builds `build(tf)` -> (fetches, placeholders) in a fresh graph and runs it."""
    with tf.Graph().as_default() as g:
        fetches, phs = build(tf)
        with tf.Session(graph=g) as sess:
            return sess.run(fetches, dict(zip(phs, feeds)))


def _gather_build(indices, axis, batch_dims, static):
    def build(tf):
        p = tf.placeholder(tf.float32, PARAMS.shape if static else None, name="p")
        y = tf.gather(p, tf.constant(indices), axis=axis, batch_dims=batch_dims)
        w = tf.constant(
            np.arange(1, y.shape.num_elements() + 1, dtype=np.float32).reshape(y.shape.as_list())
            if static
            else 3.0
        )
        return tf.gradients(tf.reduce_sum(y * w), [p]), [p]

    return build


GATHER_CASES = {
    "axis1_dup": (np.array([2, 0, 2], np.int32), 1, 0),
    "axis_neg1": (np.array([[3, 1], [1, 1]], np.int32), -1, 0),
    "axis2": (np.array([0, 3], np.int64), 2, 0),
    "batch1_axis1": (np.array([[2, 2, 0], [1, 0, 1]], np.int32), 1, 1),
    "batch1_axis2": (np.array([[3, 0], [1, 1]], np.int32), 2, 1),
    "batch2_axis2": (np.array([[[3], [0], [2]], [[1], [1], [0]]], np.int32), 2, 2),
    "batch_neg1": (np.array([[2, 2, 0], [1, 0, 1]], np.int32), 1, -1),
}


@pytest.mark.parametrize("static", [True, False], ids=["static", "unknown_shape"])
@pytest.mark.parametrize("case", sorted(GATHER_CASES))
def test_gather_v2_gradient_matches_tensorflow(case, static):
    indices, axis, batch_dims = GATHER_CASES[case]
    build = _gather_build(indices, axis, batch_dims, static)
    (ours,), (theirs,) = _run(client, build, [PARAMS]), _run(tf1, build, [PARAMS])
    assert ours.shape == theirs.shape == PARAMS.shape
    np.testing.assert_array_equal(ours, theirs)
    assert np.count_nonzero(theirs) > 0


def test_gather_v2_gradient_with_a_fed_axis_matches_tensorflow():
    def build(tf):
        p = tf.placeholder(tf.float32, PARAMS.shape, name="p")
        axis = tf.placeholder(tf.int32, [], name="axis")
        y = tf.gather(p, tf.constant([1, 1, 0]), axis=axis)
        return tf.gradients(tf.reduce_sum(y * y), [p]), [p, axis]

    for axis in (1, 2, -2):
        (ours,), (theirs,) = _run(client, build, [PARAMS, axis]), _run(tf1, build, [PARAMS, axis])
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def _bias_build(data_format, x_shape):
    channels = x_shape[1] if data_format == "NCHW" else x_shape[-1]

    def build(tf):
        x = tf.placeholder(tf.float32, x_shape, name="x")
        v = tf.placeholder(tf.float32, x_shape, name="v")
        b = tf.constant(np.linspace(-1.0, 1.0, channels, dtype=np.float32))
        y = tf.nn.bias_add(x * x, b, data_format=data_format)
        (db,) = tf.gradients(tf.reduce_sum(y * v), [b])  # BiasAddGrad(v)
        c = tf.constant(np.arange(1, channels + 1, dtype=np.float32))
        return [db] + tf.gradients(tf.reduce_sum(db * db * c), [v]), [x, v]

    return build


@pytest.mark.parametrize(
    "data_format,x_shape",
    [("NHWC", [2, 3, 2, 4]), ("NCHW", [2, 4, 3, 2]), ("NCHW", [3, 4, 5]), ("NHWC", [3, 5])],
    ids=["NHWC", "NCHW", "NCW", "NC_last"],
)
def test_bias_add_second_order_gradient_matches_tensorflow(data_format, x_shape):
    rng = np.random.RandomState(7)
    feeds = [rng.randn(*x_shape).astype(np.float32), rng.randn(*x_shape).astype(np.float32)]
    build = _bias_build(data_format, x_shape)
    ours, theirs = _run(client, build, feeds), _run(tf1, build, feeds)
    assert ours[1].shape == theirs[1].shape == tuple(x_shape)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_bias_add_grad_grad_nchw_is_the_channel_tiled_gradient():
    """d/dv of sum(c * BiasAddGrad(v)) is c broadcast along axis 1 (NCHW)."""
    c_value = np.array([1.0, -2.0, 5.0], np.float32)
    with client.Graph().as_default() as g:
        v = client.placeholder(client.float32, [2, 3, 2, 2], name="v")
        bgrad = apply_op("BiasAddGrad", [v], {"data_format": "NCHW"}).outputs[0]
        (dv,) = client.gradients(client.reduce_sum(bgrad * client.constant(c_value)), [v])
        with client.Session(graph=g) as sess:
            got = sess.run(dv, {v: np.zeros([2, 3, 2, 2], np.float32)})
    want = np.broadcast_to(c_value[None, :, None, None], (2, 3, 2, 2))
    np.testing.assert_array_equal(got, want)
