"""Client, graph building: RaggedTensor.from_tensor (ragged_rank 1: by lengths, by
padding, or every row whole through a uniform row length) and RaggedTensor.from_sparse
(a right-ragged 2-D SparseTensor), building TF's ragged_tensor.py graphs node for node.
They are set on the RaggedTensor class here, which imports no op modules of its own
beyond its views."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework import row_partition as rp
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.framework.ragged_tensor import (
    RaggedTensor,
    from_row_splits,
    from_value_rowids,
)
from client.framework.sparse_tensor import SparseTensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, control_flow_ops, control_flow_util, math_ops
from client.ops.cond_v2 import cond_v2
from client.ops.control_flow_assert import Assert
from client.ops.tf1_extras import sequence_mask


def _from_uniform_row_length(values: Any, ncols: Any, nrows: Any) -> RaggedTensor:
    """TF's RaggedTensor.from_uniform_row_length(validate=False) on dense values."""
    with _ops.name_scope(None, "RaggedFromUniformRowLength", [values, ncols, nrows]):
        const_nvals = values.shape.as_list()[0] if values.shape.ndims else None
        if const_nvals is not None:
            nvals = constant(const_nvals, dtype=ncols.dtype)
        else:
            nvals = array_ops.shape(values, out_type=ncols.dtype)[0]
        partition = rp.from_uniform_row_length_unchecked(ncols, nvals, nrows)
        return RaggedTensor(values, row_partition=partition)


def _lengths_from_padding(tensor: Any, padding: Any, ncols: Any, splits_dtype: Any) -> Any:
    """Each row's length: one past its last value that differs from padding."""
    padding = convert_to_tensor(padding, name="padding", dtype=tensor.dtype)
    padding.shape.assert_is_compatible_with(tensor.shape[2:])
    has_default_value = math_ops.equal(padding, tensor)
    tensor_rank = array_ops.rank(tensor)
    reduce_axis = math_ops.range(2, tensor_rank)
    pred = tensor_rank > 2

    def reduce_all() -> Any:
        return math_ops.reduce_all(has_default_value, axis=reduce_axis)

    if control_flow_util.control_flow_v2_enabled():
        (has_default,) = cond_v2(pred, reduce_all, lambda: has_default_value)
    else:
        has_default = control_flow_ops.cond(pred, reduce_all, lambda: has_default_value)
    has_default.set_shape(TensorShape([None, None]))
    has_default.set_shape(tensor.shape[:2])
    has_nondefault = math_ops.cast(math_ops.logical_not(has_default), splits_dtype)
    positions = array_ops.expand_dims(math_ops.range(1, ncols + 1), 0)
    return math_ops.reduce_max(has_nondefault * positions, axis=1)


def from_tensor(
    tensor: Any,
    lengths: Any = None,
    padding: Any = None,
    ragged_rank: int = 1,
    name: str | None = None,
    row_splits_dtype: Any = dtypes.int64,
) -> RaggedTensor:
    """The rows of a dense tensor, cut to `lengths`, or before trailing `padding`, or
    whole."""
    splits_dtype = dtypes.as_dtype(row_splits_dtype)
    if lengths is not None and padding is not None:
        raise ValueError("Specify argument `lengths` or `padding`, but not both.")
    if not isinstance(ragged_rank, int):
        raise TypeError(f"Argument `ragged_rank` must be an int. Received {ragged_rank}.")
    if ragged_rank <= 0:
        raise ValueError(f"Argument `ragged_rank` must be greater than 0. Received {ragged_rank}.")
    if ragged_rank != 1:
        raise ValueError("This client's from_tensor builds ragged_rank=1 only")
    with _ops.name_scope(name, "RaggedFromTensor", [tensor, lengths, padding]):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.shape.ndims is not None and tensor.shape.ndims < 2:
            raise ValueError(
                "The rank of a RaggedTensor must be greater than 1, i.e., a list of scalars "
                "won't have ragged dimensions. Received argument `tensor` with rank "
                f"{tensor.shape.ndims}."
            )
        input_shape = array_ops.shape(tensor, out_type=splits_dtype)
        ncols = input_shape[1]
        if (
            isinstance(lengths, (list, tuple))
            and lengths
            and not isinstance(lengths[0], (int, float))
        ):
            raise ValueError("This client's from_tensor takes one vector of lengths")
        if padding is not None:
            lengths = _lengths_from_padding(tensor, padding, ncols, splits_dtype)
        if lengths is not None:
            lengths = convert_to_tensor(lengths, name="lengths", preferred_dtype=splits_dtype)
            if not lengths.dtype.is_integer:
                raise TypeError("Argument `tensor` (name: lengths) must be of type integer.")
            # TF's convert_to_int_tensor casts unconditionally (a Cast even to its dtype).
            cast = {"DstT": splits_dtype, "Truncate": False}
            lengths = apply_op("Cast", [lengths], cast).outputs[0]
            lengths.shape.assert_has_rank(1)
            lengths = math_ops.minimum(lengths, ncols)
            lengths = math_ops.maximum(lengths, 0)
            limits = math_ops.cumsum(lengths)
            splits = array_ops.concat([array_ops.zeros([1], splits_dtype), limits], axis=0)
            mask = sequence_mask(lengths, maxlen=ncols)
            values = array_ops.boolean_mask(tensor, mask)
            return from_row_splits(values, splits, validate=False)
        values_shape = array_ops.concat(
            [[input_shape[0] * input_shape[1]], input_shape[2:]], axis=0
        )
        values = array_ops.reshape(tensor, values_shape)
        dims = tensor.shape.as_list() if tensor.shape.ndims is not None else [None, None]
        nrows = input_shape[0] if dims[0] is None else constant(dims[0], dtype=splits_dtype)
        ncols = input_shape[1] if dims[1] is None else constant(dims[1], dtype=splits_dtype)
        return _from_uniform_row_length(values, ncols, nrows)


def _assert_ragged_right(indices: Any) -> list[Any]:
    """Each row's indices count up from 0 (TF's _assert_sparse_indices_are_ragged_right)."""
    index_prefix = indices[:, :-1]
    index_suffix = indices[:, -1]
    prefix_changed = math_ops.reduce_any(
        math_ops.not_equal(index_prefix[1:], index_prefix[:-1]), axis=1
    )
    index_ok = array_ops.where(
        prefix_changed,
        math_ops.equal(index_suffix[1:], 0),
        math_ops.equal(index_suffix[1:], index_suffix[:-1] + 1),
    )
    ok = math_ops.logical_and(
        math_ops.reduce_all(math_ops.equal(index_suffix[:1], 0)),
        math_ops.reduce_all(index_ok),
    )
    message = ["SparseTensor is not right-ragged", "SparseTensor.indices =", indices]
    return [Assert(ok, message)]


def from_sparse(
    st_input: Any, name: str | None = None, row_splits_dtype: Any = dtypes.int64
) -> RaggedTensor:
    splits_dtype = dtypes.as_dtype(row_splits_dtype)
    if not isinstance(st_input, SparseTensor):
        raise TypeError(
            "Argument `st_input` must be of type SparseTensor, but is of type "
            f"{type(st_input).__name__}."
        )
    with _ops.name_scope(name, "RaggedFromSparse", [st_input.indices]):
        shape_dims = (
            st_input.dense_shape.shape.as_list() if st_input.dense_shape.shape.ndims else None
        )
        index_dims = st_input.indices.shape.as_list() if st_input.indices.shape.ndims else None
        rank_from_shape = shape_dims[0] if shape_dims else None
        rank_from_indices = index_dims[1] if index_dims else None
        if rank_from_shape != 2 and rank_from_indices != 2:
            raise ValueError("rank(st_input) must be 2.")
        with _ops.control_dependencies(_assert_ragged_right(st_input.indices)):
            segment_ids = math_ops.cast(st_input.indices[:, 0], splits_dtype)
            num_segments = math_ops.cast(st_input.dense_shape[0], splits_dtype)
            return from_value_rowids(st_input.values, segment_ids, num_segments, validate=False)


RaggedTensor.from_tensor = classmethod(  # type: ignore[attr-defined]
    lambda cls, *args, **kwargs: from_tensor(*args, **kwargs)
)
RaggedTensor.from_sparse = classmethod(  # type: ignore[attr-defined]
    lambda cls, *args, **kwargs: from_sparse(*args, **kwargs)
)
