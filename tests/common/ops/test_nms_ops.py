"""Non-max suppression kernels against TensorFlow 2.21, value for value:
NonMaxSuppression V1 to V5 (soft-NMS, padding, half), NonMaxSuppressionWithOverlaps and
CombinedNonMaxSuppression (ties ordered as TF's standard library orders them), and the
errors TF raises for bad shapes and thresholds. Skipped without TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

from common.ops import stl_order

from .kernel_harness import assert_same_as_tf, op_def_mismatches
from .signatures import assert_signature_matches_tensorflow, module_ops

tf = pytest.importorskip("tensorflow")
MY_OPS = module_ops("common.ops.nms_ops", "common.ops.combined_nms_ops")


def test_module_registers_the_family():
    assert MY_OPS == [
        "CombinedNonMaxSuppression",
        "NonMaxSuppression",
        "NonMaxSuppressionV2",
        "NonMaxSuppressionV3",
        "NonMaxSuppressionV4",
        "NonMaxSuppressionV5",
        "NonMaxSuppressionWithOverlaps",
    ]


@pytest.mark.parametrize("name", MY_OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)
    assert op_def_mismatches(name) == []  # allowed types and statefulness too


def _boxes(seed: int, n: int, *, grid: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Random boxes (some flipped corners, some empty) and scores; `grid` makes scores
    from a few levels so that many tie."""
    rng = np.random.default_rng(seed)
    corner = rng.random((n, 2)) * 0.8
    size = rng.random((n, 2)) * 0.4
    boxes = np.concatenate([corner, corner + size], axis=1).astype(np.float32)
    flip = rng.random(n) < 0.2
    boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    boxes[rng.random(n) < 0.05, 2] = boxes[rng.random(n) < 0.05, 0][:1].sum()  # degenerate
    scores = (rng.integers(0, 4, n) / 4.0 if grid else rng.random(n)).astype(np.float32)
    return boxes, scores


CASES = [(seed, n, grid) for seed, n, grid in [(0, 0, False), (1, 1, False), (2, 12, False),
         (3, 40, False), (4, 40, True), (5, 100, True), (6, 7, True)]]  # fmt: skip


@pytest.mark.parametrize("seed,n,grid", CASES)
@pytest.mark.parametrize("iou", [0.0, 0.3, 0.5, 1.0])
@pytest.mark.parametrize("max_out", [0, 3, 20])
def test_hard_nms_versions(seed, n, grid, iou, max_out):
    boxes, scores = _boxes(seed, n, grid=grid)
    base = {"boxes": boxes, "scores": scores, "max_output_size": np.int32(max_out)}
    assert_same_as_tf("NonMaxSuppression", base, {"iou_threshold": iou})
    thr = {"iou_threshold": np.float32(iou)}
    assert_same_as_tf("NonMaxSuppressionV2", {**base, **thr})
    for score_t in (-1.0, 0.25, 0.5):
        v3 = {**base, **thr, "score_threshold": np.float32(score_t)}
        assert_same_as_tf("NonMaxSuppressionV3", v3)
        for pad in (False, True):
            assert_same_as_tf("NonMaxSuppressionV4", v3, {"pad_to_max_output_size": pad})


@pytest.mark.parametrize("seed,n,grid", CASES)
@pytest.mark.parametrize("sigma", [0.0, 0.1, 0.5, 2.0])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_soft_nms_v5(seed, n, grid, sigma, dtype):
    boxes, scores = _boxes(seed, n, grid=grid)
    for iou, score_t, max_out, pad in [(0.5, 0.0, 20, False), (1.0, 0.1, 5, True),
                                       (0.3, -1.0, 50, True)]:  # fmt: skip
        inputs = {
            "boxes": boxes.astype(dtype),
            "scores": scores.astype(dtype),
            "max_output_size": np.int32(max_out),
            "iou_threshold": dtype(iou),
            "score_threshold": dtype(score_t),
            "soft_nms_sigma": dtype(sigma),
        }
        assert_same_as_tf("NonMaxSuppressionV5", inputs, {"pad_to_max_output_size": pad})


@pytest.mark.parametrize("t,t_threshold", [(np.float16, np.float32), (np.float32, np.float16),
                                           (np.float16, np.float16)])  # fmt: skip
def test_half_boxes_and_thresholds(t, t_threshold):
    boxes, scores = _boxes(9, 30, grid=True)
    inputs = {
        "boxes": boxes.astype(t),
        "scores": scores.astype(t),
        "max_output_size": np.int32(10),
        "iou_threshold": t_threshold(0.3),
        "score_threshold": t_threshold(0.2),
    }
    assert_same_as_tf("NonMaxSuppressionV3", inputs)
    assert_same_as_tf("NonMaxSuppressionV4", inputs, {"pad_to_max_output_size": True})
    v2 = {k: v for k, v in inputs.items() if k != "score_threshold"}
    assert_same_as_tf("NonMaxSuppressionV2", v2)


@pytest.mark.parametrize("seed", range(4))
def test_with_overlaps(seed):
    rng = np.random.default_rng(seed)
    n = 15
    overlaps = rng.random((n, n)).astype(np.float32)
    scores = (rng.integers(0, 5, n) / 5).astype(np.float32)
    for thr, score_t, max_out in [(0.5, 0.0, 10), (0.9, -1.0, 15), (0.2, 0.3, 4)]:
        inputs = {
            "overlaps": overlaps,
            "scores": scores,
            "max_output_size": np.int32(max_out),
            "overlap_threshold": np.float32(thr),
            "score_threshold": np.float32(score_t),
        }
        assert_same_as_tf("NonMaxSuppressionWithOverlaps", inputs)


def _combined_inputs(seed: int, batch: int, n: int, q: int, classes: int, grid: bool):
    rng = np.random.default_rng(seed)
    corner = rng.random((batch, n, q, 2)) * 1.2 - 0.1
    boxes = np.concatenate([corner, corner + rng.random((batch, n, q, 2)) * 0.5], -1)
    if grid:
        scores = rng.integers(0, 4, (batch, n, classes)) / 4.0
    else:
        scores = rng.random((batch, n, classes))
    return boxes.astype(np.float32), scores.astype(np.float32)


@pytest.mark.parametrize(
    "seed,batch,n,q,classes,grid",
    [(0, 1, 5, 1, 1, False), (1, 2, 20, 1, 3, False), (2, 2, 20, 3, 3, False),
     (3, 3, 30, 1, 4, True), (4, 1, 60, 5, 5, True), (5, 2, 0, 1, 2, False)],
)  # fmt: skip
@pytest.mark.parametrize(
    "per_class,total,iou,score_t",
    [(3, 5, 0.5, 0.0), (10, 40, 0.3, 0.25), (100, 7, 1.0, -1.0), (2, 100, 0.0, 0.1)],
)
def test_combined(seed, batch, n, q, classes, grid, per_class, total, iou, score_t):
    boxes, scores = _combined_inputs(seed, batch, n, q, classes, grid)
    inputs = {
        "boxes": boxes,
        "scores": scores,
        "max_output_size_per_class": np.int32(per_class),
        "max_total_size": np.int32(total),
        "iou_threshold": np.float32(iou),
        "score_threshold": np.float32(score_t),
    }
    for pad in (False, True):
        for clip in (False, True):
            attrs = {"pad_per_class": pad, "clip_boxes": clip}
            assert_same_as_tf("CombinedNonMaxSuppression", inputs, attrs)


F = np.float32
GOOD_BOXES, GOOD_SCORES = _boxes(1, 4)

BAD_V3 = [
    {"boxes": GOOD_BOXES[None]},
    {"boxes": GOOD_BOXES[:, :3]},
    {"scores": GOOD_SCORES[None]},
    {"scores": GOOD_SCORES[:3]},
    {"max_output_size": np.int32([3])},
    {"max_output_size": np.int32(-1)},
    {"iou_threshold": F([0.5])},
    {"iou_threshold": F(1.5)},
    {"iou_threshold": F(-0.1)},
    {"score_threshold": F([0.5])},
]


@pytest.mark.parametrize(
    "op", ["NonMaxSuppressionV2", "NonMaxSuppressionV3", "NonMaxSuppressionV4"]
)
@pytest.mark.parametrize("bad", range(len(BAD_V3)))
def test_refuses_what_tensorflow_refuses(op, bad):
    inputs = {
        "boxes": GOOD_BOXES,
        "scores": GOOD_SCORES,
        "max_output_size": np.int32(3),
        "iou_threshold": F(0.5),
        "score_threshold": F(0.0),
    }
    inputs.update(BAD_V3[bad])
    if op == "NonMaxSuppressionV2":
        inputs.pop("score_threshold")
    assert_same_as_tf(op, inputs)


@pytest.mark.parametrize("bad", [*BAD_V3, {"soft_nms_sigma": F(-1)}, {"soft_nms_sigma": F([1])}])
def test_v5_refuses_what_tensorflow_refuses(bad):
    inputs = {
        "boxes": GOOD_BOXES,
        "scores": GOOD_SCORES,
        "max_output_size": np.int32(3),
        "iou_threshold": F(0.5),
        "score_threshold": F(0.0),
        "soft_nms_sigma": F(0.5),
    }
    assert_same_as_tf("NonMaxSuppressionV5", {**inputs, **bad})


@pytest.mark.parametrize("iou", [-0.5, 1.5])
def test_v1_refuses_iou_out_of_range(iou):
    inputs = {"boxes": GOOD_BOXES, "scores": GOOD_SCORES, "max_output_size": np.int32(3)}
    assert_same_as_tf("NonMaxSuppression", inputs, {"iou_threshold": iou})
    assert_same_as_tf(
        "NonMaxSuppression", {**inputs, "max_output_size": np.int32([1])}, {"iou_threshold": 0.5}
    )


@pytest.mark.parametrize(
    "bad",
    [{"overlaps": np.zeros((4,), F)}, {"overlaps": np.zeros((4, 3), F)},
     {"scores": GOOD_SCORES[:2]}, {"overlap_threshold": F([1])},
     {"score_threshold": F([1])}, {"max_output_size": np.int32([1])}],
)  # fmt: skip
def test_with_overlaps_refuses_what_tensorflow_refuses(bad):
    inputs = {
        "overlaps": np.eye(4, dtype=F),
        "scores": GOOD_SCORES,
        "max_output_size": np.int32(3),
        "overlap_threshold": F(0.5),
        "score_threshold": F(0.0),
    }
    assert_same_as_tf("NonMaxSuppressionWithOverlaps", {**inputs, **bad})


CB, CS = _combined_inputs(0, 2, 5, 1, 3, False)


@pytest.mark.parametrize(
    "bad",
    [{"boxes": CB[0]}, {"scores": CS[0]}, {"boxes": CB[..., 0]}, {"scores": CS[..., None]},
     {"boxes": CB[:1], "max_output_size_per_class": np.int32(0)},
     {"boxes": CB[..., :3], "max_output_size_per_class": np.int32(0)},
     {"boxes": np.repeat(CB, 2, axis=2)[..., :3], "scores": CS[:, :4]}, {"boxes": np.repeat(CB, 2, axis=2)},
     {"boxes": CB[..., :3]}, {"scores": CS[:, :4]}, {"scores": CS[:1]},
     {"max_output_size_per_class": np.int32(0)}, {"max_output_size_per_class": np.int32([2])},
     {"max_total_size": np.int32(0)}, {"max_total_size": np.int32([2])},
     {"iou_threshold": F(2)}, {"iou_threshold": F([0.5])}, {"score_threshold": F([0.5])}],
)  # fmt: skip
def test_combined_refuses_what_tensorflow_refuses(bad):
    inputs = {
        "boxes": CB,
        "scores": CS,
        "max_output_size_per_class": np.int32(2),
        "max_total_size": np.int32(4),
        "iou_threshold": F(0.5),
        "score_threshold": F(0.0),
    }
    assert_same_as_tf("CombinedNonMaxSuppression", {**inputs, **bad})


@pytest.mark.parametrize("n", [0, 1, 5, 16, 17, 40, 300])
def test_stl_sort_and_heap_are_orderings(n):
    rng = np.random.default_rng(n)
    keys = list(rng.integers(0, 5, n))
    items = list(enumerate(keys))
    stl_order.sort(items, lambda a, b: a[1] < b[1])
    assert [k for _, k in items] == sorted(keys)
    assert sorted(i for i, _ in items) == list(range(n))
    queue = stl_order.PriorityQueue(lambda a, b: a < b)
    for k in keys:
        queue.push(k)
    assert [queue.pop() for _ in range(n)] == sorted(keys, reverse=True)


def test_padding_past_the_memory_limit_is_resource_exhausted():
    from common import memory
    from common.errors import ResourceExhaustedError

    from .kernel_harness import run

    before = memory.limit()
    memory.set_limit(1 << 20)
    try:
        nms = [GOOD_BOXES, GOOD_SCORES, np.int32(2**30), F(0.5), F(0.0)]
        with pytest.raises(ResourceExhaustedError, match="OOM when allocating"):
            run("NonMaxSuppressionV4", nms, {"pad_to_max_output_size": True})
        combined = [CB, CS, np.int32(2), np.int32(2**28), F(0.5), F(0.0)]
        with pytest.raises(ResourceExhaustedError, match="OOM when allocating"):
            run("CombinedNonMaxSuppression", combined)
    finally:
        memory.set_limit(before)


def test_boxes_with_nan_and_infinity():
    """std::min/max's NaN handling and the IoU of infinite boxes, as in TF's kernel."""
    boxes, scores = _boxes(12, 20)
    boxes[3, 0] = np.nan
    boxes[5, 2] = np.inf
    boxes[7] = [-np.inf, 0.1, np.inf, 0.5]
    boxes[9, 1] = np.nan
    base = {"boxes": boxes, "scores": scores, "max_output_size": np.int32(15)}
    thr = {"iou_threshold": np.float32(0.3), "score_threshold": np.float32(0.0)}
    assert_same_as_tf("NonMaxSuppressionV3", {**base, **thr})
    assert_same_as_tf("NonMaxSuppressionV5", {**base, **thr, "soft_nms_sigma": np.float32(0.5)})
    combined = {
        "boxes": boxes[None, :, None],
        "scores": np.stack([scores, scores[::-1]], -1)[None],
        "max_output_size_per_class": np.int32(8),
        "max_total_size": np.int32(10),
        "iou_threshold": np.float32(0.3),
        "score_threshold": np.float32(0.0),
    }
    assert_same_as_tf("CombinedNonMaxSuppression", combined, {"clip_boxes": False})
