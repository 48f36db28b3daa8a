"""Hostile cases (see hostile_cases): CTC loss and decoders, non-max suppression,
image patches, dilation and fractional pools."""

from __future__ import annotations

from typing import Any

import numpy as np

from .hostile_cases import HUGE, NAME, Feed, case, f32, i32, i64

LOGITS = np.zeros((3, 2, 4), np.float32)  # [max_time, batch, classes]


# -- CTC: loss and decoders ---------------------------------------------------------------
@case("ctc", "loss label index past the batch")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.CTCLoss(
        inputs=feed(LOGITS),
        labels_indices=feed(np.array([[5, 0]], np.int64)),
        labels_values=feed(i32(1)),
        sequence_length=feed(i32(3, 3)),
        name=NAME,
    )


@case("ctc", "loss sequence longer than max_time")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.CTCLoss(
        inputs=feed(LOGITS),
        labels_indices=feed(np.array([[0, 0], [1, 0]], np.int64)),
        labels_values=feed(i32(1, 2)),
        sequence_length=feed(i32(9, 3)),
        name=NAME,
    )


@case("ctc", "loss label value is the blank or beyond")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.CTCLoss(
        inputs=feed(LOGITS),
        labels_indices=feed(np.array([[0, 0], [1, 0]], np.int64)),
        labels_values=feed(i32(7, 3)),
        sequence_length=feed(i32(3, 3)),
        name=NAME,
    )


@case("ctc", "loss of NaN logits")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.CTCLoss(
        inputs=feed(np.full((3, 2, 4), np.nan, np.float32)),
        labels_indices=feed(np.array([[0, 0], [1, 0]], np.int64)),
        labels_values=feed(i32(1, 2)),
        sequence_length=feed(i32(3, 3)),
        name=NAME,
    )


@case("ctc", "loss of rank-2 logits")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.CTCLoss(
        inputs=feed(np.zeros((3, 4), np.float32)),
        labels_indices=feed(np.array([[0, 0]], np.int64)),
        labels_values=feed(i32(1)),
        sequence_length=feed(i32(3)),
        name=NAME,
    )


@case("ctc", "greedy decoder sequence longer than max_time")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.CTCGreedyDecoder(
        inputs=feed(LOGITS), sequence_length=feed(i32(4, 1)), name=NAME
    )


@case("ctc", "greedy decoder negative sequence length")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.CTCGreedyDecoder(
        inputs=feed(LOGITS), sequence_length=feed(i32(-1, 1)), name=NAME
    )


@case("ctc", "greedy decoder batch mismatch")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.CTCGreedyDecoder(
        inputs=feed(LOGITS), sequence_length=feed(i32(1, 1, 1)), name=NAME
    )


@case("ctc", "beam search more paths than beams")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.CTCBeamSearchDecoder(
        inputs=feed(LOGITS),
        sequence_length=feed(i32(3, 3)),
        beam_width=1,
        top_paths=2,
        name=NAME,
    )


@case("ctc", "beam search sequence longer than max_time")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.CTCBeamSearchDecoder(
        inputs=feed(LOGITS),
        sequence_length=feed(i32(5, 3)),
        beam_width=2,
        top_paths=1,
        name=NAME,
    )


@case("ctc", "beam search of empty logits")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.CTCBeamSearchDecoder(
        inputs=feed(np.zeros((0, 2, 4), np.float32)),
        sequence_length=feed(i32(0, 0)),
        beam_width=2,
        top_paths=1,
        name=NAME,
    )


# -- non-max suppression ------------------------------------------------------------------
BOXES = f32([0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3])
SCORES = f32(0.9, 0.8, 0.7)


@case("nms", "V3 boxes of the wrong rank")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.NonMaxSuppressionV3(
        boxes=feed(f32(0, 0, 1, 1)),
        scores=feed(SCORES),
        max_output_size=feed(i32(2)[0]),
        iou_threshold=feed(f32(0.5)[0]),
        score_threshold=feed(f32(0.0)[0]),
        name=NAME,
    )


@case("nms", "V3 scores not one per box")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.NonMaxSuppressionV3(
        boxes=feed(BOXES),
        scores=feed(f32(0.9)),
        max_output_size=feed(i32(2)[0]),
        iou_threshold=feed(f32(0.5)[0]),
        score_threshold=feed(f32(0.0)[0]),
        name=NAME,
    )


@case("nms", "V3 negative max_output_size")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.NonMaxSuppressionV3(
        boxes=feed(BOXES),
        scores=feed(SCORES),
        max_output_size=feed(i32(-1)[0]),
        iou_threshold=feed(f32(0.5)[0]),
        score_threshold=feed(f32(0.0)[0]),
        name=NAME,
    )


@case("nms", "V3 huge max_output_size")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.NonMaxSuppressionV3(
        boxes=feed(BOXES),
        scores=feed(SCORES),
        max_output_size=feed(i32(HUGE)[0]),
        iou_threshold=feed(f32(0.5)[0]),
        score_threshold=feed(f32(0.0)[0]),
        name=NAME,
    )


@case("nms", "V3 iou threshold above one")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.NonMaxSuppressionV3(
        boxes=feed(BOXES),
        scores=feed(SCORES),
        max_output_size=feed(i32(2)[0]),
        iou_threshold=feed(f32(1.5)[0]),
        score_threshold=feed(f32(0.0)[0]),
        name=NAME,
    )


@case("nms", "V3 NaN boxes and scores")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.NonMaxSuppressionV3(
        boxes=feed(np.full((3, 4), np.nan, np.float32)),
        scores=feed(f32(np.nan, 0.5, np.nan)),
        max_output_size=feed(i32(3)[0]),
        iou_threshold=feed(f32(0.5)[0]),
        score_threshold=feed(f32(0.0)[0]),
        name=NAME,
    )


@case("nms", "V5 huge max_output_size, padded", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.NonMaxSuppressionV5(
        boxes=feed(BOXES),
        scores=feed(SCORES),
        max_output_size=feed(i32(HUGE)[0]),
        iou_threshold=feed(f32(0.5)[0]),
        score_threshold=feed(f32(0.0)[0]),
        soft_nms_sigma=feed(f32(0.0)[0]),
        pad_to_max_output_size=True,
        name=NAME,
    )


@case("nms", "with overlaps not square")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.NonMaxSuppressionWithOverlaps(
        overlaps=feed(np.zeros((3, 2), np.float32)),
        scores=feed(SCORES),
        max_output_size=feed(i32(2)[0]),
        overlap_threshold=feed(f32(0.5)[0]),
        score_threshold=feed(f32(0.0)[0]),
        name=NAME,
    )


@case("nms", "combined huge max_total_size", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.CombinedNonMaxSuppression(
        boxes=feed(BOXES.reshape(1, 3, 1, 4)),
        scores=feed(SCORES.reshape(1, 3, 1)),
        max_output_size_per_class=feed(i32(2)[0]),
        max_total_size=feed(i32(HUGE)[0]),
        iou_threshold=feed(f32(0.5)[0]),
        score_threshold=feed(f32(0.0)[0]),
        pad_per_class=False,
        clip_boxes=True,
        name=NAME,
    )


@case("nms", "combined q neither 1 nor classes")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.CombinedNonMaxSuppression(
        boxes=feed(np.zeros((1, 3, 2, 4), np.float32)),
        scores=feed(np.zeros((1, 3, 3), np.float32)),
        max_output_size_per_class=feed(i32(2)[0]),
        max_total_size=feed(i32(4)[0]),
        iou_threshold=feed(f32(0.5)[0]),
        score_threshold=feed(f32(0.0)[0]),
        name=NAME,
    )


@case("nms", "combined negative max_total_size")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.CombinedNonMaxSuppression(
        boxes=feed(BOXES.reshape(1, 3, 1, 4)),
        scores=feed(SCORES.reshape(1, 3, 1)),
        max_output_size_per_class=feed(i32(2)[0]),
        max_total_size=feed(i32(-4)[0]),
        iou_threshold=feed(f32(0.5)[0]),
        score_threshold=feed(f32(0.0)[0]),
        name=NAME,
    )


# -- patches, dilation, fractional pools ----------------------------------------------------
IMAGE = np.arange(2 * 4 * 4 * 1, dtype=np.float32).reshape(2, 4, 4, 1)


@case("image", "patches larger than the image")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.ExtractImagePatches(
        images=feed(IMAGE),
        ksizes=[1, 9, 9, 1],
        strides=[1, 1, 1, 1],
        rates=[1, 1, 1, 1],
        padding="VALID",
        name=NAME,
    )


@case("image", "patches of a rank-3 image")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.ExtractImagePatches(
        images=feed(IMAGE[0]),
        ksizes=[1, 2, 2, 1],
        strides=[1, 1, 1, 1],
        rates=[1, 1, 1, 1],
        padding="VALID",
        name=NAME,
    )


@case("image", "patches of an empty batch")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.ExtractImagePatches(
        images=feed(IMAGE[:0]),
        ksizes=[1, 2, 2, 1],
        strides=[1, 1, 1, 1],
        rates=[1, 1, 1, 1],
        padding="SAME",
        name=NAME,
    )


@case("image", "volume patches larger than the volume")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.ExtractVolumePatches(
        input=feed(np.zeros((1, 2, 2, 2, 1), np.float32)),
        ksizes=[1, 3, 3, 3, 1],
        strides=[1, 1, 1, 1, 1],
        padding="VALID",
        name=NAME,
    )


@case("image", "dilation filter larger than the image")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Dilation2D(
        input=feed(IMAGE),
        filter=feed(np.zeros((6, 6, 1), np.float32)),
        strides=[1, 1, 1, 1],
        rates=[1, 1, 1, 1],
        padding="VALID",
        name=NAME,
    )


@case("image", "dilation filter depth mismatch")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Dilation2D(
        input=feed(IMAGE),
        filter=feed(np.zeros((2, 2, 3), np.float32)),
        strides=[1, 1, 1, 1],
        rates=[1, 1, 1, 1],
        padding="VALID",
        name=NAME,
    )


@case("image", "dilation of NaN")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Dilation2D(
        input=feed(np.full((1, 3, 3, 1), np.nan, np.float32)),
        filter=feed(np.zeros((2, 2, 1), np.float32)),
        strides=[1, 1, 1, 1],
        rates=[1, 1, 1, 1],
        padding="SAME",
        name=NAME,
    )


@case("image", "fractional max pool ratio larger than the image")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.FractionalMaxPool(
        value=feed(np.zeros((1, 2, 2, 1), np.float32)),
        pooling_ratio=[1.0, 3.0, 3.0, 1.0],
        deterministic=True,
        seed=1,
        seed2=2,
        name=NAME,
    )[0]


@case("image", "fractional avg pool of a rank-3 value")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.FractionalAvgPool(
        value=feed(np.zeros((4, 4, 1), np.float32)),
        pooling_ratio=[1.0, 1.5, 1.5, 1.0],
        deterministic=True,
        seed=1,
        seed2=2,
        name=NAME,
    )[0]


@case("image", "fractional max pool grad with bad row sequence")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.FractionalMaxPoolGrad(
        orig_input=feed(np.zeros((1, 4, 4, 1), np.float32)),
        orig_output=feed(np.zeros((1, 2, 2, 1), np.float32)),
        out_backprop=feed(np.zeros((1, 2, 2, 1), np.float32)),
        row_pooling_sequence=feed(i64(0, 9, 4)),
        col_pooling_sequence=feed(i64(0, 2, 4)),
        name=NAME,
    )
