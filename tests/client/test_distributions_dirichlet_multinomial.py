"""Client, tf.compat.v1.distributions.DirichletMultinomial: log_prob, prob, mean,
variance, stddev, covariance, seeded samples and gradients give TensorFlow 2.21's values
with TF's node names; with validate_args bad concentrations and counts fail at run time
with TF's InvalidArgumentError and message."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.client.tf1_oracle import forward_names, run_both

pytest.importorskip("tensorflow")

# a scalar total_count: TF's mean multiplies it with [batch, K] as it is
TOTAL = np.array(5.0)
CONC = np.array([[0.5, 1.5, 2.0], [3.0, 0.25, 1.0]])
COUNTS = np.array([[1.0, 3.0, 1.0], [0.0, 4.0, 1.0]])


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def test_methods_match_tensorflow():
    def build(api):
        def make():
            d = api.distributions.DirichletMultinomial(TOTAL, CONC)
            return [
                d.log_prob(COUNTS),
                d.prob(COUNTS),
                d.mean(),
                d.variance(),
                d.stddev(),
                d.covariance(),
                d.batch_shape_tensor(),
                d.event_shape_tensor(),
            ]

        outs = _quiet(make)
        return lambda sess: sess.run(outs)

    ours, theirs, names, tf_names = run_both(build)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert names == tf_names


def test_static_shapes_match_tensorflow():
    import tensorflow as tf

    import client

    for api in (client, tf.compat.v1):
        with api.Graph().as_default():
            d = _quiet(lambda a=api: a.distributions.DirichletMultinomial(TOTAL, CONC))
            assert d.batch_shape.as_list() == [2]
            assert d.event_shape.as_list() == [3]
            assert d.dtype == api.float64


def test_seeded_samples_match_tensorflow():
    def build(api):
        api.set_random_seed(1)
        # float32: TF's sampler one-hots in float32 (float64 fails in TF itself)
        d = _quiet(
            lambda: api.distributions.DirichletMultinomial(np.float32(5.0), CONC.astype(np.float32))
        )
        s = d.sample(4, seed=12)
        return lambda sess: sess.run(s)

    ours, theirs, names, tf_names = run_both(build)
    assert ours.shape == theirs.shape == (4, 2, 3)
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(ours.sum(-1), np.full((4, 2), 5.0))
    assert names == tf_names


def test_gradients_match_tensorflow():
    def build(api):
        conc = api.constant(CONC)
        total = api.constant(TOTAL)
        d = _quiet(lambda: api.distributions.DirichletMultinomial(total, conc))
        loss = api.reduce_sum(d.log_prob(COUNTS)) + api.reduce_sum(d.covariance())
        grads = api.gradients(loss, [conc, total])
        return lambda sess: sess.run([loss] + grads)

    ours, theirs, _, _ = run_both(build)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "conc, counts",
    [
        (CONC, COUNTS),  # valid
        (-CONC, COUNTS),  # concentration not positive
        (CONC, COUNTS + 0.5),  # fractional counts
        (CONC, COUNTS * 2),  # counts not summing to total_count
        (CONC, -COUNTS),  # negative counts
    ],
)
def test_validate_args_like_tensorflow(conc, counts):
    def build(api):
        c = api.placeholder(api.float64, [None, 3], name="c")
        x = api.placeholder(api.float64, [None, 3], name="x")
        d = _quiet(lambda: api.distributions.DirichletMultinomial(TOTAL, c, validate_args=True))
        out = d.log_prob(x)

        def steps(sess):
            try:
                return sess.run(out, {c: conc, x: counts})
            except api.errors.InvalidArgumentError as e:
                return type(e).__name__, e.message

        return steps

    ours, theirs, names, tf_names = run_both(build)
    if isinstance(theirs, tuple):
        # TF's message: "Graph execution error:", node context, then the assertion's data
        # ("assertion failed: [...]"), the line the client's message starts with.
        assert ours[0] == theirs[0] == "InvalidArgumentError"
        first = ours[1].split("\n")[0]
        assert first.startswith("assertion failed: [")
        assert first in theirs[1].split("\n")
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    assert names == tf_names


@pytest.mark.parametrize("known", [True, False])
def test_matrix_set_diag_gradient_matches_tensorflow(known):
    """The covariance's MatrixSetDiagV3 gradient, with the diagonal's shape known while
    building and not (TF's conds over k)."""
    m = np.arange(12.0).reshape(2, 2, 3)
    diag = np.array([[1.0, -2.0], [0.5, 3.0]])

    def build(api):
        x = api.constant(m)
        d = api.placeholder(api.float64, [2, 2] if known else None, name="d")
        y = api.linalg.set_diag(x, d) * api.constant(m + 1)
        grads = api.gradients(api.reduce_sum(y), [x, d])
        return lambda sess: sess.run(grads, {d: diag})

    ours, theirs, names, tf_names = run_both(build)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
    # unknown: TF 2.21 builds the gradient's conds as functional If ops, ours as v1 conds
    assert (names == tf_names) if known else (forward_names(names) == forward_names(tf_names))
