"""Client, tf.compat.v1.distributions with validate_args=True: the parameter assertions
TF builds (a positive scale, rate, df or concentration; low < high;
Bernoulli probs in [0, 1] and its events 0 or 1)
sit in the same places (node names equal), pass for good parameters and fail at
run time for bad ones with TF's InvalidArgumentError and message."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import client
from tests.client.tf1_oracle import run_both, tf1

pytest.importorskip("tensorflow")

GOOD = np.array([0.5, 2.0])
BAD = np.array([0.5, -2.0])

# family -> constructor of (a, b) placeholders, with validate_args
FAMILIES = {
    "Normal": lambda d, a, b: d.Normal(a, b, validate_args=True),
    "Laplace": lambda d, a, b: d.Laplace(a, b, validate_args=True),
    "Uniform": lambda d, a, b: d.Uniform(a - 3.0, b, validate_args=True),
    "Gamma": lambda d, a, b: d.Gamma(a, b, validate_args=True),
    "Exponential": lambda d, a, b: d.Exponential(b, validate_args=True),
    "StudentT": lambda d, a, b: d.StudentT(b, a, a, validate_args=True),
    "Beta": lambda d, a, b: d.Beta(a, b, validate_args=True),
    "Bernoulli": lambda d, a, b: d.Bernoulli(probs=b / 4.0, validate_args=True),
}


def _build(family, fed):
    def build(tf):
        a = tf.placeholder(tf.float64, [2], name="a")
        b = tf.placeholder(tf.float64, [None], name="b")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            d = FAMILIES[family](tf.distributions, a, b)
            value = np.array([0, 1]) if family == "Bernoulli" else np.array([0.25, 0.75])
            out = d.log_prob(value)

        def steps(sess):
            try:
                return sess.run(out, {a: GOOD, b: fed})
            except tf.errors.InvalidArgumentError as e:
                return type(e).__name__, e.message

        return steps

    return build


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_valid_parameters_pass_like_tf(family):
    ours, theirs, names, tf_names = run_both(_build(family, GOOD))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    assert names == tf_names


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_invalid_parameters_fail_like_tf(family):
    bad = np.array([2.0, 6.0]) if family == "Bernoulli" else BAD  # probs 0.5, 1.5
    ours, theirs, _, _ = run_both(_build(family, bad))
    assert isinstance(theirs, tuple), theirs
    assert ours[0] == theirs[0] == "InvalidArgumentError"
    # TF's message: "Graph execution error:", then node context and the assertion's
    # data ("assertion failed: [...]"), the line the client's message starts with.
    first = ours[1].split("\n")[0]
    assert first.startswith("assertion failed: [")
    assert first in theirs[1].split("\n")


def test_constant_bad_parameter_raises_while_building_like_tf():
    for api in (client, tf1):
        with api.Graph().as_default(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(api.errors.InvalidArgumentError, match="did not hold"):
                api.distributions.Normal(0.0, -1.0, validate_args=True)


def test_bernoulli_event_out_of_range_fails_like_tf():
    def build(tf):
        k = tf.placeholder(tf.int32, [2], name="k")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = tf.distributions.Bernoulli(logits=[0.3, -1.0], validate_args=True).log_prob(k)

        def steps(sess):
            try:
                return sess.run(out, {k: [1, 2]})
            except tf.errors.InvalidArgumentError as e:
                return e.message

        return steps

    ours, theirs, names, tf_names = run_both(build)
    assert ours.split("\n")[0] in theirs.split("\n")
    assert "Elements cannot exceed 1." in ours
    assert names == tf_names


def test_categorical_checks_like_tf():
    def build(tf):
        logits = tf.placeholder(tf.float64, [2, 3], name="logits")
        k = tf.placeholder(tf.int32, [2], name="k")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            d = tf.distributions.Categorical(logits=logits, validate_args=True)
            out = [d.log_prob(k), d.cdf(k)]

        def steps(sess):
            feed = {logits: np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 0.0]])}
            good = sess.run(out, {**feed, k: [2, 0]})
            try:
                sess.run(out, {**feed, k: [2, -1]})
            except tf.errors.InvalidArgumentError as e:
                return good, e.message
            return good, None

        return steps

    ours, theirs, names, tf_names = run_both(build)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    assert ours[1].split("\n")[0] in theirs[1].split("\n")
    assert "Elements must be non-negative." in ours[1]
    assert names == tf_names


def test_categorical_with_one_class_is_refused_like_tf():
    for api in (client, tf1):
        with api.Graph().as_default(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError, match="at least 2 events"):
                api.distributions.Categorical(logits=[[0.5]], validate_args=True)
