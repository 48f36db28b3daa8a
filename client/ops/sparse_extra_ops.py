"""Client API: the tf.sparse functions that reshape, cut, join and normalize SparseTensors
(concat, reshape, slice, split, softmax, maximum, minimum) and their (de)serialization
(tf.serialize_sparse, serialize_many_sparse, deserialize_many_sparse), building the graphs
TensorFlow's sparse_ops.py builds, node names included; plus the static shapes of those
ops, as TensorFlow's C++ shape functions give them. Not thread-safe (graph building)."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.framework.sparse_tensor import SparseTensor, convert_to_sparse_tensor
from client.framework.tensor_shape import TensorShape, dimension_value
from client.ops import array_ops, math_ops


def _convert_all(sp_inputs: Any) -> list[SparseTensor]:
    if not isinstance(sp_inputs, (list, tuple)):
        raise TypeError("Inputs must be a list or tuple.")
    return [convert_to_sparse_tensor(s) for s in sp_inputs]


def _sum_dims(shapes: list[TensorShape], axis: int) -> int | None:
    dims = [dimension_value(s.as_list()[axis]) for s in shapes]
    return None if any(d is None for d in dims) else sum(d for d in dims if d is not None)


def sparse_concat_v2(
    axis: int, sp_inputs: Any, expand_nonconcat_dims: bool = False, name: str | None = None
) -> SparseTensor:
    """tf.sparse.concat: one SparseConcat; with expand_nonconcat_dims the other dims
    become the largest of the inputs' (computed in the graph, as TF's)."""
    sp_inputs = _convert_all(sp_inputs)
    if len(sp_inputs) == 1:
        return sp_inputs[0]
    inds = [s.indices for s in sp_inputs]
    vals = [s.values for s in sp_inputs]
    shapes = [s.dense_shape for s in sp_inputs]
    if expand_nonconcat_dims:
        max_shape = math_ops.reduce_max(
            array_ops.concat([array_ops.reshape(s, [1, -1]) for s in shapes], 0), 0
        )
        shapes = [
            array_ops.concat(
                [
                    max_shape[:axis],
                    s[-1:] if axis == -1 else s[axis : axis + 1],
                    [] if axis == -1 else max_shape[axis + 1 :],
                ],
                0,
            )
            for s in shapes
        ]
    out_ind, out_val, out_shape = apply_op(
        "SparseConcat", [inds, vals, shapes], {"concat_dim": axis}, name=name
    ).outputs
    input_shapes = [s.shape for s in sp_inputs]
    static: Any
    if all(s.ndims is not None for s in input_shapes):
        if expand_nonconcat_dims:
            static = []
            for d in range(input_shapes[0].ndims or 0):
                dims = [dimension_value(s.as_list()[d]) for s in input_shapes]
                static.append(None if None in dims else max(dims))  # type: ignore[type-var]
        else:
            static = input_shapes[0].as_list()
        static[axis] = _sum_dims(input_shapes, axis)
    else:
        static = None
    if all(s.is_fully_defined() for s in input_shapes):
        return SparseTensor(out_ind, out_val, convert_to_tensor(static, dtype=dtypes.int64))
    output = SparseTensor(out_ind, out_val, out_shape)
    output.set_shape(TensorShape(static))
    return output


def sparse_concat(
    axis: Any,
    sp_inputs: Any,
    name: str | None = None,
    expand_nonconcat_dim: bool = False,
    concat_dim: Any = None,
    expand_nonconcat_dims: Any = None,
) -> SparseTensor:
    """tf.compat.v1.sparse_concat: the TF1 argument names (concat_dim,
    expand_nonconcat_dim) and their aliases."""
    if expand_nonconcat_dims is not None:
        expand_nonconcat_dim = expand_nonconcat_dims
    if concat_dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'concat_dim'")
        axis = concat_dim
    return sparse_concat_v2(axis, sp_inputs, expand_nonconcat_dim, name)


def sparse_reshape(sp_input: Any, shape: Any, name: str | None = None) -> SparseTensor:
    """tf.sparse.reshape: SparseReshape under a "SparseReshape" scope; a static target
    shape (and a fully known input shape) becomes a Const dense_shape, as TF's."""
    sp_input = convert_to_sparse_tensor(sp_input)
    shape = math_ops.cast(shape, dtype=dtypes.int64)
    with _ops.name_scope(name, "SparseReshape", [sp_input]) as scope:
        reshaped_ind, reshaped_shape = apply_op(
            "SparseReshape", [sp_input.indices, sp_input.dense_shape, shape], name=scope
        ).outputs
        target = shape_fns._shape_from_tensor(shape)
        target_dims = target.as_list() if target.ndims is not None else None
        if target_dims is not None and sp_input.shape.is_fully_defined():
            reshaped_shape = _static_reshape(sp_input, shape, target_dims, reshaped_shape)
        return SparseTensor(reshaped_ind, array_ops.identity(sp_input.values), reshaped_shape)


def _static_reshape(sp_input: SparseTensor, shape: Any, dims: list[Any], dynamic: Any) -> Any:
    """TF's sparse_reshape shape checks at graph time, and its Const output shape."""
    by_user = shape_fns.constant_value(shape)
    if by_user is not None and sum(int(d) == -1 for d in by_user) > 1:
        raise ValueError(f"At most one dimension can be inferred (-1). Found: {by_user}")
    original = list(dims)
    in_size = int(np.prod([int(d or 0) for d in sp_input.shape.as_list()]))
    implied = sum(d is None for d in dims)
    if implied == 1 and 0 not in dims:
        at = original.index(None)
        rest = original[:at] + original[at + 1 :]
        dims[at] = int(in_size // np.prod(rest))
    if implied == 0 or (implied == 1 and 0 not in dims):
        size = int(np.prod(dims))
        if size != in_size:
            raise ValueError(
                f"Cannot reshape a tensor with {in_size} elements to shape {original} "
                f"({size} elements)."
            )
        return constant(dims, dtype=dtypes.int64)
    return dynamic


def sparse_slice(sp_input: Any, start: Any, size: Any, name: str | None = None) -> SparseTensor:
    """tf.sparse.slice: one SparseSlice under a "SparseSlice" scope."""
    sp_input = convert_to_sparse_tensor(sp_input)
    start = convert_to_tensor(start, dtypes.int64)
    size = convert_to_tensor(size, dtypes.int64)
    with _ops.name_scope(name, "SparseSlice", [sp_input]) as scope:
        inputs = [sp_input.indices, sp_input.values, sp_input.dense_shape, start, size]
        out = apply_op("SparseSlice", inputs, name=scope).outputs
        return SparseTensor(*out)


class KeywordRequired:
    """The sentinel making sparse_split's arguments keyword-only, as TF's."""

    def __repr__(self) -> str:
        return "KeywordRequired()"


_KEYWORD_REQUIRED = KeywordRequired()


def sparse_split(
    keyword_required: Any = _KEYWORD_REQUIRED,
    sp_input: Any = None,
    num_split: int | None = None,
    axis: Any = None,
    name: str | None = None,
    split_dim: Any = None,
) -> list[SparseTensor]:
    """tf.compat.v1.sparse_split: num_split SparseTensors cut along axis (or split_dim)."""
    if not isinstance(keyword_required, KeywordRequired):
        raise ValueError("Keyword arguments are required for this function.")
    if sp_input is None:
        raise ValueError("sp_input is required")
    if num_split is None:
        raise ValueError("num_split is required")
    if axis is None:  # TF checks axis before looking at split_dim (so axis is required)
        raise ValueError("axis is required")
    if split_dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'split_dim'")
    return _split(sp_input, num_split, axis, name)


def _split(sp_input: Any, num_split: int, axis: Any, name: str | None) -> list[SparseTensor]:
    sp_input = convert_to_sparse_tensor(sp_input)
    inputs = [axis, sp_input.indices, sp_input.values, sp_input.dense_shape]
    outs = apply_op("SparseSplit", inputs, {"num_split": num_split}, name=name).outputs
    return [SparseTensor(outs[i], outs[num_split + i], outs[2 * num_split + i])
            for i in range(num_split)]  # fmt: skip


def sparse_softmax(sp_input: Any, name: str | None = None) -> SparseTensor:
    """tf.sparse.softmax: SparseSoftmax under a "SparseSoftmax" scope."""
    with _ops.name_scope(name, "SparseSoftmax", [sp_input.indices, sp_input.values]):
        inputs = [sp_input.indices, sp_input.values, sp_input.dense_shape]
        out_vals = apply_op("SparseSoftmax", inputs).outputs[0]
        return SparseTensor(sp_input.indices, out_vals, sp_input.dense_shape)


def _sparse_sparse(op_type: str):
    def fn(sp_a: Any, sp_b: Any, name: str | None = None) -> SparseTensor:
        with _ops.name_scope(
            name, op_type, [sp_a.indices, sp_a.values, sp_b.indices, sp_b.values]
        ) as scope:
            inputs = [sp_a.indices, sp_a.values, sp_a.dense_shape,
                      sp_b.indices, sp_b.values, sp_b.dense_shape]  # fmt: skip
            out_indices, out_values = apply_op(op_type, inputs, name=scope).outputs
        return SparseTensor(out_indices, out_values, sp_a.dense_shape)

    fn.__name__ = "sparse_" + op_type[len("SparseSparse") :].lower()
    fn.__doc__ = f"tf.sparse.{fn.__name__[7:]}: one {op_type} (a missing entry counts as 0)."
    return fn


sparse_maximum = _sparse_sparse("SparseSparseMaximum")
sparse_minimum = _sparse_sparse("SparseSparseMinimum")


def _serialize(op_type: str):
    def fn(sp_input: Any, name: str | None = None, out_type: Any = dtypes.string) -> Any:
        sp_input = convert_to_sparse_tensor(sp_input)
        inputs = [sp_input.indices, sp_input.values, sp_input.dense_shape]
        return apply_op(op_type, inputs, {"out_type": out_type}, name=name).outputs[0]

    return fn


serialize_sparse = _serialize("SerializeSparse")
serialize_sparse.__doc__ = "tf.io.serialize_sparse: the three tensors as a [3] vector."
serialize_many_sparse = _serialize("SerializeManySparse")
serialize_many_sparse.__doc__ = "tf.io.serialize_many_sparse: one [3] row per minibatch entry."


def _deserialize(op_type: str):
    def fn(serialized_sparse: Any, dtype: Any, rank: int | None = None,
           name: str | None = None) -> SparseTensor:  # fmt: skip
        out_indices, out_values, out_shape = apply_op(
            op_type, [serialized_sparse], {"dtype": dtype}, name=name
        ).outputs
        out_indices.set_shape([None, rank])
        out_shape.set_shape([rank])
        return SparseTensor(out_indices, out_values, out_shape)

    return fn


deserialize_sparse = _deserialize("DeserializeSparse")
deserialize_sparse.__doc__ = "tf.io.deserialize_sparse: [..., 3] triples as one SparseTensor."
deserialize_many_sparse = _deserialize("DeserializeManySparse")
deserialize_many_sparse.__doc__ = "tf.io.deserialize_many_sparse: [N, 3] rows as one batch."


# -- static shapes, as TensorFlow's C++ shape functions ---------------------------------------
def _vector_len(t: Any) -> int | None:
    s = t.shape
    return None if s.ndims != 1 else dimension_value(s.as_list()[0])


def _rows(t: Any) -> int | None:
    s = t.shape
    return None if s.ndims != 2 else dimension_value(s.as_list()[0])


def _cols(t: Any) -> int | None:
    s = t.shape
    return None if s.ndims != 2 else dimension_value(s.as_list()[1])


@shape_fns._reg("SparseReshape")
def _sparse_reshape_shape(op: Any) -> list[Any]:
    rank = _vector_len(op.inputs[2])
    return [TensorShape([_rows(op.inputs[0]), rank]), TensorShape([rank])]


@shape_fns._reg("SparseSlice")
def _sparse_slice_shape(op: Any) -> list[Any]:
    rank = _vector_len(op.inputs[2])
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


@shape_fns._reg("SparseConcat")
def _sparse_concat_shape(op: Any) -> list[Any]:
    n = len(op.inputs) // 3
    rows = [_rows(t) for t in op.inputs[:n]]
    total = None if None in rows else sum(r for r in rows if r is not None)
    cols = next((c for c in (_cols(t) for t in op.inputs[:n]) if c is not None), None)
    return [TensorShape([total, cols]), TensorShape([total]), TensorShape([cols])]


@shape_fns._reg("SparseSplit")
def _sparse_split_shape(op: Any) -> list[Any]:
    n = (len(op.outputs)) // 3
    rank = _vector_len(op.inputs[3])
    return ([TensorShape([None, rank])] * n + [TensorShape([None])] * n
            + [TensorShape([rank])] * n)  # fmt: skip


@shape_fns._reg("SparseSoftmax")
def _sparse_softmax_shape(op: Any) -> list[Any]:
    return [TensorShape([_vector_len(op.inputs[1])])]


@shape_fns._reg("SparseSparseMaximum", "SparseSparseMinimum")
def _sparse_sparse_shape(op: Any) -> list[Any]:
    return [TensorShape([None, None]), TensorShape([None])]


@shape_fns._reg("SerializeSparse")
def _serialize_shape(op: Any) -> list[Any]:
    return [TensorShape([3])]


@shape_fns._reg("SerializeManySparse")
def _serialize_many_shape(op: Any) -> list[Any]:
    return [TensorShape([None, 3])]


@shape_fns._reg("DeserializeSparse", "DeserializeManySparse")
def _deserialize_shape(op: Any) -> list[Any]:
    return [TensorShape([None, None]), TensorShape([None]), TensorShape([None])]
