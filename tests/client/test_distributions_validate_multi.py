"""Client, tf.compat.v1.distributions with validate_args=True, the checks on several
events: Categorical probs summing to 1 (assert_near) and of unknown event size
(assert_rank_at_least and friends), float events that must be integral
(assert_integer_form), Multinomial's total_count and counts, Dirichlet's concentration
and samples. Against tensorflow.compat.v1: the same node names, the same values for good
inputs, TF's InvalidArgumentError and message for bad ones, TF's build-time errors."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import client
from tests.client.test_check_ops_near_rank import same_assert_message
from tests.client.tf1_oracle import run_both, tf1

pytest.importorskip("tensorflow")


def _program(make, feeds):
    """build(tf) for run_both: `make(tf)` -> (placeholders, fetches); each feed's result,
    or the InvalidArgumentError's message."""

    def build(tf):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            phs, fetches = make(tf)

        def steps(sess):
            out = []
            for values in feeds:
                try:
                    out.append(sess.run(fetches, dict(zip(phs, values))))
                except tf.errors.InvalidArgumentError as e:
                    out.append(e.message)
            return out

        return steps

    return build


def _check(make, feeds, expect, same_check=lambda m: m):
    """Same node names; per feed, values equal to TF's or the same failure, whose
    message holds `expect[i]` (None: the run succeeds). `same_check` maps a message to
    one whose node names no longer tell apart checks that are built twice (both fail;
    which one the executor meets first is not part of the contract)."""
    ours, theirs, names, tf_names = run_both(_program(make, feeds))
    assert names == tf_names
    for a, b, want in zip(ours, theirs, expect):
        if want is None:
            assert not isinstance(b, str), b
            for x, y in zip(a, b):
                rtol = 1e-6 if np.asarray(y).dtype == np.float32 else 1e-12
                np.testing.assert_allclose(x, y, rtol=rtol)
        else:
            assert isinstance(a, str) and isinstance(b, str), (a, b)
            assert same_assert_message(same_check(a), same_check(b)), (a, b)
            assert want in a


def test_categorical_probs_must_sum_to_one():
    def make(tf):
        p = tf.placeholder(tf.float64, [2, 3], name="p")
        k = tf.placeholder(tf.int32, [2], name="k")
        d = tf.distributions.Categorical(probs=p, validate_args=True)
        return (p, k), [d.log_prob(k), d.cdf(k), d.entropy()]

    good = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    negative = np.array([[-0.1, 0.6, 0.5], [0.1, 0.1, 0.8]])  # sums to 1
    feeds = [(good, [2, 0]), (good * 1.1, [2, 0]), (negative, [1, 1])]
    _check(make, feeds, [None, "probs does not sum to 1.", "did not hold element-wise"])


def test_categorical_of_unknown_event_size():
    def make(tf):
        logits = tf.placeholder(tf.float32, None, name="logits")
        k = tf.placeholder(tf.int32, None, name="k")
        d = tf.distributions.Categorical(logits=logits, validate_args=True)
        return (logits, k), [d.log_prob(k), d.probs]

    feeds = [
        (np.array([[0.1, 0.7, -1.0]], np.float32), [1]),
        (np.array([[0.5], [0.25]], np.float32), [0, 0]),
        (np.float32(0.5), 0),
    ]
    # A scalar fails as in TF: the Categorical's StridedSlice of its shape (one of two,
    # both out of bounds) before the rank check.
    expect = [None, "at least 2 events.", "slice index -1 of dimension 0 out of bounds."]
    _check(make, feeds, expect, lambda m: m.replace("strided_slice_1", "strided_slice"))


def test_categorical_float_events_must_be_int32_equivalent():
    def make(tf):
        k = tf.placeholder(tf.float32, [2], name="k")
        d = tf.distributions.Categorical(logits=[[0.3, -0.2, 1.0]] * 2, validate_args=True)
        return (k,), [d.log_prob(k), d.cdf(k)]

    feeds = [([2.0, 1.0],), ([0.5, 1.0],), ([-1.0, 1.0],)]
    _check(make, feeds, [None, "Elements must be int32-equivalent.", "must be non-negative."])


def test_bernoulli_float_events_must_be_bool_equivalent():
    def make(tf):
        x = tf.placeholder(tf.float64, [2], name="x")
        d = tf.distributions.Bernoulli(probs=[0.25, 0.5], validate_args=True)
        return (x,), [d.log_prob(x)]

    feeds = [([1.0, 0.0],), ([1.0, 0.5],), ([2.0, 0.0],)]
    _check(make, feeds, [None, "Elements must be bool-equivalent.", "bool-equivalent"])


def test_multinomial_total_count_and_counts():
    def make(tf):
        n = tf.placeholder(tf.float64, [], name="n")
        c = tf.placeholder(tf.float64, [3], name="c")
        p = tf.placeholder(tf.float64, [3], name="p")
        d = tf.distributions.Multinomial(total_count=n, probs=p, validate_args=True)
        return (n, c, p), [d.log_prob(c), d.mean()]

    p = np.array([0.2, 0.3, 0.5])
    feeds = [
        (4.0, [1.0, 1.0, 2.0], p),
        (4.0, [1.0, 1.0, 1.0], p),
        (4.0, [1.5, 0.5, 2.0], p),
        (-4.0, [1.0, 1.0, 2.0], p),
        (4.0, [1.0, 1.0, 2.0], p * 2),
    ]
    expect = [
        None,
        "counts must sum to `self.total_count`",
        "cannot contain fractional components.",
        "must be non-negative.",
        "probs does not sum to 1.",
    ]
    # log_prob checks the counts twice (TF's _log_unnormalized_prob and
    # _log_normalization): the two differ only in node names.
    _check(make, feeds, expect, lambda m: re.sub(r"\(\S+:0\)", "(t)", m))


def test_dirichlet_concentration_and_samples():
    def make(tf):
        a = tf.placeholder(tf.float64, None, name="a")
        x = tf.placeholder(tf.float64, [None], name="x")
        d = tf.distributions.Dirichlet(a, validate_args=True)
        return (a, x), [d.log_prob(x)]

    a = np.array([1.5, 2.0, 0.5])
    feeds = [
        (a, [0.2, 0.3, 0.5]),
        (a, [0.2, 0.3, 0.6]),
        (a, [-0.2, 0.7, 0.5]),
        (-a, [0.2, 0.3, 0.5]),
        (np.array([2.0]), [1.0]),
        (np.float64(2.0), [1.0]),
    ]
    expect = [
        None,
        "sample last-dimension must sum to `1`",
        "samples must be positive",
        "Concentration parameter must be positive.",
        "Concentration parameter must have event_size >= 2.",
        # TF's shape(concentration)[-1] fails before the rank check runs.
        "slice index -1 of dimension 0 out of bounds.",
    ]
    _check(make, feeds, expect)


def test_static_event_checks_raise_while_building_like_tf():
    for api in (client, tf1):
        with api.Graph().as_default(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError, match="at least 1 dimension"):
                api.distributions.Categorical(probs=0.5, validate_args=True)
            with pytest.raises(ValueError, match="must have rank at least 1"):
                api.distributions.Dirichlet(2.0, validate_args=True)
            with pytest.raises(api.errors.InvalidArgumentError, match="non-negative"):
                api.distributions.Multinomial(-1.0, probs=[0.5, 0.5], validate_args=True)
