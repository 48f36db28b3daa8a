"""Ops (executor stage), non-max suppression of boxes: NonMaxSuppression (V1 to V5, V5
with soft-NMS) and NonMaxSuppressionWithOverlaps, as TensorFlow's
non_max_suppression_op.cc computes them (CombinedNonMaxSuppression is in
combined_nms_ops.py).

Selection follows TF's greedy loop: candidates above score_threshold in a priority queue
(highest score first, the lower box index on ties), each compared with the boxes already
selected, newest first, and compared with each of them at most once. IoU is float32
arithmetic in TF's order (Eigen's mini/maxi, zero when either box has no area); scores,
thresholds and the soft-NMS weight exp(-0.5 / sigma * iou^2) are T (float or half, with
half rounding after every operation) and exp is the C library's expf, as in TF.
Thread-safe: kernels keep no state.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import heapq
from collections.abc import Callable

import numpy as np

from common import memory
from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

F32 = np.float32


def _load_expf() -> Callable[[float], float]:
    """The C library's expf (Eigen::numext::exp<float> calls it); numpy's float32 exp can
    differ from it in the last bit. Without a loadable libm, exp in double, rounded."""
    name = ctypes.util.find_library("m")
    try:
        fn = ctypes.CDLL(name).expf if name else None
    except OSError:
        fn = None
    if fn is None:
        return lambda x: float(F32(np.exp(np.float64(x))))
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return fn


_expf = _load_expf()


def _mini(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(b < a, b, a)  # std::min: a unless b < a (NaN stays where TF keeps it)


def _maxi(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(a < b, b, a)


class BoxGeometry:
    """Corners and areas of [y1, x1, y2, x2] boxes as float32, for TF's IOU()."""

    def __init__(self, boxes: np.ndarray) -> None:
        b = np.asarray(boxes).astype(F32).reshape(-1, 4)
        self.ymin, self.ymax = _mini(b[:, 0], b[:, 2]), _maxi(b[:, 0], b[:, 2])
        self.xmin, self.xmax = _mini(b[:, 1], b[:, 3]), _maxi(b[:, 1], b[:, 3])
        self.area = (self.ymax - self.ymin) * (self.xmax - self.xmin)
        # Without NaN or infinity numpy's minimum/maximum are std::min/max (up to the sign
        # of a zero, which no comparison or square sees), and much cheaper than where().
        finite = bool(np.isfinite(b).all())
        self._min: Callable = np.minimum if finite else _mini
        self._max: Callable = np.maximum if finite else _maxi

    def iou(self, i: int, js: np.ndarray) -> np.ndarray:
        """IoU of box i with each box of js (float32, TF's operation order)."""
        lo, hi = self._min, self._max
        with np.errstate(invalid="ignore", divide="ignore"):
            ih = hi(lo(self.ymax[i], self.ymax[js]) - hi(self.ymin[i], self.ymin[js]), F32(0))
            iw = hi(lo(self.xmax[i], self.xmax[js]) - hi(self.xmin[i], self.xmin[js]), F32(0))
            inter = ih * iw
            out = inter / (self.area[i] + self.area[js] - inter)
        empty = (self.area[i] <= 0) | (self.area[js] <= 0)
        return np.where(empty, F32(0), out).astype(F32)


def _scalar(t: np.ndarray, what: str, suffix: bool = False) -> np.ndarray:
    t = np.asarray(t)
    if t.ndim != 0:
        rank = f" (Shape must be rank 0 but is rank {t.ndim})" if suffix else ""
        raise InvalidArgumentError(f"{what} must be 0-D, got shape {mu.shape_str(t.shape)}{rank}")
    return t


def _check_boxes(boxes: np.ndarray) -> int:
    if boxes.ndim != 2:
        raise InvalidArgumentError(
            f"boxes must be 2-D{mu.shape_str(boxes.shape)} "
            f"(Shape must be rank 2 but is rank {boxes.ndim})"
        )
    if boxes.shape[1] != 4:
        raise InvalidArgumentError(
            f"boxes must have 4 columns (Dimension must be 4 but is {boxes.shape[1]})"
        )
    return boxes.shape[0]


def _check_overlaps(overlaps: np.ndarray) -> int:
    if overlaps.ndim != 2:
        raise InvalidArgumentError(f"overlaps must be 2-D{mu.shape_str(overlaps.shape)}")
    if overlaps.shape[1] != overlaps.shape[0]:
        raise InvalidArgumentError(f"overlaps must be square{mu.shape_str(overlaps.shape)}")
    return overlaps.shape[0]


def _check_scores(scores: np.ndarray, num_boxes: int) -> None:
    if scores.ndim != 1:
        raise InvalidArgumentError(
            f"scores must be 1-D{mu.shape_str(scores.shape)} "
            f"(Shape must be rank 1 but is rank {scores.ndim})"
        )
    if scores.shape[0] != num_boxes:
        raise InvalidArgumentError(
            "scores has incompatible shape (Dimensions must be equal, but are "
            f"{num_boxes} and {scores.shape[0]})"
        )


def _check_iou(iou: np.floating) -> None:
    if not (iou >= 0 and iou <= 1):
        raise InvalidArgumentError("iou_threshold must be in [0, 1]")


Similarity = Callable[[int, np.ndarray], np.ndarray]


def suppress(
    scores: np.ndarray,
    max_output_size: np.ndarray,
    threshold: np.generic,
    score_threshold: np.generic,
    sigma: np.generic,
    similarity: Similarity,
) -> tuple[list[int], list[np.generic]]:
    """DoNonMaxSuppressionOp: the selected box indices and their (soft-suppressed) scores.
    `scores` and the three thresholds carry T's dtype; `similarity(i, js)` is float32."""
    output_size = int(max_output_size)
    if output_size < 0:
        raise InvalidArgumentError("output size must be non-negative")
    t = scores.dtype.type
    # Entries (-score, box index, suppress_begin_index, score): heapq's order is TF's
    # comparator (higher score first, lower index on ties); each box is queued once.
    queue = [(-float(s), i, 0, s) for i, s in enumerate(scores) if s > score_threshold]
    heapq.heapify(queue)
    soft = sigma > t(0)
    scale = t(t(-0.5) / sigma) if soft else t(0)
    selected: list[int] = []
    selected_scores: list[np.generic] = []
    while len(selected) < output_size and queue:
        _, box, begin, original = heapq.heappop(queue)
        score = original
        hard = False
        if begin < len(selected):
            sims = similarity(box, np.array(selected[begin:][::-1], np.int64))
            for sim_f in sims:
                sim = t(sim_f)
                weight = t(_expf(float(t(t(scale * sim) * sim))))
                score = t(score * (weight if soft or sim <= threshold else t(0)))
                if not soft and sim > threshold:
                    hard = True
                    break
                if score <= score_threshold:
                    break
        if hard:
            continue
        if score == original:
            selected.append(box)
            selected_scores.append(score)
        elif score > score_threshold:
            heapq.heappush(queue, (-float(score), box, len(selected), score))
    return selected, selected_scores


def _padded(values: list, size: int, dtype: np.dtype | type) -> np.ndarray:
    """The values, then zeros up to `size` when padding (size < 0: no padding)."""
    out: np.ndarray = np.zeros(max(size, len(values)), dtype)
    out[: len(values)] = values
    return out


def _v1(kc: KernelConstruction) -> Callable:
    iou = F32(kc.attrs["iou_threshold"])

    def compute(ctx, inputs: list) -> list:
        boxes, scores, max_size = (np.asarray(x) for x in inputs)
        _scalar(max_size, "max_output_size")
        _check_iou(iou)
        _check_scores(scores, _check_boxes(boxes))
        geo = BoxGeometry(boxes)
        low = np.finfo(F32).min
        sel, _ = suppress(scores.astype(F32), max_size, iou, low, F32(0), geo.iou)
        return [np.array(sel, np.int32)]

    return compute


def _thresholds(kc: KernelConstruction) -> Callable:
    """V2 to V5: boxes, scores, max_output_size, iou_threshold[, score_threshold[, sigma]]."""
    op = kc.op
    pad = bool(kc.attrs.get("pad_to_max_output_size", False))
    suffix = op == "NonMaxSuppressionV3"  # only V3's messages carry the rank

    def compute(ctx, inputs: list) -> list:
        boxes, scores, max_size, iou_t, *rest = (np.asarray(x) for x in inputs)
        t = scores.dtype.type
        _scalar(max_size, "max_output_size", suffix)
        iou = t(_scalar(iou_t, "iou_threshold", suffix))  # GetScalar<T>: cast to T
        _check_iou(iou)
        score_t = t(np.finfo(t).min)
        if rest:
            score_t = t(_scalar(rest[0], "score_threshold"))
        sigma = t(0)
        if len(rest) > 1:
            sigma = t(_scalar(rest[1], "soft_nms_sigma"))
            if not sigma >= 0:
                raise InvalidArgumentError("soft_nms_sigma_val must be >= 0")
        _check_scores(scores, _check_boxes(boxes))
        geo = BoxGeometry(boxes)
        sel, sel_scores = suppress(scores, max_size, iou, score_t, sigma, geo.iou)
        size = int(max_size) if pad else -1
        if pad:  # the padded outputs' size comes from an input value
            memory.check_allocation(kc, [size], np.dtype(np.int32))
        out: list = [_padded(sel, size, np.int32)]
        if op == "NonMaxSuppressionV5":
            out.append(_padded(sel_scores, size, scores.dtype))
        if op in ("NonMaxSuppressionV4", "NonMaxSuppressionV5"):
            out.append(np.int32(len(sel)))
        return out

    return compute


def _with_overlaps(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        overlaps, scores, max_size, overlap_t, score_t = (np.asarray(x) for x in inputs)
        _scalar(max_size, "max_output_size")
        threshold = F32(_scalar(overlap_t, "overlap_threshold"))
        low = F32(_scalar(score_t, "score_threshold"))
        _check_scores(scores, _check_overlaps(overlaps))
        table = overlaps.astype(F32)
        sel, _ = suppress(
            scores.astype(F32), max_size, threshold, low, F32(0), lambda i, js: table[i, js]
        )
        return [np.array(sel, np.int32)]

    return compute


def _register() -> None:
    nms_in = ["boxes: T", "scores: T", "max_output_size: int32"]
    half_float = "{half, float} = DT_FLOAT"
    t_attrs = [f"T: {half_float}", f"T_threshold: {half_float}"]
    pad = "pad_to_max_output_size: bool = false"
    register_op(
        "NonMaxSuppression",
        ["boxes: float", "scores: float", "max_output_size: int32"],
        ["selected_indices: int32"],
        ["iou_threshold: float = 0.5"],
    )
    register_kernel("NonMaxSuppression")(_v1)
    register_op(
        "NonMaxSuppressionV2",
        [*nms_in, "iou_threshold: T_threshold"],
        ["selected_indices: int32"],
        t_attrs,
    )
    v3_in = [*nms_in, "iou_threshold: T_threshold", "score_threshold: T_threshold"]
    register_op("NonMaxSuppressionV3", v3_in, ["selected_indices: int32"], t_attrs)
    register_op(
        "NonMaxSuppressionV4",
        v3_in,
        ["selected_indices: int32", "valid_outputs: int32"],
        [*t_attrs, pad],
    )
    register_op(
        "NonMaxSuppressionV5",
        [*nms_in, "iou_threshold: T", "score_threshold: T", "soft_nms_sigma: T"],
        ["selected_indices: int32", "selected_scores: T", "valid_outputs: int32"],
        [f"T: {half_float}", pad],
    )
    for v in ("V2", "V3", "V4", "V5"):
        register_kernel(f"NonMaxSuppression{v}")(_thresholds)
    register_op(
        "NonMaxSuppressionWithOverlaps",
        [
            "overlaps: float",
            "scores: float",
            "max_output_size: int32",
            "overlap_threshold: float",
            "score_threshold: float",
        ],
        ["selected_indices: int32"],
    )
    register_kernel("NonMaxSuppressionWithOverlaps")(_with_overlaps)


_register()
