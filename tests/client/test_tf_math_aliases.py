"""Client, tf.math's names for ops built elsewhere, tf.strings.upper/lower and
tf.initializers.identity: each builds TensorFlow's graph node for node (names, ops,
inputs, attrs) and runs to TensorFlow's values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import client
from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, run_both

X = np.array([[0.5, -1.5, 2.0], [0.25, 3.0, -0.75]], np.float32)
IDS = np.array([0, 0, 1], np.int32)

MATH: dict[str, Any] = {
    "log1p": lambda m, x: m.log1p(x * x),
    "erf": lambda m, x: [m.erf(x), m.erfc(x)],
    "lgamma_digamma": lambda m, x: [m.lgamma(x * x + 1), m.digamma(x * x + 1)],
    "trig": lambda m, x: [m.sin(x), m.cos(x), m.tan(x), m.atan2(x, x + 4), m.sinh(x)],
    "round_sign": lambda m, x: [m.round(x), m.rint(x), m.sign(x), m.ceil(x), m.floor(x)],
    "compare": lambda m, x: [m.greater_equal(x, 0.5), m.less_equal(x, 0.5), m.not_equal(x, 2)],
    "nan_inf": lambda m, x: [m.is_nan(x / 0), m.is_inf(x / 0), m.is_finite(x)],
    "segments": lambda m, x: [
        m.segment_sum(x[0], IDS),
        m.segment_mean(x[1], IDS),
        m.unsorted_segment_max(x[0], IDS, 3),
    ],
    "reductions": lambda m, x: [
        m.reduce_logsumexp(x, 1),
        m.reduce_any(x > 1, 0),
        m.reduce_all(x > -1),
        m.count_nonzero(x > 0, 1),
        m.cumprod(x, 1),
    ],
    "arith": lambda m, x: [
        m.add_n([x, x, x]),
        m.truediv(x, 3.0),
        m.floordiv(x, 0.5),
        m.mod(x, 0.7),
        m.squared_difference(x, 1.0),
        m.xlogy(x * x, x * x + 1),
        m.divide_no_nan(x, x - 2),
        m.rsqrt(x * x + 1),
        m.scalar_mul(2.0, x),
    ],
    "nn_names": lambda m, x: [
        m.softmax(x),
        m.log_softmax(x, axis=0),
        m.softplus(x),
        m.l2_normalize(x, 1),
        m.top_k(x, 2),
        m.in_top_k(x, [2, 1], 1),
        m.log_sigmoid(x),
    ],
}


def _diff(build: Any) -> list[str]:
    return graph_diff(*build_both(build))


@pytest.mark.parametrize("name", sorted(MATH))
def test_tf_math_names_match_tensorflow(name: str) -> None:
    def build(api: Any) -> Any:
        out = MATH[name](api.math, api.constant(X))
        return lambda sess: sess.run(out)

    assert _diff(build) == []
    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-6, atol=1e-6)


def test_zero_fraction_values_match_tensorflow() -> None:
    # Values only: TF 2.21 counts zeros in a StatelessIf over int32/int64 sizes, the
    # client takes the mean of (x == 0) (the graphs differ).
    def build(api: Any) -> Any:
        out = api.math.zero_fraction(api.constant(X) * api.constant([[0.0], [1.0]]))
        return lambda sess: sess.run(out)

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-7, atol=0)


def test_math_names_are_the_top_level_functions() -> None:
    # One function, two names, as in TensorFlow: nothing to keep in step.
    assert client.math.log1p is client.log1p
    assert client.math.softmax is client.nn.softmax
    assert client.math.top_k is client.nn.top_k


@pytest.mark.parametrize("encoding", ["", "utf-8"])
def test_strings_upper_lower_match_tensorflow(encoding: str) -> None:
    words = ["Hello", "wORLD", "é ß", ""]

    def build(api: Any) -> Any:
        s = api.constant(words)
        out = [api.strings.upper(s, encoding), api.strings.lower(s, encoding, name="low")]
        return lambda sess: sess.run(out)

    assert _diff(build) == []
    ours, theirs, _, _ = run_both(build)
    assert [list(o) for o in ours] == [list(t) for t in theirs]


@pytest.mark.parametrize("shape,gain", [((3, 3), 1.0), ((2, 4), 0.5), ((4, 2), 2.0)])
def test_identity_initializer_matches_tensorflow(shape: tuple[int, int], gain: float) -> None:
    def build(api: Any) -> Any:
        v = api.get_variable("w", shape, initializer=api.initializers.identity(gain))
        return lambda sess: sess.run(v)

    assert _diff(build) == []
    g = client.Graph()
    with g.as_default():
        v = client.get_variable("w", shape, initializer=client.initializers.identity(gain))
        with client.Session() as sess:
            sess.run(client.global_variables_initializer())
            ours = sess.run(v)
    np.testing.assert_array_equal(ours, gain * np.eye(*shape, dtype=np.float32))


def test_identity_initializer_rejects_non_matrices() -> None:
    with pytest.raises(ValueError, match="two-dimensional"):
        client.initializers.identity()([3])


def _reductions_and_softmax(api: Any) -> Any:
    x = api.placeholder(api.float32, [None, 3], name="x")
    c = api.constant(np.ones((2, 3, 4), np.float32))
    out = [
        api.reduce_logsumexp(x, 1),
        api.reduce_logsumexp(x, keepdims=True),
        api.reduce_logsumexp(x),
        api.count_nonzero(x > 0, 1),
        api.count_nonzero(x),
        api.nn.softmax(c, axis=0),
        api.nn.log_softmax(c, axis=-2, name="ls"),
        api.nn.softmax(x, 0),
        api.nn.top_k(x, 2).values,
        api.nn.in_top_k(x, [2, 1], 1),
        api.truediv(x, 3.0),
        api.div(x, 2.0),
    ]
    out += api.gradients(api.reduce_logsumexp(x, 1), x)
    out += api.gradients(api.nn.softmax(x, 0), x)
    return x, out


def test_reductions_softmax_axes_top_k_build_tensorflow_graphs() -> None:
    # reduce_logsumexp as in TF 2.21 (SelectV2 on IsFinite, Shape + Reshape), a bool
    # count_nonzero without NotEqual, softmax on another axis through built perms.
    assert _diff(lambda api: _reductions_and_softmax(api)) == []


def test_reductions_softmax_axes_top_k_values_match_tensorflow() -> None:
    feed = np.array([[0.5, -np.inf, 2.0], [-np.inf, -np.inf, -np.inf]], np.float32)

    def build(api: Any) -> Any:
        x, out = _reductions_and_softmax(api)
        return lambda sess: sess.run(out, {x: feed})

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-6, atol=1e-6)


def test_softmax_axis_out_of_range_is_tensorflow_error() -> None:
    with client.Graph().as_default(), pytest.raises(client.errors.InvalidArgumentError) as e:
        client.nn.softmax(client.constant(X), axis=2)
    assert "`dim` must be in the range [-2, 2)" in str(e.value)


def _masks(api: Any) -> Any:
    x = api.constant(np.arange(24.0).reshape(2, 3, 4))
    p = api.placeholder(api.float32, [None, 4], name="p")
    return p, [
        api.boolean_mask(x, x > 5),
        api.boolean_mask(x, [True, False]),
        api.boolean_mask(x, [[True, False, True], [False, False, True]]),
        api.boolean_mask(x, [True, False, True, True], axis=2),
        api.boolean_mask(p, p > 0),
    ]


def test_boolean_mask_of_several_dims_matches_tensorflow() -> None:
    # A mask of rank > 1 flattens the masked dims first (it used to fail to squeeze).
    assert _diff(lambda api: _masks(api)) == []

    def build(api: Any) -> Any:
        p, out = _masks(api)
        return lambda sess: sess.run(out, {p: X.reshape(3, 2).repeat(2, 1)})

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=0, atol=0)


def test_boolean_mask_rejects_a_scalar_mask() -> None:
    with client.Graph().as_default(), pytest.raises(ValueError, match="mask cannot be scalar"):
        client.boolean_mask(client.constant([1, 2]), True)
