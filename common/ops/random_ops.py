"""Ops (executor stage): stateful random number generation, as TensorFlow's
random_op.cc, random_shuffle_op.cc and multinomial_op.cc: RandomUniform,
RandomStandardNormal, TruncatedNormal, RandomUniformInt, RandomShuffle, Multinomial.

Each kernel owns a GuardedPhiloxRandom seeded from its (seed, seed2) attrs (from the OS
when both are 0) and reserves blocks of its stream per run exactly as TF's kernel does,
so a graph with fixed seeds yields TensorFlow's numbers step after step. Kernels are
safe from any thread (the reservation is locked; the sampling works on a copy).
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from common import memory
from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.random import distributions, shard
from common.ops.random.philox import GuardedPhiloxRandom, PhiloxRandom
from common.ops.registry import KernelConstruction, register_kernel, register_op

_FLT = "{half, bfloat16, float, double}"
_REAL = "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64"


def output_shape(shape) -> tuple[int, ...]:
    s = np.asarray(shape)
    if s.ndim > 1 or s.dtype.kind not in "iu":
        raise InvalidArgumentError(
            f"shape must be a vector of {{int32,int64}}, got shape {mu.shape_str(s.shape)}"
        )
    dims = tuple(int(d) for d in s.reshape(-1))
    for d in dims:
        if d < 0:
            raise InvalidArgumentError(f"Dimension {d} must be >= 0")
    return dims


def int_bounds(lo, hi, message: str = "Need minval < maxval: {} >= {}") -> tuple[int, int]:
    lo, hi = np.asarray(lo), np.asarray(hi)
    if lo.ndim != 0 or hi.ndim != 0:
        raise InvalidArgumentError(
            f"minval must be 0-D, got shape {mu.shape_str(lo.shape)}"
            if lo.ndim
            else f"maxval must be 0-D, got shape {mu.shape_str(hi.shape)}"
        )
    if lo >= hi:
        raise InvalidArgumentError(message.format(lo, hi))
    return int(lo), int(hi)


def multinomial(
    gen: PhiloxRandom, logits, num_samples, out: np.dtype, threads: int = 0
) -> np.ndarray:
    """TF's CPU MultinomialFunctor: per row, the cumulative sum of exp(logit - max finite
    logit) over finite logits; each sample is the first class whose sum exceeds a uniform
    double (two words) times the row's total.

    TF shards the rows over its intra-op pool of `threads` threads (0: one per core) by
    an estimated cost of 50 * (samples * log2(classes) + classes) cycles a row; a shard
    starting at row r draws its doubles in sequence from block r * (samples + 3) // 4 of
    the stream, so where the shards begin decides the numbers (random.shard)."""
    x = np.asarray(logits)
    n = np.asarray(num_samples)
    if x.ndim != 2:
        raise InvalidArgumentError(f"logits should be a matrix, got shape {mu.shape_str(x.shape)}")
    if n.ndim != 0:
        raise InvalidArgumentError(
            f"num_samples should be a scalar, got shape {mu.shape_str(n.shape)}"
        )
    count = int(n)
    if count < 0:
        raise InvalidArgumentError(f"num_samples should be nonnegative, got {count}")
    batch, classes = x.shape
    if classes == 0 and count > 0 and batch > 0:
        raise InvalidArgumentError(f"num_classes should be positive, got {classes}")
    if batch == 0 or count == 0:
        return np.zeros((batch, count), out)
    finite = np.isfinite(x)
    lowest = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    top = np.max(np.where(finite, x, lowest), axis=1, keepdims=True).astype(np.float64)
    with np.errstate(all="ignore"):
        w = np.exp(x.astype(np.float64) - top)
    cdf = np.cumsum(np.where(finite, w, 0.0), axis=1)
    cost = int(50 * (count * math.log(classes) / math.log(2) + classes))
    u = np.empty((batch, count))
    for start, limit in shard.shards(batch, cost, threads):
        part = gen.skip(start * (count + 3) // 4)
        u[start:limit] = distributions.uniform_doubles(part, (limit - start) * count).reshape(
            limit - start, count
        )
    target = u * cdf[:, -1:]
    result = np.empty((batch, count), out)
    for b in range(batch):  # std::upper_bound, one vectorised search per row
        result[b] = np.searchsorted(cdf[b], target[b], side="right")
    return result


def multinomial_reservation(batch: int, num_samples: int) -> int:
    """Blocks a Multinomial run reserves: 256 per output of a batch * ceil4(samples) * 2
    (CPU draws two words per sample)."""
    return batch * ((num_samples + 3) // 4 * 4) * 2 * 256


# ---------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------

_SAMPLERS = {
    "RandomUniform": distributions.uniform,
    "RandomStandardNormal": distributions.normal,
    "TruncatedNormal": distributions.truncated_normal,
}


# Per-node state shared by every executor of a node in one session (one per cached
# feed/fetch signature, one per registered graph on a worker), as TensorFlow's
# session-wide OpSegment shares one stateful kernel instance: a random kernel's
# generator continues the same stream, a learned sampler its counts. Another session
# over the same graph starts afresh; a session's entries go when it closes.
_SESSION_STATE: weakref.WeakKeyDictionary[Any, dict[tuple, Any]] = weakref.WeakKeyDictionary()
_state_lock = threading.Lock()


def node_state(kc: KernelConstruction, kind: tuple, make: Callable[[], Any]) -> Any:
    """The node's `kind` of state in its session, made by `make()` the first time."""
    if kc.scope is None:
        return make()
    key = (kc.node_name, kc.op, *kind)
    with _state_lock:
        table = _SESSION_STATE.get(kc.scope)
        if table is None:
            table = _SESSION_STATE[kc.scope] = {}
            scope_ref = weakref.ref(kc.scope)
            kc.scope.on_close(lambda: _forget(scope_ref))
        if key not in table:
            table[key] = make()
        return table[key]


def node_generator(kc: KernelConstruction) -> GuardedPhiloxRandom:
    """The kernel's GuardedPhiloxRandom, shared by the node's kernels in its session."""
    seed, seed2 = int(kc.attrs.get("seed", 0)), int(kc.attrs.get("seed2", 0))
    return node_state(kc, ("philox", seed, seed2), lambda: GuardedPhiloxRandom(seed, seed2))


def _forget(scope_ref: weakref.ref) -> None:
    scope = scope_ref()
    if scope is not None:
        with _state_lock:
            _SESSION_STATE.pop(scope, None)


def _generator(kc: KernelConstruction) -> GuardedPhiloxRandom:
    return node_generator(kc)


def _distribution(kc: KernelConstruction) -> Callable:
    sample, dt, guarded = _SAMPLERS[kc.op], mu.np_type(kc.attr("dtype")), _generator(kc)

    def compute(ctx, inputs: list) -> list:
        shape = output_shape(inputs[0])
        memory.check_allocation(kc, shape, np.dtype(dt))
        n = int(np.prod(shape, dtype=np.int64))
        gen = guarded.reserve_random_outputs(n)
        return [sample(gen, n, dt).reshape(shape)]

    return compute


def _random_uniform_int(kc: KernelConstruction) -> Callable:
    dt, guarded = mu.np_type(kc.attr("Tout")), _generator(kc)

    def compute(ctx, inputs: list) -> list:
        shape = output_shape(inputs[0])
        memory.check_allocation(kc, shape, np.dtype(dt))
        n = int(np.prod(shape, dtype=np.int64))
        if n == 0:
            return [np.zeros(shape, dt)]
        lo, hi = int_bounds(inputs[1], inputs[2])
        gen = guarded.reserve_random_outputs(n)
        return [distributions.uniform_int(gen, n, dt, lo, hi).reshape(shape)]

    return compute


def shuffle_permutation(gen: PhiloxRandom, size: int) -> np.ndarray:
    """TF's RandomShuffle over [0, size): Fisher-Yates from the front, swapping i with
    i + word_i % (size - i). The swaps are sequential (one per row), the words are not."""
    draws = (gen.uint32s(size - 1) % np.arange(size, 1, -1, dtype=np.uint32)).tolist()
    perm = list(range(size))
    for i, r in enumerate(draws):
        j = i + r
        perm[i], perm[j] = perm[j], perm[i]
    return np.asarray(perm, np.int64)


def _random_shuffle(kc: KernelConstruction) -> Callable:
    guarded = _generator(kc)

    def compute(ctx, inputs: list) -> list:
        x = np.asarray(inputs[0])
        if x.size <= 1 or x.ndim == 0 or x.shape[0] <= 1:
            return [x]
        size = x.shape[0]
        gen = guarded.reserve_samples32(size - 1)
        return [x[shuffle_permutation(gen, size)]]

    return compute


def _multinomial(kc: KernelConstruction) -> Callable:
    out, guarded = mu.np_type(kc.attr("output_dtype")), _generator(kc)
    threads = shard.pool_threads(kc.scope)

    def compute(ctx, inputs: list) -> list:
        x, n = np.asarray(inputs[0]), np.asarray(inputs[1])
        batch = x.shape[0] if x.ndim == 2 else 0
        count = int(n) if n.ndim == 0 and int(n) > 0 else 0
        if x.ndim == 2 and x.shape[1] == 0 or batch == 0 or count == 0:
            return [multinomial(PhiloxRandom((0, 0)), x, n, out)]
        gen = guarded.reserve_samples128(multinomial_reservation(batch, count))
        return [multinomial(gen, x, n, out, threads)]

    return compute


def _random_gamma(kc: KernelConstruction) -> Callable:
    from common.ops.random.gamma import random_gamma

    dt, guarded = mu.np_type(kc.attr("T")), _generator(kc)

    def compute(ctx, inputs: list) -> list:
        shape = output_shape(inputs[0])
        alpha = np.asarray(inputs[1])
        per_alpha = int(np.prod(shape, dtype=np.int64))
        out_shape = shape + alpha.shape
        if per_alpha * alpha.size == 0:
            if per_alpha and alpha.size == 0:
                raise InvalidArgumentError(
                    f"Input alpha should have non-zero element count, got: {alpha.size}"
                )
            return [np.zeros(out_shape, dt)]
        gen = guarded.reserve_random_outputs(per_alpha * alpha.size)
        samples = random_gamma(gen, alpha, per_alpha)
        # TF's CPU threads flush denormals to zero: a double result below the float
        # range is 0 in a float output, not a float denormal.
        if dt != np.float64:
            samples[np.abs(samples) < np.finfo(np.float32).tiny] = 0.0
        return [samples.astype(dt).reshape(out_shape)]

    return compute


def _random_poisson(kc: KernelConstruction) -> Callable:
    from common.ops.random.poisson import random_poisson

    dt, guarded = mu.np_type(kc.attr("dtype")), _generator(kc)
    highest = float(np.finfo(dt).max if dt.kind == "f" else np.iinfo(dt).max)

    def compute(ctx, inputs: list) -> list:
        shape = output_shape(inputs[0])
        rate = np.asarray(inputs[1])
        per_rate = int(np.prod(shape, dtype=np.int64))
        out_shape = shape + rate.shape
        if per_rate * rate.size == 0:
            return [np.zeros(out_shape, dt)]
        gen = guarded.reserve_random_outputs(per_rate * rate.size)
        with np.errstate(invalid="ignore", over="ignore"):
            return [random_poisson(gen, rate, per_rate, highest).astype(dt).reshape(out_shape)]

    return compute


def _register() -> None:
    seeds = ["seed: int = 0", "seed2: int = 0"]
    for name in ("RandomUniform", "RandomStandardNormal", "TruncatedNormal"):
        register_op(
            name,
            ["shape: T"],
            ["output: dtype"],
            [*seeds, f"dtype: {_FLT}", "T: {int32, int64}"],
            stateful=True,
        )
        register_kernel(name, host_memory=("shape",))(_distribution)
    register_op(
        "RandomUniformInt",
        ["shape: T", "minval: Tout", "maxval: Tout"],
        ["output: Tout"],
        [*seeds, "Tout: {int32, int64}", "T: {int32, int64}"],
        stateful=True,
    )
    register_kernel("RandomUniformInt", host_memory=("shape", "minval", "maxval"))(
        _random_uniform_int
    )
    register_op("RandomShuffle", ["value: T"], ["output: T"], [*seeds, "T: type"], stateful=True)
    register_kernel("RandomShuffle")(_random_shuffle)
    register_op(
        "Multinomial",
        ["logits: T", "num_samples: int32"],
        ["output: output_dtype"],
        [*seeds, f"T: {{{_REAL}}}", "output_dtype: {int32, int64} = DT_INT64"],
        stateful=True,
    )
    register_kernel("Multinomial", host_memory=("num_samples",))(_multinomial)
    register_op(
        "RandomGamma",
        ["shape: S", "alpha: T"],
        ["output: T"],
        [*seeds, "S: {int32, int64}", "T: {half, float, double}"],
        stateful=True,
    )
    register_kernel("RandomGamma", host_memory=("shape",))(_random_gamma)
    register_op(
        "RandomPoisson",
        ["shape: S", "rate: dtype"],
        ["output: dtype"],
        [*seeds, "S: {int32, int64}", "dtype: {half, float, double}"],
        stateful=True,
    )
    register_kernel("RandomPoisson", host_memory=("shape",))(_random_poisson)
    register_op(
        "RandomPoissonV2",
        ["shape: S", "rate: R"],
        ["output: dtype"],
        [
            *seeds,
            "S: {int32, int64}",
            "R: {half, float, double, int32, int64} = DT_DOUBLE",
            "dtype: {half, float, double, int32, int64} = DT_INT64",
        ],
        stateful=True,
    )
    register_kernel("RandomPoissonV2", host_memory=("shape",))(_random_poisson)


_register()
