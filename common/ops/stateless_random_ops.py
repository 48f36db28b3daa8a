"""Ops (executor stage): stateless random numbers, as TensorFlow's
stateless_random_ops.cc (V1: a [2] seed input) and stateless_random_ops_v2.cc (V2: key,
counter and algorithm inputs; StatelessShuffle too), and the ops that turn a seed into a
key and counter.

Outputs are pure functions of the inputs: the seed is scrambled into a Philox key and
counter (TF's GenerateKey) and the same conversions as the stateful kernels fill the
output from block 0. On CPU TF implements only Philox (algorithm 1); auto-select (3)
resolves to it and any other id is refused as TF refuses it. Thread-safe (no state).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.random import distributions, shard
from common.ops.random.philox import PhiloxRandom, key_counter_from_seed
from common.ops.random_ops import int_bounds, multinomial, output_shape, shuffle_permutation
from common.ops.registry import KernelConstruction, register_kernel, register_op

RNG_ALG_PHILOX = 1
RNG_ALG_AUTO_SELECT = 3
_PHILOX_KEY_SIZE, _PHILOX_COUNTER_SIZE = 1, 2
_FLT = "{half, bfloat16, float, double} = DT_FLOAT"
_REAL = "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64"
_INT_BOUNDS = "Need minval < maxval, got {} >= {}"

_SAMPLERS = {
    "Uniform": distributions.uniform,
    "Normal": distributions.normal,
    "TruncatedNormal": distributions.truncated_normal,
    "UniformFullInt": distributions.full_int,
}


def seed_generator(seed) -> PhiloxRandom:
    s = np.asarray(seed)
    if s.shape != (2,):
        raise InvalidArgumentError(f"seed must have shape [2], not {mu.shape_str(s.shape)}")
    return key_counter_from_seed(s)


def v2_generator(key, counter, alg) -> PhiloxRandom:
    """The generator of a V2 op's (key, counter, alg) inputs, checked as TF checks them."""
    a = int(np.asarray(alg))
    if a == RNG_ALG_AUTO_SELECT:
        a = RNG_ALG_PHILOX
    if a != RNG_ALG_PHILOX:
        raise InvalidArgumentError(f"Unsupported algorithm id: {a}")
    k, c = np.asarray(key), np.asarray(counter)
    if k.shape != (_PHILOX_KEY_SIZE,):
        raise InvalidArgumentError(
            f"key must have shape [{_PHILOX_KEY_SIZE}], not {mu.shape_str(k.shape)}. "
            "(Note that batched keys are not supported yet.)"
        )
    if c.ndim != 1 or c.shape[0] < _PHILOX_COUNTER_SIZE:
        raise InvalidArgumentError(
            f"counter must be a vector with length at least {_PHILOX_COUNTER_SIZE}; got "
            f"shape: {mu.shape_str(c.shape)}. (Note that batched counters are not supported "
            "yet.)"
        )
    return PhiloxRandom.from_key_counter(int(k[0]), (int(c[0]), int(c[1])))


def _fill(kind: str, dt: np.dtype, shape, gen: PhiloxRandom) -> np.ndarray:
    dims = output_shape(shape)
    n = int(np.prod(dims, dtype=np.int64))
    return _SAMPLERS[kind](gen, n, dt).reshape(dims)


def _fill_int(dt: np.dtype, shape, gen: PhiloxRandom, lo, hi, message: str) -> np.ndarray:
    dims = output_shape(shape)
    n = int(np.prod(dims, dtype=np.int64))
    if n == 0:
        return np.zeros(dims, dt)
    low, high = int_bounds(lo, hi, message)
    return distributions.uniform_int(gen, n, dt, low, high).reshape(dims)


def _kind(op: str) -> str:
    return op.removeprefix("Stateless").removeprefix("Random").removesuffix("V2")


def _v1(kc: KernelConstruction) -> Callable:
    kind, dt = _kind(kc.op), mu.np_type(kc.attr("dtype"))

    def compute(ctx, inputs: list) -> list:
        return [_fill(kind, dt, inputs[0], seed_generator(inputs[1]))]

    return compute


def _v2(kc: KernelConstruction) -> Callable:
    kind, dt = _kind(kc.op), mu.np_type(kc.attr("dtype"))

    def compute(ctx, inputs: list) -> list:
        return [_fill(kind, dt, inputs[0], v2_generator(*inputs[1:4]))]

    return compute


def _uniform_int_v1(kc: KernelConstruction) -> Callable:
    dt = mu.np_type(kc.attr("dtype"))

    def compute(ctx, inputs: list) -> list:
        gen = seed_generator(inputs[1])
        return [_fill_int(dt, inputs[0], gen, inputs[2], inputs[3], _INT_BOUNDS)]

    return compute


def _uniform_int_v2(kc: KernelConstruction) -> Callable:
    dt = mu.np_type(kc.attr("dtype"))
    if dt.kind == "u":
        raise InvalidArgumentError(
            f"No CPU kernel for StatelessRandomUniformIntV2 with dtype {dt} "
            f"(TensorFlow has int32 and int64 only) at node {kc.node_name}"
        )

    def compute(ctx, inputs: list) -> list:
        gen = v2_generator(*inputs[1:4])
        return [_fill_int(dt, inputs[0], gen, inputs[4], inputs[5], _INT_BOUNDS)]

    return compute


def _multinomial(kc: KernelConstruction) -> Callable:
    out, threads = mu.np_type(kc.attr("output_dtype")), shard.pool_threads(kc.scope)

    def compute(ctx, inputs: list) -> list:
        return [multinomial(seed_generator(inputs[2]), inputs[0], inputs[1], out, threads)]

    return compute


def _per_param(shape, param: np.ndarray) -> tuple[tuple[int, ...], int]:
    """Output dims and samples per parameter; the shape must end with the param's."""
    dims = output_shape(shape)
    if param.ndim and (len(dims) < param.ndim or dims[len(dims) - param.ndim :] != param.shape):
        raise InvalidArgumentError("Shape passed in must end with broadcasted shape.")
    n = int(np.prod(dims, dtype=np.int64))
    return dims, (n // param.size if param.size else 0)


def _gamma(kc: KernelConstruction) -> Callable:
    """StatelessRandomGammaV2 (shape, seed, alpha) and V3 (shape, key, counter, alg,
    alpha): the same sampler from the seed's or the given key and counter."""
    from common.ops.random.gamma import random_gamma

    dt = mu.np_type(kc.attr("dtype"))
    v3 = kc.op == "StatelessRandomGammaV3"

    def compute(ctx, inputs: list) -> list:
        alpha = np.asarray(inputs[4] if v3 else inputs[2])
        dims, per = _per_param(inputs[0], alpha)
        gen = v2_generator(*inputs[1:4]) if v3 else seed_generator(inputs[1])
        if per == 0:
            return [np.zeros(dims, dt)]
        samples = random_gamma(gen, alpha, per)
        if dt != np.float64:  # flush-to-zero, as TF's CPU threads
            samples[np.abs(samples) < np.finfo(np.float32).tiny] = 0.0
        return [samples.astype(dt).reshape(dims)]

    return compute


def _poisson(kc: KernelConstruction) -> Callable:
    from common.ops.random.poisson import random_poisson

    dt = mu.np_type(kc.attr("dtype"))
    highest = float(np.finfo(dt).max if dt.kind == "f" else np.iinfo(dt).max)

    def compute(ctx, inputs: list) -> list:
        lam = np.asarray(inputs[2])
        dims, per = _per_param(inputs[0], lam)
        gen = seed_generator(inputs[1])
        if per == 0:
            return [np.zeros(dims, dt)]
        with np.errstate(invalid="ignore", over="ignore"):
            return [random_poisson(gen, lam, per, highest).astype(dt).reshape(dims)]

    return compute


def _key_counter(with_alg: bool) -> Callable:
    def factory(kc: KernelConstruction) -> Callable:
        def compute(ctx, inputs: list) -> list:
            gen = seed_generator(inputs[0])
            key = np.array([gen.key64], np.uint64)
            counter = np.array(gen.counter64, np.uint64)
            alg = [np.int32(RNG_ALG_PHILOX)] if with_alg else []
            return [key, counter, *alg]

        return compute

    return factory


def _shuffle(kc: KernelConstruction) -> Callable:
    """StatelessShuffle: RandomShuffle's permutation from the (key, counter) generator."""

    def compute(ctx, inputs: list) -> list:
        x = np.asarray(inputs[0])
        gen = v2_generator(*inputs[1:4])
        if x.size <= 1 or x.ndim == 0 or x.shape[0] <= 1:
            return [x]
        return [x[shuffle_permutation(gen, x.shape[0])]]

    return compute


def _get_alg(kc: KernelConstruction) -> Callable:
    return lambda ctx, inputs: [np.int32(RNG_ALG_PHILOX)]


def _register() -> None:
    tseed = "Tseed: {int32, int64} = DT_INT64"
    for kind in ("Uniform", "Normal", "TruncatedNormal"):
        name = f"Stateless{'' if kind == 'TruncatedNormal' else 'Random'}{kind}"
        register_op(
            name,
            ["shape: T", "seed: Tseed"],
            ["output: dtype"],
            [f"dtype: {_FLT}", "T: {int32, int64} = DT_INT32", tseed],
        )
        register_kernel(name, host_memory=("shape", "seed"))(_v1)
        register_op(
            f"{name}V2",
            ["shape: Tshape", "key: uint64", "counter: uint64", "alg: int32"],
            ["output: dtype"],
            [f"dtype: {_FLT}", "Tshape: {int32, int64} = DT_INT32"],
        )
        register_kernel(f"{name}V2", host_memory=("shape", "key", "counter", "alg"))(_v2)
    full = "dtype: {int32, int64, uint32, uint64} = DT_UINT64"
    register_op(
        "StatelessRandomUniformFullInt",
        ["shape: T", "seed: Tseed"],
        ["output: dtype"],
        [full, "T: {int32, int64} = DT_INT32", "Tseed: {int32, int64, uint32, uint64} = DT_INT64"],
    )
    register_kernel("StatelessRandomUniformFullInt", host_memory=("shape", "seed"))(_v1)
    register_op(
        "StatelessRandomUniformFullIntV2",
        ["shape: Tshape", "key: uint64", "counter: uint64", "alg: int32"],
        ["output: dtype"],
        [full, "Tshape: {int32, int64} = DT_INT32"],
    )
    register_kernel(
        "StatelessRandomUniformFullIntV2", host_memory=("shape", "key", "counter", "alg")
    )(_v2)
    register_op(
        "StatelessRandomUniformInt",
        ["shape: T", "seed: Tseed", "minval: dtype", "maxval: dtype"],
        ["output: dtype"],
        ["dtype: {int32, int64}", "T: {int32, int64}", tseed],
    )
    register_kernel("StatelessRandomUniformInt", host_memory=("shape", "seed", "minval", "maxval"))(
        _uniform_int_v1
    )
    register_op(
        "StatelessRandomUniformIntV2",
        [
            "shape: Tshape",
            "key: uint64",
            "counter: uint64",
            "alg: int32",
            "minval: dtype",
            "maxval: dtype",
        ],
        ["output: dtype"],
        ["dtype: {int32, int64, uint32, uint64}", "Tshape: {int32, int64} = DT_INT32"],
    )
    register_kernel(
        "StatelessRandomUniformIntV2",
        host_memory=("shape", "key", "counter", "alg", "minval", "maxval"),
    )(_uniform_int_v2)
    register_op(
        "StatelessMultinomial",
        ["logits: T", "num_samples: int32", "seed: Tseed"],
        ["output: output_dtype"],
        [f"T: {{{_REAL}}}", tseed, "output_dtype: {int32, int64} = DT_INT64"],
    )
    register_kernel("StatelessMultinomial", host_memory=("num_samples", "seed"))(_multinomial)
    register_op(
        "StatelessRandomGetKeyCounter",
        ["seed: Tseed"],
        ["key: uint64", "counter: uint64"],
        [tseed],
    )
    register_kernel("StatelessRandomGetKeyCounter", host_memory=("seed", "key", "counter"))(
        _key_counter(False)
    )
    register_op(
        "StatelessRandomGetKeyCounterAlg",
        ["seed: Tseed"],
        ["key: uint64", "counter: uint64", "alg: int32"],
        [tseed],
    )
    register_kernel(
        "StatelessRandomGetKeyCounterAlg", host_memory=("seed", "key", "counter", "alg")
    )(_key_counter(True))
    register_op(
        "StatelessRandomGammaV2",
        ["shape: T", "seed: Tseed", "alpha: dtype"],
        ["output: dtype"],
        ["dtype: {half, float, double}", "T: {int32, int64}", tseed],
    )
    register_kernel("StatelessRandomGammaV2", host_memory=("shape", "seed"))(_gamma)
    register_op(
        "StatelessRandomGammaV3",
        ["shape: shape_dtype", "key: uint64", "counter: uint64", "alg: int32", "alpha: dtype"],
        ["output: dtype"],
        ["dtype: {half, float, double}", "shape_dtype: {int32, int64} = DT_INT32"],
    )
    register_kernel("StatelessRandomGammaV3", host_memory=("shape", "key", "counter", "alg"))(
        _gamma
    )
    poisson_types = "{half, float, double, int32, int64}"
    register_op(
        "StatelessRandomPoisson",
        ["shape: T", "seed: Tseed", "lam: Rtype"],
        ["output: dtype"],
        [f"Rtype: {poisson_types}", f"dtype: {poisson_types}", "T: {int32, int64}", tseed],
    )
    register_kernel("StatelessRandomPoisson", host_memory=("shape", "seed"))(_poisson)
    register_op(
        "StatelessShuffle",
        ["value: T", "key: uint64", "counter: uint64", "alg: int32"],
        ["output: T"],
        ["T: type"],
    )
    register_kernel("StatelessShuffle", host_memory=("key", "counter", "alg"))(_shuffle)
    register_op("StatelessRandomGetAlg", [], ["alg: int32"], [], stateful=True)
    register_kernel("StatelessRandomGetAlg", host_memory=("alg",))(_get_alg)


_register()
