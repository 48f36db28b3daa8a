"""Client random ops and initializers vs tensorflow.compat.v1: the same program builds
the same random nodes (names, op types, seed attrs) and, run, gives TensorFlow's values
bit for bit (the orthogonal initializer within float tolerance: its QR is LAPACK's here,
Eigen's in TensorFlow)."""

from __future__ import annotations

import numpy as np
import pytest

import client

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True

RANDOM_OPS = {
    "RandomUniform",
    "RandomStandardNormal",
    "TruncatedNormal",
    "RandomUniformInt",
    "RandomShuffle",
    "Multinomial",
    "RandomGamma",
    "RandomPoissonV2",
    "StatelessRandomGetKeyCounter",
    "StatelessRandomUniformV2",
    "StatelessRandomNormalV2",
    "StatelessTruncatedNormalV2",
    "StatelessRandomUniformIntV2",
    "StatelessRandomUniformFullIntV2",
    "StatelessMultinomial",
    "StatelessRandomGammaV3",
    "StatelessRandomPoisson",
    "UniformCandidateSampler",
    "LogUniformCandidateSampler",
    "FixedUnigramCandidateSampler",
    "AllCandidateSampler",
}


def _random_nodes(graph_def) -> list[tuple]:
    return sorted(
        (n.name, n.op, n.attr["seed"].i, n.attr["seed2"].i)
        for n in graph_def.node
        if n.op in RANDOM_OPS
    )


def _initializer_nodes(graph_def) -> list[tuple]:
    return sorted((n.name, n.op) for n in graph_def.node if "/Initializer/" in n.name)


def run_both(build, feeds=None):
    """Builds `build(tf)` with client and TensorFlow; returns per side (random nodes,
    initializer nodes, fetched values over two runs)."""
    out = []
    for tf in (client, tf1):
        g = tf.Graph()
        with g.as_default():
            fetches = build(tf)
            gd = g.as_graph_def()
            with tf.Session(graph=g) as sess:
                init = tf.global_variables_initializer()
                sess.run(init)
                values = [sess.run(fetches, feeds(g) if feeds else None) for _ in range(2)]
        out.append((_random_nodes(gd), _initializer_nodes(gd), values))
    return out


def assert_same(ours, theirs, exact=True):
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    for a_run, b_run in zip(ours[2], theirs[2]):
        for a, b in zip(a_run, b_run):
            a, b = np.asarray(a), np.asarray(b)
            assert a.dtype == b.dtype and a.shape == b.shape
            if exact:
                np.testing.assert_array_equal(a, b)
            else:
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


INITIALIZERS = {
    "default": lambda tf: None,
    "glorot_uniform": lambda tf: tf.glorot_uniform_initializer(),
    "glorot_normal": lambda tf: tf.glorot_normal_initializer(),
    "he_normal": lambda tf: tf.initializers.he_normal(),
    "he_uniform": lambda tf: tf.initializers.he_uniform(seed=3),
    "lecun_normal": lambda tf: tf.initializers.lecun_normal(),
    "lecun_uniform": lambda tf: tf.initializers.lecun_uniform(),
    "vs_fan_out_untruncated": lambda tf: tf.variance_scaling_initializer(
        2.0, "fan_out", "untruncated_normal"
    ),
    "vs_fan_avg_uniform": lambda tf: tf.initializers.variance_scaling(
        0.5, "fan_avg", "uniform", seed=11
    ),
    "truncated_normal": lambda tf: tf.truncated_normal_initializer(stddev=0.1),
    "random_normal": lambda tf: tf.random_normal_initializer(1.0, 2.0),
    "random_uniform": lambda tf: tf.random_uniform_initializer(-1.0, 2.0),
    "random_uniform_default": lambda tf: tf.initializers.random_uniform(),
    "uniform_unit_scaling": lambda tf: tf.uniform_unit_scaling_initializer(1.5),
}


@pytest.mark.parametrize("graph_seed", [None, 1, 0])
@pytest.mark.parametrize("kind", sorted(INITIALIZERS))
def test_initializers(kind, graph_seed):
    def build(tf):
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        make = INITIALIZERS[kind]
        vs = [
            tf.get_variable(f"v{i}", shape, initializer=make(tf))
            for i, shape in enumerate([[3, 4], [7], [3, 3, 2, 5], [1, 1]])
        ]
        return [v.read_value() if hasattr(v, "read_value") else v for v in vs]

    if graph_seed is None and kind not in ("he_uniform", "vs_fan_avg_uniform"):
        # no seed anywhere: both sides draw from the OS; only the graphs compare
        ours, theirs = run_both(build)
        assert ours[:2] == theirs[:2]
        return
    ours, theirs = run_both(build)
    assert_same(ours, theirs)


def test_orthogonal_initializer():
    def build(tf):
        tf.set_random_seed(5)
        return [
            tf.get_variable(f"q{i}", s, initializer=tf.orthogonal_initializer(gain=2.0))
            for i, s in enumerate([[4, 4], [3, 6], [2, 3, 4]])
        ]

    ours, theirs = run_both(build)
    assert_same(ours, theirs, exact=False)


def test_random_ops_and_dropout():
    def build(tf):
        tf.set_random_seed(1234)
        x = tf.ones([5, 7])
        keep = tf.placeholder_with_default(0.75, [], name="keep")
        return [
            tf.random_uniform([6], maxval=9, dtype=tf.int32),
            tf.random_uniform([2, 3], 0, 5.0, seed=2),
            tf.random_normal([5], 3.0, 0.5, dtype=tf.float64),
            tf.truncated_normal([9]),
            tf.random_shuffle(tf.range(11)),
            tf.multinomial([[0.0, 1.0, 3.0]], 5),
            tf.random.categorical([[1.0, 1.0], [0.0, 2.0]], 3, dtype=tf.int32),
            tf.nn.dropout(x, rate=0.4),
            tf.nn.dropout(x, keep_prob=0.8, seed=7),
            tf.nn.dropout(x, keep_prob=keep),
            tf.nn.dropout(x, rate=0.5, noise_shape=[5, 1]),
            tf.random.stateless_uniform([3, 2], seed=[1, 2]),
            tf.random.stateless_uniform([4], seed=[3, 4], minval=-5, maxval=5, dtype=tf.int64),
            tf.random.stateless_normal([3], seed=[5, 6], mean=1.0, stddev=2.0),
            tf.random.stateless_truncated_normal([5], seed=[7, 8]),
            tf.random_gamma([3, 2], [0.5, 1.0, 4.0], beta=[[2.0], [1.0]], seed=9),
            tf.random.gamma([4], 2.5, dtype=tf.float64),
            tf.random_poisson([1.5, 30.0], [3]),
            tf.random.poisson(4.0, [2, 2], dtype=tf.int64, seed=3),
            tf.random.stateless_gamma([3, 2], seed=[4, 5], alpha=[1.5, 0.5], beta=2.0),
            tf.random.stateless_poisson([4], seed=[6, 7], lam=12.0),
        ]

    ours, theirs = run_both(build)
    assert_same(ours, theirs)


def test_candidate_samplers():
    def build(tf):
        tf.set_random_seed(99)
        true = tf.constant([[1, 4], [0, 7], [3, 3]], dtype=tf.int64)
        sampled = [
            tf.nn.uniform_candidate_sampler(true, 2, 5, True, 10),
            tf.nn.log_uniform_candidate_sampler(true, 2, 6, False, 1000, seed=4),
            tf.nn.fixed_unigram_candidate_sampler(
                true, 2, 4, True, 8, unigrams=[1.0, 2, 3, 4, 5, 6, 7, 8], distortion=0.5
            ),
            tf.nn.all_candidate_sampler(true, 2, 8, True),
        ]
        hits = tf.nn.compute_accidental_hits(true, sampled[0][0], num_true=2)
        return [t for group in sampled for t in group] + list(hits)

    ours, theirs = run_both(build)
    assert ours[0] == theirs[0]
    for a_run, b_run in zip(ours[2], theirs[2]):
        for a, b in zip(a_run, b_run):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
