"""Ops (executor stage): Roll (TensorFlow's manip_ops), shifting elements along axes
with wrap-around; shifts on the same axis add up, as TF's kernel sums them. Pure data
movement, so results equal TensorFlow's bit for bit. Stateless and thread-safe."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

register_op(
    "Roll",
    ["input: T", "shift: Tshift", "axis: Taxis"],
    ["output: T"],
    ["T: type", "Tshift: {int32, int64}", "Taxis: {int32, int64}"],
)


def roll(x: np.ndarray, shift: np.ndarray, axis: np.ndarray) -> np.ndarray:
    if x.ndim < 1:
        raise InvalidArgumentError("input must be 1-D or higher")
    if shift.ndim > 1:
        raise InvalidArgumentError(
            f"shift must be a scalar or a 1-D vector. Found: {mu.shape_str(shift.shape)}"
        )
    if axis.ndim > 1:
        raise InvalidArgumentError(
            f"axis must be a scalar or a 1-D vector. Found: {mu.shape_str(axis.shape)}"
        )
    if shift.shape != axis.shape:
        raise InvalidArgumentError("shift and axis must have the same size")
    totals = [0] * x.ndim
    for s, a in zip(shift.reshape(-1).tolist(), axis.reshape(-1).tolist()):
        ax = a + x.ndim if a < 0 else a
        if not 0 <= ax < x.ndim:
            raise InvalidArgumentError(f"axis {ax} is out of range")
        totals[ax] += s
    moved = [(s, ax) for ax, s in enumerate(totals) if x.shape[ax] and s % x.shape[ax]]
    if not moved:
        return x.copy()
    return np.roll(x, [s for s, _ in moved], [ax for _, ax in moved])


@register_kernel("Roll")
def _roll(k: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        x, shift, axis = (np.asarray(v) for v in inputs)
        return [roll(x, shift, axis)]

    return compute
