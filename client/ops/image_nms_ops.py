"""Client, graph building: tf.image's non-max suppression (non_max_suppression,
non_max_suppression_with_scores, non_max_suppression_overlaps,
combined_non_max_suppression, non_max_suppression_padded) as tensorflow.compat.v1's
image_ops_impl.py builds them: the same ops and node names, with TF's shape functions.

non_max_suppression_padded is the one exception: TF 2.x builds it as a call of a
tf.function (a tiled, batched NMS in plain ops); here it is the NonMaxSuppressionV4
kernel, one per image when the boxes are batched with batch dimensions known while
building (the same selection and padding, other nodes), and TF's tiled algorithm itself
(image_nms_padded) when they are known only at run time. Graph building; not thread-safe.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes as _dtypes
from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.gradient_registry import NotDifferentiable
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops
from client.ops.image_nms_padded import non_max_suppression_padded_v2

_NEG_INF = float("-inf")

# As image_ops_impl.py: these three have no gradient; V3 to V5 and Combined have none
# registered at all (tf.gradients through them raises LookupError).
for _op_type in ("NonMaxSuppression", "NonMaxSuppressionV2", "NonMaxSuppressionWithOverlaps"):
    NotDifferentiable(_op_type)


# -- shape functions (image_ops.cc's NMSShapeFn, SoftNMSShapeFn, CombinedNMSShapeFn) --------
def _ranked(op: Any, ranks: list[int]) -> list[TensorShape]:
    shapes = []
    for i, rank in enumerate(ranks):
        s = op.inputs[i].shape
        if s.ndims is not None and s.ndims != rank:
            raise shape_fns.ShapeError(f"Shape must be rank {rank} but is rank {s.ndims}")
        shapes.append(s if s.ndims is not None else TensorShape([None] * rank))
    return shapes


def _merge(a: Any, b: Any) -> None:
    if a.value is not None and b.value is not None and a.value != b.value:
        raise shape_fns.ShapeError(f"Dimensions must be equal, but are {a.value} and {b.value}")


def _with_value(d: Any, value: int) -> None:
    if d.value is not None and d.value != value:
        raise shape_fns.ShapeError(f"Dimension must be {value} but is {d.value}")


def _nms_inputs(op: Any) -> None:
    """NMSShapeFn's checks: boxes [n, 4], scores [n], scalars after them."""
    boxes, scores, *_ = _ranked(op, [2, 1] + [0] * (len(op.inputs) - 2))
    _merge(boxes.dims[0], scores.dims[0])  # type: ignore[index]
    _with_value(boxes.dims[1], 4)  # type: ignore[index]


def _padded_dim(op: Any) -> int | None:
    if shape_fns._attr(op, "pad_to_max_output_size"):
        return shape_fns._scalar_dim(op.inputs[2])
    return None


@shape_fns._reg("NonMaxSuppression", "NonMaxSuppressionV2", "NonMaxSuppressionV3")
def _nms_shape(op: Any) -> list[TensorShape]:
    _nms_inputs(op)
    return [TensorShape([None])]


@shape_fns._reg("NonMaxSuppressionV4")
def _nms_v4_shape(op: Any) -> list[TensorShape]:
    _nms_inputs(op)
    return [TensorShape([_padded_dim(op)]), TensorShape([])]


@shape_fns._reg("NonMaxSuppressionV5")
def _nms_v5_shape(op: Any) -> list[TensorShape]:
    _nms_inputs(op)
    dim = _padded_dim(op)
    return [TensorShape([dim]), TensorShape([dim]), TensorShape([])]


@shape_fns._reg("NonMaxSuppressionWithOverlaps")
def _overlaps_shape(op: Any) -> list[TensorShape]:
    overlaps, scores, *_ = _ranked(op, [2, 1, 0, 0, 0])
    _merge(overlaps.dims[0], scores.dims[0])  # type: ignore[index]
    _merge(overlaps.dims[0], overlaps.dims[1])  # type: ignore[index]
    return [TensorShape([None])]


@shape_fns._reg("CombinedNonMaxSuppression")
def _combined_shape(op: Any) -> list[TensorShape]:
    boxes, scores, *_ = _ranked(op, [4, 3, 0, 0, 0, 0])
    bd, sd = boxes.dims, scores.dims
    assert bd is not None and sd is not None
    _merge(bd[0], sd[0])
    _merge(bd[1], sd[1])
    _with_value(bd[3], 4)
    q, classes = bd[2].value, sd[2].value
    if q is not None and classes is not None and q != 1 and q != classes:
        raise shape_fns.ShapeError(
            "third dimension of boxes must be either 1 or equal to the third dimension of scores"
        )
    total = shape_fns._scalar_dim(op.inputs[3])
    if total is not None and total <= 0:
        raise shape_fns.ShapeError("max_total_size should be > 0 ")
    per_class = shape_fns._scalar_dim(op.inputs[2])
    size: int | None = total
    if shape_fns._attr(op, "pad_per_class"):
        if per_class is not None and per_class <= 0:
            raise shape_fns.ShapeError(
                "max_output_size_per_class must be > 0 if pad_per_class is set to true "
            )
        size = None
        if per_class is not None and classes is not None and total is not None:
            size = min(total, per_class * classes)
    batch = bd[0].value if bd[0].value is not None else sd[0].value
    return [
        TensorShape([batch, size, 4]),
        TensorShape([batch, size]),
        TensorShape([batch, size]),
        TensorShape([batch]),
    ]


# -- the tf.image functions ------------------------------------------------------------------
def non_max_suppression(
    boxes: Any, scores: Any, max_output_size: Any, iou_threshold: Any = 0.5,
    score_threshold: Any = _NEG_INF, name: str | None = None,
) -> _ops.Tensor:  # fmt: skip
    """tf.image.non_max_suppression: NonMaxSuppressionV3."""
    with _ops.name_scope(name, "non_max_suppression"):
        iou = convert_to_tensor(iou_threshold, name="iou_threshold")
        score = convert_to_tensor(score_threshold, name="score_threshold")
        op = apply_op("NonMaxSuppressionV3", [boxes, scores, max_output_size, iou, score])
        return op.outputs[0]


def non_max_suppression_with_scores(
    boxes: Any, scores: Any, max_output_size: Any, iou_threshold: Any = 0.5,
    score_threshold: Any = _NEG_INF, soft_nms_sigma: Any = 0.0, name: str | None = None,
) -> tuple[_ops.Tensor, _ops.Tensor]:  # fmt: skip
    """tf.image.non_max_suppression_with_scores: NonMaxSuppressionV5 (soft-NMS when
    soft_nms_sigma > 0), the selected indices and their scores."""
    with _ops.name_scope(name, "non_max_suppression_with_scores"):
        iou = convert_to_tensor(iou_threshold, name="iou_threshold")
        score = convert_to_tensor(score_threshold, name="score_threshold")
        sigma = convert_to_tensor(soft_nms_sigma, name="soft_nms_sigma")
        op = apply_op(
            "NonMaxSuppressionV5",
            [boxes, scores, max_output_size, iou, score, sigma],
            {"pad_to_max_output_size": False},
        )
        return op.outputs[0], op.outputs[1]


def non_max_suppression_with_overlaps(
    overlaps: Any, scores: Any, max_output_size: Any, overlap_threshold: Any = 0.5,
    score_threshold: Any = _NEG_INF, name: str | None = None,
) -> _ops.Tensor:  # fmt: skip
    """tf.image.non_max_suppression_overlaps: NonMaxSuppressionWithOverlaps."""
    with _ops.name_scope(name, "non_max_suppression_overlaps"):
        threshold = convert_to_tensor(overlap_threshold, name="overlap_threshold")
        op = apply_op(
            "NonMaxSuppressionWithOverlaps",
            [overlaps, scores, max_output_size, threshold, score_threshold],
        )
        return op.outputs[0]


def combined_non_max_suppression(
    boxes: Any, scores: Any, max_output_size_per_class: Any, max_total_size: Any,
    iou_threshold: Any = 0.5, score_threshold: Any = _NEG_INF, pad_per_class: bool = False,
    clip_boxes: bool = True, name: str | None = None,
) -> tuple[_ops.Tensor, ...]:  # fmt: skip
    """tf.image.combined_non_max_suppression: (nmsed_boxes, nmsed_scores, nmsed_classes,
    valid_detections)."""
    with _ops.name_scope(name, "combined_non_max_suppression"):
        iou = convert_to_tensor(iou_threshold, dtype=_dtypes.float32, name="iou_threshold")
        score = convert_to_tensor(score_threshold, dtype=_dtypes.float32, name="score_threshold")
        # No dtype, as TF: a size past int32 becomes int64 and the op refuses it.
        total = convert_to_tensor(max_total_size)
        op = apply_op(
            "CombinedNonMaxSuppression",
            [boxes, scores, max_output_size_per_class, total, iou, score],
            {"pad_per_class": pad_per_class, "clip_boxes": clip_boxes},
        )
        return tuple(op.outputs)


def non_max_suppression_padded(
    boxes: Any, scores: Any, max_output_size: Any, iou_threshold: Any = 0.5,
    score_threshold: Any = _NEG_INF, pad_to_max_output_size: bool = False,
    name: str | None = None, sorted_input: bool = False,
    canonicalized_coordinates: bool = False, tile_size: int = 512,
) -> tuple[_ops.Tensor, _ops.Tensor]:  # fmt: skip
    """tf.image.non_max_suppression_padded: (selected indices, padded with zeros to
    max_output_size when asked or batched, and the number of valid ones per image).
    sorted_input, canonicalized_coordinates and tile_size tune TF's tiled algorithm, used
    for batch dimensions unknown while building."""
    with _ops.name_scope(name, "non_max_suppression_padded"):
        boxes = convert_to_tensor(boxes, name="boxes")
        rank = boxes.shape.ndims
        if not pad_to_max_output_size and rank is not None and rank > 2:
            raise ValueError(
                f"'pad_to_max_output_size' (value {pad_to_max_output_size}) must be True for "
                "batched input"
            )
        iou = convert_to_tensor(iou_threshold, dtype=_dtypes.float32, name="iou_threshold")
        score = convert_to_tensor(score_threshold, dtype=_dtypes.float32, name="score_threshold")
        attrs = {"pad_to_max_output_size": pad_to_max_output_size}
        if rank is None or rank <= 2:
            op = apply_op(
                "NonMaxSuppressionV4", [boxes, scores, max_output_size, iou, score], attrs
            )
            return op.outputs[0], op.outputs[1]
        if any(d is None for d in boxes.shape.as_list()[:-2]):
            idx, valid = non_max_suppression_padded_v2(
                boxes, scores, max_output_size, iou, score_threshold,
                sorted_input, canonicalized_coordinates, tile_size,
            )  # fmt: skip
            out_shape = array_ops.concat(
                [array_ops.shape(boxes)[:-2], array_ops.expand_dims(max_output_size, 0)], 0
            )
            return array_ops.reshape(idx, out_shape), valid
        return _padded_batch(boxes, scores, max_output_size, iou, score)


def _padded_batch(boxes: Any, scores: Any, max_output_size: Any, iou: Any,
                  score: Any) -> tuple[_ops.Tensor, _ops.Tensor]:  # fmt: skip
    """Batched boxes [..., num_boxes, 4], batch dimensions known while building: one
    padded V4 per image, restacked to [..., max_output_size] and [...]."""
    batch_dims = boxes.shape.as_list()[:-2]
    count = int(np.prod(batch_dims))
    flat_boxes = array_ops.reshape(
        boxes, array_ops.concat([[count], array_ops.shape(boxes)[-2:]], 0)
    )
    flat_scores = array_ops.reshape(
        scores, array_ops.concat([[count], array_ops.shape(scores)[-1:]], 0)
    )
    attrs = {"pad_to_max_output_size": True}
    selected, valid = [], []
    for b, s in zip(array_ops.unstack(flat_boxes, count), array_ops.unstack(flat_scores, count)):
        op = apply_op("NonMaxSuppressionV4", [b, s, max_output_size, iou, score], attrs)
        selected.append(op.outputs[0])
        valid.append(op.outputs[1])
    out_shape = array_ops.concat([batch_dims, array_ops.expand_dims(max_output_size, 0)], 0)
    idx = array_ops.reshape(array_ops.stack(selected), out_shape)
    return idx, array_ops.reshape(array_ops.stack(valid), batch_dims)


__all__ = [
    "combined_non_max_suppression",
    "non_max_suppression",
    "non_max_suppression_padded",
    "non_max_suppression_with_overlaps",
    "non_max_suppression_with_scores",
]
