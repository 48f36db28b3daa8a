"""Client, graph building: tf.norm / tf.linalg.norm as TensorFlow's linalg_ops.norm builds
them (Euclidean/Frobenius as sqrt(sum(x * conj(x))), 1, inf and p-norms from Abs, Pow and
reductions; the matrix 2-norm as the largest singular value, the axes moved last by
permutations TF computes with map_fn and cond), with TF's node names and argument
checks. Pure graph building; not thread-safe (as a Graph)."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.ops import array_ops, control_flow_ops, functional_ops, math_ops

_MATRIX_NORMS: list[Any] = ["euclidean", "fro", 1, 2, np.inf]
_VECTOR_NORMS: list[Any] = ["euclidean", 1, 2, np.inf]


def conj(x: Any, name: str | None = None) -> Any:
    """tf.math.conj: a Conj node for complex tensors, the tensor itself otherwise."""
    with _ops.name_scope(name, "Conj", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex:
            return apply_op("Conj", [x], {}, scope).outputs[0]
        return x


def _check_axis_and_ord(axis: Any, ord: Any) -> tuple[bool, Any]:
    """TF's argument checks: returns whether this is a matrix norm and the axis tuple."""
    if isinstance(axis, (tuple, list)) and len(axis) == 2:
        axis = tuple(axis)
        if not isinstance(axis[0], int) or not isinstance(axis[1], int) or axis[0] == axis[1]:
            raise ValueError(
                f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}"
            )
        if ord not in _MATRIX_NORMS:
            raise ValueError(f"'ord' must be a supported matrix norm in {_MATRIX_NORMS}, got {ord}")
        return True, axis
    if not (isinstance(axis, int) or axis is None):
        raise ValueError(
            f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}"
        )
    if (not np.isreal(ord) or ord <= 0) and ord not in _VECTOR_NORMS:
        raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
    return False, None if axis is None else (axis,)


def norm(
    tensor: Any,
    ord: Any = "euclidean",
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    keep_dims: Any = None,
) -> Any:
    """tf.norm (TF1 signature; keep_dims is the deprecated spelling of keepdims)."""
    keepdims = bool(keepdims if keepdims is not None else (keep_dims or False))
    is_matrix_norm, axis = _check_axis_and_ord(axis, ord)
    with _ops.name_scope(name, "norm", [tensor]):
        tensor = convert_to_tensor(tensor)
        if ord in ["fro", "euclidean", 2, 2.0]:
            if is_matrix_norm and ord in [2, 2.0]:
                result = _matrix_2_norm(tensor, axis)
            else:
                result = math_ops.sqrt(
                    math_ops.reduce_sum(tensor * conj(tensor), axis, keepdims=True)
                )
        else:
            result = _abs_norm(tensor, ord, axis, is_matrix_norm)
        if not keepdims:
            result = array_ops.squeeze(result, axis)
        return result


def _matrix_2_norm(tensor: Any, axis: Any) -> Any:
    """The largest singular value over `axis`, kept as two size-1 dims there."""
    rank = array_ops.rank(tensor)
    positive_axis = functional_ops.map_fn(
        lambda i: control_flow_ops.cond(i >= 0, lambda: i, lambda: i + rank),
        convert_to_tensor(axis),
    )
    axes = math_ops.range(rank)
    perm_before = array_ops.concat(
        [
            apply_op("ListDiff", [axes, positive_axis], {"out_idx": dtypes.int32}).outputs[0],
            positive_axis,
        ],
        axis=0,
    )
    perm_after = functional_ops.map_fn(
        lambda i: math_ops.cast(
            array_ops.squeeze(array_ops.where_v2(math_ops.equal(perm_before, i))),
            dtype=dtypes.int32,
        ),
        axes,
    )
    permed = array_ops.transpose(tensor, perm=perm_before)
    singular = apply_op("Svd", [permed], {"compute_uv": False}).outputs[0]
    matrix_2_norm = array_ops.expand_dims(
        math_ops.reduce_max(math_ops.abs(singular), axis=-1, keepdims=True), axis=-1
    )
    return array_ops.transpose(matrix_2_norm, perm=perm_after)


def _abs_norm(tensor: Any, ord: Any, axis: Any, is_matrix_norm: bool) -> Any:
    result = math_ops.abs(tensor)
    if ord == 1:
        result = math_ops.reduce_sum(result, None if axis is None else axis[0], keepdims=True)
        if is_matrix_norm:
            result = math_ops.reduce_max(result, axis[-1], keepdims=True)
    elif ord == np.inf:
        if is_matrix_norm:
            result = math_ops.reduce_sum(result, axis[1], keepdims=True)
        result = math_ops.reduce_max(result, None if axis is None else axis[0], keepdims=True)
    else:
        result = math_ops.pow(
            math_ops.reduce_sum(math_ops.pow(result, ord), axis, keepdims=True), 1.0 / ord
        )
    return result
