"""Client tf.image options that used to be refused, against tensorflow.compat.v1: the
same graph nodes and values for convert_image_dtype between integer types (scaled by
integer factors, saturate clamping as saturate_cast does), resize_images with
preserve_aspect_ratio, and the crops and pads on images whose shape is only known at
run time (TensorFlow builds the shape-computing graph)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import client

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1


def _nodes(graph: Any) -> list[tuple[str, str, list[str]]]:
    return [(n.name, n.op, list(n.input)) for n in graph.as_graph_def().node]


def _both(body: Any, feeds: dict[str, np.ndarray] | None = None) -> tuple[list, list]:
    """(ours, theirs): each a (nodes, fetched value) pair; `feeds` by placeholder name."""
    out = []
    for t in (client, tf1):
        g = t.Graph()
        with g.as_default():
            fetch = body(t)
            with t.Session(graph=g) as sess:
                feed = {g.get_tensor_by_name(k + ":0"): v for k, v in (feeds or {}).items()}
                out.append((_nodes(g), sess.run(fetch, feed)))
    return out[0], out[1]


def _assert_same(ours: Any, theirs: Any) -> None:
    assert ours[0] == theirs[0]
    for a, b in zip(*(x[1] if isinstance(x[1], list) else [x[1]] for x in (ours, theirs))):
        a, b = np.asarray(a), np.asarray(b)
        assert (a.dtype, a.shape) == (b.dtype, b.shape)
        np.testing.assert_array_equal(a, b)


U8 = np.array([[[0, 1, 127], [128, 254, 255]]], np.uint8)
I16 = np.array([[[-32768, -1, 0], [1000, 32766, 32767]]], np.int16)
I32 = np.array([[[-5, 0, 70000], [2**31 - 1, -(2**31), 3]]], np.int32)
F32 = np.array([[[-0.5, 0.0, 0.25], [0.5, 1.0, 1.5]]], np.float32)

CONVERSIONS = [
    (U8, "int16", False),
    (U8, "int16", True),
    (U8, "int8", False),
    (U8, "int8", True),
    (U8, "uint16", True),
    (I16, "uint8", False),
    (I16, "uint8", True),
    (I16, "int8", True),
    (I16, "int64", True),
    (I32, "uint16", True),
    (I32, "uint8", False),
    (F32, "uint8", True),
    (F32, "int32", True),
    (F32, "int16", False),
]


@pytest.mark.parametrize("image,dtype,saturate", CONVERSIONS)
def test_convert_image_dtype_between_integers_matches_tensorflow(image, dtype, saturate):
    def body(t: Any) -> Any:
        return t.image.convert_image_dtype(t.constant(image), getattr(t, dtype), saturate=saturate)

    _assert_same(*_both(body))


def test_saturate_cast_limits_and_names_match_tensorflow():
    values = np.array([-3e9, -1.5, 0.5, 255.7, 3e9], np.float32)

    def body(t: Any) -> Any:
        x = t.constant(values)
        return [t.saturate_cast(x, t.int32), t.saturate_cast(x, t.uint8, name="to_pixels")]

    _assert_same(*_both(body))


def test_convert_image_dtype_refuses_what_tensorflow_refuses():
    message = "dtype must be either floating point or integer"
    with client.Graph().as_default(), pytest.raises(AttributeError, match=message):
        client.image.convert_image_dtype(client.constant(U8), client.bool)


IMAGE = np.random.default_rng(1).uniform(0, 1, (6, 7, 3)).astype(np.float32)
BATCH = np.random.default_rng(2).uniform(0, 1, (2, 6, 7, 3)).astype(np.float32)

# name -> (body(t, image placeholder), the placeholder's static shape, the fed image)
DYNAMIC = {
    "crop_rank3": (
        lambda t, x: t.image.crop_to_bounding_box(x, 1, 2, 3, 4),
        [None, None, 3],
        IMAGE,
    ),
    "crop_rank4": (
        lambda t, x: t.image.crop_to_bounding_box(x, 1, 2, 3, 4),
        [None] * 3 + [3],
        BATCH,
    ),
    "crop_tensor_box": (
        lambda t, x: t.image.crop_to_bounding_box(
            x, t.constant(1), 2, t.placeholder_with_default(3, []), 4
        ),
        [6, 7, 3],
        IMAGE,
    ),
    "pad_rank3": (
        lambda t, x: t.image.pad_to_bounding_box(x, 1, 2, 10, 12),
        [None, None, 3],
        IMAGE,
    ),
    "pad_rank4": (
        lambda t, x: t.image.pad_to_bounding_box(x, 1, 2, 10, 12),
        [2, None, None, 3],
        BATCH,
    ),
    "crop_or_pad_rank3": (
        lambda t, x: t.image.resize_image_with_crop_or_pad(x, 5, 9),
        [None, None, 3],
        IMAGE,
    ),
    "crop_or_pad_rank4": (
        lambda t, x: t.image.resize_image_with_crop_or_pad(x, 8, 4),
        [None] * 4,
        BATCH,
    ),
    "crop_or_pad_unknown_rank": (
        lambda t, x: t.image.resize_image_with_crop_or_pad(x, 8, 4),
        None,
        IMAGE,
    ),
    "central_crop_rank3": (lambda t, x: t.image.central_crop(x, 0.5), [None, None, 3], IMAGE),
    "central_crop_rank4": (lambda t, x: t.image.central_crop(x, 0.7), [None, 6, None, 3], BATCH),
    "central_crop_tensor_fraction": (
        lambda t, x: t.image.central_crop(x, t.placeholder_with_default(0.5, [])),
        [6, 7, 3],
        IMAGE,
    ),
    "central_crop_tensor_fraction_rank4": (
        lambda t, x: t.image.central_crop(x, t.placeholder_with_default(0.6, [])),
        [None] * 3 + [3],
        BATCH,
    ),
}


@pytest.mark.parametrize("name", sorted(DYNAMIC))
def test_crops_and_pads_of_dynamic_shapes_match_tensorflow(name):
    body, shape, image = DYNAMIC[name]
    shapes = []

    def build(t: Any) -> Any:
        out = body(t, t.placeholder(t.float32, shape, name="x"))
        shapes.append(out.shape.as_list() if out.shape.ndims is not None else None)
        return out

    _assert_same(*_both(build, {"x": image}))
    assert shapes[0] == shapes[1]


def test_a_dynamic_crop_too_large_fails_at_run_time_as_in_tensorflow():
    for t in (client, tf1):
        with t.Graph().as_default():
            x = t.placeholder(t.float32, [None, None, 3])
            y = t.image.crop_to_bounding_box(x, 1, 2, 3, 4)
            with t.Session() as sess, pytest.raises(t.errors.InvalidArgumentError) as caught:
                sess.run(y, {x: IMAGE[:3]})
            assert "height must be >= target + offset." in str(caught.value)


WIDE = np.random.default_rng(3).uniform(0, 1, (6, 9, 3)).astype(np.float32)
WIDE_BATCH = np.random.default_rng(4).uniform(0, 1, (2, 6, 9, 3)).astype(np.float32)

# name -> (body(t, image placeholder), the placeholder's static shape, the fed image)
ASPECT = {
    "static": (lambda t, x: t.image.resize_images(x, [4, 4], preserve_aspect_ratio=True),
               [6, 9, 3], WIDE),
    "dynamic": (lambda t, x: t.image.resize_images(x, [4, 4], preserve_aspect_ratio=True),
                [None, None, 3], WIDE),
    "dynamic_batch_nearest": (
        lambda t, x: t.image.resize_images(x, [10, 30], method=1, preserve_aspect_ratio=True),
        [None, None, None, 3],
        WIDE_BATCH,
    ),
    "already_that_size": (
        lambda t, x: t.image.resize_images(x, [6, 9], preserve_aspect_ratio=True),
        [6, 9, 3],
        WIDE,
    ),
    "tensor_size_area": (
        lambda t, x: t.image.resize(
            x, t.placeholder_with_default([5, 5], [2]), method=3, preserve_aspect_ratio=True
        ),
        [6, 9, 3],
        WIDE,
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(ASPECT))
def test_resize_preserving_aspect_ratio_matches_tensorflow(name):
    body, shape, image = ASPECT[name]
    shapes = []

    def build(t: Any) -> Any:
        out = body(t, t.placeholder(t.float32, shape, name="x"))
        shapes.append(out.shape.as_list() if out.shape.ndims is not None else None)
        return out

    ours, theirs = _both(build, {"x": image})
    assert ours[0] == theirs[0]
    assert shapes[0] == shapes[1]
    assert ours[1].shape == theirs[1].shape
    # Bilinear and area interpolation: Eigen and numpy round differently in the last bit.
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "shape,image",
    [
        ([None, None, 3], IMAGE),
        ([None, 6, 7, 3], BATCH),
        (None, IMAGE),
        ([None, None, 3], (IMAGE * 255).astype(np.uint8)),
    ],
)
def test_rgb_to_grayscale_of_dynamic_shapes_matches_tensorflow(shape, image):
    def build(t: Any) -> Any:
        dtype = t.uint8 if image.dtype == np.uint8 else t.float32
        return t.image.rgb_to_grayscale(t.placeholder(dtype, shape, name="x"))

    ours, theirs = _both(build, {"x": image})
    assert ours[0] == theirs[0]
    assert ours[1].dtype == theirs[1].dtype and ours[1].shape == theirs[1].shape
    # A MatMul: numpy and Eigen may sum the three products in another order.
    np.testing.assert_allclose(ours[1].astype(float), theirs[1].astype(float), atol=1e-6)
