"""Client tf.image.non_max_suppression_padded with batch dimensions unknown while building
(placeholders [None, ..., num_boxes, 4]): TF's tiled batched algorithm gives
TensorFlow 2.21's indices and counts, for one and two batch dimensions, score thresholds,
tiles smaller than the boxes, sorted inputs and flipped coordinates."""

from __future__ import annotations

import numpy as np
import pytest

import client

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1


def _boxes(batch, n, seed):
    rng = np.random.default_rng(seed)
    corner = rng.random((*batch, n, 2)) * 0.8
    boxes = np.concatenate([corner, corner + rng.random((*batch, n, 2)) * 0.4], -1)
    scores = rng.integers(0, 6, (*batch, n)) / 6
    return boxes.astype(np.float32), scores.astype(np.float32)


def _run(api, boxes, scores, placeholder_shape, **kwargs):
    g = api.Graph()
    with g.as_default():
        b = api.placeholder(api.float32, placeholder_shape, name="b")
        s = api.placeholder(api.float32, placeholder_shape[:-1], name="s")
        idx, valid = api.image.non_max_suppression_padded(
            b, s, pad_to_max_output_size=True, **kwargs
        )
        with api.Session(graph=g) as sess:
            return sess.run([idx, valid], {b: boxes, s: scores})


CASES = {
    "one_batch_dim": ((3,), 30, [None, 30, 4], {"max_output_size": 12, "iou_threshold": 0.4}),
    "two_batch_dims": ((2, 3), 25, [None, None, 25, 4], {"max_output_size": 8, "iou_threshold": 0.3, "score_threshold": 0.2}),
    "unknown_boxes": ((2,), 40, [None, None, 4], {"max_output_size": 10, "iou_threshold": 0.5}),
    "small_tiles": ((2,), 40, [None, 40, 4], {"max_output_size": 15, "iou_threshold": 0.4, "tile_size": 8}),
    "more_outputs_than_boxes": ((2,), 6, [None, 6, 4], {"max_output_size": 9, "iou_threshold": 0.5}),
    "sorted_input": ((2,), 20, [None, 20, 4], {"max_output_size": 6, "iou_threshold": 0.5, "sorted_input": True}),
    "flipped_coordinates": ((2,), 20, [None, 20, 4], {"max_output_size": 6, "iou_threshold": 0.4, "flip": True}),
    "canonicalized": ((2,), 20, [None, 20, 4], {"max_output_size": 6, "iou_threshold": 0.4, "canonicalized_coordinates": True}),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_unknown_batch_matches_tensorflow(case):
    batch, n, shape, kwargs = CASES[case]
    kwargs = dict(kwargs)
    boxes, scores = _boxes(batch, n, len(case))
    if kwargs.pop("flip", False):
        boxes = boxes[..., [2, 3, 0, 1]]
    if kwargs.get("sorted_input"):
        order = np.argsort(-scores, axis=-1, kind="stable")
        scores = np.take_along_axis(scores, order, -1)
        boxes = np.take_along_axis(boxes, order[..., None], -2)
    ours = _run(client, boxes, scores, shape, **kwargs)
    theirs = _run(tf1, boxes, scores, shape, **kwargs)
    for a, b in zip(ours, theirs):
        assert (a.dtype, a.shape) == (b.dtype, b.shape)
        np.testing.assert_array_equal(a, b)
    assert ours[0].shape == (*batch, kwargs["max_output_size"])


def test_static_shapes_like_tensorflow():
    for api in (client, tf1):
        with api.Graph().as_default():
            b = api.placeholder(api.float32, [None, 30, 4])
            s = api.placeholder(api.float32, [None, 30])
            idx, valid = api.image.non_max_suppression_padded(b, s, 5, pad_to_max_output_size=True)
            assert idx.shape.ndims == 2 and valid.shape.ndims == 1, api
