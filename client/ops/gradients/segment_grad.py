"""Client, gradients: SegmentSum and the sparse segment reductions of
embedding_lookup_sparse (TF's math_grad.py): dense gradients through
SparseSegment*Grad, or IndexedSlices through SparseSegment*GradV2 when the forward op
was built with sparse_gradient=True; and those ops' static shapes (and Unique's)."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes, shape_fns
from client.framework.gradient_registry import RegisterGradient
from client.framework.indexed_slices import IndexedSlices
from client.framework.op_builder import apply_op
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops


@RegisterGradient("SegmentSum")
def _segment_sum_grad(op: Any, grad: Any) -> list[Any]:
    return [array_ops.gather(grad, op.inputs[1]), None]


def _sparse_gradient(op: Any) -> bool:
    try:
        return bool(op.get_attr("sparse_gradient"))
    except (ValueError, KeyError):
        return False


def _reduce_grad(op: Any, grad: Any, kind: str, extra: int) -> list[Any]:
    """[grad of data, None for indices, segment_ids (and num_segments)]."""
    indices, segment_ids = op.inputs[1], op.inputs[2]
    if _sparse_gradient(op):
        data_shape = array_ops.shape(op.inputs[0])
        grad_op = apply_op(
            f"SparseSegment{kind}GradV2", [grad, indices, segment_ids, data_shape[0]], {}
        )
        values, unique = grad_op.outputs
        return [IndexedSlices(values, unique, data_shape), None, None, *[None] * extra]
    dim0 = array_ops.shape(op.inputs[0])[0]
    out = apply_op(f"SparseSegment{kind}Grad", [grad, indices, segment_ids, dim0], {})
    return [out.outputs[0], None, None, *[None] * extra]


for _kind in ("Sum", "Mean", "SqrtN"):

    def _plain(op: Any, grad: Any, kind: str = _kind) -> list[Any]:
        return _reduce_grad(op, grad, kind, 0)

    def _with_num_segments(op: Any, grad: Any, kind: str = _kind) -> list[Any]:
        return _reduce_grad(op, grad, kind, 1)

    RegisterGradient(f"SparseSegment{_kind}")(_plain)
    RegisterGradient(f"SparseSegment{_kind}WithNumSegments")(_with_num_segments)


# -- static shapes --------------------------------------------------------------------------
def _unique_shape(op: Any) -> list[Any]:
    return [TensorShape([None]), op.inputs[0].shape]


def _sparse_segment_shape(op: Any) -> list[Any]:
    data = op.inputs[0].shape
    rows = None
    if op.type.endswith("WithNumSegments"):
        value = shape_fns.constant_value(op.inputs[3])
        rows = None if value is None else int(value)
    if data.ndims is None:
        return [TensorShape(None)]
    return [TensorShape([rows, *data.as_list()[1:]])]


def _sparse_segment_grad_shape(op: Any) -> list[Any]:
    grad = op.inputs[0].shape
    tail = grad.as_list()[1:] if grad.ndims is not None else None
    if op.type.endswith("GradV2"):
        return [TensorShape(None if tail is None else [None, *tail]), TensorShape([None])]
    value = shape_fns.constant_value(op.inputs[3])
    rows = None if value is None else int(value)
    return [TensorShape(None if tail is None else [rows, *tail])]


def _segment_shape(op: Any) -> list[Any]:
    data = op.inputs[0].shape
    return [TensorShape(None if data.ndims is None else [None, *data.as_list()[1:]])]


shape_fns.SHAPE_FNS.setdefault("Unique", _unique_shape)
for _reduction in ("Sum", "Mean", "Max", "Min", "Prod"):
    shape_fns.SHAPE_FNS.setdefault(f"Segment{_reduction}", _segment_shape)
for _kind in ("Sum", "Mean", "SqrtN"):
    shape_fns.SHAPE_FNS[f"SparseSegment{_kind}"] = _sparse_segment_shape
    shape_fns.SHAPE_FNS[f"SparseSegment{_kind}WithNumSegments"] = _sparse_segment_shape
    shape_fns.SHAPE_FNS[f"SparseSegment{_kind}Grad"] = _sparse_segment_grad_shape
    shape_fns.SHAPE_FNS[f"SparseSegment{_kind}GradV2"] = _sparse_segment_grad_shape


def _gather_drop_negatives(params: Any, ids: Any) -> Any:
    """TF's _GatherDropNegatives: rows of `params` at `ids`, zero where an id is negative."""
    from client.ops import math_ops

    zero_clipped_indices = math_ops.maximum(ids, array_ops.zeros_like(ids))
    gathered = array_ops.gather(params, zero_clipped_indices)
    is_positive = math_ops.greater_equal(ids, 0)
    is_positive_shape = array_ops.shape(is_positive)
    broadcastable_shape = array_ops.concat(
        [
            is_positive_shape,
            array_ops.ones(
                [array_ops.rank(gathered) - array_ops.rank(is_positive)],
                dtype=is_positive_shape.dtype,
            ),
        ],
        axis=0,
    )
    is_positive = array_ops.reshape(is_positive, broadcastable_shape)
    is_positive = is_positive & array_ops.ones_like(gathered, dtype=dtypes.bool)
    zero_slice = array_ops.zeros_like(gathered)
    return array_ops.where_v2(is_positive, gathered, zero_slice)


@RegisterGradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op: Any, grad: Any) -> list[Any]:
    return [_gather_drop_negatives(grad, op.inputs[1]), None, None]


def _unsorted_segment_shape(op: Any) -> list[Any]:
    """TF's UnsortedSegmentReductionShapeFn: [num_segments] + data.shape[ids.rank:]."""
    data, ids = op.inputs[0].shape, op.inputs[1].shape
    if data.ndims is None or ids.ndims is None:
        return [TensorShape(None)]
    n = shape_fns.constant_value(op.inputs[2])
    return [TensorShape([None if n is None else int(n)] + data.as_list()[ids.ndims :])]


for _reduction in ("Sum", "Max", "Min", "Prod"):
    shape_fns.SHAPE_FNS.setdefault(f"UnsortedSegment{_reduction}", _unsorted_segment_shape)
