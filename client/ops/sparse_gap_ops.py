"""Client API: the tf.sparse functions the TF1 probe found missing (add, the reductions,
fill_empty_rows, retain, transpose, from_dense, reorder), building the graphs
TensorFlow's sparse_ops.py builds, node names included. Not thread-safe (graph building).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.sparse_tensor import SparseTensor, SparseTensorValue
from client.framework.sparse_tensor import convert_to_sparse_tensor as _to_sparse
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, math_ops
from client.ops.scatter_nd_ops import _gather_nd

_SPARSE = (SparseTensor, SparseTensorValue)


def sparse_add(a: Any, b: Any, threshold: Any = None, thresh: Any = None) -> Any:
    """TF1's tf.sparse_add: thresh is threshold's deprecated name."""
    threshold = thresh if threshold is None else threshold
    return sparse_add_v2(a, b, 0 if threshold is None else threshold)


def sparse_add_v2(a: Any, b: Any, threshold: Any = 0) -> Any:
    """tf.sparse.add: sparse + sparse is one SparseAdd (a SparseTensor, its shape static
    when both shapes are known); sparse + dense is one SparseTensorDenseAdd (a Tensor)."""
    if not any(isinstance(x, _SPARSE) for x in (a, b)):
        raise TypeError("At least one input should be SparseTensor; do you mean to use tf.add()?")
    if all(isinstance(x, _SPARSE) for x in (a, b)):
        a, b = _to_sparse(a), _to_sparse(b)
        real = a.values.dtype.real_dtype.base_dtype
        threshold = convert_to_tensor(threshold, dtype=real, name="threshold")
        inputs = [a.indices, a.values, a.dense_shape, b.indices, b.values, b.dense_shape]
        ind, val, shape = apply_op("SparseAdd", [*inputs, threshold], {}).outputs
        a.shape.assert_is_compatible_with(b.shape)
        static = a.shape.merge_with(b.shape)
        if static.is_fully_defined():
            shape = static.as_list()
        return SparseTensor(ind, val, shape)
    if isinstance(b, _SPARSE):
        a, b = b, a
    a = _to_sparse(a)
    inputs = [a.indices, a.values, a.dense_shape, b]
    return apply_op("SparseTensorDenseAdd", inputs, {}).outputs[0]


def _reduce_args(sp: SparseTensor, axis: Any, keepdims: Any, legacy: dict[str, Any]) -> tuple:
    axis = legacy.get("reduction_axes") if axis is None else axis
    keepdims = legacy.get("keep_dims") if keepdims is None else keepdims
    inputs = [sp.indices, sp.values, sp.dense_shape, math_ops._reduction_axes(sp, axis)]
    return inputs, {"keep_dims": bool(keepdims)}


def _dense_reducer(op_type: str) -> Any:
    def reduce(
        sp_input: Any,
        axis: Any = None,
        keepdims: Any = None,
        reduction_axes: Any = None,
        keep_dims: Any = None,
    ) -> Any:
        legacy = {"reduction_axes": reduction_axes, "keep_dims": keep_dims}
        inputs, attrs = _reduce_args(sp_input, axis, keepdims, legacy)
        return apply_op(op_type, inputs, attrs).outputs[0]

    reduce.__doc__ = f"TF1's sparse reduction to a dense tensor: one {op_type}."
    return reduce


sparse_reduce_sum = _dense_reducer("SparseReduceSum")
sparse_reduce_max = _dense_reducer("SparseReduceMax")


def sparse_fill_empty_rows(
    sp_input: Any, default_value: Any, name: str | None = None
) -> tuple[SparseTensor, Any]:
    """tf.sparse.fill_empty_rows: one SparseFillEmptyRows; (filled, empty_row_indicator)."""
    sp_input = _to_sparse(sp_input)
    with _ops.name_scope(name, "SparseFillEmptyRows", [sp_input.indices, sp_input.values]):
        default_value = convert_to_tensor(default_value, dtype=sp_input.values.dtype)
        inputs = [sp_input.indices, sp_input.values, sp_input.dense_shape, default_value]
        ind, val, empty, _ = apply_op("SparseFillEmptyRows", inputs, {}).outputs
        return SparseTensor(ind, val, sp_input.dense_shape), empty


def sparse_retain(sp_input: Any, to_retain: Any) -> SparseTensor:
    """tf.sparse.retain: the entries where to_retain is true (Where + two Gathers)."""
    sp_input = _to_sparse(sp_input)
    to_retain = convert_to_tensor(to_retain)
    retain_shape = to_retain.shape
    retain_shape.assert_has_rank(1)
    n = sp_input.values.shape
    if n.ndims is not None:
        TensorShape(n.as_list()[:1]).assert_is_compatible_with(retain_shape)
    where_true = array_ops.reshape(array_ops.where_v2(to_retain), [-1])
    new_indices = array_ops.gather(sp_input.indices, where_true)
    new_values = array_ops.gather(sp_input.values, where_true)
    return SparseTensor(new_indices, new_values, array_ops.identity(sp_input.dense_shape))


def sparse_reorder(sp_input: Any, name: str | None = None) -> SparseTensor:
    """tf.sparse.reorder: one SparseReorder (row-major order); the dense shape is kept
    static when known, else passed through an Identity, as TF's."""
    sp_input = _to_sparse(sp_input)
    inputs = [sp_input.indices, sp_input.values, sp_input.dense_shape]
    ind, val = apply_op("SparseReorder", inputs, {}, name).outputs
    static = sp_input.shape
    if static.is_fully_defined():
        return SparseTensor(ind, val, static.as_list())
    out = SparseTensor(ind, val, array_ops.identity(sp_input.dense_shape))
    out.set_shape(static)
    return out


def sparse_transpose(sp_input: Any, perm: Any = None, name: str | None = None) -> SparseTensor:
    """tf.sparse.transpose: the index columns permuted (Transpose/Gather/Transpose), then
    reordered; a known shape and perm give a static dense shape, as TF's."""
    with _ops.name_scope(name, "SparseTranspose", [sp_input.indices, sp_input.values]):
        rank = sp_input.shape.ndims
        if perm is None:
            if rank is not None:
                perm = (rank - 1) - np.arange(0, rank, 1)
            else:
                # TF's rank of a SparseTensor: the Size of its dense_shape.
                attrs = {"out_type": dtypes.int32}
                r = apply_op("Size", [sp_input.dense_shape], attrs, "Rank").outputs[0]
                perm = (r - 1) - math_ops.range(0, r, 1)
        gathered = array_ops.gather(array_ops.transpose(sp_input.indices), perm)
        transposed = array_ops.transpose(gathered)
        static_perm = _constant_value(perm)
        if static_perm is not None and sp_input.shape.is_fully_defined():
            old = sp_input.shape.as_list()
            dense_shape: Any = [old[int(p)] for p in static_perm]
        else:
            dense_shape = array_ops.gather(sp_input.dense_shape, perm)
        return sparse_reorder(SparseTensor(transposed, sp_input.values, dense_shape))


def _constant_value(perm: Any) -> Any:
    from client.framework.shape_fns import constant_value

    # TF converts perm to a tensor just to read its value: a list perm leaves an unused
    # Const node in the graph, which parity keeps.
    return constant_value(convert_to_tensor(perm))


def from_dense(tensor: Any, name: str | None = None) -> SparseTensor:
    """tf.sparse.from_dense: the non-zero entries (Where on NotEqual, GatherNd, Shape)."""
    with _ops.name_scope(name, "dense_to_sparse", [tensor]):
        tensor = convert_to_tensor(tensor)
        indices = array_ops.where_v2(math_ops.not_equal(tensor, array_ops.zeros_like(tensor)))
        values = _gather_nd(tensor, indices)
        shape = array_ops.shape(tensor, out_type=dtypes.int64)
        return SparseTensor(indices, values, shape)
