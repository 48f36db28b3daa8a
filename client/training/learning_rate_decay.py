"""Client, training: TF1's learning-rate decays (tf.train.exponential_decay and friends)
as TF 2.x builds them in graph mode: each is a Keras LearningRateSchedule called once on
the global step, so the node names are the schedule's ("ExponentialDecay/...",
"PolynomialDecay/...", "PiecewiseConstant/case/..."), and the result is a float Tensor
recomputed from the step at every Session.run."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import constant, convert_to_tensor
from client.ops import array_ops, control_flow_ops, math_ops
from client.ops.control_flow_case import case


def _initial(learning_rate: Any) -> Any:
    return convert_to_tensor(learning_rate, name="initial_learning_rate")


def _exponential(
    learning_rate: Any, step: Any, decay_steps: Any, decay_rate: Any, staircase: bool,
    name: str | None,
) -> Any:  # fmt: skip
    with _ops.name_scope(name or "ExponentialDecay") as scope:
        initial = _initial(learning_rate)
        dtype = initial.dtype
        decay_steps = math_ops.cast(decay_steps, dtype)
        decay_rate = math_ops.cast(decay_rate, dtype)
        p = math_ops.cast(step, dtype) / decay_steps
        if staircase:
            p = math_ops.floor(p)
        return math_ops.multiply(initial, math_ops.pow(decay_rate, p), name=scope)


def exponential_decay(
    learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
    staircase: bool = False, name: str | None = None,
) -> Any:  # fmt: skip
    """learning_rate * decay_rate ^ (global_step / decay_steps)."""
    return _exponential(learning_rate, global_step, decay_steps, decay_rate, staircase, name)


def natural_exp_decay(
    learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
    staircase: bool = False, name: str | None = None,
) -> Any:  # fmt: skip
    """exponential_decay with rate exp(-decay_rate) (an Exp node outside the schedule)."""
    natural_exp_rate = math_ops.exp(math_ops.negative(decay_rate))
    return _exponential(learning_rate, global_step, decay_steps, natural_exp_rate, staircase, name)


def _identity(value: Any) -> Any:
    return value


def piecewise_constant(x: Any, boundaries: Any, values: Any, name: str | None = None) -> Any:
    """values[i] while boundaries[i-1] < x <= boundaries[i]: a tf.case over the
    intervals, exclusive."""
    boundaries = [convert_to_tensor(b) for b in boundaries]
    values = [convert_to_tensor(v) for v in values]
    x_recomp = convert_to_tensor(x)
    for i, b in enumerate(boundaries):
        if b.dtype.base_dtype != x_recomp.dtype.base_dtype:
            if b.dtype.base_dtype == dtypes.int32 and x_recomp.dtype.base_dtype == dtypes.int64:
                boundaries[i] = math_ops.cast(b, x_recomp.dtype.base_dtype)
            else:
                raise ValueError(
                    f"Boundaries ({b.dtype.base_dtype}) must have the same dtype as x "
                    f"({x_recomp.dtype.base_dtype})."
                )
    for v in values[1:]:
        if v.dtype.base_dtype != values[0].dtype.base_dtype:
            raise ValueError(
                "Values must have elements all with the same dtype "
                f"({values[0].dtype.base_dtype} vs {v.dtype.base_dtype})."
            )
    with _ops.name_scope(name or "PiecewiseConstant"):
        # The schedule converts its (already tensor) arguments again: no new nodes.
        x_recomp = convert_to_tensor(x)
        for i, b in enumerate(boundaries):
            if b.dtype.base_dtype != x_recomp.dtype.base_dtype:
                boundaries[i] = math_ops.cast(b, x_recomp.dtype.base_dtype)
        pairs: list[tuple[Any, Callable[[], Any]]] = [
            (x_recomp <= boundaries[0], lambda: values[0]),
            (x_recomp > boundaries[-1], lambda: values[-1]),
        ]
        for low, high, v in zip(boundaries[:-1], boundaries[1:], values[1:-1]):
            pred = (x_recomp > low) & (x_recomp <= high)
            pairs.append((pred, functools.partial(_identity, v)))
        return case(pairs, lambda: values[0], exclusive=True)


piecewise_constant_decay = piecewise_constant


def polynomial_decay(
    learning_rate: Any, global_step: Any, decay_steps: Any, end_learning_rate: Any = 0.0001,
    power: Any = 1.0, cycle: bool = False, name: str | None = None,
) -> Any:  # fmt: skip
    """(lr - end) * (1 - step / decay_steps) ^ power + end, the step clipped (or the
    decay period stretched, cycle=True) at decay_steps."""
    with _ops.name_scope(name or "PolynomialDecay") as scope:
        initial = _initial(learning_rate)
        dtype = initial.dtype
        end = math_ops.cast(end_learning_rate, dtype)
        power = math_ops.cast(power, dtype)
        step = math_ops.cast(global_step, dtype)
        steps = math_ops.cast(decay_steps, dtype)
        if cycle:
            multiplier = array_ops.where_v2(
                math_ops.equal(step, 0), 1.0, math_ops.ceil(step / decay_steps)
            )
            steps = math_ops.multiply(steps, multiplier)
        else:
            step = math_ops.minimum(step, steps)
        p = math_ops.divide(step, steps)
        return math_ops.add(
            math_ops.multiply(initial - end, math_ops.pow(1 - p, power)), end, name=scope
        )


def inverse_time_decay(
    learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
    staircase: bool = False, name: str | None = None,
) -> Any:  # fmt: skip
    """learning_rate / (1 + decay_rate * global_step / decay_steps)."""
    with _ops.name_scope(name or "InverseTimeDecay") as scope:
        initial = _initial(learning_rate)
        dtype = initial.dtype
        decay_steps = math_ops.cast(decay_steps, dtype)
        decay_rate = math_ops.cast(decay_rate, dtype)
        p = math_ops.cast(global_step, dtype) / decay_steps
        if staircase:
            p = math_ops.floor(p)
        const = math_ops.cast(constant(1), dtype)
        denom = math_ops.add(const, math_ops.multiply(decay_rate, p))
        return math_ops.divide(initial, denom, name=scope)


def cosine_decay(
    learning_rate: Any, global_step: Any, decay_steps: Any, alpha: float = 0.0,
    name: str | None = None,
) -> Any:  # fmt: skip
    """learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * step / decay_steps)) + alpha)."""
    with _ops.name_scope(name or "CosineDecay"):
        initial = _initial(learning_rate)
        dtype = initial.dtype
        decay_steps = math_ops.cast(decay_steps, dtype)
        step = math_ops.minimum(math_ops.cast(global_step, dtype), decay_steps)
        completed_fraction = step / decay_steps
        cosine_decayed = 0.5 * (1.0 + math_ops.cos(constant(math.pi) * completed_fraction))
        decayed = (1 - alpha) * cosine_decayed + alpha
        return math_ops.multiply(initial, decayed)


def cosine_decay_restarts(
    learning_rate: Any, global_step: Any, first_decay_steps: Any, t_mul: float = 2.0,
    m_mul: float = 1.0, alpha: float = 0.0, name: str | None = None,
) -> Any:  # fmt: skip
    """SGDR: cosine decay restarted every period, periods growing by t_mul and peaks
    shrinking by m_mul (a cond on t_mul == 1 picks the restart arithmetic)."""
    with _ops.name_scope(name or "SGDRDecay") as scope:
        initial = _initial(learning_rate)
        dtype = initial.dtype
        first_decay_steps = math_ops.cast(first_decay_steps, dtype)
        alpha_t = math_ops.cast(alpha, dtype)
        t_mul_t = math_ops.cast(t_mul, dtype)
        m_mul_t = math_ops.cast(m_mul, dtype)
        completed_fraction = math_ops.cast(global_step, dtype) / first_decay_steps

        def compute_step(completed_fraction: Any, geometric: bool = False) -> Any:
            if geometric:
                i_restart = math_ops.floor(
                    math_ops.log(1.0 - completed_fraction * (1.0 - t_mul_t)) / math_ops.log(t_mul_t)
                )
                sum_r = (1.0 - t_mul_t**i_restart) / (1.0 - t_mul_t)
                completed_fraction = (completed_fraction - sum_r) / t_mul_t**i_restart
            else:
                i_restart = math_ops.floor(completed_fraction)
                completed_fraction -= i_restart
            return i_restart, completed_fraction

        i_restart, completed_fraction = control_flow_ops.cond(
            math_ops.equal(t_mul_t, 1.0),
            lambda: compute_step(completed_fraction, geometric=False),
            lambda: compute_step(completed_fraction, geometric=True),
        )
        m_fac = m_mul_t**i_restart
        cosine_decayed = 0.5 * m_fac * (1.0 + math_ops.cos(constant(math.pi) * completed_fraction))
        decayed = (1 - alpha_t) * cosine_decayed + alpha_t
        return math_ops.multiply(initial, decayed, name=scope)


def linear_cosine_decay(
    learning_rate: Any, global_step: Any, decay_steps: Any, num_periods: float = 0.5,
    alpha: float = 0.0, beta: float = 0.001, name: str | None = None,
) -> Any:  # fmt: skip
    """learning_rate * ((alpha + linear) * cosine + beta), linear falling from 1 to 0 over
    decay_steps and cosine running num_periods periods."""
    with _ops.name_scope(name or "LinearCosineDecay") as scope:
        initial = _initial(learning_rate)
        dtype = initial.dtype
        decay_steps = math_ops.cast(decay_steps, dtype)
        num_periods_t = math_ops.cast(num_periods, dtype)
        alpha_t = math_ops.cast(alpha, dtype)
        beta_t = math_ops.cast(beta, dtype)
        step = math_ops.minimum(math_ops.cast(global_step, dtype), decay_steps)
        linear_decayed = (decay_steps - step) / decay_steps
        completed_fraction = step / decay_steps
        fraction = 2.0 * num_periods_t * completed_fraction
        cosine_decayed = 0.5 * (1.0 + math_ops.cos(constant(math.pi) * fraction))
        linear_cosine_decayed = (alpha_t + linear_decayed) * cosine_decayed + beta_t
        return math_ops.multiply(initial, linear_cosine_decayed, name=scope)
