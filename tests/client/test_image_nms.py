"""Client tf.image non-max suppression against tensorflow.compat.v1: the same graph
(node names, ops, inputs, dtypes) and the same values for non_max_suppression,
non_max_suppression_with_scores (soft-NMS), non_max_suppression_overlaps and
combined_non_max_suppression; non_max_suppression_padded (a tf.function call in TF 2.x,
the V4 kernel here) gives TF's values. Static shapes follow TF's shape functions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import client

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1

RNG = np.random.default_rng(11)
_CORNER = RNG.random((30, 2)) * 0.8
BOXES = np.concatenate([_CORNER, _CORNER + RNG.random((30, 2)) * 0.4], 1).astype(np.float32)
SCORES = (RNG.integers(0, 6, 30) / 6).astype(np.float32)
OVERLAPS = RNG.random((30, 30)).astype(np.float32)
_C = RNG.random((2, 25, 3, 2)) * 1.2 - 0.1
CBOXES = np.concatenate([_C, _C + RNG.random((2, 25, 3, 2)) * 0.4], -1).astype(np.float32)
CSCORES = RNG.random((2, 25, 3)).astype(np.float32)


def _graph(api: Any, build: Any, feeds: dict) -> tuple[list, list, list]:
    g = api.Graph()
    with g.as_default():
        fetches = build(api)
        fetches = list(fetches) if isinstance(fetches, (list, tuple)) else [fetches]
        shapes = [f.shape.as_list() if f.shape.ndims is not None else None for f in fetches]
        nodes = [
            (n.name, n.op, list(n.input), n.attr["T"].type if "T" in n.attr else None)
            for n in g.as_graph_def().node
        ]
        with api.Session(graph=g) as sess:
            feed = {g.get_tensor_by_name(k + ":0"): v for k, v in feeds.items()}
            return nodes, shapes, sess.run(fetches, feed)


def _assert_same(build: Any, feeds: dict | None = None, *, graph: bool = True) -> list:
    ours = _graph(client, build, feeds or {})
    theirs = _graph(tf1, build, feeds or {})
    if graph:
        assert ours[0] == theirs[0]
        assert ours[1] == theirs[1]
    for a, b in zip(ours[2], theirs[2]):
        a, b = np.asarray(a), np.asarray(b)
        assert (a.dtype, a.shape) == (b.dtype, b.shape)
        np.testing.assert_array_equal(a, b)
    return ours[2]


@pytest.mark.parametrize("iou,score", [(0.5, float("-inf")), (0.3, 0.4), (1.0, 0.0)])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_non_max_suppression(iou, score, dtype):
    def build(api):
        b = api.constant(BOXES.astype(dtype), name="boxes")
        s = api.constant(SCORES.astype(dtype), name="scores")
        if dtype == "float16":
            iou_t = api.constant(iou, api.float16)
            return api.image.non_max_suppression(b, s, 12, iou_t, api.constant(score, api.float16))
        return api.image.non_max_suppression(b, s, 12, iou, score, name="nms")

    _assert_same(build)


@pytest.mark.parametrize("sigma", [0.0, 0.5])
def test_non_max_suppression_with_scores(sigma):
    def build(api):
        b = api.placeholder(api.float32, [None, 4], name="b")
        s = api.placeholder(api.float32, [None], name="s")
        return api.image.non_max_suppression_with_scores(b, s, 20, 0.5, 0.1, sigma)

    idx, scores = _assert_same(build, {"b": BOXES, "s": SCORES})
    assert len(idx) == len(scores)


def test_non_max_suppression_overlaps():
    def build(api):
        o = api.constant(OVERLAPS)
        return api.image.non_max_suppression_overlaps(o, SCORES, 10, 0.6, 0.2)

    _assert_same(build)


@pytest.mark.parametrize("pad_per_class", [False, True])
@pytest.mark.parametrize("clip", [False, True])
@pytest.mark.parametrize("q", [1, 3])
def test_combined_non_max_suppression(pad_per_class, clip, q):
    def build(api):
        b = api.constant(CBOXES[:, :, :q])
        s = api.constant(CSCORES)
        return api.image.combined_non_max_suppression(
            b, s, 4, 10, 0.4, 0.2, pad_per_class=pad_per_class, clip_boxes=clip
        )

    _assert_same(build)


def test_combined_non_max_suppression_unknown_shapes():
    def build(api):
        b = api.placeholder(api.float32, [None, None, 1, 4], name="b")
        s = api.placeholder(api.float32, [None, None, 3], name="s")
        m = api.placeholder(api.int32, [], name="m")
        return api.image.combined_non_max_suppression(b, s, m, 6, pad_per_class=True)

    _assert_same(build, {"b": CBOXES[:, :, :1], "s": CSCORES, "m": np.int32(2)})


@pytest.mark.parametrize("pad", [False, True])
@pytest.mark.parametrize("score", [float("-inf"), 0.5])
def test_non_max_suppression_padded_values(pad, score):
    def build(api):
        b = api.constant(BOXES)
        return api.image.non_max_suppression_padded(
            b, SCORES, 15, 0.45, score, pad_to_max_output_size=pad
        )

    _assert_same(build, graph=False)


@pytest.mark.parametrize(
    "make",
    [
        lambda api: api.image.non_max_suppression(api.zeros([3, 3]), api.zeros([3]), 2),
        lambda api: api.image.non_max_suppression(api.zeros([3, 4]), api.zeros([2]), 2),
        lambda api: api.image.non_max_suppression(api.zeros([3, 4]), api.zeros([3, 1]), 2),
        lambda api: api.image.non_max_suppression(api.zeros([3, 4]), api.zeros([3]), [2]),
        lambda api: api.image.combined_non_max_suppression(
            api.zeros([1, 3, 2, 4]), api.zeros([1, 3, 3]), 2, 4
        ),
        lambda api: api.image.combined_non_max_suppression(
            api.zeros([1, 3, 1, 4]), api.zeros([1, 3, 3]), 2, 0
        ),
        lambda api: api.image.non_max_suppression_padded(
            api.zeros([2, 3, 4]), api.zeros([2, 3]), 2
        ),
    ],
)
def test_shape_errors_at_graph_building(make):
    for api in (client, tf1):
        with api.Graph().as_default(), pytest.raises(ValueError):
            make(api)


@pytest.mark.parametrize("version", ["v1", "v3", "soft", "overlaps"])
def test_gradient_through_selected_boxes(version):
    """The selected indices carry no gradient (NotDifferentiable or an int output); the
    boxes gathered with them do, as in TensorFlow."""

    def build(api):
        b = api.placeholder(api.float32, [30, 4], name="b")
        s = api.placeholder(api.float32, [30], name="s")
        if version == "v1":
            keep = api.image.non_max_suppression(b, s, 10)
        elif version == "v3":
            keep = api.image.non_max_suppression(b, s, 10, 0.3, 0.2)
        elif version == "soft":
            keep, scores = api.image.non_max_suppression_with_scores(b, s, 10, soft_nms_sigma=0.5)
        else:
            keep = api.image.non_max_suppression_overlaps(api.matmul(b, b, transpose_b=True), s, 10)
        loss = api.reduce_sum(api.gather(b, keep) ** 2) + api.reduce_sum(api.gather(s, keep))
        return [loss, *(api.convert_to_tensor(g) for g in api.gradients(loss, [b, s]))]

    # Values only: densifying Gather's IndexedSlices gradient names its nodes otherwise.
    _assert_same(build, {"b": BOXES, "s": SCORES}, graph=False)


@pytest.mark.parametrize("batch", [(2,), (2, 3)])
def test_non_max_suppression_padded_batched_values(batch):
    rng = np.random.default_rng(len(batch))
    corner = rng.random((*batch, 30, 2)) * 0.8
    boxes = np.concatenate([corner, corner + rng.random((*batch, 30, 2)) * 0.4], -1)
    scores = rng.integers(0, 6, (*batch, 30)) / 6

    def build(api):
        b = api.constant(boxes.astype(np.float32))
        s = api.constant(scores.astype(np.float32))
        return api.image.non_max_suppression_padded(b, s, 12, 0.4, 0.2, pad_to_max_output_size=True)

    idx, valid = _assert_same(build, graph=False)
    assert idx.shape == (*batch, 12) and valid.shape == batch
