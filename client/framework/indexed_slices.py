"""Client graph building: tf.IndexedSlices — the sparse gradient of a row gather
(`values[i]` is row `indices[i]` of a tensor of shape `dense_shape`), and its densifying
conversion to a Tensor (UnsortedSegmentSum, with TensorFlow's warnings).

TensorFlow's framework/indexed_slices.py: gradient functions of Gather, GatherV2 (axis 0)
and ResourceGather return one; tf.gradients passes it through Identity / ReadVariableOp,
sums several by concatenation (`aggregate`), and optimizers apply it as a sparse update.
Values are immutable; building graph nodes is not thread-safe (as all graph building).
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op
from client.framework.tensor_shape import TensorShape


class IndexedSlicesValue(NamedTuple):
    """What Session.run returns for a fetched IndexedSlices (TF's
    tf.compat.v1.IndexedSlicesValue): numpy values, indices and dense_shape (None when
    the IndexedSlices has none)."""

    values: Any
    indices: Any
    dense_shape: Any = None


# TF's _LARGE_SPARSE_NUM_ELEMENTS: densifying at least this many elements warns.
LARGE_SPARSE_NUM_ELEMENTS = 100000000


class IndexedSlices:
    """A sparse representation of a set of tensor slices at given indices (TF's
    tf.IndexedSlices): the dense value is `UnsortedSegmentSum(values, indices,
    dense_shape[0])`, so repeated indices add up."""

    def __init__(self, values: Any, indices: Any, dense_shape: Any = None) -> None:
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    values = property(lambda self: self._values)
    indices = property(lambda self: self._indices)
    dense_shape = property(lambda self: self._dense_shape)
    name = property(lambda self: self._values.name)
    device = property(lambda self: self._values.device)
    op = property(lambda self: self._values.op)
    dtype = property(lambda self: self._values.dtype)
    graph = property(lambda self: self._values.graph)

    @property
    def shape(self) -> TensorShape:
        """The static shape of the dense value, from `dense_shape` when it is a constant."""
        if self._dense_shape is None:
            return TensorShape(None)
        from client.framework.shape_fns import constant_value

        known = constant_value(self._dense_shape)
        if known is not None:
            return TensorShape([int(d) for d in np.asarray(known).reshape(-1)])
        rows = TensorShape([None])
        return rows.concatenate(self._values.shape[1:]) if self._values.shape.ndims else rows

    def get_shape(self) -> TensorShape:
        return self.shape

    def consumers(self) -> list[Any]:
        seen: list[Any] = []
        for t in (self._values, self._indices, self._dense_shape):
            for op in [] if t is None else t.consumers():
                if op not in seen:
                    seen.append(op)
        return seen

    def __neg__(self) -> IndexedSlices:
        from client.ops import math_ops

        return IndexedSlices(math_ops.negative(self._values), self._indices, self._dense_shape)

    def __str__(self) -> str:
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape}"
        return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"

    __repr__ = __str__


def is_indexed_slices(value: Any) -> bool:
    return isinstance(value, IndexedSlices)


def to_dense(value: Any, name: str | None = None) -> Any:
    """TF's _IndexedSlicesToTensorNoWarning: a Tensor unchanged, IndexedSlices summed into
    their dense shape with UnsortedSegmentSum."""
    if not isinstance(value, IndexedSlices):
        return value
    if value.dense_shape is None:
        raise ValueError(
            f"Tensor conversion requested for IndexedSlices without dense_shape: {value.name}"
        )
    dense_shape = value.dense_shape
    num_segments = apply_op(
        "StridedSlice",
        [dense_shape, _i32([0]), _i32([1]), _i32([1])],
        {"shrink_axis_mask": 1},
        None,
    ).outputs[0]
    out = apply_op(
        "UnsortedSegmentSum", [value.values, value.indices, num_segments], {}, name
    ).outputs[0]
    # What dense_shape tells about the sum, where the values' shape does not contradict it
    # (TensorFlow leaves such a mismatch to run time).
    if out.shape.is_compatible_with(value.shape):
        out.set_shape(value.shape)
    return out


def _i32(v: list[int]) -> Any:
    from client.framework.op_builder import constant

    return constant(np.array(v, np.int32))


def _indexed_slices_to_tensor(
    value: IndexedSlices, dtype: Any = None, name: str | None = None, as_ref: bool = False
) -> Any:
    """TF's conversion function: densify, warning when the dense value may be large."""
    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
        raise ValueError(
            f"Incompatible tensor conversion requested to `dtype` {dtypes.as_dtype(dtype).name} "
            f"for IndexedSlices ({value}) with dtype {value.dtype.name}"
        )
    if value.dense_shape is None:
        raise ValueError(
            "Tensor conversion requested for IndexedSlices for argument "
            f"{value} without dense_shape."
        )
    from client.framework.shape_fns import constant_value

    known = constant_value(value.dense_shape)
    if known is not None:
        num_elements = int(np.prod(np.asarray(known, np.int64)))
        if num_elements >= LARGE_SPARSE_NUM_ELEMENTS:
            warnings.warn(
                f"Converting sparse IndexedSlices to a dense Tensor with {num_elements} "
                "elements. This may consume a large amount of memory.",
                stacklevel=3,
            )
    elif value.dense_shape.op.type != "VariableShape":
        warnings.warn(
            f"Converting sparse IndexedSlices({value}) to a dense Tensor of unknown shape. "
            "This may consume a large amount of memory.",
            stacklevel=3,
        )
    return to_dense(value, name=name)


_ops.register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor)


def convert_to_tensor_or_indexed_slices(
    value: Any, dtype: Any = None, name: str | None = None
) -> Any:
    """IndexedSlices unchanged (dtype-checked), anything else through convert_to_tensor."""
    if isinstance(value, IndexedSlices):
        if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(
                f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for "
                f"IndexedSlices with dtype {value.dtype.name}: {value}"
            )
        return value
    from client.framework.op_builder import convert_to_tensor

    return convert_to_tensor(value, dtype=dtype, name=name)


# -- aggregation (tf.gradients) -------------------------------------------------------------
def _with_int64_indices(grads: list[IndexedSlices]) -> list[IndexedSlices]:
    """TF's _as_indexed_slices_list: mixed int32/int64 indices all become int64."""
    int32 = [g for g in grads if g.indices.dtype.base_dtype == dtypes.int32]
    if not int32 or len(int32) == len(grads):
        return grads
    from client.ops import math_ops

    return [
        IndexedSlices(g.values, math_ops.cast(g.indices, dtypes.int64), g.dense_shape)
        if g.indices.dtype.base_dtype == dtypes.int32
        else g
        for g in grads
    ]


def _multi_device_add_n(tensors: list[Any]) -> Any:
    """TF's _MultiDeviceAddN: the tensors of each device summed there (an AddN colocated
    with the first of them), then the per-device sums added."""
    from client.ops import math_ops

    on_device: dict[str, list[Any]] = {}
    for t in tensors:
        on_device.setdefault(t.device, []).append(t)
    summands = []
    for device in sorted(on_device):
        group = on_device[device]
        with _ops.colocate_with(group[0].op, ignore_existing=True):
            # TF's add_n passes a single tensor through (the client's adds an Identity).
            summands.append(group[0] if len(group) == 1 else math_ops.add_n(group))
    return summands[0] if len(summands) == 1 else math_ops.add_n(summands)


def aggregate(grads: list[Any]) -> Any:
    """The sum of one tensor's gradients as TF's tf.gradients builds it: one passes
    through, all Tensors add with AddN, any Tensor among IndexedSlices densifies them all
    into AddN, and IndexedSlices alone concatenate their values and indices
    (TF's _AggregateIndexedSlicesGradients)."""
    from client.ops import array_ops, math_ops

    grads = [g for g in grads if g is not None]
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    if not any(isinstance(g, IndexedSlices) for g in grads):
        return _multi_device_add_n(grads)
    if any(not isinstance(g, IndexedSlices) for g in grads):
        return math_ops.add_n([to_dense(g) for g in grads])
    slices = _with_int64_indices(grads)
    return IndexedSlices(
        array_ops.concat([g.values for g in slices], 0),
        array_ops.concat([g.indices for g in slices], 0),
        slices[0].dense_shape,
    )
