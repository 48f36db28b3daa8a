"""Ops (executor stage), CombinedNonMaxSuppression: greedy NMS per batch and class,
then the best max_total_size detections of each batch, as TensorFlow's
non_max_suppression_op.cc computes them.

Per class, candidates above score_threshold come off a std::priority_queue ordered by
score alone, and the batch's results go through std::sort by descending score: with
equal scores TF's order is the standard library's, reproduced by `stl_order`. Boxes are
[batch, num_boxes, q, 4] with q 1 (shared by all classes) or num_classes; outputs are
clipped to [0, 1] when clip_boxes is set. Thread-safe: the kernel keeps no state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from common import memory
from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops import stl_order
from common.ops.nms_ops import BoxGeometry
from common.ops.registry import KernelConstruction, register_kernel, register_op

F32 = np.float32
_INT_MAX = 2**31 - 1


@dataclass(frozen=True)
class _Result:
    """TF's ResultCandidate; box_index -1 marks an empty slot (score -inf)."""

    box_index: int
    score: float
    class_idx: int
    coords: tuple


_EMPTY = _Result(-1, float("-inf"), -1, (0.0, 0.0, 0.0, 0.0))


def _by_score(a: tuple, b: tuple) -> bool:
    return a[1] < b[1]


def _by_score_desc(a: _Result, b: _Result) -> bool:
    return b.score < a.score


def _nms_per_class(
    boxes: np.ndarray, geo: BoxGeometry, scores: np.ndarray, cls: int, size: int,
    score_t: np.float32, iou_t: np.float32, out: list[_Result],
) -> None:  # fmt: skip
    """DoNMSPerClass: fills out[size * cls : size * cls + len(selected)]."""
    queue = stl_order.PriorityQueue(_by_score)
    for i, s in enumerate(scores[:, cls]):
        if s > score_t:
            queue.push((i, float(s)))
    selected: list[int] = []
    while len(selected) < size and len(queue):
        box, score = queue.pop()
        if selected and bool(np.any(geo.iou(box, np.array(selected, np.int64)) > iou_t)):
            continue
        out[len(selected) + size * cls] = _Result(box, score, cls, tuple(boxes[box]))
        selected.append(box)


def _batch(
    boxes: np.ndarray, scores: np.ndarray, size_per_class: int, total: int, per_batch: int,
    score_t: np.float32, iou_t: np.float32, pad_per_class: bool, clip: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:  # fmt: skip
    """One batch: boxes [num_boxes, q, 4], scores [num_boxes, num_classes]."""
    num_classes = scores.shape[1]
    q = boxes.shape[1]
    results = [_EMPTY] * (size_per_class * num_classes)
    shared = BoxGeometry(boxes[:, 0]) if q == 1 else None
    for cls in range(num_classes):
        class_boxes = boxes[:, cls if q > 1 else 0]
        geo = shared if shared is not None else BoxGeometry(class_boxes)
        _nms_per_class(class_boxes, geo, scores, cls, size_per_class, score_t, iou_t, results)
    stl_order.sort(results, _by_score_desc)
    found = sum(1 for r in results if r.box_index > -1)
    valid = min(found, per_batch if pad_per_class else total)
    out_boxes = np.zeros((per_batch, 4), F32)
    out_scores = np.zeros(per_batch, F32)
    out_classes = np.zeros(per_batch, F32)
    for k, r in enumerate(results[:valid]):
        c = np.array(r.coords, F32)
        out_boxes[k] = np.maximum(np.minimum(c, F32(1)), F32(0)) if clip else c
        out_scores[k] = r.score
        out_classes[k] = r.class_idx
    return out_boxes, out_scores, out_classes, valid


def _scalar(t: np.ndarray, what: str) -> np.ndarray:
    if t.ndim != 0:
        raise InvalidArgumentError(f"{what} must be 0-D, got shape {mu.shape_str(t.shape)}")
    return t


def _dim(t: np.ndarray, d: int) -> int:
    """dim_size(d); TF's kernel aborts the process when the rank is lower, we refuse."""
    if t.ndim <= d:
        raise InvalidArgumentError(
            f"boxes must be 4-D and scores 3-D, got shapes {mu.shape_str(t.shape)}"
        )
    return t.shape[d]


def _check_shapes(boxes: np.ndarray, scores: np.ndarray) -> None:
    """ParseAndCheckCombinedNMSBoxSizes then CheckCombinedNMSScoreSizes (the first error
    is the one TF reports)."""
    num_classes = _dim(scores, 2)
    if boxes.ndim != 4:
        raise InvalidArgumentError(f"boxes must be 4-D{mu.shape_str(boxes.shape)}")
    if boxes.shape[2] not in (1, num_classes):
        raise InvalidArgumentError("third dimension of boxes must be either 1 or num classes")
    if boxes.shape[3] != 4:
        raise InvalidArgumentError("boxes must have 4 columns")
    if scores.ndim != 3:
        raise InvalidArgumentError(f"scores must be 3-D{mu.shape_str(scores.shape)}")
    if scores.shape[1] != boxes.shape[1]:
        raise InvalidArgumentError("scores has incompatible shape")


def _combined(kc: KernelConstruction) -> Callable:
    pad_per_class = bool(kc.attrs["pad_per_class"])
    clip = bool(kc.attrs["clip_boxes"])

    def compute(ctx, inputs: list) -> list:
        boxes, scores, per_class_t, total_t, iou_in, score_in = (np.asarray(x) for x in inputs)
        if _dim(boxes, 0) != _dim(scores, 0):
            raise InvalidArgumentError("boxes and scores must have same batch size")
        per_class = int(_scalar(per_class_t, "max_size_per_class"))
        if per_class <= 0:
            raise InvalidArgumentError("max_size_per_class must be positive")
        total = int(_scalar(total_t, "max_total_size"))
        if total <= 0:
            raise InvalidArgumentError("max_total_size must be > 0")
        iou_t = F32(_scalar(iou_in, "iou_threshold"))
        score_t = F32(_scalar(score_in, "score_threshold"))
        if not (iou_t >= 0 and iou_t <= 1):
            raise InvalidArgumentError("iou_threshold must be in [0, 1]")
        _check_shapes(boxes, scores)
        batches, num_boxes, _, _ = boxes.shape
        num_classes = scores.shape[2]
        size_per_class = min(per_class, num_boxes)
        if size_per_class * num_classes > _INT_MAX:
            raise InvalidArgumentError("size_per_class * num_classes causes overflow")
        per_batch = total
        if pad_per_class:
            per_batch = min(total, min(_INT_MAX, per_class * num_classes))
        memory.check_allocation(kc, [batches, per_batch, 4], np.dtype(F32))
        out = [
            np.zeros((batches, per_batch, 4), F32),
            np.zeros((batches, per_batch), F32),
            np.zeros((batches, per_batch), F32),
            np.zeros(batches, np.int32),
        ]
        b32, s32 = boxes.astype(F32), scores.astype(F32)
        for b in range(batches):
            got = _batch(b32[b], s32[b], size_per_class, total, per_batch, score_t, iou_t,
                         pad_per_class, clip)  # fmt: skip
            out[0][b], out[1][b], out[2][b], out[3][b] = got
        return out

    return compute


def _register() -> None:
    register_op(
        "CombinedNonMaxSuppression",
        [
            "boxes: float",
            "scores: float",
            "max_output_size_per_class: int32",
            "max_total_size: int32",
            "iou_threshold: float",
            "score_threshold: float",
        ],
        ["nmsed_boxes: float", "nmsed_scores: float", "nmsed_classes: float",
         "valid_detections: int32"],
        ["pad_per_class: bool = false", "clip_boxes: bool = true"],
    )  # fmt: skip
    register_kernel("CombinedNonMaxSuppression")(_combined)


_register()
