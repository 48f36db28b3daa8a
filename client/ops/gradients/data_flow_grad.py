"""Client, gradients: DynamicPartition, DynamicStitch and ParallelDynamicStitch (TF's
data_flow_grad.py), the routing of a partitioned embedding_lookup. Each table's
gradient stays IndexedSlices: the stitch hands each partition a Gather of its rows."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework.gradient_registry import RegisterGradient
from client.framework.indexed_slices import IndexedSlices
from client.ops import array_ops, data_flow_ops, math_ops


@RegisterGradient("DynamicPartition")
def _dynamic_partition_grad(op: Any, *grads: Any) -> list[Any]:
    data, indices = op.inputs
    num_partitions = int(op.get_attr("num_partitions"))
    prefix_shape = array_ops.shape(indices)
    original_indices = array_ops.reshape(
        math_ops.range(math_ops.reduce_prod(prefix_shape)), prefix_shape
    )
    partitioned = data_flow_ops.dynamic_partition(original_indices, indices, num_partitions)
    reconstructed = data_flow_ops.parallel_dynamic_stitch(partitioned, grads)
    return [array_ops.reshape(reconstructed, array_ops.shape(data)), None]


@RegisterGradient("DynamicStitch")
@RegisterGradient("ParallelDynamicStitch")
def _dynamic_stitch_grad(op: Any, grad: Any) -> list[Any]:
    n = len(op.inputs) // 2
    indices = op.inputs[:n]
    if indices[0].dtype != dtypes.int32:
        indices = [math_ops.cast(i, dtypes.int32) for i in indices]
    if isinstance(grad, IndexedSlices):
        rows = array_ops.shape(op.outputs[0])[0]
        grad = math_ops.unsorted_segment_sum(grad.values, grad.indices, rows)
    return [None] * n + [array_ops.gather(grad, i) for i in indices]
