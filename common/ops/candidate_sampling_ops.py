"""Ops (executor stage): candidate sampling, as TensorFlow's candidate_sampler_ops.cc
and range_sampler.cc: Uniform/LogUniform/FixedUnigram/AllCandidateSampler and
ComputeAccidentalHits.

A sampler kernel owns a GuardedPhiloxRandom (seed, seed2 attrs) and reserves 2048 words
per sampled candidate each run; TF's SimplePhilox reads that run word by word, which is
the flat uint32 stream here. Draws are vectorised: a run's candidates are taken from a
block of draws (rejection and the unique=True "retry until new" loop become selections
over it). Kernels are thread-safe (only the reservation is shared, and it is locked).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.random import libm
from common.ops.random.philox import WordStream
from common.ops.random_ops import node_generator, node_state
from common.ops.registry import KernelConstruction, register_kernel, register_op

_WORDS_PER_SAMPLE = 2048
_U64 = np.uint64


def exact_uniform64(stream: WordStream, n_range: int, count: int, bits: int = 64) -> np.ndarray:
    """`count` draws of TF's ExactUniformInt<uint64>(range) over Rand64 (or, with
    bits=32, ExactUniformInt<uint32> over Rand32): a power of two masks the low bits,
    otherwise values below 2**bits mod range are rejected."""
    utype = _U64 if bits == 64 else np.uint32
    n = utype(n_range)

    def draw(k: int) -> np.ndarray:
        return stream.rand64(k) if bits == 64 else stream.take(k)

    if n_range & (n_range - 1) == 0:
        return draw(count) & (n - utype(1))
    rem = utype((((1 << bits) - 1) % n_range) + 1)  # reject [0, 2**bits mod n)
    out = np.empty(0, utype)
    while out.size < count:
        r = draw(count - out.size)  # rejection is rare: refill the shortfall
        out = np.concatenate([out, r[r >= rem] % n])
    return out


class RangeSampler:
    """A sampler over [0, range): draws in bulk and a probability per value."""

    def __init__(self, range_max: int) -> None:
        self.range = range_max

    def sample(self, stream: WordStream, count: int) -> np.ndarray:
        raise NotImplementedError

    def probability(self, values: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class UniformSampler(RangeSampler):
    def sample(self, stream: WordStream, count: int) -> np.ndarray:
        return exact_uniform64(stream, self.range, count).astype(np.int64)

    def probability(self, values: np.ndarray) -> np.ndarray:
        return np.full(values.shape, np.float32(1.0 / self.range), np.float32)


class LogUniformSampler(RangeSampler):
    def __init__(self, range_max: int) -> None:
        super().__init__(range_max)
        self.log_range = float(np.log1p(np.float64(range_max)))

    def sample(self, stream: WordStream, count: int) -> np.ndarray:
        u = stream.rand_doubles(count)
        v = libm.exp(u * self.log_range).astype(np.int64) - 1
        return v % self.range

    def probability(self, values: np.ndarray) -> np.ndarray:
        v = values.astype(np.float64)
        return (libm.log((v + 2.0) / (v + 1.0)) / self.log_range).astype(np.float32)


class LearnedUnigramSampler(RangeSampler):
    """TF's (ThreadUnsafe)UnigramSampler: a WeightedPicker whose weights start at 1 and
    count every true class seen (after each run's sampling). Pick is the first value
    whose cumulative weight exceeds ExactUniformInt<uint32>(total weight)."""

    def __init__(self, range_max: int) -> None:
        super().__init__(range_max)
        self.weights = np.ones(range_max, np.int64)
        self.total = range_max
        self.lock = threading.Lock()

    def sample(self, stream: WordStream, count: int) -> np.ndarray:
        picks = exact_uniform64(stream, self.total, count, bits=32).astype(np.int64)
        return np.searchsorted(np.cumsum(self.weights), picks, side="right").astype(np.int64)

    def probability(self, values: np.ndarray) -> np.ndarray:
        w = self.weights[values].astype(np.float32)
        return (w / np.float32(self.total)).astype(np.float32)

    def update(self, values: np.ndarray) -> None:
        n = min(values.size, (2**31 - 1) - self.total)
        np.add.at(self.weights, values.reshape(-1)[:n], 1)
        self.total += n


class AllSampler(RangeSampler):
    """Every value once, each with expected count 1 (no random draws)."""


def _sample_batch(
    sampler: RangeSampler, stream: WordStream, unique: bool, num_sampled: int
) -> tuple[np.ndarray, int]:
    """TF's SampleBatchGetExpectedCountAvoid draws: (candidates, num_tries)."""
    if not unique:
        return sampler.sample(stream, num_sampled), num_sampled
    drawn = np.empty(0, np.int64)
    while True:
        need = max(2 * num_sampled, 16)
        drawn = np.concatenate([drawn, sampler.sample(stream, need)])
        values, first = np.unique(drawn, return_index=True)
        if values.size >= num_sampled:
            order = np.sort(first)[:num_sampled]
            return drawn[order], int(order[-1]) + 1


def expected_count(p: np.ndarray, batch_size: int, num_tries: int) -> np.ndarray:
    """TF's ExpectedCountHelper in float: p * batch, or 1 - (1 - p)**tries stably."""
    if num_tries == batch_size:
        return p * np.float32(batch_size)
    return -libm.expm1(np.float32(num_tries) * libm.log1p(-p))


def _check_true_classes(x: np.ndarray, num_true: int) -> None:
    if x.ndim != 2:
        raise InvalidArgumentError("true_classes must be a matrix")
    if x.shape[1] != num_true:
        raise InvalidArgumentError(
            f"true_classes must have num_true columns, expected: {x.shape[1]} was: {num_true}"
        )


def _sampler_kernel(make: Callable[[KernelConstruction], RangeSampler]) -> Callable:
    def factory(kc: KernelConstruction) -> Callable:
        num_true, num_sampled = int(kc.attr("num_true")), int(kc.attr("num_sampled"))
        unique = bool(kc.attr("unique"))
        sampler = node_state(kc, ("sampler",), lambda: make(kc))
        guarded = node_generator(kc)
        learned = isinstance(sampler, LearnedUnigramSampler)

        def compute(ctx, inputs: list) -> list:
            true = np.asarray(inputs[0], np.int64)
            _check_true_classes(true, num_true)
            if unique and num_sampled > sampler.range:
                raise InvalidArgumentError("Sampler's range is too small.")
            bad = (true < 0) | (true >= sampler.range)
            if bad.any():
                raise InvalidArgumentError(
                    f"`true_candidate` out of range [0, {sampler.range}), received "
                    f"{true.reshape(-1)[np.argmax(bad.reshape(-1))]}"
                )
            gen = guarded.reserve_samples32(_WORDS_PER_SAMPLE * num_sampled)
            if isinstance(sampler, AllSampler):
                ones = np.ones(num_sampled, np.float32)
                return [
                    np.arange(num_sampled, dtype=np.int64),
                    np.ones(true.shape, np.float32),
                    ones,
                ]
            with sampler.lock if learned else contextlib.nullcontext():
                sampled, tries = _sample_batch(sampler, WordStream(gen), unique, num_sampled)
                outputs = [
                    sampled,
                    expected_count(sampler.probability(true), num_sampled, tries),
                    expected_count(sampler.probability(sampled), num_sampled, tries),
                ]
                if learned:
                    sampler.update(true)
            return outputs

        return compute

    return factory


def _accidental_hits(kc: KernelConstruction) -> Callable:
    num_true = int(kc.attr("num_true"))

    def compute(ctx, inputs: list) -> list:
        true, sampled = np.asarray(inputs[0], np.int64), np.asarray(inputs[1], np.int64)
        if true.ndim != 2 or true.shape[1] != num_true:
            raise InvalidArgumentError("true_candidates must be a batch_size * num_true matrix")
        if sampled.ndim != 1:
            raise InvalidArgumentError(
                "sampled_candidates must be a vector, which is typically an output from "
                "CandidateSampler"
            )
        # A value sampled twice maps to its last position, as TF's map assignment does.
        rev_values, rev_first = np.unique(sampled[::-1], return_index=True)
        last_pos = sampled.size - 1 - rev_first
        flat = true.reshape(-1)
        if sampled.size == 0:
            return [np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.float32)]
        at = np.searchsorted(rev_values, flat)
        hit = (at < rev_values.size) & (rev_values[np.minimum(at, rev_values.size - 1)] == flat)
        rows = (np.arange(flat.size) // max(num_true, 1))[hit]
        ids = last_pos[at[hit]]
        weights = np.full(rows.size, -np.finfo(np.float32).max, np.float32)
        return [rows.astype(np.int32), ids.astype(np.int64), weights]

    return compute


def _fixed_unigram(kc: KernelConstruction) -> RangeSampler:
    from common.ops.unigram_sampler import FixedUnigramSampler

    return FixedUnigramSampler.from_attrs(kc)  # type: ignore[return-value]


_SAMPLER_ATTRS = [
    "num_true: int >= 1",
    "num_sampled: int >= 1",
    "unique: bool",
    "range_max: int >= 1",
]
_SEEDS = ["seed: int = 0", "seed2: int = 0"]
_OUTPUTS = [
    "sampled_candidates: int64",
    "true_expected_count: float",
    "sampled_expected_count: float",
]


def _register() -> None:
    samplers: dict[str, Callable[[KernelConstruction], RangeSampler]] = {
        "UniformCandidateSampler": lambda kc: UniformSampler(int(kc.attr("range_max"))),
        "LogUniformCandidateSampler": lambda kc: LogUniformSampler(int(kc.attr("range_max"))),
        "LearnedUnigramCandidateSampler": lambda kc: LearnedUnigramSampler(
            int(kc.attr("range_max"))
        ),
        "ThreadUnsafeUnigramCandidateSampler": lambda kc: LearnedUnigramSampler(
            int(kc.attr("range_max"))
        ),
    }
    for name, make in samplers.items():
        register_op(
            name, ["true_classes: int64"], _OUTPUTS, [*_SAMPLER_ATTRS, *_SEEDS], stateful=True
        )
        register_kernel(name)(_sampler_kernel(make))
    register_op(
        "FixedUnigramCandidateSampler",
        ["true_classes: int64"],
        _OUTPUTS,
        [
            *_SAMPLER_ATTRS,
            "vocab_file: string = ''",
            "distortion: float = 1",
            "num_reserved_ids: int = 0",
            "num_shards: int >= 1 = 1",
            "shard: int >= 0 = 0",
            "unigrams: list(float) = []",
            *_SEEDS,
        ],
        stateful=True,
    )
    register_kernel("FixedUnigramCandidateSampler")(_sampler_kernel(_fixed_unigram))
    register_op(
        "AllCandidateSampler",
        ["true_classes: int64"],
        _OUTPUTS,
        ["num_true: int >= 1", "num_sampled: int >= 1", "unique: bool", *_SEEDS],
        stateful=True,
    )
    register_kernel("AllCandidateSampler")(
        _sampler_kernel(lambda kc: AllSampler(int(kc.attr("num_sampled"))))
    )
    register_op(
        "ComputeAccidentalHits",
        ["true_classes: int64", "sampled_candidates: int64"],
        ["indices: int32", "ids: int64", "weights: float"],
        ["num_true: int", *_SEEDS],
    )
    register_kernel("ComputeAccidentalHits")(_accidental_hits)


_register()
