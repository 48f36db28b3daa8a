"""Integration, a detection post-processing graph through a real cluster: anchors and
predicted offsets decode to boxes and class scores on one worker, and non-max
suppression (hard and soft single-class NMS, padded V4, combined multi-class NMS,
NMS on a precomputed overlap matrix) runs on the other, so the boxes cross workers.
Built by TensorFlow's own client (tf.compat.v1.Session against OUR master) and by ours;
both are compared with TensorFlow's local session."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import client as ours

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

W0, W1 = "/job:worker/task:0", "/job:worker/task:1"
RNG = np.random.default_rng(21)
N, CLASSES = 64, 3
ANCHORS = np.concatenate(
    [RNG.random((N, 2)) * 0.8, np.full((N, 2), 0.3) + RNG.random((N, 2)) * 0.1], 1
).astype(np.float32)  # centre y, x, height, width
DELTAS = (RNG.standard_normal((2, N, 4)) * 0.1).astype(np.float32)
LOGITS = np.round(RNG.standard_normal((2, N, CLASSES)) * 2, 1).astype(np.float32)  # ties


def _no_device(name):
    return contextlib.nullcontext()  # the local oracle has only /job:localhost


def _build(api, dev):
    with dev(W0):
        deltas = api.placeholder(api.float32, [2, N, 4], name="deltas")
        logits = api.placeholder(api.float32, [2, N, CLASSES], name="logits")
        anchors = api.constant(ANCHORS)
        centre = anchors[:, :2] + deltas[..., :2] * anchors[:, 2:]
        size = anchors[:, 2:] * api.exp(deltas[..., 2:])
        boxes = api.concat([centre - 0.5 * size, centre + 0.5 * size], -1)
        scores = api.sigmoid(logits)
    with dev(W1):
        img_boxes, img_scores = boxes[0], api.reduce_max(scores[0], -1)
        keep = api.image.non_max_suppression(img_boxes, img_scores, N, 0.4, 0.3)
        soft_idx, soft_scores = api.image.non_max_suppression_with_scores(
            img_boxes, img_scores, 20, 0.5, 0.2, soft_nms_sigma=0.4
        )
        padded, valid = api.image.non_max_suppression_padded(
            img_boxes, img_scores, 25, 0.5, pad_to_max_output_size=True
        )
        ymin, xmin, ymax, xmax = api.unstack(img_boxes, axis=1)
        area = (ymax - ymin) * (xmax - xmin)
        overlaps = area[:, None] / (area[None, :] + area[:, None])  # a stand-in similarity
        by_overlap = api.image.non_max_suppression_overlaps(overlaps, img_scores, 15, 0.5)
        combined = api.image.combined_non_max_suppression(
            api.expand_dims(boxes, 2), scores, 6, 12, 0.5, 0.25, clip_boxes=True
        )
        kept_boxes = api.gather(img_boxes, keep)
    feeds = {deltas: DELTAS, logits: LOGITS}
    return feeds, [keep, kept_boxes, soft_idx, soft_scores, padded, valid, by_overlap,
                   *combined]  # fmt: skip


def _run(api, target: str, dev) -> list[np.ndarray]:
    g = api.Graph()
    with g.as_default():
        feeds, fetches = _build(api, dev)
    with api.Session(target, graph=g) as sess:
        return sess.run(fetches, feeds)


def test_detection_postprocessing_through_our_master_with_both_clients(shared_cluster):
    expected = _run(tf1, "", _no_device)
    assert 0 < len(expected[0]) < N // 2  # suppression did happen
    for api in (tf1, ours):
        got = _run(api, shared_cluster.target, api.device)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            g, e = np.asarray(g), np.asarray(e)
            assert (g.dtype, g.shape) == (e.dtype, e.shape)
            if e.dtype.kind in "iu":
                np.testing.assert_array_equal(g, e)
            else:
                np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)
