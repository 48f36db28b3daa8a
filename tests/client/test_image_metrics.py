"""Client tf.image composites against tensorflow.compat.v1: sobel_edges, image_gradients,
total_variation, psnr, ssim (and its index map) and ssim_multiscale build the same
nodes (name, op, inputs, T) with the same static shapes, and run to TensorFlow's values
(float tolerance: the depthwise convolution and reductions sum in another order)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import client

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1

RNG = np.random.default_rng(3)
IMG_A = RNG.random((2, 24, 26, 3)).astype(np.float32)
IMG_B = np.clip(IMG_A + RNG.normal(0, 0.1, IMG_A.shape), 0, 1).astype(np.float32)
U8_A = (IMG_A * 255).astype(np.uint8)
U8_B = (IMG_B * 255).astype(np.uint8)


def _set_control_flow_v2(ours: bool, theirs: bool) -> None:
    (client.enable_control_flow_v2 if ours else client.disable_control_flow_v2)()
    (tf1.enable_control_flow_v2 if theirs else tf1.disable_control_flow_v2)()


def _run(api: Any, build: Any, feeds: dict) -> tuple[list, list, list]:
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


def _assert_same(build: Any, feeds: dict | None = None, *, v1_control_flow: bool = False,
                 rtol: float = 1e-5, atol: float = 1e-5) -> None:  # fmt: skip
    """Same nodes, static shapes and values. `v1_control_flow`: TF builds its cond and
    Assert guards with Switch/Merge as the client does (TF 2.x defaults to If)."""
    before = (client.control_flow_v2_enabled(), tf1.control_flow_v2_enabled())
    v2 = not v1_control_flow
    _set_control_flow_v2(v2, v2)
    try:
        ours = _run(client, build, feeds or {})
        theirs = _run(tf1, build, feeds or {})
    finally:
        _set_control_flow_v2(*before)
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    for a, b in zip(ours[2], theirs[2]):
        a, b = np.asarray(a), np.asarray(b)
        assert (a.dtype, a.shape) == (b.dtype, b.shape)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _img(api: Any, value: np.ndarray, name: str, known: bool = True) -> Any:
    shape = list(value.shape) if known else [None] * value.ndim
    return api.placeholder(api.as_dtype(value.dtype), shape, name=name)


@pytest.mark.parametrize("known", [True, False])
def test_sobel_edges(known):
    _assert_same(lambda api: api.image.sobel_edges(_img(api, IMG_A, "a", known)), {"a": IMG_A})


@pytest.mark.parametrize("known", [True, False])
def test_image_gradients(known):
    def build(api):
        x = _img(api, IMG_A, "a", known)
        return api.image.image_gradients(x)

    _assert_same(build, {"a": IMG_A}, rtol=0, atol=0)


def test_image_gradients_needs_rank_4():
    for api in (client, tf1):
        with api.Graph().as_default(), pytest.raises(ValueError, match="expects a 4D tensor"):
            api.image.image_gradients(api.placeholder(api.float32, [3, 4, 1]))


@pytest.mark.parametrize("rank", [3, 4])
def test_total_variation(rank):
    value = IMG_A if rank == 4 else IMG_A[0]
    _assert_same(lambda api: api.image.total_variation(_img(api, value, "a")), {"a": value})
    for api in (client, tf1):
        with api.Graph().as_default(), pytest.raises(ValueError, match="3 or 4-dimensional"):
            api.image.total_variation(api.placeholder(api.float32, [3, 4]))


@pytest.mark.parametrize("u8", [False, True])
def test_psnr(u8):
    a, b = (U8_A, U8_B) if u8 else (IMG_A, IMG_B)
    max_val = 255 if u8 else 1.0

    def build(api):
        return api.image.psnr(_img(api, a, "a"), _img(api, b, "b"), max_val, name="psnr")

    _assert_same(build, {"a": a, "b": b})


def test_psnr_refuses_incompatible_shapes():
    for api in (client, tf1):
        with api.Graph().as_default(), pytest.raises(ValueError):
            api.image.psnr(api.zeros([2, 4, 4, 3]), api.zeros([2, 4, 5, 3]), 1.0)


@pytest.mark.parametrize("u8", [False, True])
@pytest.mark.parametrize("index_map", [False, True])
def test_ssim(u8, index_map):
    a, b = (U8_A, U8_B) if u8 else (IMG_A, IMG_B)
    max_val = 255 if u8 else 1.0

    def build(api):
        x, y = _img(api, a, "a"), _img(api, b, "b")
        return api.image.ssim(x, y, max_val, filter_size=7, return_index_map=index_map)

    _assert_same(build, {"a": a, "b": b})


def test_ssim_unknown_shapes_and_defaults():
    def build(api):
        return api.image.ssim(_img(api, IMG_A, "a", False), _img(api, IMG_B, "b", False), 1.0)

    _assert_same(build, {"a": IMG_A, "b": IMG_B})


@pytest.mark.parametrize("size", [(1, 48, 48, 3), (2, 45, 51, 1)])
def test_ssim_multiscale(size):
    a = RNG.random(size).astype(np.float32)
    b = np.clip(a + RNG.normal(0, 0.05, size), 0, 1).astype(np.float32)

    def build(api):
        x, y = _img(api, a, "a"), _img(api, b, "b")
        return api.image.ssim_multiscale(x, y, 1.0, power_factors=(0.3, 0.3, 0.4), filter_size=5)

    _assert_same(build, {"a": a, "b": b}, v1_control_flow=True)


GRADIENT_CASES = {
    "sobel_edges": lambda api, x, y: api.reduce_sum(api.image.sobel_edges(x * y) ** 2),
    "total_variation": lambda api, x, y: api.image.total_variation(x * y),
    "psnr": lambda api, x, y: api.image.psnr(x, y, 1.0),
    "ssim": lambda api, x, y: api.image.ssim(x, y, 1.0, filter_size=5),
    "ssim_index_map": lambda api, x, y: api.image.ssim(x, y, 2.0, return_index_map=True),
}


@pytest.mark.parametrize("case", sorted(GRADIENT_CASES))
def test_gradients_match_tensorflow(case):
    def build(api):
        x, y = _img(api, IMG_A, "a"), _img(api, IMG_B, "b")
        value = GRADIENT_CASES[case](api, x, y)
        return [value, *api.gradients(api.reduce_sum(value), [x, y])]

    _assert_same(build, {"a": IMG_A, "b": IMG_B}, rtol=1e-4, atol=1e-5)
