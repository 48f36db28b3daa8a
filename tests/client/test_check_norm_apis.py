"""Client APIs TensorFlow's compat.v1 has and the graph sweep covers: check_numerics,
ensure_shape, nn.fused_batch_norm (training and inference), math.reciprocal, and
reduce_prod's gradient (cumprods, exact with zeros), gather_nd's static shape and
conv2d_transpose, compared value for value with TF.
(Their GraphDefs: tests/client/test_graph_sweep.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.tf1_oracle import assert_close, run_both

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1

RNG = np.random.RandomState(7)
X4 = RNG.randn(2, 3, 2, 3).astype(np.float32)
SCALE = np.array([1.5, -0.5, 2.0], np.float32)
OFFSET = np.array([0.1, 0.2, -0.3], np.float32)
MEAN = np.array([0.2, -0.1, 0.4], np.float32)
VAR = np.array([1.2, 0.7, 2.5], np.float32)


def _weights(shape):
    return np.arange(1, int(np.prod(shape)) + 1, dtype=np.float32).reshape(shape) / 10.0


@pytest.mark.parametrize("is_training", [True, False])
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_fused_batch_norm_and_its_gradients_match_tensorflow(is_training, data_format):
    def build(api):
        x = api.constant(X4)
        s, o = api.constant(SCALE), api.constant(OFFSET)
        stats = {} if is_training else {"mean": MEAN, "variance": VAR}
        y, mean, var = api.nn.fused_batch_norm(
            x, s, o, epsilon=0.01, data_format=data_format, is_training=is_training, **stats
        )
        grads = api.gradients(api.reduce_sum(y * _weights(X4.shape)), [x, s, o])
        return lambda sess: sess.run([y, mean, var, grads])

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-4, atol=1e-4)


def test_fused_batch_norm_inference_needs_the_statistics():
    with client.Graph().as_default():
        x = client.constant(X4)
        with pytest.raises(ValueError, match="Both `mean` and `variance` must be a 1D tensor"):
            client.nn.fused_batch_norm(x, SCALE, OFFSET, is_training=False)


def test_reciprocal_and_check_numerics_values_and_gradients_match_tensorflow():
    v = np.array([[0.5, -2.0, 4.0], [1.0, -0.25, 3.0]], np.float32)

    def build(api):
        x = api.constant(v)
        r = api.math.reciprocal(x)
        c = api.debugging.check_numerics(r * 3.0, "bad")
        c1 = api.check_numerics(x, "also")
        grads = api.gradients(api.reduce_sum(c * _weights(v.shape)) + api.reduce_sum(c1), x)
        return lambda sess: sess.run([r, c, grads])

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs)


def test_check_numerics_fails_with_tensorflows_error_on_nan():
    def run(api):
        with api.Graph().as_default():
            x = api.placeholder(api.float32, [2])
            y = api.debugging.check_numerics(x, "bad value")
            with api.Session() as sess, pytest.raises(api.errors.InvalidArgumentError) as e:
                sess.run(y, {x: np.array([1.0, np.nan], np.float32)})
        return e.value.message

    assert "bad value : Tensor had NaN values" in run(client)
    assert "bad value : Tensor had NaN values" in run(tf1)


def test_ensure_shape_sets_the_static_shape_and_checks_at_run_time():
    def run(api):
        with api.Graph().as_default():
            x = api.placeholder(api.float32, [None, 3])
            y = api.ensure_shape(x, [2, None])
            g = api.gradients(api.reduce_sum(y * 2.0), x)[0]
            with api.Session() as sess:
                ok = sess.run([y, g], {x: np.ones([2, 3], np.float32)})
                with pytest.raises(api.errors.InvalidArgumentError):
                    sess.run(y, {x: np.ones([4, 3], np.float32)})
        return y.shape.as_list(), ok

    (ours_shape, ours), (tf_shape, theirs) = run(client), run(tf1)
    assert ours_shape == tf_shape == [2, 3]
    assert_close(ours, theirs)


def test_ensure_shape_refuses_an_incompatible_static_shape():
    with client.Graph().as_default():
        x = client.placeholder(client.float32, [2, 3])
        with pytest.raises(ValueError):
            client.ensure_shape(x, [3, 3])


@pytest.mark.parametrize("axis", [None, 0, 1, [0, 2], -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduce_prod_gradient_matches_tensorflow_with_zeros(axis, keepdims):
    v = np.array(
        [[[1.5, 0.0, 2.0], [0.5, -1.0, 3.0]], [[0.0, 0.0, 1.0], [2.0, 0.25, -2.0]]], np.float32
    )

    def build(api):
        x = api.constant(v)
        y = api.reduce_prod(x, axis=axis, keepdims=keepdims)
        g = api.gradients(api.reduce_sum(y * 1.5), x)
        return lambda sess: sess.run([y, g])

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs)


def test_reduce_prod_gradient_with_a_fed_axis_and_shape_matches_tensorflow():
    v = np.arange(1, 13, dtype=np.float32).reshape(2, 3, 2) / 4.0

    def run(api):
        with api.Graph().as_default():
            x = api.placeholder(api.float32, None)
            axis = api.placeholder(api.int32, [None])
            g = api.gradients(api.reduce_prod(x, axis), x)[0]
            with api.Session() as sess:
                return sess.run(g, {x: v, axis: [2, 0]})

    assert_close(run(client), run(tf1))


@pytest.mark.parametrize(
    "params_shape,indices",
    [((2, 3), [[0, 1], [1, 2]]), ((2, 3, 4), [[1], [0]]), ((2, 3), [[[0, 2]]]), ((4,), [[3]])],
)
def test_gather_nd_static_shape_and_gradient_match_tensorflow(params_shape, indices):
    v = np.arange(np.prod(params_shape), dtype=np.float32).reshape(params_shape) / 3.0

    def build(api):
        x = api.constant(v)
        y = api.gather_nd(x, indices)
        shapes.append(y.shape.as_list())
        g = api.gradients(api.reduce_sum(y * y), x)
        return lambda sess: sess.run([y, g])

    shapes: list = []
    ours, theirs, _, _ = run_both(build)
    assert shapes[0] == shapes[1]
    assert_close(ours, theirs)


def test_conv2d_transpose_and_its_gradients_match_tensorflow():
    x = RNG.randn(1, 4, 4, 3).astype(np.float32)
    w = RNG.randn(2, 2, 2, 3).astype(np.float32)

    def build(api):
        xt, wt = api.constant(x), api.constant(w)
        y = api.nn.conv2d_transpose(xt, wt, [1, 4, 4, 2], [1, 1, 1, 1], "SAME")
        grads = api.gradients(api.reduce_sum(y * _weights([1, 4, 4, 2])), [xt, wt])
        return lambda sess: sess.run([y, grads])

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-4, atol=1e-4)
