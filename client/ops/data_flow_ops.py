"""Client, graph building: stack ops (StackV2/StackPushV2/StackPopV2/StackCloseV2), the
storage a TF1 while loop's gradient uses to hand forward values to the gradient loop; and
tf.ConditionalAccumulator / SparseConditionalAccumulator (SyncReplicasOptimizer's); and
tf.dynamic_partition / dynamic_stitch, which route a partitioned embedding_lookup."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes as _dtypes
from client.framework import shape_fns
from client.framework.indexed_slices import IndexedSlices
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import math_ops


def stack_v2(max_size: Any, elem_type: Any, stack_name: str = "", name: str | None = None) -> Any:
    return apply_op(
        "StackV2", [max_size], {"elem_type": elem_type, "stack_name": stack_name}, name
    ).outputs[0]


def stack_push_v2(
    handle: Any, elem: Any, swap_memory: bool = False, name: str | None = None
) -> Any:
    return apply_op("StackPushV2", [handle, elem], {"swap_memory": swap_memory}, name).outputs[0]


def stack_pop_v2(handle: Any, elem_type: Any, name: str | None = None) -> Any:
    return apply_op("StackPopV2", [handle], {"elem_type": elem_type}, name).outputs[0]


def stack_close_v2(handle: Any, name: str | None = None) -> Any:
    return apply_op("StackCloseV2", [handle], {}, name)


class ConditionalAccumulatorBase:
    """What dense and sparse accumulators share: the handle, count and time step."""

    def __init__(self, dtype: Any, shape: Any, accumulator_ref: Any) -> None:
        self._dtype = _dtypes.as_dtype(dtype)
        self._shape = TensorShape(shape) if shape is not None else TensorShape(None)
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name.split("/")[-1]
        self._resource = accumulator_ref.dtype.base_dtype == _dtypes.resource

    accumulator_ref = property(lambda self: self._accumulator_ref)
    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype)

    def _op(self, op: str) -> str:
        return f"Resource{op}" if self._resource else op

    def num_accumulated(self, name: str | None = None) -> Any:
        return apply_op(
            self._op("AccumulatorNumAccumulated"),
            [self._accumulator_ref],
            {},
            name or f"{self._name}_NumAccumulated",
        ).outputs[0]

    def set_global_step(self, new_global_step: Any, name: str | None = None) -> Any:
        step = math_ops.cast(convert_to_tensor(new_global_step), _dtypes.int64)
        return apply_op(self._op("AccumulatorSetGlobalStep"), [self._accumulator_ref, step],
                        {}, name)  # fmt: skip


def _accumulator_op(op: str, dtype: Any, shape: Any, shared_name: Any, name: str,
                    reduction_type: str) -> Any:  # fmt: skip
    attrs = {
        "dtype": _dtypes.as_dtype(dtype),
        "shape": TensorShape(shape).as_tuple() if shape is not None else None,
        "shared_name": shared_name or "",
        "reduction_type": reduction_type,
    }
    return apply_op(op, [], attrs, name).outputs[0]


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """tf.ConditionalAccumulator: averages dense gradients of the current time step."""

    def __init__(self, dtype: Any, shape: Any = None, shared_name: str | None = None,
                 name: str = "conditional_accumulator",
                 reduction_type: str = "MEAN") -> None:  # fmt: skip
        ref = _accumulator_op("ResourceConditionalAccumulator", dtype, shape, shared_name, name,
                              reduction_type)  # fmt: skip
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad: Any, local_step: Any = 0, name: str | None = None) -> Any:
        grad = convert_to_tensor(grad, self._dtype)
        grad.get_shape().assert_is_compatible_with(self._shape)
        step = math_ops.cast(convert_to_tensor(local_step), _dtypes.int64)
        return apply_op("ResourceAccumulatorApplyGradient",
                        [self._accumulator_ref, step, grad], {}, name)  # fmt: skip

    def take_grad(self, num_required: Any, name: str | None = None) -> Any:
        out = apply_op("ResourceAccumulatorTakeGradient", [self._accumulator_ref, num_required],
                       {"dtype": self._dtype}, name).outputs[0]  # fmt: skip
        out.set_shape(self._shape)
        return out


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """tf.SparseConditionalAccumulator: averages IndexedSlices gradients row by row."""

    def __init__(self, dtype: Any, shape: Any = None, shared_name: str | None = None,
                 name: str = "sparse_conditional_accumulator",
                 reduction_type: str = "MEAN") -> None:  # fmt: skip
        ref = _accumulator_op("SparseConditionalAccumulator", dtype, shape, shared_name, name,
                              reduction_type)  # fmt: skip
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad_indices: Any, grad_values: Any, grad_shape: Any = None,
                   local_step: Any = 0, name: str | None = None) -> Any:  # fmt: skip
        step = math_ops.cast(convert_to_tensor(local_step), _dtypes.int64)
        shape = math_ops.cast([] if grad_shape is None else grad_shape, _dtypes.int64)
        return apply_op(
            "SparseAccumulatorApplyGradient",
            [self._accumulator_ref, step, math_ops.cast(grad_indices, _dtypes.int64),
             grad_values, shape],
            {"has_known_shape": grad_shape is not None},
            name,
        )  # fmt: skip

    def apply_indexed_slices_grad(self, grad: Any, local_step: Any = 0,
                                  name: str | None = None) -> Any:  # fmt: skip
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step, name)

    def take_grad(self, num_required: Any, name: str | None = None) -> list:
        return apply_op("SparseAccumulatorTakeGradient", [self._accumulator_ref, num_required],
                        {"dtype": self._dtype}, name).outputs  # fmt: skip

    def take_indexed_slices_grad(self, num_required: Any, name: str | None = None) -> Any:
        indices, values, shape = self.take_grad(num_required, name)
        return IndexedSlices(values, indices, shape)


# -- DynamicPartition / DynamicStitch (a partitioned embedding_lookup's routing) ------------
def dynamic_partition(
    data: Any, partitions: Any, num_partitions: int, name: str | None = None
) -> list[Any]:
    """tf.dynamic_partition: the rows of `data` split into `num_partitions` lists by
    `partitions` (int32, data's leading dimensions)."""
    attrs = {"num_partitions": num_partitions}
    return list(apply_op("DynamicPartition", [data, partitions], attrs, name).outputs)


def dynamic_stitch(indices: Any, data: Any, name: str | None = None) -> Any:
    """tf.dynamic_stitch: merged[indices[m][i]] = data[m][i] (later lists win)."""
    return apply_op("DynamicStitch", [list(indices), list(data)], {}, name).outputs[0]


def parallel_dynamic_stitch(indices: Any, data: Any, name: str | None = None) -> Any:
    """tf.compat.v1.parallel_dynamic_stitch (which duplicate wins is unspecified)."""
    return apply_op("ParallelDynamicStitch", [list(indices), list(data)], {}, name).outputs[0]


def _partitioned(op: Any) -> list[Any]:
    data, parts = op.inputs[0].shape, op.inputs[1].shape
    n = int(op.get_attr("num_partitions"))
    if data.ndims is None or parts.ndims is None:
        return [TensorShape(None)] * n
    return [TensorShape([None, *data.as_list()[parts.ndims :]])] * n


def _stitched(op: Any) -> list[Any]:
    """TensorFlow's DynamicStitch shape function: rows = max index + 1 when every index
    list is a constant, else unknown; the rest from data[0] past indices[0]'s rank."""
    n = len(op.inputs) // 2
    indices, data = op.inputs[:n], op.inputs[n:]
    if indices[0].shape.ndims is None or data[0].shape.ndims is None:
        return [TensorShape(None)]
    rows: int | None = -1
    for idx in indices:
        value = shape_fns.constant_value(idx)
        if value is None:
            rows = None
            break
        if np.size(value):
            rows = max(rows, int(np.max(value)))  # type: ignore[type-var]
    tail = data[0].shape.as_list()[indices[0].shape.ndims :]
    return [TensorShape([None if rows is None else rows + 1, *tail])]


shape_fns.SHAPE_FNS["DynamicPartition"] = _partitioned
shape_fns.SHAPE_FNS["DynamicStitch"] = _stitched
shape_fns.SHAPE_FNS["ParallelDynamicStitch"] = _stitched


# TF1's data_flow_ops also defines these; they live in data_flow_extra.
from client.ops.data_flow_extra import (  # noqa: E402, F401
    Barrier,
    MapStagingArea,
    PriorityQueue,
    StagingArea,
)
