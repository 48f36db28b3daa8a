"""Ops (executor stage): CountUpTo and ResourceCountUpTo (TensorFlow's count_up_to_op.cc),
the counter `limit_epochs` and a v1 input producer use to stop after N epochs.

Each kernel increments the variable under its lock and returns the value it had; at
`limit` it raises OutOfRange instead. Safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import FailedPreconditionError, InvalidArgumentError, OutOfRangeError
from common.ops.array_ops import shape_str
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op
from common.ops.state_ops import Var, resource_var

_ATTRS = ["limit: int", "T: {int32, int64}"]

register_op("CountUpTo", ["ref: Ref(T)"], ["output: T"], _ATTRS)
register_op("ResourceCountUpTo", ["resource: resource"], ["output: T"], _ATTRS, stateful=True)


def _count(var: Var, limit: int, what: str) -> np.ndarray:
    with var.lock:
        before = var.value
        if before is None:
            raise FailedPreconditionError(f"Attempting to use uninitialized value {var.name}")
        if before.shape != ():
            raise InvalidArgumentError(f"{what} is not a scalar: {shape_str(before.shape)}")
        if before >= limit:
            raise OutOfRangeError(f"Reached limit of {limit}")
        old = before.copy()
        var.set(before + 1)
    return old


@register_kernel("CountUpTo")
def _count_up_to(k: KernelConstruction) -> Callable:
    limit = int(k.attr("limit"))

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [_count(inputs[0], limit, "input")]

    return compute


@register_kernel("ResourceCountUpTo")
def _resource_count_up_to(k: KernelConstruction) -> Callable:
    limit, dtype = int(k.attr("limit")), k.attr("T")

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [_count(resource_var(ctx, inputs[0], dtype), limit, "Input")]

    return compute
