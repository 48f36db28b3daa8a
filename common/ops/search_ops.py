"""Ops (executor stage): index arithmetic TF1 programs use — LowerBound and UpperBound
(tf.searchsorted: per row of a 2-D sorted tensor, the first position whose element is
>= / > each value) and UnravelIndex (flat indices to coordinates). Integer results equal
TensorFlow's bit for bit (including UnravelIndex's C division on negative indices, which
TF does not reject). Stateless and thread-safe."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

for _bound in ("LowerBound", "UpperBound"):
    register_op(
        _bound,
        ["sorted_inputs: T", "values: T"],
        ["output: out_type"],
        ["T: type", "out_type: {int32, int64} = DT_INT32"],
    )
register_op(
    "UnravelIndex",
    ["indices: Tidx", "dims: Tidx"],
    ["output: Tidx"],
    ["Tidx: {int32, int64} = DT_INT32"],
)


def search_sorted(
    sorted_inputs: np.ndarray,
    values: np.ndarray,
    side: Literal["left", "right"],
    out: np.dtype,
) -> np.ndarray:
    for arg, t in (("sorted_inputs", sorted_inputs), ("values", values)):
        if t.ndim != 2:
            raise InvalidArgumentError(
                f"Shape must be rank 2 but is rank {t.ndim} for `{arg}` argument"
            )
    if sorted_inputs.shape[0] != values.shape[0]:
        raise InvalidArgumentError("Leading dim_size of both tensors must match.")
    result = np.zeros(values.shape, out)
    for row in range(values.shape[0]):
        result[row] = np.searchsorted(sorted_inputs[row], values[row], side=side)
    return result


def _bound_kernel(side: Literal["left", "right"]) -> Callable[[KernelConstruction], Callable]:
    def factory(k: KernelConstruction) -> Callable:
        out = mu.np_type(k.attr("out_type"))

        def compute(ctx, inputs: list) -> list:
            sorted_inputs, values = (np.asarray(v) for v in inputs)
            return [search_sorted(sorted_inputs, values, side, out)]

        return compute

    return factory


register_kernel("LowerBound")(_bound_kernel("left"))
register_kernel("UpperBound")(_bound_kernel("right"))


def _debug_string(t: np.ndarray) -> str:
    """Tensor::DebugString of an empty tensor (the only one UnravelIndex prints)."""
    return f"Tensor<type: {t.dtype.name} shape: {mu.shape_str(t.shape)} values: >"


def unravel_index(indices: np.ndarray, dims: np.ndarray) -> np.ndarray:
    if indices.ndim > 1:
        raise InvalidArgumentError(
            f'The indices can only be scalar or vector, got "{mu.shape_str(indices.shape)}"'
        )
    if dims.ndim != 1:
        raise InvalidArgumentError(f'The indices can only be 1-D, got "{mu.shape_str(dims.shape)}"')
    if indices.size == 0:
        raise InvalidArgumentError(f"received empty tensor indices: {_debug_string(indices)}")
    for i, d in enumerate(dims.tolist()):
        if d == 0:
            raise InvalidArgumentError(
                f"Input dims cannot contain a dim of zero, but dims contains zero at index {i}"
            )
        if d < 0:
            raise InvalidArgumentError(f"Input dims cannot be negative. Got dim = {d} at index {i}")
    flat = indices.astype(np.int64)
    if (flat >= int(np.prod(dims.astype(np.int64)))).any():
        raise InvalidArgumentError("index is out of bound as with dims")
    strides = np.cumprod(dims.astype(np.int64)[::-1])[::-1]
    strides = np.append(strides[1:], 1)
    # C++ division and remainder truncate toward zero (negative indices stay negative).
    quotient = np.sign(flat)[..., None] * (np.abs(flat)[..., None] // strides)
    coords = np.fmod(quotient, dims.astype(np.int64))
    return np.moveaxis(coords, -1, 0).astype(indices.dtype)


@register_kernel("UnravelIndex")
def _unravel_index(k: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        indices, dims = (np.asarray(v) for v in inputs)
        return [unravel_index(indices, dims)]

    return compute
