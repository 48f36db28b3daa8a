"""Hostile inputs for the kernels added in the last round, one table per op family.

A case builds its graph with TensorFlow's own client (tf.raw_ops, graph mode): every
hostile value arrives through a placeholder, so no shape function refuses the graph at
build time and the kernel itself meets the bad input at run time, as a worker does when
a client sends it. The op under test is named "hostile"; the runner
(test_hostile_kernels) runs each case on TensorFlow in-process and on our cluster, and
compares outcome for outcome.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

# Feeds a numpy value through a placeholder of its dtype and unknown shape.
Feed = Callable[[Any], Any]
NAME = "hostile"
HUGE = 2**31 - 1  # largest int32 size: a kernel that allocates it whole blows memory up


@dataclass(frozen=True)
class Case:
    """`build(tf, feed)` returns the fetches. `tf_unsafe`: TensorFlow 2.21 aborts its
    process, reads past a buffer or allocates what the hostile size asks for (tens of GB)
    on this input, so it is no oracle: ours must fail cleanly naming the node, or answer
    without allocating what was asked (a dense hash table's buckets are not
    preallocated here)."""

    family: str
    name: str
    build: Callable[[Any, Feed], Any]
    tf_unsafe: bool = False


def f32(*values: Any) -> np.ndarray:
    return np.array(values, np.float32)


def i32(*values: Any) -> np.ndarray:
    return np.array(values, np.int32)


def i64(*values: Any) -> np.ndarray:
    return np.array(values, np.int64)


CASES: list[Case] = []


def case(family: str, name: str, tf_unsafe: bool = False) -> Callable[..., Case]:
    """Adds the decorated builder to CASES."""

    def wrap(build: Callable[[Any, Feed], Any]) -> Case:
        made = Case(family, name, build, tf_unsafe)
        CASES.append(made)
        return made

    return wrap


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


# -- scatters, in-place updates -------------------------------------------------------------
@case("scatter", "ScatterNd index out of range")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.ScatterNd(
        indices=feed(i32([7])), updates=feed(f32(1.0)), shape=feed(i32(4)), name=NAME
    )


@case("scatter", "ScatterNd negative index")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.ScatterNd(
        indices=feed(i32([-1])), updates=feed(f32(1.0)), shape=feed(i32(4)), name=NAME
    )


@case("scatter", "ScatterNd negative shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.ScatterNd(
        indices=feed(i32([0])), updates=feed(f32(1.0)), shape=feed(i32(-4)), name=NAME
    )


@case("scatter", "ScatterNd huge shape", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.ScatterNd(
        indices=feed(i64([0, 0])),
        updates=feed(f32(1.0)),
        shape=feed(i64(2**20, 2**20)),
        name=NAME,
    )


@case("scatter", "ScatterNd index deeper than the shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.ScatterNd(
        indices=feed(i32([0, 0, 0])), updates=feed(f32(1.0)), shape=feed(i32(4, 4)), name=NAME
    )


@case("scatter", "ScatterNd updates of the wrong shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.ScatterNd(
        indices=feed(i32([0], [1])),
        updates=feed(f32(1.0, 2.0, 3.0)),
        shape=feed(i32(4)),
        name=NAME,
    )


@case("scatter", "TensorScatterUpdate index out of range")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.TensorScatterUpdate(
        tensor=feed(f32(0, 0, 0)), indices=feed(i32([3])), updates=feed(f32(1.0)), name=NAME
    )


@case("scatter", "TensorScatterAdd into a scalar")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.TensorScatterAdd(
        tensor=feed(f32(0)[0]), indices=feed(i32([0])), updates=feed(f32(1.0)), name=NAME
    )


@case("scatter", "TensorScatterMax updates of the wrong shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.TensorScatterMax(
        tensor=feed(np.zeros((3, 2), np.float32)),
        indices=feed(i32([0])),
        updates=feed(f32(1.0, 2.0, 3.0)),
        name=NAME,
    )


@case("scatter", "InplaceUpdate row out of range")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.InplaceUpdate(
        x=feed(np.zeros((3, 2), np.float32)),
        i=feed(i32(5)),
        v=feed(np.ones((1, 2), np.float32)),
        name=NAME,
    )


@case("scatter", "InplaceAdd v of the wrong shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.InplaceAdd(
        x=feed(np.zeros((3, 2), np.float32)),
        i=feed(i32(0)),
        v=feed(np.ones((2, 2), np.float32)),
        name=NAME,
    )


@case("scatter", "InplaceSub negative row")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.InplaceSub(
        x=feed(np.zeros((3, 2), np.float32)),
        i=feed(i32(-1)),
        v=feed(np.ones((1, 2), np.float32)),
        name=NAME,
    )


# -- unique, bincount ----------------------------------------------------------------------
@case("counting", "UniqueV2 axis out of range")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.UniqueV2(x=feed(i32(1, 2, 1)), axis=feed(i64(3)), name=NAME)[0]


@case("counting", "UniqueV2 two axes")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.UniqueV2(x=feed(np.ones((2, 2), np.int32)), axis=feed(i64(0, 1)), name=NAME)[
        0
    ]


@case("counting", "UniqueWithCountsV2 of an empty tensor")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.UniqueWithCountsV2(
        x=feed(np.zeros((0,), np.int32)), axis=feed(np.zeros((0,), np.int64)), name=NAME
    )


@case("counting", "Bincount negative size")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Bincount(
        arr=feed(i32(1, 2)), size=feed(i32(-1)[0]), weights=feed(f32()), name=NAME
    )


@case("counting", "Bincount huge size", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Bincount(
        arr=feed(i32(1, 2)),
        size=feed(i32(HUGE)[0]),
        weights=feed(np.zeros((0,), np.float64)),
        name=NAME,
    )


@case("counting", "Bincount negative values")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Bincount(
        arr=feed(i32(1, -2)), size=feed(i32(4)[0]), weights=feed(f32()), name=NAME
    )


@case("counting", "Bincount weights of another length")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Bincount(
        arr=feed(i32(1, 2)), size=feed(i32(4)[0]), weights=feed(f32(1, 2, 3)), name=NAME
    )


@case("counting", "DenseBincount rank-3 input")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.DenseBincount(
        input=feed(np.ones((1, 1, 2), np.int32)),
        size=feed(i32(4)[0]),
        weights=feed(f32()),
        name=NAME,
    )


@case("counting", "DenseBincount huge size over rows", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.DenseBincount(
        input=feed(np.ones((64, 2), np.int32)),
        size=feed(i32(2**27)[0]),
        weights=feed(np.zeros((0,), np.float64)),
        name=NAME,
    )


# -- einsum ---------------------------------------------------------------------------------
@case("einsum", "dimension mismatch")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Einsum(
        inputs=[feed(np.ones((2, 3), np.float32)), feed(np.ones((4, 2), np.float32))],
        equation="ij,jk->ik",
        name=NAME,
    )


@case("einsum", "label of another rank")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Einsum(
        inputs=[feed(np.ones((2, 3, 4), np.float32))], equation="ij->ji", name=NAME
    )


@case("einsum", "malformed equation")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Einsum(
        inputs=[feed(np.ones((2, 3), np.float32))], equation="i$j->", name=NAME
    )


@case("einsum", "empty operand")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Einsum(
        inputs=[feed(np.ones((0, 3), np.float32)), feed(np.ones((3, 2), np.float32))],
        equation="ij,jk->ik",
        name=NAME,
    )


# -- sparse extras, sets --------------------------------------------------------------------
@case("sparse", "fill empty rows index past the dense shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseFillEmptyRows(
        indices=feed(i64([9, 0])),
        values=feed(f32(1.0)),
        dense_shape=feed(i64(2, 2)),
        default_value=feed(f32(0.0)[0]),
        name=NAME,
    )


@case("sparse", "fill empty rows of empty dense shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseFillEmptyRows(
        indices=feed(np.zeros((0, 2), np.int64)),
        values=feed(f32()),
        dense_shape=feed(np.zeros((0,), np.int64)),
        default_value=feed(f32(0.0)[0]),
        name=NAME,
    )


@case("sparse", "reduce sum axis out of range")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseReduceSum(
        input_indices=feed(i64([0, 0])),
        input_values=feed(f32(1.0)),
        input_shape=feed(i64(2, 2)),
        reduction_axes=feed(i32(5)),
        name=NAME,
    )


@case("sparse", "add of different dense shapes")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseAdd(
        a_indices=feed(i64([0, 0])),
        a_values=feed(f32(1.0)),
        a_shape=feed(i64(2, 2)),
        b_indices=feed(i64([0, 0])),
        b_values=feed(f32(1.0)),
        b_shape=feed(i64(3, 2)),
        thresh=feed(f32(0.0)[0]),
        name=NAME,
    )[1]


@case("sparse", "reshape to a negative size")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseReshape(
        input_indices=feed(i64([0, 0])),
        input_shape=feed(i64(2, 2)),
        new_shape=feed(i64(-1, -1)),
        name=NAME,
    )[1]


@case("sparse", "slice with a negative size")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseSlice(
        indices=feed(i64([0, 0])),
        values=feed(f32(1.0)),
        shape=feed(i64(2, 2)),
        start=feed(i64(0, 0)),
        size=feed(i64(-1, 2)),
        name=NAME,
    )[1]


@case("sparse", "dense matmul index out of range")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseTensorDenseMatMul(
        a_indices=feed(i64([0, 7])),
        a_values=feed(f32(1.0)),
        a_shape=feed(i64(2, 2)),
        b=feed(np.ones((2, 2), np.float32)),
        name=NAME,
    )


@case("sparse", "split into more pieces than the dimension")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseSplit(
        split_dim=feed(i64(0)[0]),
        indices=feed(i64([0, 0])),
        values=feed(f32(1.0)),
        shape=feed(i64(2, 2)),
        num_split=4,
        name=NAME,
    )[1]


@case("sparse", "split dim out of range")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseSplit(
        split_dim=feed(i64(5)[0]),
        indices=feed(i64([0, 0])),
        values=feed(f32(1.0)),
        shape=feed(i64(2, 2)),
        num_split=2,
        name=NAME,
    )[1]


@case("sets", "set size of rank-1 indices")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SetSize(
        set_indices=feed(i64(0, 1)),
        set_values=feed(i32(1, 2)),
        set_shape=feed(i64(2)),
        name=NAME,
    )


@case("sets", "set size index past the shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SetSize(
        set_indices=feed(i64([0, 0], [5, 0])),
        set_values=feed(i32(1, 2)),
        set_shape=feed(i64(2, 2)),
        name=NAME,
    )


@case("sets", "dense sets of different ranks")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.DenseToDenseSetOperation(
        set1=feed(np.ones((2, 2), np.int32)),
        set2=feed(np.ones((2, 2, 2), np.int32)),
        set_operation="union",
        name=NAME,
    )[1]


@case("sets", "unknown set operation")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.DenseToDenseSetOperation(
        set1=feed(np.ones((2, 2), np.int32)),
        set2=feed(np.ones((2, 2), np.int32)),
        set_operation="xor",
        name=NAME,
    )[1]


@case("sets", "rank-1 dense sets")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.DenseToDenseSetOperation(
        set1=feed(i32(1, 2)), set2=feed(i32(2, 3)), set_operation="union", name=NAME
    )[1]


@case("sets", "sparse set with unsorted indices")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.DenseToSparseSetOperation(
        set1=feed(np.ones((2, 2), np.int32)),
        set2_indices=feed(i64([1, 0], [0, 0])),
        set2_values=feed(i32(1, 2)),
        set2_shape=feed(i64(2, 2)),
        set_operation="union",
        name=NAME,
    )[1]


# -- linalg: Eig, Sqrtm, Logm --------------------------------------------------------------
@case("linalg", "Eig of a non-square matrix")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Eig(input=feed(np.ones((2, 3), np.float32)), Tout=tf.complex64, name=NAME)[0]


@case("linalg", "Eig of NaN")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Eig(
        input=feed(np.full((2, 2), np.nan, np.float32)),
        Tout=tf.complex64,
        compute_v=False,
        name=NAME,
    )[0]


@case("linalg", "Eig of an empty batch")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Eig(
        input=feed(np.zeros((0, 2, 2), np.float64)), Tout=tf.complex128, name=NAME
    )[0]


@case("linalg", "Sqrtm of a vector")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.MatrixSquareRoot(input=feed(f32(1, 2)), name=NAME)


@case("linalg", "Sqrtm of Inf")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.MatrixSquareRoot(input=feed(np.full((2, 2), np.inf, np.float64)), name=NAME)


@case("linalg", "Sqrtm of complex NaN")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.MatrixSquareRoot(input=feed(np.full((2, 2), np.nan, np.complex64)), name=NAME)


@case("linalg", "Logm of Inf")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.MatrixLogarithm(
        input=feed(np.array([[np.inf, 0], [0, 1]], np.complex128)), name=NAME
    )


@case("linalg", "Logm of a non-square matrix")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.MatrixLogarithm(input=feed(np.ones((2, 3), np.complex64)), name=NAME)


@case("linalg", "Logm of a 0x0 matrix")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.MatrixLogarithm(input=feed(np.ones((0, 0), np.complex128)), name=NAME)


# -- special functions: values at the edges -------------------------------------------------
EDGES = np.array([np.nan, np.inf, -np.inf, 0.0, -1.0, -0.5, 1e-30, 1e30], np.float64)


@case("special", "zeta at the edges")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Zeta(x=feed(EDGES), q=feed(EDGES[::-1].copy()), name=NAME)


@case("special", "polygamma at the edges")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Polygamma(
        a=feed(np.array([np.nan, -1, 0, 1, 2.5, 1e9, 3, 0], np.float64)), x=feed(EDGES), name=NAME
    )


@case("special", "igamma at the edges")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Igamma(a=feed(EDGES), x=feed(EDGES[::-1].copy()), name=NAME)


@case("special", "unary specials at the edges")
def _(tf: Any, feed: Feed) -> Any:
    x = feed(EDGES)
    return [
        tf.raw_ops.BesselI0(x=x, name=NAME),
        tf.raw_ops.Dawsn(x=x),
        tf.raw_ops.Expint(x=x),
        tf.raw_ops.FresnelCos(x=x),
        tf.raw_ops.Spence(x=x),
    ]


@case("special", "zeta of mismatched shapes")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Zeta(x=feed(f32(1, 2)), q=feed(f32(1, 2, 3)), name=NAME)


# -- stateful: queues, barriers, staging, tables (non-blocking hostile input) -------------
@case("dataflow", "priority queue enqueue without a priority")
def _(tf: Any, feed: Feed) -> Any:
    q = tf.raw_ops.PriorityQueueV2(
        component_types=[tf.float32], shapes=[[]], shared_name="hostile_pq1"
    )
    return tf.raw_ops.QueueEnqueueV2(handle=q, components=[feed(f32(1.0)[0])], name=NAME)


@case("dataflow", "priority queue priority of the wrong shape")
def _(tf: Any, feed: Feed) -> Any:
    q = tf.raw_ops.PriorityQueueV2(
        component_types=[tf.float32], shapes=[[]], shared_name="hostile_pq2"
    )
    return tf.raw_ops.QueueEnqueueV2(
        handle=q, components=[feed(i64(1, 2)), feed(f32(1.0)[0])], name=NAME
    )


@case("dataflow", "barrier insert keys and values of different lengths", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    b = tf.raw_ops.Barrier(component_types=[tf.float32], shapes=[[]], shared_name="hostile_b1")
    return tf.raw_ops.BarrierInsertMany(
        handle=b,
        keys=feed(np.array([b"a", b"b"])),
        values=feed(f32(1.0)),
        component_index=0,
        name=NAME,
    )


@case("dataflow", "barrier insert component out of range")
def _(tf: Any, feed: Feed) -> Any:
    b = tf.raw_ops.Barrier(component_types=[tf.float32], shapes=[[]], shared_name="hostile_b2")
    return tf.raw_ops.BarrierInsertMany(
        handle=b,
        keys=feed(np.array([b"a"])),
        values=feed(f32(1.0)),
        component_index=3,
        name=NAME,
    )


@case("dataflow", "barrier take a negative number", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    b = tf.raw_ops.Barrier(component_types=[tf.float32], shapes=[[]], shared_name="hostile_b3")
    return tf.raw_ops.BarrierTakeMany(
        handle=b, num_elements=feed(i32(-3)[0]), component_types=[tf.float32], name=NAME
    )[0]


@case("dataflow", "map stage of a value list of the wrong length")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.MapStage(
        key=feed(i64(1)[0]),
        indices=feed(i32(0, 1)),
        values=[feed(f32(1.0)[0])],
        dtypes=[tf.float32, tf.float32],
        shared_name="hostile_ms1",
        name=NAME,
    )


@case("dataflow", "staging area over its capacity in bytes")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Stage(
        values=[feed(np.zeros(64, np.float32))],
        memory_limit=16,
        shared_name="hostile_st1",
        name=NAME,
    )


@case("tables", "text file table of a file that does not exist")
def _(tf: Any, feed: Feed) -> Any:
    t = tf.raw_ops.HashTableV2(key_dtype=tf.string, value_dtype=tf.int64, shared_name="hostile_t1")
    return tf.raw_ops.InitializeTableFromTextFileV2(
        table_handle=t,
        filename=feed(np.array(b"/nonexistent/vocab.txt")),
        key_index=-2,
        value_index=-1,
        name=NAME,
    )


@case("tables", "text file table of a vector of file names")
def _(tf: Any, feed: Feed) -> Any:
    t = tf.raw_ops.HashTableV2(key_dtype=tf.string, value_dtype=tf.int64, shared_name="hostile_t3")
    return tf.raw_ops.InitializeTableFromTextFileV2(
        table_handle=t,
        filename=feed(np.array([b"a", b"b"])),
        key_index=-2,
        value_index=-1,
        name=NAME,
    )


@case("tables", "dense hash table with the same empty and deleted keys")
def _(tf: Any, feed: Feed) -> Any:
    t = tf.raw_ops.MutableDenseHashTableV2(
        empty_key=feed(i64(0)[0]),
        deleted_key=feed(i64(0)[0]),
        value_dtype=tf.float32,
        shared_name="hostile_d1",
        name=NAME,
    )
    return tf.raw_ops.LookupTableSizeV2(table_handle=t)


@case("tables", "dense hash table insert of the empty key")
def _(tf: Any, feed: Feed) -> Any:
    t = tf.raw_ops.MutableDenseHashTableV2(
        empty_key=feed(i64(-1)[0]),
        deleted_key=feed(i64(-2)[0]),
        value_dtype=tf.float32,
        shared_name="hostile_d2",
    )
    return tf.raw_ops.LookupTableInsertV2(
        table_handle=t, keys=feed(i64(-1)), values=feed(f32(1.0)), name=NAME
    )


@case("tables", "dense hash table keys and values of different lengths")
def _(tf: Any, feed: Feed) -> Any:
    t = tf.raw_ops.MutableDenseHashTableV2(
        empty_key=feed(i64(-1)[0]),
        deleted_key=feed(i64(-2)[0]),
        value_dtype=tf.float32,
        shared_name="hostile_d3",
    )
    return tf.raw_ops.LookupTableInsertV2(
        table_handle=t, keys=feed(i64(1, 2)), values=feed(f32(1.0)), name=NAME
    )


@case("tables", "dense hash table huge initial buckets", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    t = tf.raw_ops.MutableDenseHashTableV2(
        empty_key=feed(i64(-1)[0]),
        deleted_key=feed(i64(-2)[0]),
        value_dtype=tf.float32,
        initial_num_buckets=2**40,
        shared_name="hostile_d4",
        name=NAME,
    )
    return tf.raw_ops.LookupTableSizeV2(table_handle=t)


# -- PyFunc: a token nobody registered ------------------------------------------------------
@case("pyfunc", "unregistered token")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.PyFunc(
        input=[feed(f32(1.0))], token="pyfunc_nobody", Tout=[tf.float32], name=NAME
    )
