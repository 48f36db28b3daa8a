"""Client, tf.compat.v1.distributions with shapes known only at run time: Categorical
over logits of unknown static shape (batch rank, event size and batch shape read from
the dynamic shape) and sample() with a fed sample_shape (scalar, vector or unknown
rank: ReduceProd and pick_vector). Values and node names against tensorflow.compat.v1."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.client.tf1_oracle import run_both

pytest.importorskip("tensorflow")

X = np.array([[-2.0, 0.25, 3.0, 1.0], [1.0, -0.5, 0.0, 0.5], [0.3, 0.2, 0.1, 0.0]])


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


@pytest.mark.parametrize("shape", [None, [None, None], [3, None], [None, 4]])
def test_categorical_of_unknown_logits_shape(shape):
    def build(tf):
        tf.set_random_seed(1)
        logits = tf.placeholder(tf.float64, shape, name="logits")
        d = _quiet(lambda: tf.distributions.Categorical(logits=logits))
        k = np.array([2, 0, 3])
        out = [
            d.log_prob(k),
            d.prob(k),
            d.cdf(k),
            d.entropy(),
            d.mode(),
            d.batch_shape_tensor(),
            d.event_size,
            d.sample(5, seed=9),
        ]
        static = [d.batch_shape.as_list() if d.batch_shape.ndims is not None else None]
        return lambda sess: (sess.run(out, {logits: X}), static)

    ours, theirs, names, tf_names = run_both(build)
    assert ours[1] == theirs[1]
    for a, b in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert names == tf_names


SAMPLERS = {
    "Normal": lambda d: d.Normal(np.array([0.0, 1.0]), np.array([1.0, 2.0])),
    "Uniform": lambda d: d.Uniform(np.array([0.0, 1.0]), np.array([1.0, 3.0])),
    "Bernoulli": lambda d: d.Bernoulli(logits=np.array([0.3, -1.0])),
    "Categorical": lambda d: d.Categorical(logits=X[:2]),
    "Dirichlet": lambda d: d.Dirichlet(np.abs(X[:2]) + 0.5),
}

SHAPES = {"scalar": ([], 4), "vector": ([None], [2, 3]), "unknown_rank": (None, [3, 2])}


@pytest.mark.parametrize("family", sorted(SAMPLERS))
@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_sample_with_fed_sample_shape(family, kind):
    shape, fed = SHAPES[kind]

    def build(tf):
        tf.set_random_seed(2)
        n = tf.placeholder(tf.int32, shape, name="n")
        s = _quiet(lambda: SAMPLERS[family](tf.distributions).sample(n, seed=5))
        static = s.shape.ndims
        return lambda sess: (sess.run(s, {n: fed}), static)

    ours, theirs, names, tf_names = run_both(build)
    assert ours[1] == theirs[1]
    assert ours[0].shape == theirs[0].shape
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    assert names == tf_names
