"""Client, graph building: small math APIs TF1 programs call, built as TensorFlow 2.21's
Python builds them (same ops, node names and inputs): tf.sort/tf.argsort (TopKV2 over
negated values), tf.math.reduce_variance/reduce_std, tf.meshgrid,
tf.broadcast_dynamic_shape, tf.bitwise.*, tf.angle, tf.math.polyval, tf.math.accumulate_n.
Pure graph building; not thread-safe (as a Graph)."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.ops import array_ops, math_ops, nn_impl

# --- tf.sort / tf.argsort (sort_ops.py) -------------------------------------------------


def _descending_sort(values: Any, axis: int, return_argsort: bool) -> Any:
    k = array_ops.shape(values)[axis]
    rank = array_ops.rank(values)
    static_rank = values.shape.ndims
    transposition = None
    top_k_input = values
    # Like TF: sort the last axis directly, otherwise swap `axis` with the last one.
    if not (axis == -1 or axis + 1 == static_rank):
        if static_rank is None:
            raise NotImplementedError("sort along a non-last axis needs a known rank")
        if axis < 0:
            axis += static_rank
        perm = np.r_[
            np.arange(axis), [static_rank - 1], np.arange(axis + 1, static_rank - 1), [axis]
        ]
        transposition = constant(perm, name="transposition")
        top_k_input = array_ops.transpose(values, transposition)
    del rank  # built for graph parity: TF makes the Rank node even when unused
    sorted_values, indices = nn_impl.top_k(top_k_input, k)
    result = indices if return_argsort else sorted_values
    if transposition is not None:
        result = array_ops.transpose(result, transposition)
    return result


def _ascending_sort(values: Any, axis: int, return_argsort: bool) -> Any:
    # TopKV2 sorts descending: reverse the order by negating (ints: -x - 1 keeps the
    # minimum representable; unsigned: max - x).
    dtype = values.dtype
    if dtype.is_unsigned:
        offset = dtype.max
        out = _descending_sort(offset - values, axis, return_argsort)
        return out if return_argsort else offset - out
    if dtype.is_integer:
        out = _descending_sort(-values - 1, axis, return_argsort)
        return out if return_argsort else -out - 1
    out = _descending_sort(-values, axis, return_argsort)
    return out if return_argsort else -out


_SORT_IMPL = {"ASCENDING": _ascending_sort, "DESCENDING": _descending_sort}


def _sort_or_argsort(values: Any, axis: Any, direction: str, return_argsort: bool) -> Any:
    if direction not in _SORT_IMPL:
        valid = ", ".join(sorted(_SORT_IMPL))
        raise ValueError(
            f"Argument `direction` should be one of {valid}. Received: direction={direction}"
        )
    axis = convert_to_tensor(axis, name="axis")
    axis_static = shape_fns.constant_value(axis)
    if axis.shape.ndims not in (None, 0) or axis_static is None:
        raise ValueError(f"Argument `axis` must be a constant scalar. Received: axis={axis}.")
    values = convert_to_tensor(values, name="values")
    return _SORT_IMPL[direction](values, int(axis_static), return_argsort)


def sort(values: Any, axis: Any = -1, direction: str = "ASCENDING", name: str | None = None) -> Any:
    with _ops.name_scope(name, "sort"):
        return _sort_or_argsort(values, axis, direction, return_argsort=False)


def argsort(
    values: Any,
    axis: Any = -1,
    direction: str = "ASCENDING",
    stable: bool = False,
    name: str | None = None,
) -> Any:
    del stable  # TF ignores it: TopKV2 is stable already.
    with _ops.name_scope(name, "argsort"):
        return _sort_or_argsort(values, axis, direction, return_argsort=True)


# --- tf.math.reduce_variance / reduce_std -----------------------------------------------


def reduce_variance(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None
) -> Any:
    with _ops.name_scope(name or "reduce_variance"):
        input_tensor = convert_to_tensor(input_tensor)
        means = math_ops.reduce_mean(input_tensor, axis=axis, keepdims=True)
        if means.dtype.is_integer:
            raise TypeError(
                f"Input must be either real or complex. Received integer type {means.dtype}."
            )
        diff = input_tensor - means
        if diff.dtype.is_complex:
            attrs = {"Tout": diff.dtype.real_dtype}
            product = apply_op("Mul", [apply_op("Conj", [diff]).outputs[0], diff]).outputs[0]
            squared = apply_op("Real", [product], attrs).outputs[0]
        else:
            squared = math_ops.square(diff)
        return math_ops.reduce_mean(squared, axis=axis, keepdims=keepdims)


def reduce_std(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None
) -> Any:
    with _ops.name_scope(name or "reduce_std"):
        input_tensor = convert_to_tensor(input_tensor)
        variance = reduce_variance(input_tensor, axis=axis, keepdims=keepdims)
        return math_ops.sqrt(variance)


# --- tf.meshgrid / tf.broadcast_dynamic_shape -------------------------------------------


def meshgrid(*args: Any, **kwargs: Any) -> list[Any]:
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError(f"'{next(iter(kwargs))}' is an invalid keyword argument for this function")
    if indexing not in ("xy", "ij"):
        raise ValueError(
            f"Argument `indexing` parameter must be either 'xy' or 'ij', got '{indexing}'"
        )
    with _ops.name_scope(name, "meshgrid", args):
        ndim = len(args)
        if not ndim:
            return []
        s0 = (1,) * ndim
        output = [
            array_ops.reshape(array_ops.stack(x), s0[:i] + (-1,) + s0[i + 1 :])
            for i, x in enumerate(args)
        ]
        shapes = [_size(x) for x in args]
        output_dtype = convert_to_tensor(args[0]).dtype.base_dtype
        if indexing == "xy" and ndim > 1:
            output[0] = array_ops.reshape(output[0], (1, -1) + (1,) * (ndim - 2))
            output[1] = array_ops.reshape(output[1], (-1, 1) + (1,) * (ndim - 2))
            shapes[0], shapes[1] = shapes[1], shapes[0]
        mult_fact = array_ops.ones(shapes, output_dtype)
        return [x * mult_fact for x in output]


def _size(x: Any) -> Any:
    # TF's size() converts a Python list inside its own "Size" scope ("Size/Const").
    with _ops.name_scope(None, "Size", [x]) as scope:
        return array_ops.size(convert_to_tensor(x), name=scope)


def broadcast_dynamic_shape(shape_x: Any, shape_y: Any) -> Any:
    return apply_op("BroadcastArgs", [shape_x, shape_y]).outputs[0]


# --- tf.bitwise.* -----------------------------------------------------------------------

bitwise_and = math_ops._binary("BitwiseAnd")
bitwise_or = math_ops._binary("BitwiseOr")
bitwise_xor = math_ops._binary("BitwiseXor")
left_shift = math_ops._binary("LeftShift")
right_shift = math_ops._binary("RightShift")
invert = math_ops._unary("Invert")


# --- tf.angle, tf.math.polyval, tf.math.accumulate_n ------------------------------------


def angle(input: Any, name: str | None = None) -> Any:
    with _ops.name_scope(name, "Angle", [input]) as scope:
        input = convert_to_tensor(input, name="input")
        if input.dtype.is_complex:
            attrs = {"Tout": input.dtype.real_dtype}
            return apply_op("Angle", [input], attrs, scope).outputs[0]
        # A real number's angle: pi where negative, else 0 (TF's formula).
        return array_ops.where(
            input < 0, np.pi * array_ops.ones_like(input), array_ops.zeros_like(input)
        )


def polyval(coeffs: list[Any], x: Any, name: str | None = None) -> Any:
    if not isinstance(coeffs, list):
        raise ValueError(f"Argument coeffs must be list type. Received type {type(coeffs)}.")
    with _ops.name_scope(name, "polyval", [*coeffs, x]) as scope:
        x = convert_to_tensor(x, name="x")
        if len(coeffs) < 1:
            return array_ops.zeros_like(x, name=scope)
        tensors = [convert_to_tensor(c, name=f"coeff_{i}") for i, c in enumerate(coeffs)]
        p = tensors[0]
        for c in tensors[1:]:
            p = c + p * x
        return p


def accumulate_n(
    inputs: Any, shape: Any = None, tensor_dtype: Any = None, name: str | None = None
) -> Any:
    # TF 2.21 builds accumulate_n as AddN (no AccumulateNV2 node) after its checks.
    error = ValueError("inputs must be a list of at least one Tensor with the same dtype and shape")
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise error
    inputs = [convert_to_tensor(x) for x in inputs]
    if not all(x.dtype == inputs[0].dtype for x in inputs):
        raise error
    if tensor_dtype is not None and dtypes.as_dtype(tensor_dtype) != inputs[0].dtype:
        raise TypeError(
            f"The `tensor_dtype` argument is {tensor_dtype}, but `input` is of type "
            f"{inputs[0].dtype}. These must be equal. Try casting the input to the desired type."
        )
    if len(inputs) == 1:
        return inputs[0] if name is None else array_ops.identity(inputs[0], name=name)
    return math_ops.add_n(inputs, name=name)
