"""Ops (executor stage): SparseTensors to and from strings, as TensorFlow's
serialize_sparse_op.cc and deserialize_sparse_{string,variant}_op.cc: SerializeSparse
(the three tensors as serialized TensorProtos, or as DT_VARIANT elements each holding one
tensor), SerializeManySparse (one such triple per row of the first dimension) and
DeserializeSparse / DeserializeManySparse (triples back into one SparseTensor whose
leading dimensions are the triples' batch shape).

The bytes equal TensorFlow's: a tensor is serialized as Tensor::AsProtoTensorContent
writes it, and a variant element holds it as TensorFlow's Variant of a Tensor encodes
(type_name "tensorflow::Tensor", the tensor in AsProtoField form). Stateless kernels, safe
from any thread.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from common import dtypes
from common import tensor as tensor_util
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops.math_util import shape_str
from common.ops.registry import KernelConstruction, register_kernel, register_op
from common.ops.sparse_reshape_ops import sparse_reshape
from common.ops.sparse_tensor_util import check_input_ranks, create_checks, indices_valid
from protos.tensor_pb2 import TensorProto, VariantTensorDataProto

for _op in ("SerializeSparse", "SerializeManySparse"):
    register_op(
        _op,
        inputs=["sparse_indices: int64", "sparse_values: T", "sparse_shape: int64"],
        outputs=["serialized_sparse: out_type"],
        attrs=["T: type", "out_type: {string, variant} = DT_STRING"],
    )
register_op(
    "DeserializeSparse",
    inputs=["serialized_sparse: Tserialized"],
    outputs=["sparse_indices: int64", "sparse_values: dtype", "sparse_shape: int64"],
    attrs=["dtype: type", "Tserialized: {string, variant} = DT_STRING"],
)
register_op(
    "DeserializeManySparse",
    inputs=["serialized_sparse: string"],
    outputs=["sparse_indices: int64", "sparse_values: dtype", "sparse_shape: int64"],
    attrs=["dtype: type"],
)

TENSOR_TYPE_NAME = "tensorflow::Tensor"


@dataclasses.dataclass(frozen=True, eq=False)
class TensorVariant:
    """A DT_VARIANT element holding one tensor (TensorFlow's Variant of a Tensor)."""

    dtype: DataType
    value: np.ndarray


def _encode_tensor(v: TensorVariant) -> VariantTensorDataProto:
    out = VariantTensorDataProto(type_name=TENSOR_TYPE_NAME)
    out.tensors.append(tensor_util.as_proto_field(v.value, v.dtype))
    return out


def _decode_tensor(proto: VariantTensorDataProto) -> TensorVariant:
    if len(proto.tensors) != 1:
        raise InvalidArgumentError(
            f"A {TENSOR_TYPE_NAME} variant holds one tensor, got {len(proto.tensors)}"
        )
    t = proto.tensors[0]
    return TensorVariant(tensor_util.proto_dtype(t), tensor_util.to_numpy(t))


tensor_util.register_variant_codec(TENSOR_TYPE_NAME, TensorVariant, _encode_tensor, _decode_tensor)

# One serialized tensor, in the form out_type asks for.
Encoder = Callable[[np.ndarray, DataType], object]


def _to_string(value: np.ndarray, dt: DataType) -> bytes:
    return tensor_util.as_proto_tensor_content(value, dt).SerializeToString()


def _to_variant(value: np.ndarray, dt: DataType) -> TensorVariant:
    return TensorVariant(dt, value)


def _encoder(out_type: DataType) -> Encoder:
    return _to_variant if out_type == DataType.DT_VARIANT else _to_string


def _output(items: list, shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(len(items), object)
    out[:] = items
    return out.reshape(shape)


def serialize_sparse(
    indices: np.ndarray, values: np.ndarray, shape: np.ndarray, t: DataType, enc: Encoder
) -> np.ndarray:
    check_input_ranks(indices, values, shape)
    parts = [enc(indices, DataType.DT_INT64), enc(values, t), enc(shape, DataType.DT_INT64)]
    return _output(parts, (3,))


def serialize_many_sparse(
    indices: np.ndarray, values: np.ndarray, shape: np.ndarray, t: DataType, enc: Encoder
) -> np.ndarray:
    check_input_ranks(indices, values, shape)
    rank = shape.size
    create_checks(indices, values, rank)
    if rank <= 1:
        raise InvalidArgumentError(
            f"Rank of input SparseTensor should be > 1, but saw rank: {rank}"
        )
    dims = [int(d) for d in shape]
    idx = indices.astype(np.int64)
    indices_valid(idx, dims)
    n = dims[0]
    inner_shape = enc(shape[1:].astype(np.int64), DataType.DT_INT64)
    blank = [enc(np.zeros((0, rank - 1), np.int64), DataType.DT_INT64),
             enc(np.zeros(0, values.dtype), t)]  # fmt: skip
    rows: list = []
    for b in range(n):
        mine = idx[:, 0] == b
        if mine.any():
            rows += [enc(idx[mine, 1:], DataType.DT_INT64), enc(values[mine], t)]
        else:
            rows += blank
        rows.append(inner_shape)
    return _output(rows, (n, 3))


def _serialize_factory(fn: Callable) -> Callable:
    def factory(k: KernelConstruction) -> Callable:
        t, enc = DataType(k.attr("T")), _encoder(DataType(k.attr("out_type")))

        def compute(ctx, inputs: list) -> list:
            indices, values, shape = (np.asarray(v) for v in inputs)
            return [fn(indices, values, shape, t, enc)]

        return compute

    return factory


register_kernel("SerializeSparse")(_serialize_factory(serialize_sparse))
register_kernel("SerializeManySparse")(_serialize_factory(serialize_many_sparse))


def _parse(item: object) -> tuple[DataType, np.ndarray]:
    """One serialized tensor: a TensorProto's bytes, or a variant holding the tensor."""
    if isinstance(item, TensorVariant):
        return item.dtype, item.value
    if not isinstance(item, bytes):
        raise InvalidArgumentError("Could not parse serialized proto")
    try:
        proto = TensorProto.FromString(item)
    except Exception:  # noqa: BLE001  any parse failure is TensorFlow's one message
        raise InvalidArgumentError("Could not parse serialized proto") from None
    try:
        return tensor_util.proto_dtype(proto), tensor_util.to_numpy(proto)
    except InvalidArgumentError:
        raise InvalidArgumentError("Could not construct tensor from proto") from None


def _sparse_at(triple: np.ndarray, i: int, dtype: DataType) -> list[np.ndarray]:
    """GetAndValidateSparseTensor: triple `i`, checked as TensorFlow checks it."""
    _, indices = _parse(triple[0])
    if indices.ndim != 2:
        raise InvalidArgumentError(
            f"Expected serialized_sparse[{i}, 0] to represent an index matrix but received "
            f"shape {shape_str(indices.shape)}"
        )
    vt, values = _parse(triple[1])
    if values.ndim != 1:
        raise InvalidArgumentError(
            f"Expected serialized_sparse[{i}, 1] to represent a values vector but received "
            f"shape {shape_str(values.shape)}"
        )
    if vt != dtype:
        raise InvalidArgumentError(
            f"Requested SparseTensor of type {dtypes.tf_name(dtype)} but SparseTensor[{i}]"
            f".values.dtype() == {dtypes.tf_name(vt)}"
        )
    if indices.shape[0] != values.shape[0]:
        raise InvalidArgumentError(
            f"Expected row counts of SparseTensor[{i}].indices and SparseTensor[{i}].values "
            f"to match but they do not: {indices.shape[0]} vs. {values.shape[0]}"
        )
    _, shape = _parse(triple[2])
    if shape.ndim != 1:
        raise InvalidArgumentError(
            f"Expected serialized_sparse[{i}, 1] to be a shape vector but its shape is "
            f"{shape_str(shape.shape)}"
        )
    if indices.shape[1] != shape.shape[0]:
        raise InvalidArgumentError(
            f"Expected column counts of SparseTensor[{i}].indices to match size of "
            f"SparseTensor[{i}].shape but they do not: {indices.shape[1]} vs. {shape.shape[0]}"
        )
    return [indices, values, shape]


def deserialize_sparse(serialized: np.ndarray, dtype: DataType) -> list[np.ndarray]:
    if serialized.ndim == 0:
        raise InvalidArgumentError(
            f"Serialized sparse should have non-zero rank {shape_str(serialized.shape)}"
        )
    if serialized.shape[-1] != 3:
        raise InvalidArgumentError(
            f"Serialized sparse should have 3 as the last dimension {shape_str(serialized.shape)}"
        )
    batch = serialized.shape[:-1]
    n = int(np.prod(batch, dtype=np.int64))
    if n == 0:
        raise InvalidArgumentError(
            "Serialized sparse should have at least 1 serialized tensor, but has a zero "
            f"dimension {shape_str(serialized.shape)}"
        )
    triples = serialized.reshape(n, 3)
    if serialized.ndim == 1:
        return _sparse_at(triples[0], 0, dtype)
    # Each SparseTensor gets a leading dimension of 1 and they are concatenated along it
    # (the dense shape bounding them all), then reshaped to the batch shape.
    parts = [_sparse_at(triples[i], i, dtype) for i in range(n)]
    rank = parts[0][2].size
    inner = [int(d) for d in parts[0][2]]
    for i, (_, _, s) in enumerate(parts[1:], start=1):
        if s.size != rank:
            raise InvalidArgumentError(
                "Inconsistent shape across SparseTensors: rank prior to SparseTensor"
                f"[{i}] was: {rank} but rank of SparseTensor[{i}] is: {s.size}"
            )
        inner = [max(a, int(b)) for a, b in zip(inner, s)]
    for idx, vals, _ in parts:
        create_checks(idx, vals, rank)
    indices = np.concatenate(
        [np.column_stack([np.full(len(p[0]), i, np.int64), p[0]]) for i, p in enumerate(parts)]
    ).reshape(-1, rank + 1)
    values = np.concatenate([p[1] for p in parts])
    out_indices, out_shape = sparse_reshape(
        indices, np.array([n, *inner], np.int64), np.array([*batch, *inner], np.int64)
    )
    return [out_indices, values, out_shape]


def _deserialize_factory(k: KernelConstruction) -> Callable:
    dtype = DataType(k.attr("dtype"))

    def compute(ctx, inputs: list) -> list:
        return deserialize_sparse(np.asarray(inputs[0]), dtype)

    return compute


register_kernel("DeserializeSparse")(_deserialize_factory)
register_kernel("DeserializeManySparse")(_deserialize_factory)
