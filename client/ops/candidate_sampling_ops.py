"""Client, graph building: candidate samplers (tf.nn.*_candidate_sampler,
compute_accidental_hits) as TensorFlow builds them: one op with (seed, seed2) from the
graph and op seeds, returning (sampled_candidates, true_expected_count,
sampled_expected_count)."""

from __future__ import annotations

from typing import Any

from client.framework.op_builder import apply_op
from client.ops.random_ops import get_seed


def _sampler(op_type: str, true_classes: Any, attrs: dict, seed: Any, name: str | None):
    seed1, seed2 = get_seed(seed)
    op = apply_op(op_type, [true_classes], {**attrs, "seed": seed1, "seed2": seed2}, name)
    return tuple(op.outputs)


def uniform_candidate_sampler(
    true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None
):
    attrs = dict(num_true=num_true, num_sampled=num_sampled, unique=unique, range_max=range_max)
    return _sampler("UniformCandidateSampler", true_classes, attrs, seed, name)


def log_uniform_candidate_sampler(
    true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None
):
    attrs = dict(num_true=num_true, num_sampled=num_sampled, unique=unique, range_max=range_max)
    return _sampler("LogUniformCandidateSampler", true_classes, attrs, seed, name)


def fixed_unigram_candidate_sampler(
    true_classes,
    num_true,
    num_sampled,
    unique,
    range_max,
    vocab_file="",
    distortion=1.0,
    num_reserved_ids=0,
    num_shards=1,
    shard=0,
    unigrams=(),
    seed=None,
    name=None,
):
    attrs = dict(
        num_true=num_true,
        num_sampled=num_sampled,
        unique=unique,
        range_max=range_max,
        vocab_file=vocab_file,
        distortion=distortion,
        num_reserved_ids=num_reserved_ids,
        num_shards=num_shards,
        shard=shard,
        unigrams=list(unigrams),
    )
    return _sampler("FixedUnigramCandidateSampler", true_classes, attrs, seed, name)


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    attrs = dict(num_true=num_true, num_sampled=num_sampled, unique=unique)
    return _sampler("AllCandidateSampler", true_classes, attrs, seed, name)


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    seed1, seed2 = get_seed(seed)
    op = apply_op(
        "ComputeAccidentalHits",
        [true_classes, sampled_candidates],
        {"num_true": num_true, "seed": seed1, "seed2": seed2},
        name,
    )
    return tuple(op.outputs)
