"""Ops (executor stage): TensorLists — TF2's DT_VARIANT lists of tensors (EmptyTensorList,
TensorListReserve/FromTensor/Stack/GetItem/SetItem/PushBack/PopBack/Length/ElementShape/
Gather/ScatterIntoExistingList/ConcatV2/Resize/Split), as tf.map_fn and tf.TensorArray
emit them inside functional While loops (control flow v2).

A list value is a 0-d object ndarray holding an immutable `TensorList`; every op returns
a new list (TensorFlow's copy-on-write value semantics), so lists flow through While
loops and across _Send/_Recv in one process safely, and kernels are thread-safe without
locks. Errors carry TensorFlow's codes and messages.

Across processes a list travels as TensorFlow encodes it (TensorList::Encode/Decode in
tensorflow/core/kernels/tensor_list.cc), registered here with common.tensor's variant
registry: a VariantTensorDataProto with type_name "tensorflow::TensorList", `tensors` =
the SET items in order (each as Tensor::AsProtoField writes it), and `metadata` =
varint64 count of unset items, varint64 index of each, varint64 element_dtype, varint64
max_num_elements (-1 as 2^64-1), then the serialized TensorShapeProto of element_shape.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, TypeGuard

import numpy as np

from common import dtypes
from common import tensor as tensor_util
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops import variant_ops
from common.ops.array_ops import shape_str
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op
from common.tensor_shape import shape_from_proto, shape_string, shape_to_proto
from protos import tensor_shape_pb2

Shape = tuple[int | None, ...] | None  # a partial shape; None: unknown rank


@dataclasses.dataclass(frozen=True)
class TensorList:
    """TensorFlow's TensorList: element dtype, partial element shape, and the items
    (None for an item reserved but not yet set). Immutable."""

    element_dtype: DataType
    element_shape: Shape
    items: tuple[np.ndarray | None, ...] = ()
    max_num_elements: int = -1

    def replace(self, **changes: Any) -> TensorList:
        return dataclasses.replace(self, **changes)


def list_value(tl: TensorList) -> np.ndarray:
    """The DT_VARIANT scalar holding `tl`."""
    return variant_ops.variant_scalar(tl)


def list_of(value: Any, node_name: str) -> TensorList:
    """The TensorList a DT_VARIANT input holds."""
    return variant_ops.held(value, TensorList, "Input handle is not a list.", node_name)


# ---------------------------------------------------------------------------------------
# Wire form (TF's TensorList::Encode / Decode)
# ---------------------------------------------------------------------------------------

TENSOR_LIST_TYPE_NAME = "tensorflow::TensorList"
_UINT64_MAX = (1 << 64) - 1
_INT32_MAX = (1 << 31) - 1


def _put_varint64(out: bytearray, value: int) -> None:
    value &= _UINT64_MAX  # as static_cast<uint64_t>: -1 becomes 2^64-1 (ten bytes)
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _get_varint64(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while shift < 64 and pos < len(data):
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & _UINT64_MAX, pos
        shift += 7
    raise _bad_list("truncated or malformed varint in metadata")


def _bad_list(why: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"Could not decode a {TENSOR_LIST_TYPE_NAME} variant: {why}")


def encode_tensor_list(tl: TensorList) -> tensor_util.VariantTensorDataProto:
    """TF's TensorList::Encode (see the module docstring), byte for byte."""
    proto = tensor_util.VariantTensorDataProto(type_name=TENSOR_LIST_TYPE_NAME)
    unset = [i for i, item in enumerate(tl.items) if item is None]
    for item in tl.items:
        if item is not None:
            proto.tensors.append(tensor_util.as_proto_field(item, tl.element_dtype))
    metadata = bytearray()
    _put_varint64(metadata, len(unset))
    for i in unset:
        _put_varint64(metadata, i)
    _put_varint64(metadata, int(tl.element_dtype))
    _put_varint64(metadata, tl.max_num_elements)
    metadata += shape_to_proto(tl.element_shape).SerializeToString()
    proto.metadata = bytes(metadata)
    return proto


def decode_tensor_list(proto: tensor_util.VariantTensorDataProto) -> TensorList:
    """TF's TensorList::Decode, with its checks; InvalidArgumentError when malformed."""
    data, tensors = proto.metadata, proto.tensors
    num_unset, pos = _get_varint64(data, 0)
    total = len(tensors) + num_unset
    unset: set[int] = set()
    previous = -1
    for _ in range(num_unset):
        index, pos = _get_varint64(data, pos)
        if index >= total or index <= previous:
            raise _bad_list(f"unset index {index} out of order or beyond {total} items")
        unset.add(index)
        previous = index
    values = iter(tensors)
    items = tuple(None if i in unset else tensor_util.to_numpy(next(values)) for i in range(total))
    raw_dtype, pos = _get_varint64(data, pos)
    if raw_dtype > _INT32_MAX or not dtypes.is_valid(raw_dtype) or dtypes.is_ref(raw_dtype):
        raise _bad_list(f"invalid element_dtype {raw_dtype}")
    raw_max, pos = _get_varint64(data, pos)
    if raw_max != _UINT64_MAX and raw_max > _INT32_MAX:
        raise _bad_list(f"max_num_elements {raw_max} does not fit an int")
    try:
        shape_proto = tensor_shape_pb2.TensorShapeProto.FromString(data[pos:])
    except Exception:
        raise _bad_list("element_shape is not a TensorShapeProto") from None
    return TensorList(
        element_dtype=DataType(raw_dtype),
        element_shape=shape_from_proto(shape_proto),
        items=items,
        max_num_elements=-1 if raw_max == _UINT64_MAX else raw_max,
    )


tensor_util.register_variant_codec(
    TENSOR_LIST_TYPE_NAME, TensorList, encode_tensor_list, decode_tensor_list
)


# ---------------------------------------------------------------------------------------
# Variant arithmetic (TF's TensorListZerosLike / TensorListBinaryAdd in list_kernels.h and
# tensor_list_util.cc): what ZerosLike and AddN do to the gradients of lists
# ---------------------------------------------------------------------------------------


def _list_zeros_like(tl: TensorList, node_name: str) -> TensorList:
    # TF copies dtype and element_shape only (max_num_elements back to -1); an item
    # never set stays unset.
    items = tuple(
        None if item is None else variant_ops.zeros_like_tensor(item, node_name)
        for item in tl.items
    )
    return TensorList(tl.element_dtype, tl.element_shape, items)


def _list_add(a: TensorList, b: TensorList, node_name: str) -> TensorList:
    if dtypes.base(a.element_dtype) != dtypes.base(b.element_dtype):
        raise InvalidArgumentError(
            "Trying to add two lists of tensors of different dtypes. One is "
            f"{_dtype_name(a.element_dtype)} and the other is {_dtype_name(b.element_dtype)}",
            node_name,
        )
    try:
        shape = merge_shapes(a.element_shape, b.element_shape)
    except InvalidArgumentError:
        raise InvalidArgumentError(
            "Trying to add two lists of tensors with incompatible element shapes. One is "
            f"{shape_string(a.element_shape)} and the other is "
            f"{shape_string(b.element_shape)}",
            node_name,
        ) from None
    if len(a.items) != len(b.items):
        raise InvalidArgumentError(
            "Trying to add two lists of tensors with different lengths. One is "
            f"{len(a.items)} and the other is {len(b.items)}",
            node_name,
        )
    # BinaryAddTensors: an uninitialized item (DT_INVALID) adds as the other one.
    items = tuple(
        y if x is None else x if y is None else variant_ops.add_tensors(x, y, node_name)
        for x, y in zip(a.items, b.items)
    )
    return TensorList(a.element_dtype, shape, items)


variant_ops.register_variant_ops(TensorList, _list_zeros_like, _list_add)


# ---------------------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------------------


def shape_from_tensor(t: Any, node_name: str = "") -> Shape:
    """A partial shape from TF's element_shape encoding: scalar -1 is an unknown rank,
    a vector has -1 for unknown dims."""
    arr = np.asarray(t)
    if arr.ndim == 0:
        if int(arr) != -1:
            raise InvalidArgumentError(
                f"The only valid scalar shape tensor is the fully unknown shape specified "
                f"as -1. Got {int(arr)}",
                node_name,
            )
        return None
    return tuple(None if int(d) < 0 else int(d) for d in arr.reshape(-1))


def shape_to_tensor(shape: Shape, dt: DataType) -> np.ndarray:
    np_dt = dtypes.as_numpy(dt)
    if shape is None:
        return np.array(-1, np_dt)
    return np.array([-1 if d is None else d for d in shape], np_dt)


def merge_shapes(a: Shape, b: Shape, node_name: str = "") -> Shape:
    """The most specific shape compatible with both; InvalidArgument if incompatible."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b) or any(x is not None and y is not None and x != y for x, y in zip(a, b)):
        raise InvalidArgumentError(
            f"Incompatible shapes during merge: {shape_string(a)} vs. {shape_string(b)}",
            node_name,
        )
    return tuple(x if x is not None else y for x, y in zip(a, b))


def _compatible(shape: Sequence[int], partial: Shape) -> bool:
    if partial is None:
        return True
    return len(shape) == len(partial) and all(p is None or p == d for d, p in zip(shape, partial))


def _fully_defined(shape: Shape) -> TypeGuard[tuple[int, ...]]:
    return shape is not None and all(d is not None for d in shape)


def _dtype_name(dt: DataType) -> str:
    return dtypes.tf_name(dtypes.base(dt))


# ---------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------


def _check_dtype(tl: TensorList, dt: DataType, node_name: str) -> None:
    if dtypes.base(dt) != dtypes.base(tl.element_dtype):
        raise InvalidArgumentError(
            f"Invalid data types; op elements {_dtype_name(dt)} but list elements "
            f"{_dtype_name(tl.element_dtype)}",
            node_name,
        )


def _check_index(tl: TensorList, index: int, verb: str, node_name: str) -> None:
    if index < 0 or index >= len(tl.items):
        raise InvalidArgumentError(
            f"Trying to {verb} element {index} in a list with {len(tl.items)} elements.",
            node_name,
        )


def _own(value: Any, dt: DataType) -> np.ndarray:
    """A private copy of a value going into a list (later ops never see caller memory)."""
    return np.array(value, dtype=dtypes.as_numpy(dt), copy=True)


def _zeros(tl: TensorList, shape: Shape, node_name: str) -> np.ndarray:
    """The value of an uninitialized item: zeros of the merged element shape."""
    merged = merge_shapes(tl.element_shape, shape, node_name)
    if not _fully_defined(merged):
        raise InvalidArgumentError(
            f"Trying to read an uninitialized tensor but element_shape: "
            f"{shape_string(merged)} is not fully defined.",
            node_name,
        )
    return np.zeros(merged, dtypes.as_numpy(tl.element_dtype))


def _stack_items(
    tl: TensorList, indices: Sequence[int], shape: Shape, node_name: str
) -> np.ndarray:
    """Stacks the items at `indices` (uninitialized ones as zeros) into one tensor."""
    merged = merge_shapes(tl.element_shape, shape, node_name)
    for i in indices:
        item = tl.items[i]
        if item is not None:
            merged = merge_shapes(merged, tuple(item.shape), node_name)
    if not _fully_defined(merged):
        if not indices:
            raise InvalidArgumentError(
                "Tried to stack elements of an empty list with non-fully-defined "
                f"element_shape: {shape_string(merged)}",
                node_name,
            )
        raise InvalidArgumentError(
            "Tried to stack list which only contains uninitialized tensors and has a "
            f"non-fully-defined element_shape: {shape_string(merged)}",
            node_name,
        )
    out = np.zeros((len(indices), *merged), dtypes.as_numpy(tl.element_dtype))
    for k, i in enumerate(indices):
        item = tl.items[i]
        if item is not None:
            out[k] = item
    return out


# ---------------------------------------------------------------------------------------
# Registrations
# ---------------------------------------------------------------------------------------

_SHAPE_TYPE = "shape_type: {int32, int64}"


def _kernel(op: str, fn: Callable[[KernelConstruction, OpKernelContext, list], list]) -> None:
    """Registers `fn(k, ctx, inputs) -> outputs` as the CPU kernel of `op`."""

    def factory(k: KernelConstruction) -> Callable:
        def compute(ctx: OpKernelContext, inputs: list) -> list:
            return fn(k, ctx, inputs)

        return compute

    factory.__module__, factory.__qualname__ = fn.__module__, fn.__qualname__
    register_kernel(op)(factory)


register_op(
    "EmptyTensorList",
    inputs=["element_shape: shape_type", "max_num_elements: int32"],
    outputs=["handle: variant"],
    attrs=["element_dtype: type", _SHAPE_TYPE],
)


def _empty_tensor_list(k: KernelConstruction, ctx: OpKernelContext, inputs: list) -> list:
    max_n = int(np.asarray(inputs[1]))
    if max_n < -1:
        raise InvalidArgumentError(
            f"max_num_elements must be non-negative or -1 for unbounded, got {max_n}",
            ctx.node_name,
        )
    shape = shape_from_tensor(inputs[0], ctx.node_name)
    return [list_value(TensorList(k.attr("element_dtype"), shape, (), max_n))]


_kernel("EmptyTensorList", _empty_tensor_list)


register_op(
    "TensorListReserve",
    inputs=["element_shape: shape_type", "num_elements: int32"],
    outputs=["handle: variant"],
    attrs=["element_dtype: type", _SHAPE_TYPE],
)


def _reserve(k: KernelConstruction, ctx: OpKernelContext, inputs: list) -> list:
    n = int(np.asarray(inputs[1]))
    if n < 0:
        raise InvalidArgumentError(
            f"The num_elements to reserve must be a non negative number, but got {n}",
            ctx.node_name,
        )
    shape = shape_from_tensor(inputs[0], ctx.node_name)
    return [list_value(TensorList(k.attr("element_dtype"), shape, (None,) * n))]


_kernel("TensorListReserve", _reserve)


register_op(
    "TensorListFromTensor",
    inputs=["tensor: element_dtype", "element_shape: shape_type"],
    outputs=["output_handle: variant"],
    attrs=["element_dtype: type", _SHAPE_TYPE],
)


def _list_source(
    k: KernelConstruction, ctx: OpKernelContext, inputs: list
) -> tuple[Any, np.ndarray, Shape]:
    """(element dtype, the tensor, the element_shape input) of an op that builds a list from
    a tensor's leading dimension (TensorListFromTensor, TensorListSplit)."""
    dt = k.attr("element_dtype")
    t = _own(inputs[0], dt)
    shape = shape_from_tensor(inputs[1], ctx.node_name)
    if t.ndim == 0:
        raise InvalidArgumentError(
            f"Tensor must be at least a vector, but saw shape: {shape_str(t.shape)}",
            ctx.node_name,
        )
    return dt, t, shape


def _shape_mismatch(shape: Shape, t: np.ndarray, node_name: str) -> InvalidArgumentError:
    return InvalidArgumentError(
        f"Specified a list with shape {shape_string(shape)} from a tensor with shape "
        f"{shape_str(t.shape)}",
        node_name,
    )


def _from_tensor(k: KernelConstruction, ctx: OpKernelContext, inputs: list) -> list:
    dt, t, shape = _list_source(k, ctx, inputs)
    if not _compatible(t.shape[1:], shape):
        raise _shape_mismatch(shape, t, ctx.node_name)
    return [list_value(TensorList(dt, shape, tuple(t[i] for i in range(t.shape[0]))))]


_kernel("TensorListFromTensor", _from_tensor)


register_op(
    "TensorListStack",
    inputs=["input_handle: variant", "element_shape: int32"],
    outputs=["tensor: element_dtype"],
    attrs=["element_dtype: type", "num_elements: int = -1"],
)


def _stack(k: KernelConstruction, ctx: OpKernelContext, inputs: list) -> list:
    tl = list_of(inputs[0], ctx.node_name)
    _check_dtype(tl, k.attr("element_dtype"), ctx.node_name)
    n = int(k.attr("num_elements"))
    if n != -1 and n != len(tl.items):
        raise InvalidArgumentError(
            f"Operation expected a list with {n} elements but got a list with "
            f"{len(tl.items)} elements.",
            ctx.node_name,
        )
    shape = shape_from_tensor(inputs[1], ctx.node_name)
    return [_stack_items(tl, range(len(tl.items)), shape, ctx.node_name)]


_kernel("TensorListStack", _stack)


register_op(
    "TensorListGetItem",
    inputs=["input_handle: variant", "index: int32", "element_shape: Tshape"],
    outputs=["item: element_dtype"],
    attrs=["element_dtype: type", "Tshape: {int32, int64} = DT_INT32"],
)


def _get_item(k: KernelConstruction, ctx: OpKernelContext, inputs: list) -> list:
    tl = list_of(inputs[0], ctx.node_name)
    _check_dtype(tl, k.attr("element_dtype"), ctx.node_name)
    index = int(np.asarray(inputs[1]))
    _check_index(tl, index, "access", ctx.node_name)
    item = tl.items[index]
    if item is not None:
        return [item]
    return [_zeros(tl, shape_from_tensor(inputs[2], ctx.node_name), ctx.node_name)]


_kernel("TensorListGetItem", _get_item)


register_op(
    "TensorListSetItem",
    inputs=["input_handle: variant", "index: int32", "item: element_dtype"],
    outputs=["output_handle: variant"],
    attrs=["element_dtype: type", "resize_if_index_out_of_bounds: bool = false"],
)


def _check_item_shape(tl: TensorList, item: np.ndarray, what: str, node_name: str) -> None:
    if not _compatible(item.shape, tl.element_shape):
        raise InvalidArgumentError(
            f"{what} Item element shape: {shape_str(item.shape)} list shape: "
            f"{shape_string(tl.element_shape)}",
            node_name,
        )


def _set_item(k: KernelConstruction, ctx: OpKernelContext, inputs: list) -> list:
    tl = list_of(inputs[0], ctx.node_name)
    dt = k.attr("element_dtype")
    _check_dtype(tl, dt, ctx.node_name)
    index = int(np.asarray(inputs[1]))
    items = tl.items
    if k.attr("resize_if_index_out_of_bounds") and index >= len(items):
        items = items + (None,) * (index + 1 - len(items))
    _check_index(tl.replace(items=items), index, "modify", ctx.node_name)
    item = _own(inputs[2], dt)
    _check_item_shape(
        tl, item, "Tried to set a tensor with incompatible shape at a list index.", ctx.node_name
    )
    items = items[:index] + (item,) + items[index + 1 :]
    return [list_value(tl.replace(items=items))]


_kernel("TensorListSetItem", _set_item)


register_op(
    "TensorListPushBack",
    inputs=["input_handle: variant", "tensor: element_dtype"],
    outputs=["output_handle: variant"],
    attrs=["element_dtype: type"],
)


def _push_back(k: KernelConstruction, ctx: OpKernelContext, inputs: list) -> list:
    tl = list_of(inputs[0], ctx.node_name)
    dt = k.attr("element_dtype")
    _check_dtype(tl, dt, ctx.node_name)
    item = _own(inputs[1], dt)
    _check_item_shape(tl, item, "Tried to push item with incompatible shape.", ctx.node_name)
    if tl.max_num_elements != -1 and len(tl.items) >= tl.max_num_elements:
        raise InvalidArgumentError(
            f"Tried to push item into a full list list size: {len(tl.items)} "
            f"max_num_elements: {tl.max_num_elements}",
            ctx.node_name,
        )
    return [list_value(tl.replace(items=tl.items + (item,)))]


_kernel("TensorListPushBack", _push_back)


register_op(
    "TensorListPopBack",
    inputs=["input_handle: variant", "element_shape: int32"],
    outputs=["output_handle: variant", "tensor: element_dtype"],
    attrs=["element_dtype: type"],
)


def _pop_back(k: KernelConstruction, ctx: OpKernelContext, inputs: list) -> list:
    tl = list_of(inputs[0], ctx.node_name)
    _check_dtype(tl, k.attr("element_dtype"), ctx.node_name)
    if not tl.items:
        raise InvalidArgumentError("Trying to pop from an empty list.", ctx.node_name)
    item = tl.items[-1]
    if item is None:
        item = _zeros(tl, shape_from_tensor(inputs[1], ctx.node_name), ctx.node_name)
    return [list_value(tl.replace(items=tl.items[:-1])), item]


_kernel("TensorListPopBack", _pop_back)


register_op("TensorListLength", inputs=["input_handle: variant"], outputs=["length: int32"])


def _length(k: KernelConstruction, ctx: OpKernelContext, inputs: list) -> list:
    return [np.int32(len(list_of(inputs[0], ctx.node_name).items))]


_kernel("TensorListLength", _length)


register_op(
    "TensorListElementShape",
    inputs=["input_handle: variant"],
    outputs=["element_shape: shape_type"],
    attrs=[_SHAPE_TYPE],
)


def _element_shape(k: KernelConstruction, ctx: OpKernelContext, inputs: list) -> list:
    tl = list_of(inputs[0], ctx.node_name)
    return [shape_to_tensor(tl.element_shape, k.attr("shape_type"))]


_kernel("TensorListElementShape", _element_shape)


register_op(
    "TensorListGather",
    inputs=["input_handle: variant", "indices: int32", "element_shape: int32"],
    outputs=["values: element_dtype"],
    attrs=["element_dtype: type"],
)


def _gather(k: KernelConstruction, ctx: OpKernelContext, inputs: list) -> list:
    tl = list_of(inputs[0], ctx.node_name)
    _check_dtype(tl, k.attr("element_dtype"), ctx.node_name)
    indices = [int(i) for i in np.asarray(inputs[1]).reshape(-1)]
    for i in indices:
        _check_index(tl, i, "access", ctx.node_name)
    shape = shape_from_tensor(inputs[2], ctx.node_name)
    return [_stack_items(tl, indices, shape, ctx.node_name)]


_kernel("TensorListGather", _gather)


register_op(
    "TensorListScatterIntoExistingList",
    inputs=["input_handle: variant", "tensor: element_dtype", "indices: int32"],
    outputs=["output_handle: variant"],
    attrs=["element_dtype: type"],
)


def _scatter_into(k: KernelConstruction, ctx: OpKernelContext, inputs: list) -> list:
    tl = list_of(inputs[0], ctx.node_name)
    dt = k.attr("element_dtype")
    _check_dtype(tl, dt, ctx.node_name)
    t, indices = _own(inputs[1], dt), np.asarray(inputs[2])
    if indices.ndim != 1:
        raise InvalidArgumentError(
            f"Indices for TensorListScatter must be a vector, got shape: "
            f"{shape_str(indices.shape)}",
            ctx.node_name,
        )
    if t.ndim == 0 or t.shape[0] != indices.shape[0]:
        raise InvalidArgumentError(
            f"Invalid number of rows in input tensor. Expected: {indices.shape[0]} Actual: "
            f"{t.shape[0] if t.ndim else 0}",
            ctx.node_name,
        )
    if not _compatible(t.shape[1:], tl.element_shape):
        raise InvalidArgumentError(
            f"Specified a list with shape {shape_string(tl.element_shape)} from a tensor "
            f"with shape {shape_str(t.shape)}",
            ctx.node_name,
        )
    items = list(tl.items)
    for row, i in enumerate(int(x) for x in indices):
        if i < 0:
            raise InvalidArgumentError(
                f"Indices in TensorListScatter must all be non-negative. Got: {i}",
                ctx.node_name,
            )
        items.extend([None] * (i + 1 - len(items)))
        items[i] = t[row]
    return [list_value(tl.replace(items=tuple(items)))]


_kernel("TensorListScatterIntoExistingList", _scatter_into)


register_op(
    "TensorListConcatV2",
    inputs=["input_handle: variant", "element_shape: shape_type", "leading_dims: int64"],
    outputs=["tensor: element_dtype", "lengths: int64"],
    attrs=["element_dtype: type", _SHAPE_TYPE],
)


def _concat(k: KernelConstruction, ctx: OpKernelContext, inputs: list) -> list:
    tl = list_of(inputs[0], ctx.node_name)
    dt = k.attr("element_dtype")
    _check_dtype(tl, dt, ctx.node_name)
    shape = merge_shapes(tl.element_shape, shape_from_tensor(inputs[1], ctx.node_name))
    if shape is not None and len(shape) == 0:
        raise InvalidArgumentError(
            "Concat requires elements to be at least vectors, found scalars instead.",
            ctx.node_name,
        )
    rest: Shape = None if shape is None else shape[1:]
    leading = [int(d) for d in np.asarray(inputs[2]).reshape(-1)]
    parts = []
    for i, item in enumerate(tl.items):
        if item is None:
            if not _fully_defined(rest) or not leading:
                raise InvalidArgumentError(
                    "Trying to concat list with only uninitialized tensors but "
                    f"element_shape_except_first_dim: {shape_string(rest)} is not fully "
                    "defined and no leading_dims were given.",
                    ctx.node_name,
                )
            item = np.zeros((leading[i], *rest), dtypes.as_numpy(dt))
        elif item.ndim == 0:
            raise InvalidArgumentError(
                f"Concat saw a scalar shape at index {i} but requires at least vectors.",
                ctx.node_name,
            )
        rest = merge_shapes(rest, tuple(item.shape[1:]), ctx.node_name)
        parts.append(item)
    lengths = np.array([p.shape[0] for p in parts], np.int64)
    if not parts:
        if not _fully_defined(rest):
            raise InvalidArgumentError(
                "All except the first dimension must be fully defined when concating an "
                f"empty tensor list. element_shape: {shape_string(shape)}",
                ctx.node_name,
            )
        return [np.zeros((0, *rest), dtypes.as_numpy(dt)), lengths]
    return [np.concatenate(parts, axis=0), lengths]


_kernel("TensorListConcatV2", _concat)


register_op(
    "TensorListResize",
    inputs=["input_handle: variant", "size: int32"],
    outputs=["output_handle: variant"],
)


def _resize(k: KernelConstruction, ctx: OpKernelContext, inputs: list) -> list:
    tl = list_of(inputs[0], ctx.node_name)
    size = int(np.asarray(inputs[1]))
    if size < 0:
        raise InvalidArgumentError(
            f"TensorListSlice expects size to be non-negative. Got: {size}", ctx.node_name
        )
    items = tl.items[:size] + (None,) * max(0, size - len(tl.items))
    return [list_value(tl.replace(items=items))]


_kernel("TensorListResize", _resize)


register_op(
    "TensorListSplit",
    inputs=["tensor: element_dtype", "element_shape: shape_type", "lengths: int64"],
    outputs=["output_handle: variant"],
    attrs=["element_dtype: type", _SHAPE_TYPE],
)


def _split(k: KernelConstruction, ctx: OpKernelContext, inputs: list) -> list:
    dt, t, shape = _list_source(k, ctx, inputs)
    if shape is not None and (len(shape) == 0 or not _compatible(t.shape[1:], shape[1:])):
        raise _shape_mismatch(shape, t, ctx.node_name)
    lengths = [int(x) for x in np.asarray(inputs[2]).reshape(-1)]
    if any(n < 0 for n in lengths) or sum(lengths) != t.shape[0]:
        raise InvalidArgumentError(
            f"Unable to split tensor of shape {shape_str(t.shape)} into lengths "
            f"{lengths}: the lengths must be non-negative and sum to {t.shape[0]}",
            ctx.node_name,
        )
    bounds = np.cumsum([0, *lengths])
    items = tuple(t[int(a) : int(b)] for a, b in zip(bounds[:-1], bounds[1:]))
    return [list_value(TensorList(dt, shape, items))]


_kernel("TensorListSplit", _split)
