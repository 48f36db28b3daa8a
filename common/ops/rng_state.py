"""Ops (executor stage): the state variable of a tf.random.Generator, as TensorFlow's
stateful_random_ops_cpu_gpu.h lays it out and advances it.

For Philox (algorithm 1) the variable is int64 [3]: the 128-bit counter, low word first,
then the 64-bit key. A kernel that draws n outputs takes the generator as it is and
moves the counter on by 256 * n blocks, under the variable's lock (the sampling then
works on the copy, as TF releases the lock before filling). Safe from any thread.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from common.dtypes import DataType, tf_name
from common.errors import FailedPreconditionError, InvalidArgumentError, UnimplementedError
from common.ops import math_util as mu
from common.ops.random.philox import PhiloxRandom
from common.ops.registry import OpKernelContext
from common.ops.state_ops import Var, lookup_var

RNG_ALG_PHILOX = 1
RNG_ALG_THREEFRY = 2
RNG_ALG_AUTO_SELECT = 3
PHILOX_STATE_SIZE = 3
# TF's FillPhiloxRandomTask reserves 256 blocks per output; state skips use its unit.
BLOCKS_PER_OUTPUT = 256
_M64 = (1 << 64) - 1


def philox_from_state(state: np.ndarray) -> PhiloxRandom:
    """GetPhiloxRandomFromMem: counter from words 0-1, key from word 2."""
    words = [int(v) & _M64 for v in state[:PHILOX_STATE_SIZE]]
    return PhiloxRandom.from_key_counter(words[2], (words[0], words[1]))


def write_philox(gen: PhiloxRandom, state: np.ndarray) -> None:
    """WritePhiloxRandomToMem into a writeable int64 state."""
    lo, hi = gen.counter64
    words = np.array([lo, hi, gen.key64], np.uint64)
    state[:PHILOX_STATE_SIZE] = words.view(np.int64)


def state_var(ctx: OpKernelContext, handle: Any) -> Var:
    """The state variable a resource input names, checked as TF's CheckState does."""
    _, var = lookup_var(ctx, handle)
    if var.dtype != DataType.DT_INT64:
        raise InvalidArgumentError(
            f"dtype of RNG state variable must be int64, not {tf_name(var.dtype)}"
        )
    value = var.snapshot()
    if value is not None and value.ndim != 1:
        raise InvalidArgumentError(
            f"RNG state must have one and only one dimension, not {value.ndim}"
        )
    return var


def philox_alg(alg: Any) -> None:
    """Checks an algorithm input: Philox or auto-select pass; ThreeFry is XLA-only."""
    a = int(np.asarray(alg))
    if a == RNG_ALG_THREEFRY:
        raise UnimplementedError("Non-XLA devices don't support the ThreeFry algorithm.")
    if a not in (RNG_ALG_PHILOX, RNG_ALG_AUTO_SELECT):
        raise InvalidArgumentError(f"Unsupported algorithm id: {a}")


def scalar_input(value: Any, index: int) -> np.ndarray:
    """TF's GetScalar: input `index` (0-based) must be a scalar."""
    v = np.asarray(value)
    if v.ndim != 0:
        raise InvalidArgumentError(
            f"input {index} (0-based) must have shape [], not {mu.shape_str(v.shape)}"
        )
    return v


def _check_size(state: np.ndarray) -> None:
    if state.size < PHILOX_STATE_SIZE:
        raise InvalidArgumentError(
            f"For the Philox algorithm, the size of state must be at least "
            f"{PHILOX_STATE_SIZE}; got {state.size}"
        )


@contextlib.contextmanager
def updating_state(var: Var) -> Iterator[np.ndarray]:
    """The state variable's array, writeable, under its lock (Philox-sized)."""
    with var.lock:
        current = var.value
        if current is None:
            raise FailedPreconditionError(f"RNG state variable {var.name} is uninitialized")
        _check_size(current)
        del current  # our own reference would make the update copy
        with var.updating() as state:
            yield state


def skip_state(state: np.ndarray, outputs: int) -> PhiloxRandom:
    """Moves a writeable Philox state on by 256 * `outputs` blocks (uint64 arithmetic,
    as UpdateMemWithPhiloxRandom); returns the generator it held before."""
    gen = philox_from_state(state)
    write_philox(gen.skip((outputs * BLOCKS_PER_OUTPUT) & _M64), state)
    return gen


def reserve_from_state(ctx: OpKernelContext, handle: Any, alg: Any, outputs: int) -> PhiloxRandom:
    """The Philox generator the state holds; the state moves on by 256 * `outputs`
    blocks (TF's UpdateVariableAndFill)."""
    var = state_var(ctx, handle)
    philox_alg(alg)
    with updating_state(var) as state:
        return skip_state(state, outputs)
