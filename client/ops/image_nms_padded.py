"""Client, graph building: TensorFlow's non_max_suppression_padded_v2 (image_ops_impl.py),
the tiled, batched non-max suppression in plain ops that tf.image.non_max_suppression_padded
runs: boxes sorted by score, padded to whole tiles, suppressed tile by tile in a while
loop (earlier tiles suppress the current one, then the tile suppresses itself), and the
selected indices read back in order. It needs no static batch size, so it serves batched
boxes whose batch dimensions are known only at run time.

TF builds it inside a tf.function (one call node); here its ops sit in the graph itself,
v1 while loops for TF's loops. TF's own rules are kept: a box counts as selected when
any of its coordinates is positive, and the first box decides the coordinate order."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, control_flow_ops, math_ops, nn_impl
from client.ops.probe_gaps_math import argsort

_NEG_INF = float("-inf")


def bbox_overlap(boxes_a: Any, boxes_b: Any) -> Any:
    """IoU of every box of a [batch, n, 4] with every box of b [batch, m, 4]: [batch, n, m]."""
    with _ops.name_scope("bbox_overlap"):
        a_y_min, a_x_min, a_y_max, a_x_max = array_ops.split(boxes_a, 4, axis=2)
        b_y_min, b_x_min, b_y_max, b_x_max = array_ops.split(boxes_b, 4, axis=2)
        i_xmin = math_ops.maximum(a_x_min, array_ops.transpose(b_x_min, [0, 2, 1]))
        i_xmax = math_ops.minimum(a_x_max, array_ops.transpose(b_x_max, [0, 2, 1]))
        i_ymin = math_ops.maximum(a_y_min, array_ops.transpose(b_y_min, [0, 2, 1]))
        i_ymax = math_ops.minimum(a_y_max, array_ops.transpose(b_y_max, [0, 2, 1]))
        i_area = math_ops.maximum(i_xmax - i_xmin, 0) * math_ops.maximum(i_ymax - i_ymin, 0)
        a_area = (a_y_max - a_y_min) * (a_x_max - a_x_min)
        b_area = (b_y_max - b_y_min) * (b_x_max - b_x_min)
        # TF's epsilon keeps empty (padding) boxes from dividing by zero.
        u_area = a_area + array_ops.transpose(b_area, [0, 2, 1]) - i_area + 1e-8
        return i_area / u_area


def _cross_suppression(boxes: Any, box_slice: Any, iou_threshold: Any, inner_idx: Any,
                       tile_size: int) -> tuple[Any, Any, Any, Any]:  # fmt: skip
    """Boxes of tile inner_idx suppress those of box_slice they overlap enough."""
    batch_size = array_ops.shape(boxes)[0]
    new_slice = array_ops.slice(boxes, [0, inner_idx * tile_size, 0], [batch_size, tile_size, 4])
    iou = bbox_overlap(new_slice, box_slice)
    keep = math_ops.cast(math_ops.reduce_all(iou < iou_threshold, [1]), box_slice.dtype)
    return boxes, array_ops.expand_dims(keep, 2) * box_slice, iou_threshold, inner_idx + 1


def _self_suppression(iou: Any, _: Any, iou_sum: Any, iou_threshold: Any) -> list[Any]:
    """One round of a tile suppressing itself; the loop runs until the sum settles."""
    batch_size = array_ops.shape(iou)[0]
    can_suppress_others = math_ops.cast(
        array_ops.reshape(math_ops.reduce_max(iou, 1) < iou_threshold, [batch_size, -1, 1]),
        iou.dtype,
    )
    iou_after = (
        array_ops.reshape(
            math_ops.cast(
                math_ops.reduce_max(can_suppress_others * iou, 1) < iou_threshold, iou.dtype
            ),
            [batch_size, -1, 1],
        )
        * iou
    )
    iou_sum_new = math_ops.reduce_sum(iou_after, [1, 2])
    return [
        iou_after,
        math_ops.reduce_any(iou_sum - iou_sum_new > iou_threshold),
        iou_sum_new,
        iou_threshold,
    ]


def _suppression_loop_body(boxes: Any, iou_threshold: Any, output_size: Any, idx: Any,
                           tile_size: int) -> tuple[Any, Any, Any, Any]:  # fmt: skip
    """Tile idx: suppressed by the earlier tiles, then by itself, written back into boxes
    (suppressed boxes zeroed); output_size counts the survivors."""
    with _ops.name_scope("suppression_loop_body"):
        num_tiles = array_ops.shape(boxes)[1] // tile_size
        batch_size = array_ops.shape(boxes)[0]
        box_slice = array_ops.slice(boxes, [0, idx * tile_size, 0], [batch_size, tile_size, 4])
        _, box_slice, _, _ = control_flow_ops.while_loop(
            lambda _b, _s, _t, inner_idx: inner_idx < idx,
            lambda b, s, t, i: _cross_suppression(b, s, t, i, tile_size),
            [boxes, box_slice, iou_threshold, convert_to_tensor(0)],
        )
        iou = bbox_overlap(box_slice, box_slice)
        tiles = math_ops.range(tile_size)
        mask = array_ops.expand_dims(
            array_ops.reshape(tiles, [1, -1]) > array_ops.reshape(tiles, [-1, 1]), 0
        )
        iou *= math_ops.cast(math_ops.logical_and(mask, iou >= iou_threshold), iou.dtype)
        suppressed_iou, _, _, _ = control_flow_ops.while_loop(
            lambda _iou, loop_condition, _iou_sum, _: loop_condition,
            _self_suppression,
            [iou, convert_to_tensor(True), math_ops.reduce_sum(iou, [1, 2]), iou_threshold],
        )
        suppressed_box = math_ops.reduce_sum(suppressed_iou, 1) > 0
        box_slice *= array_ops.expand_dims(1.0 - math_ops.cast(suppressed_box, box_slice.dtype), 2)
        mask = array_ops.reshape(
            math_ops.cast(math_ops.equal(math_ops.range(num_tiles), idx), boxes.dtype),
            [1, -1, 1, 1],
        )
        boxes = array_ops.tile(
            array_ops.expand_dims(box_slice, [1]), [1, num_tiles, 1, 1]
        ) * mask + array_ops.reshape(boxes, [batch_size, num_tiles, tile_size, 4]) * (1 - mask)
        boxes = array_ops.reshape(boxes, [batch_size, -1, 4])
        output_size += math_ops.reduce_sum(
            math_ops.cast(math_ops.reduce_any(box_slice > 0, [2]), dtypes.int32), [1]
        )
    return boxes, iou_threshold, output_size, idx + 1


def _canonicalize(boxes: Any) -> Any:
    """(y_min, x_min, y_max, x_max), the order read off the first box of the batch."""
    with _ops.name_scope("canonicalize_coordinates"):
        y_1, x_1, y_2, x_2 = array_ops.split(boxes, 4, axis=2)
        y_1_is_min = math_ops.reduce_all(math_ops.less_equal(y_1[0, 0, 0], y_2[0, 0, 0]))
        y_min, y_max = control_flow_ops.cond(y_1_is_min, lambda: (y_1, y_2), lambda: (y_2, y_1))
        x_1_is_min = math_ops.reduce_all(math_ops.less_equal(x_1[0, 0, 0], x_2[0, 0, 0]))
        x_min, x_max = control_flow_ops.cond(x_1_is_min, lambda: (x_1, x_2), lambda: (x_2, x_1))
        return array_ops.concat([y_min, x_min, y_max, x_max], axis=2)


def non_max_suppression_padded_v2(
    boxes: Any, scores: Any, max_output_size: Any, iou_threshold: Any = 0.5,
    score_threshold: Any = _NEG_INF, sorted_input: bool = False,
    canonicalized_coordinates: bool = False, tile_size: int = 512,
) -> tuple[Any, Any]:  # fmt: skip
    """(indices [batch..., max_output_size] flattened to [prod(batch), max_output_size],
    zeros past each image's count, and the counts [batch...])."""
    boxes = convert_to_tensor(boxes, name="boxes")
    scores = convert_to_tensor(scores, name="scores")
    max_output_size = convert_to_tensor(max_output_size, name="max_output_size")
    iou_threshold = convert_to_tensor(iou_threshold, dtype=dtypes.float32, name="iou_threshold")
    batch_dims = array_ops.shape(boxes)[:-2]
    num_boxes = array_ops.shape(boxes)[-2]
    boxes = array_ops.reshape(boxes, [-1, num_boxes, 4])
    scores = array_ops.reshape(scores, [-1, num_boxes])
    batch_size = array_ops.shape(boxes)[0]
    # TF tests the Python value; a tensor threshold always filters (a no-op at -inf).
    if isinstance(score_threshold, _ops.Tensor) or score_threshold != _NEG_INF:
        with _ops.name_scope("filter_by_score"):
            score_mask = math_ops.cast(scores > score_threshold, scores.dtype)
            scores *= score_mask
            boxes *= array_ops.expand_dims(math_ops.cast(score_mask, boxes.dtype), 2)
    if not canonicalized_coordinates:
        boxes = _canonicalize(boxes)
    if not sorted_input:
        with _ops.name_scope("sort_scores_and_boxes"):
            sorted_indices = argsort(scores, axis=1, direction="DESCENDING")
            scores = array_ops.gather(scores, sorted_indices, axis=1, batch_dims=1)
            boxes = array_ops.gather(boxes, sorted_indices, axis=1, batch_dims=1)
    padded = math_ops.maximum(num_boxes, max_output_size)
    tiles = math_ops.ceil(
        math_ops.cast(padded, dtypes.float32) / math_ops.cast(tile_size, dtypes.float32)
    )
    pad = math_ops.cast(tiles, dtypes.int32) * tile_size - num_boxes
    boxes = array_ops.pad(math_ops.cast(boxes, dtypes.float32), [[0, 0], [0, pad], [0, 0]])
    scores = array_ops.pad(math_ops.cast(scores, dtypes.float32), [[0, 0], [0, pad]])
    num_boxes_after_padding = num_boxes + pad
    num_iterations = num_boxes_after_padding // tile_size

    def loop_cond(_boxes: Any, _threshold: Any, output_size: Any, idx: Any) -> Any:
        return math_ops.logical_and(
            math_ops.reduce_min(output_size) < max_output_size, idx < num_iterations
        )

    selected_boxes, _, output_size, _ = control_flow_ops.while_loop(
        loop_cond,
        lambda b, t, o, i: _suppression_loop_body(b, t, o, i, tile_size),
        [boxes, iou_threshold, array_ops.zeros([batch_size], dtypes.int32), convert_to_tensor(0)],
        shape_invariants=[
            TensorShape([None, None, 4]),
            TensorShape([]),
            TensorShape([None]),
            TensorShape([]),
        ],
    )
    num_valid = math_ops.minimum(output_size, max_output_size)
    # The selected boxes' positions, first first: top_k of (selected * descending ranks).
    ranks = math_ops.cast(math_ops.reduce_any(selected_boxes > 0, [2]), dtypes.int32)
    ranks *= array_ops.expand_dims(math_ops.range(num_boxes_after_padding, 0, -1), 0)
    top = nn_impl.top_k(ranks, max_output_size)[0]
    idx = num_boxes_after_padding - math_ops.cast(top, dtypes.int32)
    idx = math_ops.minimum(idx, num_boxes - 1)
    if not sorted_input:
        index_offsets = math_ops.range(batch_size) * num_boxes
        gather_idx = array_ops.reshape(idx + array_ops.expand_dims(index_offsets, 1), [-1])
        flat_sorted = array_ops.reshape(sorted_indices, [-1])
        idx = array_ops.reshape(array_ops.gather(flat_sorted, gather_idx), [batch_size, -1])
    invalid_index = array_ops.zeros([batch_size, max_output_size], dtype=dtypes.int32)
    idx_index = array_ops.expand_dims(math_ops.range(max_output_size), 0)
    idx = array_ops.where(idx_index < array_ops.expand_dims(num_valid, 1), idx, invalid_index)
    return idx, array_ops.reshape(num_valid, batch_dims)
