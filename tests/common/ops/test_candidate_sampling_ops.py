"""Candidate sampling kernels against TensorFlow 2.21, value for value: the same seeds
give the same sampled candidates and expected counts over several runs (the sampler's
generator advances per run), with and without unique sampling. Skipped without TF."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import InvalidArgumentError

from .test_philox_oracle import assert_same_bits, tf1_runs_multi
from .test_random_ops import Kernel

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1

TRUE = np.array([[1, 5], [7, 2], [0, 3]], np.int64)


def assert_sampler_matches(op: str, **attrs) -> None:
    theirs = tf1_runs_multi(lambda: getattr(tf1.raw_ops, op)(true_classes=TRUE, **attrs))
    kernel = Kernel(op, [TRUE], **attrs)
    for step, want in enumerate(theirs):
        got = kernel.compute(None, [TRUE])
        for name, a, b in zip(("sampled", "true_expected", "sampled_expected"), got, want):
            assert_same_bits(np.asarray(a), b, f"{op} {attrs} run {step} {name}")


@pytest.mark.parametrize("op", ["UniformCandidateSampler", "LogUniformCandidateSampler"])
@pytest.mark.parametrize("unique", [False, True])
@pytest.mark.parametrize("range_max,num_sampled", [(10, 4), (1000, 7), (64, 9), (8, 8)])
def test_range_samplers(op, unique, range_max, num_sampled):
    assert_sampler_matches(
        op,
        num_true=2,
        num_sampled=num_sampled,
        unique=unique,
        range_max=range_max,
        seed=3,
        seed2=5,
    )


@pytest.mark.parametrize("unique", [False, True])
@pytest.mark.parametrize(
    "extra",
    [
        {"range_max": 8, "unigrams": [1.0, 2.0, 3.0, 4.0, 5.0, 0.5, 0.25, 7.0]},
        {"range_max": 10, "unigrams": [3.0, 1, 1, 1, 9, 2, 2, 0.1, 5, 1], "distortion": 0.75},
        {"range_max": 9, "unigrams": [1.0, 2, 3, 4, 5, 6, 7], "num_reserved_ids": 2},
    ],
    ids=["pow2", "distorted", "reserved"],
)
def test_fixed_unigram(unique, extra):
    assert_sampler_matches(
        "FixedUnigramCandidateSampler",
        num_true=2,
        num_sampled=6,
        unique=unique,
        seed=7,
        seed2=1,
        **extra,
    )


def test_fixed_unigram_from_a_vocabulary_file(tmp_path):
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("".join(f"w{i},{w}\n" for i, w in enumerate([5, 1, 2, 8, 3, 1, 1])))
    assert_sampler_matches(
        "FixedUnigramCandidateSampler",
        num_true=2,
        num_sampled=5,
        unique=True,
        range_max=8,
        vocab_file=str(vocab),
        num_reserved_ids=1,
        seed=2,
        seed2=2,
    )


@pytest.mark.parametrize(
    "op", ["LearnedUnigramCandidateSampler", "ThreadUnsafeUnigramCandidateSampler"]
)
@pytest.mark.parametrize("unique", [False, True])
@pytest.mark.parametrize("range_max,num_sampled", [(10, 4), (1000, 7), (8, 8)])
def test_learned_unigram(op, unique, range_max, num_sampled):
    """Weights learn the true classes after each run: runs 2 and 3 sample from counts."""
    assert_sampler_matches(
        op,
        num_true=2,
        num_sampled=num_sampled,
        unique=unique,
        range_max=range_max,
        seed=3,
        seed2=5,
    )


def test_all_candidate_sampler():
    assert_sampler_matches("AllCandidateSampler", num_true=2, num_sampled=8, unique=True, seed=1)


def test_true_candidates_out_of_range_are_refused_as_tensorflow_does():
    k = Kernel(
        "UniformCandidateSampler", [TRUE], num_true=2, num_sampled=2, unique=False, range_max=7
    )
    with pytest.raises(
        InvalidArgumentError, match=r"`true_candidate` out of range \[0, 7\), received 7"
    ):
        k()


@pytest.mark.parametrize("sampled", [[5, 9, 2, 5, 1], [4, 4, 4], [], [3, 0, 7, 2, 1, 5]], ids=str)
def test_compute_accidental_hits(sampled):
    true = np.array([[1, 5], [7, 2], [5, 3]], np.int64)
    s = np.array(sampled, np.int64)
    want = tf.raw_ops.ComputeAccidentalHits(true_classes=true, sampled_candidates=s, num_true=2)
    got = Kernel("ComputeAccidentalHits", [true, s], num_true=2).compute(None, [true, s])
    for a, b in zip(got, want):
        assert_same_bits(np.asarray(a), b.numpy())


@pytest.mark.parametrize(
    "name",
    [
        "UniformCandidateSampler",
        "LogUniformCandidateSampler",
        "FixedUnigramCandidateSampler",
        "AllCandidateSampler",
        "LearnedUnigramCandidateSampler",
        "ThreadUnsafeUnigramCandidateSampler",
        "ComputeAccidentalHits",
        "Qr",
    ],
)
def test_signature_matches_tensorflow(name):
    from .signatures import assert_signature_matches_tensorflow

    assert_signature_matches_tensorflow(name)
