"""Client, graph building: tf.tensordot (tf.linalg.tensordot) as TF builds it in
math_ops.tensordot: each operand transposed and reshaped to a matrix (from static dims
when known, else from its Shape and Rank at run time), one MatMul, and a Reshape to the
free dims. Gradients are those of Transpose, Reshape and MatMul."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.ops import array_ops, math_ops


def _axes(a: Any, axes: Any) -> tuple[Any, Any]:
    """TF's _tensordot_axes: the contraction axes of `a` and of `b`."""
    ndims = a.shape.ndims
    if isinstance(axes, (int, np.integer)):
        if axes < 0:
            raise ValueError(f"`axes` must be at least 0. Received: {axes}.")
        if ndims is not None:
            if axes > ndims:
                raise ValueError(
                    f"`axes` must not be larger than the number of dimensions of tensor "
                    f"{a}.  Received {axes}, vs tensor dimensions {ndims}."
                )
            return list(builtins.range(ndims - axes, ndims)), list(builtins.range(axes))
        rank = array_ops.rank(a)
        return (
            math_ops.range(rank - axes, rank, dtype=dtypes.int32),
            math_ops.range(axes, dtype=dtypes.int32),
        )
    if isinstance(axes, (list, tuple)):
        if len(axes) != 2:
            raise ValueError(f"`axes` must be an integer or have length 2. Received {axes}.")
        a_axes, b_axes = axes
        if isinstance(a_axes, (int, np.integer)) and isinstance(b_axes, (int, np.integer)):
            a_axes, b_axes = [a_axes], [b_axes]
        if len(a_axes) != len(b_axes):
            raise ValueError(
                f"Different number of contraction axes `a` and `b`, {len(a_axes)} != {len(b_axes)}."
            )
        return a_axes, b_axes
    t = convert_to_tensor(axes, name="axes", dtype=dtypes.int32)
    return t[0], t[1]


def _static_reshape(a: Any, axes: list[int], flipped: bool) -> tuple[Any, list[int]]:
    shape_a = a.shape.as_list()
    axes = [i if i >= 0 else i + len(shape_a) for i in axes]
    free = [i for i in builtins.range(len(shape_a)) if i not in axes]
    free_dims = [shape_a[i] for i in free]
    prod_free = int(np.prod(free_dims))
    prod_axes = int(np.prod([shape_a[i] for i in axes]))
    perm = axes + free if flipped else free + axes
    new_shape = [prod_axes, prod_free] if flipped else [prod_free, prod_axes]
    if perm != list(builtins.range(len(shape_a))):
        a = array_ops.transpose(a, perm)
    if a.shape.as_list() != new_shape:
        a = array_ops.reshape(a, new_shape)
    return a, free_dims


def _reshape(a: Any, axes: Any, flipped: bool = False) -> tuple[Any, Any, Any]:
    """TF's _tensordot_reshape: (a as a matrix, its free dims, their static dims)."""
    is_list = isinstance(axes, (list, tuple))
    if a.shape.is_fully_defined() and is_list:
        reshaped, free_dims = _static_reshape(a, list(axes), flipped)
        return reshaped, free_dims, free_dims
    if a.shape.ndims is not None and is_list:
        dims = a.shape.as_list()
        axes = [i if i >= 0 else i + len(dims) for i in axes]
        free_list = [i for i in builtins.range(len(dims)) if i not in axes]
        free_static: Any = [dims[i] for i in free_list]
        axes = convert_to_tensor(axes, dtype=dtypes.int32, name="axes")
        free = convert_to_tensor(free_list, dtype=dtypes.int32, name="free")
        shape_a = array_ops.shape(a)
    else:
        free_static = None
        shape_a = array_ops.shape(a)
        rank_a = array_ops.rank(a)
        axes = convert_to_tensor(axes, dtype=dtypes.int32, name="axes")
        axes = array_ops.where(axes >= 0, axes, axes + rank_a)
        free = apply_op(
            "ListDiff", [math_ops.range(rank_a), axes], {"out_idx": dtypes.int32}
        ).outputs[0]
    free_dims = array_ops.gather(shape_a, free)
    axes_dims = array_ops.gather(shape_a, axes)
    prod_free = math_ops.reduce_prod(free_dims)
    prod_axes = math_ops.reduce_prod(axes_dims)
    if flipped:
        perm = array_ops.concat([axes, free], 0)
        new_shape = array_ops.stack([prod_axes, prod_free])
    else:
        perm = array_ops.concat([free, axes], 0)
        new_shape = array_ops.stack([prod_free, prod_axes])
    reshaped = array_ops.reshape(array_ops.transpose(a, perm), new_shape)
    return reshaped, free_dims, free_static


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Any:
    with _ops.name_scope(name, "Tensordot", [a, b, axes]) as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        a_axes, b_axes = _axes(a, axes)
        a_2d, a_free, a_static = _reshape(a, a_axes)
        b_2d, b_free, b_static = _reshape(b, b_axes, True)
        product = math_ops.matmul(a_2d, b_2d)
        if isinstance(a_free, list) and isinstance(b_free, list):
            if product.shape.is_fully_defined() and product.shape.as_list() == a_free + b_free:
                return product
            return array_ops.reshape(product, a_free + b_free, name=scope)
        a_free = convert_to_tensor(a_free, dtype=dtypes.int32)
        b_free = convert_to_tensor(b_free, dtype=dtypes.int32)
        out = array_ops.reshape(product, array_ops.concat([a_free, b_free], 0), name=scope)
        if a_static is not None and b_static is not None:
            out.set_shape(a_static + b_static)
        return out
