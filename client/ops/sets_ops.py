"""Client API: tf.sets (size, intersection, union, difference, and the TF1 names
set_size, set_intersection, set_union, set_difference), building the graphs TensorFlow's
sets_impl.py builds: one SetSize or {DenseToDense,DenseToSparse,SparseToSparse}
SetOperation node, its result a SparseTensor. Not differentiable, as in TensorFlow. Not
thread-safe (graph building)."""

from __future__ import annotations

import types
from typing import Any

from client.framework import dtypes, shape_fns
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.sparse_tensor import SparseTensor, SparseTensorValue
from client.framework.tensor_shape import TensorShape

_VALID_DTYPES = frozenset(
    [dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16,
     dtypes.string]
)  # fmt: skip


def _tensor_or_sparse(x: Any, name: str) -> Any:
    """TF's convert_to_tensor_or_sparse_tensor."""
    if isinstance(x, SparseTensorValue):
        return SparseTensor(x.indices, x.values, x.dense_shape)
    if isinstance(x, SparseTensor):
        return x
    return convert_to_tensor(x, name=name)


def set_size(a: Any, validate_indices: bool = True) -> Any:
    """tf.sets.size: the number of distinct values in each last-dimension row of `a`."""
    a = _tensor_or_sparse(a, "a")
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a}.")
    if a.values.dtype.base_dtype not in _VALID_DTYPES:
        raise TypeError(
            f"Invalid dtype `{a.values.dtype}` not in supported dtypes: `{_VALID_DTYPES}`."
        )
    inputs = [a.indices, a.values, a.dense_shape]
    return apply_op("SetSize", inputs, {"validate_indices": validate_indices}).outputs[0]


def _convert_pair(a: Any, b: Any) -> tuple[Any, Any, bool]:
    a = _tensor_or_sparse(a, "a")
    if a.dtype.base_dtype not in _VALID_DTYPES:
        raise TypeError(
            f"'a' has invalid dtype `{a.dtype}` not in supported dtypes: `{_VALID_DTYPES}`."
        )
    b = _tensor_or_sparse(b, "b")
    if b.dtype.base_dtype != a.dtype.base_dtype:
        raise TypeError(f"Types don't match, {a.dtype} vs {b.dtype}.")
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        return b, a, True
    return a, b, False


def _set_operation(a: Any, b: Any, set_operation: str, validate_indices: bool) -> SparseTensor:
    attrs = {"set_operation": set_operation, "validate_indices": validate_indices}
    if isinstance(a, SparseTensor):
        if not isinstance(b, SparseTensor):
            raise ValueError(
                "Sparse,Dense is not supported, but Dense,Sparse is. Please flip the order of "
                "your inputs."
            )
        inputs = [a.indices, a.values, a.dense_shape, b.indices, b.values, b.dense_shape]
        op_type = "SparseToSparseSetOperation"
    elif isinstance(b, SparseTensor):
        inputs = [a, b.indices, b.values, b.dense_shape]
        op_type = "DenseToSparseSetOperation"
    else:
        inputs = [a, b]
        op_type = "DenseToDenseSetOperation"
    return SparseTensor(*apply_op(op_type, inputs, attrs).outputs)


def set_intersection(a: Any, b: Any, validate_indices: bool = True) -> SparseTensor:
    """tf.sets.intersection along the last dimension of `a` and `b`."""
    a, b, _ = _convert_pair(a, b)
    return _set_operation(a, b, "intersection", validate_indices)


def set_difference(
    a: Any, b: Any, aminusb: bool = True, validate_indices: bool = True
) -> SparseTensor:
    """tf.sets.difference: a - b (or b - a) along the last dimension."""
    a, b, flipped = _convert_pair(a, b)
    if flipped:
        aminusb = not aminusb
    return _set_operation(a, b, "a-b" if aminusb else "b-a", validate_indices)


def set_union(a: Any, b: Any, validate_indices: bool = True) -> SparseTensor:
    """tf.sets.union along the last dimension of `a` and `b`."""
    a, b, _ = _convert_pair(a, b)
    return _set_operation(a, b, "union", validate_indices)


# tf.sets, with TF1's set_* aliases (tf.compat.v1.sets.set_union ...).
sets = types.SimpleNamespace(
    size=set_size,
    intersection=set_intersection,
    difference=set_difference,
    union=set_union,
    set_size=set_size,
    set_intersection=set_intersection,
    set_difference=set_difference,
    set_union=set_union,
)


# -- static shapes, as TensorFlow's SetShapeFn ----------------------------------------------
@shape_fns._reg("SetSize")
def _set_size_shape(op: Any) -> list[Any]:
    return [shape_fns.UNKNOWN]


@shape_fns._reg(
    "DenseToDenseSetOperation", "DenseToSparseSetOperation", "SparseToSparseSetOperation"
)
def _set_operation_shape(op: Any) -> list[Any]:
    """The result's rank is the inputs': the dense set1's, or set1_shape's length."""
    if op.type == "SparseToSparseSetOperation":
        s = op.inputs[2].shape
        rank = s.as_list()[0] if s.ndims == 1 else None
    else:
        rank = op.inputs[0].shape.ndims
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]
