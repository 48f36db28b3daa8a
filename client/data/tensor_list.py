"""Client, tf.data graph building: elements to and from the flat tensors dataset ops carry
(TF's data/util/structure to_tensor_list / to_batched_tensor_list /
from_compatible_tensor_list). A tensor component is itself; a SparseTensor component is
one DT_VARIANT tensor: SerializeSparse of an element ([3]), SerializeManySparse of a batch
of rows ([N, 3]), DeserializeSparse back, with the static dense shape the spec knows put
back as TF's SparseTensorSpec does. Graph building only; not thread-safe (as TF's graphs).
"""

from __future__ import annotations

from typing import Any

from client.data import structure
from client.data.structure import SparseTensorSpec
from client.framework import dtypes as _dtypes
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.sparse_tensor import SparseTensor


def _serialize(op_type: str, value: SparseTensor) -> Any:
    inputs = [value.indices, value.values, value.dense_shape]
    return apply_op(op_type, inputs, {"out_type": _dtypes.variant}).outputs[0]


def to_tensor_list(element_spec: Any, components: list[Any]) -> list[Any]:
    """The flat tensors of one element given as its components (SerializeSparse for a
    SparseTensor)."""
    return [
        _serialize("SerializeSparse", v) if isinstance(s, SparseTensorSpec) else v
        for s, v in zip(structure.flatten(element_spec), components)
    ]


def to_batched_tensor_list(element_spec: Any, components: list[Any]) -> list[Any]:
    """The flat tensors of a batch of elements given as its components, sliced along dim
    0 by a dataset (SerializeManySparse for a SparseTensor: one row per element)."""
    return [
        _serialize("SerializeManySparse", _rank_at_least_1(s, v))
        if isinstance(s, SparseTensorSpec)
        else v
        for s, v in zip(structure.flatten(element_spec), components)
    ]


def _rank_at_least_1(spec: SparseTensorSpec, value: SparseTensor) -> SparseTensor:
    """TF's SparseTensorSpec._to_batched_tensor_list: a scalar has no rows."""
    if spec.shape.merge_with(value.shape).ndims == 0:
        raise ValueError(
            f"Unbatching a sparse tensor is only supported for rank >= 1. Obtained input: {value}."
        )
    return value


def from_compatible_tensor_list(element_spec: Any, tensors: list[Any]) -> Any:
    """The element of `element_spec` the flat `tensors` encode."""
    values = [
        _deserialize(s, t) if isinstance(s, SparseTensorSpec) else t
        for s, t in zip(structure.flatten(element_spec), tensors)
    ]
    return structure.pack_sequence_as(element_spec, values)


def _deserialize(spec: SparseTensorSpec, serialized: Any) -> SparseTensor:
    """DeserializeSparse, then TF's SparseTensorSpec._from_compatible_tensor_list: the
    dense shape a Const when the spec knows it all, else its known dims spliced in."""
    from client.ops import array_ops

    op = apply_op("DeserializeSparse", [serialized], {"dtype": spec.dtype})
    indices, values, dense_shape = op.outputs
    rank = spec.shape.ndims
    indices.set_shape([None, rank])
    if spec.shape.is_fully_defined():
        dense_shape = convert_to_tensor(spec.shape.as_list(), dtype=_dtypes.int64, name="shape")
    elif rank is not None and any(d is not None for d in spec.shape.as_list()):
        pieces = array_ops.unstack(dense_shape, num=rank)
        for i, dim in enumerate(spec.shape.as_list()):
            if dim is not None:
                pieces[i] = convert_to_tensor(dim, dtype=_dtypes.int64, name="Const")
        dense_shape = array_ops.stack(pieces)
    else:
        dense_shape.set_shape([rank])
    return SparseTensor(indices, values, dense_shape)
