"""Ops (executor stage): binomial samples, as TensorFlow's random_binomial_op.cc:
StatelessRandomBinomial (a [2] seed) and StatefulRandomBinomial (a tf.random.Generator's
state variable, advanced as TensorFlow advances it).

counts and probs broadcast to the batch shape, which the output shape must end with;
the leading dimensions are samples per batch member. Values come from the sampler in
random/binomial.py, bit for bit TensorFlow's. Thread-safe: the stateful kernel reads and
advances the state under the variable's lock.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.random.binomial import random_binomial
from common.ops.random.philox import PhiloxRandom
from common.ops.registry import KernelConstruction, register_kernel, register_op
from common.ops.rng_state import RNG_ALG_PHILOX, skip_state, state_var, updating_state
from common.ops.stateless_random_ops import seed_generator

_TYPES = "{half, float, double, int32, int64}"


def _layout(shape, counts: np.ndarray, probs: np.ndarray):
    """(output dims, samples per batch, flat counts, flat probs), checked as TF does."""
    try:
        batch = np.broadcast_shapes(counts.shape, probs.shape)
    except ValueError:
        raise InvalidArgumentError(
            "counts and probs must have compatible batch dimensions: "
            f"{mu.shape_str(counts.shape)} vs. {mu.shape_str(probs.shape)}"
        ) from None
    s = np.asarray(shape)
    if s.ndim != 1:
        raise InvalidArgumentError(
            f"Input shape should be a vector, got shape: {mu.shape_str(s.shape)}"
        )
    dims = tuple(int(d) for d in s)
    for d in dims:
        if d < 0:
            raise InvalidArgumentError(f"Dimension {d} must be >= 0")
    if len(dims) < len(batch) or dims[len(dims) - len(batch) :] != batch:
        raise InvalidArgumentError("Shape passed in must end with broadcasted shape.")
    per = int(np.prod(dims[: len(dims) - len(batch)], dtype=np.int64))
    flat_counts = np.broadcast_to(counts, batch).reshape(-1)
    flat_probs = np.broadcast_to(probs, batch).reshape(-1)
    return dims, per, flat_counts, flat_probs


def _sample(gen: PhiloxRandom, dims, per, counts, probs, out: np.dtype) -> np.ndarray:
    samples = random_binomial(gen, counts, probs, per)
    with np.errstate(invalid="ignore"):
        return samples.astype(out).reshape(dims)


def _refuse_int_params(kc: KernelConstruction) -> None:
    t = mu.np_type(kc.attr("T"))
    if t.kind != "f":
        raise InvalidArgumentError(
            f"No CPU kernel for {kc.op} with T={t} (TensorFlow has half, float and double) "
            f"at node {kc.node_name}"
        )


def _stateless(kc: KernelConstruction) -> Callable:
    _refuse_int_params(kc)
    out = mu.np_type(kc.attr("dtype"))

    def compute(ctx, inputs: list) -> list:
        shape, seed, counts, probs = inputs
        s = np.asarray(seed)
        if s.shape != (2,):
            raise InvalidArgumentError(f"seed must have shape [2], not {mu.shape_str(s.shape)}")
        dims, per, c, p = _layout(shape, np.asarray(counts), np.asarray(probs))
        if int(np.prod(dims, dtype=np.int64)) == 0:
            return [np.zeros(dims, out)]
        return [_sample(seed_generator(s), dims, per, c, p, out)]

    return compute


def _stateful(kc: KernelConstruction) -> Callable:
    _refuse_int_params(kc)
    out = mu.np_type(kc.attr("dtype"))

    def compute(ctx, inputs: list) -> list:
        handle, alg, shape, counts, probs = inputs
        dims, per, c, p = _layout(shape, np.asarray(counts), np.asarray(probs))
        a = np.asarray(alg)
        if a.ndim != 0:
            raise InvalidArgumentError(
                f"algorithm must be of shape [], not {mu.shape_str(a.shape)}"
            )
        # TF reserves 100 blocks per pair of samples before its own x256 (its formula,
        # integer division and all).
        var = state_var(ctx, handle)
        if int(a) != RNG_ALG_PHILOX:
            raise InvalidArgumentError(f"Unsupported algorithm id: {int(a)}")
        with updating_state(var) as state:
            gen = skip_state(state, c.size * 2 * 100 * (per + 3) // 4)
        return [_sample(gen, dims, per, c, p, out)]

    return compute


def _register() -> None:
    register_op(
        "StatelessRandomBinomial",
        ["shape: S", "seed: Tseed", "counts: T", "probs: T"],
        ["output: dtype"],
        [
            "S: {int32, int64}",
            "Tseed: {int32, int64} = DT_INT64",
            f"T: {_TYPES} = DT_DOUBLE",
            f"dtype: {_TYPES} = DT_INT64",
        ],
    )
    register_kernel("StatelessRandomBinomial", host_memory=("shape", "seed", "counts", "probs"))(
        _stateless
    )
    register_op(
        "StatefulRandomBinomial",
        ["resource: resource", "algorithm: int64", "shape: S", "counts: T", "probs: T"],
        ["output: dtype"],
        ["S: {int32, int64}", f"T: {_TYPES} = DT_DOUBLE", f"dtype: {_TYPES} = DT_INT64"],
        stateful=True,
    )
    register_kernel(
        "StatefulRandomBinomial",
        host_memory=("resource", "algorithm", "shape", "counts", "probs"),
    )(_stateful)


_register()
