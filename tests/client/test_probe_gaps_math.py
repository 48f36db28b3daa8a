"""Client, the TF1 probe's math gaps: tf.sort/argsort, tf.math.reduce_variance/reduce_std,
tf.meshgrid/broadcast_dynamic_shape, tf.bitwise.*, tf.fft/ifft, tf.angle, tf.math.polyval
and tf.math.accumulate_n build TensorFlow's graph node for node and run to its values
(and gradients where TF has one)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from tests.client.test_graph_sweep import build_both, graph_diff  # noqa: E402
from tests.client.tf1_oracle import assert_close, run_both  # noqa: E402

RNG = np.random.default_rng(11)
X = RNG.standard_normal((2, 3, 4))
IX = np.array([[3, -1, 4, -7], [9, 2, 6, 5]], np.int32)
UX = np.array([[3, 1, 4, 255], [9, 0, 6, 5]], np.uint8)


def _sort(api):
    x = api.constant(X)
    return [
        api.sort(x, direction="DESCENDING"),
        api.sort(x, axis=1),
        api.argsort(x, axis=0, direction="DESCENDING"),
        api.argsort(x),
        api.sort(api.constant(IX)),
        api.argsort(api.constant(IX), axis=0),
        api.sort(api.constant(UX), axis=-2),
    ]


def _moments(api):
    x = api.constant(X)
    z = api.complex(x, 2.0 * x)
    return [
        api.math.reduce_std(x),
        api.math.reduce_variance(x, 0),
        api.math.reduce_std(x, axis=[1, 2], keepdims=True),
        api.math.reduce_variance(z, axis=-1),
    ]


def _meshgrid(api):
    a, b = api.meshgrid([1, 2, 3], [4, 5])
    c, d, e = api.meshgrid([1.0, 2.0], [3.0, 4.0, 5.0], [6.0], indexing="ij")
    return [a, b, c, d, e, api.broadcast_dynamic_shape([3, 1], [1, 4])]


def _bitwise(api):
    a = api.constant([5, 12, -3])
    b = api.bitwise
    return [
        b.bitwise_and(a, 6),
        b.bitwise_or(a, 3),
        b.bitwise_xor(a, 10),
        b.left_shift(a, 1),
        b.right_shift(a, 2),
        b.invert(a),
    ]


def _fft(api):
    z = api.complex(api.constant(X), api.constant(-X))
    return [api.fft(z), api.ifft(z), api.fft2d(z), api.ifft3d(z)]


def _angle(api):
    z = api.complex(api.constant([1.0, 2.0]), api.constant([3.0, -1.0]))
    return [api.angle(z), api.math.angle(api.constant([-1.5, 0.0, 2.0]))]


def _polyval(api):
    x = api.constant(X.astype(np.float32))
    return [
        api.math.polyval([1.0, 2.0, 3.0], x),
        api.math.polyval([], x),
        api.math.polyval([4.0], x),
    ]


def _accumulate(api):
    xs = [api.constant(X), api.constant(X * 2), api.constant(X * 3)]
    return [api.math.accumulate_n(xs), api.math.accumulate_n(xs[:1], name="one")]


BUILDS = {
    "sort": _sort,
    "moments": _moments,
    "meshgrid": _meshgrid,
    "bitwise": _bitwise,
    "fft": _fft,
    "angle": _angle,
    "polyval": _polyval,
    "accumulate": _accumulate,
}


@pytest.mark.parametrize("case", sorted(BUILDS))
def test_graph_matches_tensorflow(case):
    ours, theirs = build_both(BUILDS[case])
    assert graph_diff(ours, theirs) == []


@pytest.mark.parametrize("case", sorted(BUILDS))
def test_values_match_tensorflow(case):
    def build(api):
        outs = BUILDS[case](api)
        return lambda sess: sess.run(outs)

    ours, theirs, _, _ = run_both(build)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


def test_sort_and_moment_gradients_match_tensorflow():
    def build(api):
        x = api.constant(X)
        y = api.reduce_sum(api.sort(x, axis=1) * X) + api.math.reduce_std(x)
        y += api.reduce_sum(api.math.polyval([np.array(c) for c in (1.0, 2.0, 3.0)], x))
        (g,) = api.gradients(y, [x])
        return lambda sess: sess.run(g)

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


def test_bad_arguments_raise_tensorflows_errors():
    import client

    with client.Graph().as_default():
        x = client.constant(X)
        with pytest.raises(ValueError, match="direction"):
            client.sort(x, direction="UP")
        with pytest.raises(ValueError, match="constant scalar"):
            client.sort(x, axis=[0, 1])
        with pytest.raises(TypeError, match="integer type"):
            client.math.reduce_variance(client.constant(IX))
        with pytest.raises(ValueError, match="indexing"):
            client.meshgrid([1], [2], indexing="yx")
        with pytest.raises(ValueError, match="list type"):
            client.math.polyval((1.0,), x)
        with pytest.raises(ValueError, match="at least one Tensor"):
            client.math.accumulate_n([])


@pytest.mark.parametrize("k", [1, 3])
def test_top_k_gradient_matches_tensorflow(k):
    def build(api):
        x = api.constant(X)
        values, _ = api.nn.top_k(x, k=k)
        (g,) = api.gradients(api.reduce_sum(values * values), [x])
        return lambda sess: sess.run(g)

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)
