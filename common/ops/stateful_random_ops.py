"""Ops (executor stage): tf.random.Generator's kernels, as TensorFlow's
stateful_random_ops.cc: StatefulUniform, StatefulStandardNormalV2,
StatefulTruncatedNormal, StatefulUniformInt, StatefulUniformFullInt (each draws from the
generator its state variable holds and moves the state on by 256 blocks per output),
RngSkip and RngReadAndSkip (move it on without drawing; the latter returns the old
state, which TF 2.x's Generator feeds to the stateless V2 kernels), and
NonDeterministicInts (the OS's random numbers, for Generator.from_non_deterministic_state).

The conversions are the stateful kernels' (random/distributions.py), so a
Generator.from_seed state gives TensorFlow's numbers and TensorFlow's next state.
Thread-safe: the state is read and advanced under its variable's lock.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import ml_dtypes
import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.random import distributions
from common.ops.random_ops import int_bounds, output_shape
from common.ops.registry import KernelConstruction, register_kernel, register_op
from common.ops.rng_state import (
    philox_alg,
    reserve_from_state,
    scalar_input,
    skip_state,
    state_var,
    updating_state,
)

_SAMPLERS = {
    "StatefulUniform": distributions.uniform,
    "StatefulStandardNormalV2": distributions.normal,
    "StatefulTruncatedNormal": distributions.truncated_normal,
    "StatefulUniformFullInt": distributions.full_int,
}
_FLOATS = (np.float16, ml_dtypes.bfloat16, np.float32, np.float64)
_NON_DETERMINISTIC_TYPES = (np.int32, np.uint32, np.int64, np.uint64)


def _no_kernel(kc: KernelConstruction, dt: np.dtype, allowed: tuple) -> None:
    if dt not in [np.dtype(t) for t in allowed]:
        raise InvalidArgumentError(
            f"No CPU kernel for {kc.op} with dtype {dt} at node {kc.node_name}"
        )


def _distribution(kc: KernelConstruction) -> Callable:
    sample, dt = _SAMPLERS[kc.op], mu.np_type(kc.attr("dtype"))
    if kc.op == "StatefulUniformFullInt":
        _no_kernel(kc, dt, _NON_DETERMINISTIC_TYPES)
    else:
        _no_kernel(kc, dt, _FLOATS)

    def compute(ctx, inputs: list) -> list:
        handle, alg, shape = inputs
        scalar_input(alg, 1)
        dims = output_shape(shape)
        n = int(np.prod(dims, dtype=np.int64))
        gen = reserve_from_state(ctx, handle, alg, n)
        return [sample(gen, n, dt).reshape(dims)]

    return compute


def _uniform_int(kc: KernelConstruction) -> Callable:
    dt = mu.np_type(kc.attr("dtype"))
    _no_kernel(kc, dt, _NON_DETERMINISTIC_TYPES)

    def compute(ctx, inputs: list) -> list:
        handle, alg, shape, minval, maxval = inputs
        scalar_input(alg, 1)
        lo, hi = int_bounds(minval, maxval, "Need minval < maxval, got {} >= {}")
        dims = output_shape(shape)
        n = int(np.prod(dims, dtype=np.int64))
        gen = reserve_from_state(ctx, handle, alg, n)
        return [distributions.uniform_int(gen, n, dt, lo, hi).reshape(dims)]

    return compute


def _rng_skip(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        handle, alg, delta = inputs
        scalar_input(alg, 1)
        d = int(scalar_input(delta, 2))
        var = state_var(ctx, handle)
        philox_alg(alg)
        with updating_state(var) as state:
            skip_state(state, d)
        return []

    return compute


def _rng_read_and_skip(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        handle, alg, delta = inputs
        scalar_input(alg, 1)
        d = int(scalar_input(delta, 2))
        philox_alg(alg)
        var = state_var(ctx, handle)
        with updating_state(var) as state:
            old = np.array(state[:3], np.int64)
            skip_state(state, d)
        return [old]

    return compute


def _non_deterministic_ints(kc: KernelConstruction) -> Callable:
    dt = mu.np_type(kc.attr("dtype"))
    _no_kernel(kc, dt, _NON_DETERMINISTIC_TYPES)

    def compute(ctx, inputs: list) -> list:
        dims = output_shape(inputs[0])
        n = int(np.prod(dims, dtype=np.int64))
        # random::New64 per element, cast to the output type (its low bits).
        words = np.frombuffer(os.urandom(8 * n), np.uint64)
        return [words.astype(dt).reshape(dims)]

    return compute


def _register() -> None:
    shaped = ["resource: resource", "algorithm: int64", "shape: shape_dtype"]
    shape_attr = "shape_dtype: type = DT_INT64"
    for name in ("StatefulUniform", "StatefulStandardNormalV2", "StatefulTruncatedNormal"):
        register_op(
            name, shaped, ["output: dtype"], ["dtype: type = DT_FLOAT", shape_attr], stateful=True
        )
        register_kernel(name, host_memory=("resource", "algorithm", "shape"))(_distribution)
    register_op(
        "StatefulUniformFullInt",
        shaped,
        ["output: dtype"],
        ["dtype: type = DT_UINT64", shape_attr],
        stateful=True,
    )
    register_kernel("StatefulUniformFullInt", host_memory=("resource", "algorithm", "shape"))(
        _distribution
    )
    register_op(
        "StatefulUniformInt",
        [*shaped, "minval: dtype", "maxval: dtype"],
        ["output: dtype"],
        ["dtype: type = DT_INT64", shape_attr],
        stateful=True,
    )
    register_kernel(
        "StatefulUniformInt",
        host_memory=("resource", "algorithm", "shape", "minval", "maxval"),
    )(_uniform_int)
    register_op(
        "RngSkip", ["resource: resource", "algorithm: int64", "delta: int64"], [], [], stateful=True
    )
    register_kernel("RngSkip", host_memory=("resource", "algorithm", "delta"))(_rng_skip)
    register_op(
        "RngReadAndSkip",
        ["resource: resource", "alg: int32", "delta: uint64"],
        ["value: int64"],
        [],
        stateful=True,
    )
    register_kernel("RngReadAndSkip", host_memory=("resource", "alg", "delta", "value"))(
        _rng_read_and_skip
    )
    register_op(
        "NonDeterministicInts",
        ["shape: shape_dtype"],
        ["output: dtype"],
        ["dtype: type = DT_INT64", shape_attr],
        stateful=True,
    )
    register_kernel("NonDeterministicInts", host_memory=("shape",))(_non_deterministic_ints)


_register()
