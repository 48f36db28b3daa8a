"""Image ops of input pipelines against TensorFlow 2.21, value for value:
SampleDistortedBoundingBox (V1, V2 and stateless; seeded, run after run),
DrawBoundingBoxes (V1, V2), CropAndResizeGradImage/GradBoxes, DecodeAndCropJpeg and
ExtractJpegShape. Skipped without TensorFlow."""

from __future__ import annotations

import io

import numpy as np
import pytest

from common import dtypes
from common.errors import InvalidArgumentError, OutOfRangeError

from .kernel_harness import run
from .signatures import assert_signature_matches_tensorflow, module_ops
from .tf_graphs import run_both

tf = pytest.importorskip("tensorflow")
raw = tf.raw_ops
MY_OPS = module_ops(
    "common.ops.image_bbox_ops", "common.ops.image_crop_grad_ops", "common.ops.image_jpeg_crop_ops"
)


@pytest.mark.parametrize("name", MY_OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


BOXES = [
    np.zeros((1, 0, 4), np.float32),
    np.array([[[0.1, 0.2, 0.6, 0.9]]], np.float32),
    np.array([[[0.0, 0.0, 1.0, 1.0], [0.3, 0.3, 0.5, 0.4]]], np.float32),
]
SAMPLER_ATTRS = [
    {},
    {"min_object_covered": 0.5, "aspect_ratio_range": [0.5, 2.0], "area_range": [0.1, 0.9],
     "max_attempts": 50},
    {"min_object_covered": 0.9, "area_range": [0.01, 0.05]},
]  # fmt: skip


@pytest.mark.parametrize("size", [[100, 200, 3], [37, 29, 1], [640, 480, 3], [5, 5, 3]])
@pytest.mark.parametrize("boxes", range(len(BOXES)))
@pytest.mark.parametrize("attrs", range(len(SAMPLER_ATTRS)))
def test_sample_distorted_bounding_box(size, boxes, attrs):
    kw, b = SAMPLER_ATTRS[attrs], BOXES[boxes]

    def build(tf1):
        tf1.set_random_seed(5)
        outs = []
        for t in (tf.int32, tf.int64, tf.uint8 if max(size) < 256 else tf.int16):
            outs += tf1.image.sample_distorted_bounding_box(
                tf.constant(size, t), b, seed=3, use_image_if_no_bounding_boxes=True, **kw
            )
        outs += tf.image.stateless_sample_distorted_bounding_box(
            tf.constant(size, tf.int32), b, seed=[1, 2], use_image_if_no_bounding_boxes=True,
            **kw,
        )  # fmt: skip
        v1 = tf1.raw_ops.SampleDistortedBoundingBox(
            image_size=tf.constant(size), bounding_boxes=b, seed=7, seed2=8,
            use_image_if_no_bounding_boxes=True, **kw,
        )  # fmt: skip
        return [*outs, *v1]

    theirs, ours = run_both(build, steps=3)
    for step, (t_step, o_step) in enumerate(zip(theirs, ours)):
        for t, o in zip(t_step, o_step):
            assert np.asarray(o).dtype == np.asarray(t).dtype
            np.testing.assert_array_equal(o, t, err_msg=f"step {step}")


def test_sample_distorted_bounding_box_refuses_what_tensorflow_refuses():
    size, boxes = np.array([10, 10, 3], np.int32), np.array([[[0.1, 0.1, 1.5, 0.5]]], np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        raw.SampleDistortedBoundingBoxV2(
            image_size=size, bounding_boxes=boxes, min_object_covered=0.1, seed=1
        )
    with pytest.raises(InvalidArgumentError) as ours:
        run("SampleDistortedBoundingBoxV2", [size, boxes, np.float32(0.1)], {"seed": 1})
    assert ours.value.message in theirs.value.message
    with pytest.raises(InvalidArgumentError, match="No bounding boxes provided"):
        run("SampleDistortedBoundingBoxV2", [size, BOXES[0], np.float32(0.1)], {"seed": 1})


@pytest.mark.parametrize("depth", [1, 3, 4])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_draw_bounding_boxes(depth, dtype):
    rng = np.random.default_rng(depth)
    images = rng.random((2, 9, 11, depth)).astype(dtype)
    boxes = np.array(
        [
            [[0.1, 0.2, 0.6, 0.9], [-0.3, 0.5, 0.4, 1.4], [0.5, 0.5, 0.2, 0.9]],
            [[0.0, 0.0, 1.0, 1.0], [1.5, 0.1, 2.0, 0.3], [0.25, 0.25, 0.75, 0.75]],
        ],
        np.float32,
    )
    colors = np.array([[0.5, 0.25, 1.0, 0.0, 9.0], [0.1, 0.2, 0.3, 0.4, 0.5]], np.float32)
    t1 = raw.DrawBoundingBoxes(images=tf.constant(images), boxes=boxes).numpy()
    assert_equal(run("DrawBoundingBoxes", [images, boxes])[0], t1)
    t2 = raw.DrawBoundingBoxesV2(images=tf.constant(images), boxes=boxes, colors=colors).numpy()
    assert_equal(run("DrawBoundingBoxesV2", [images, boxes, colors])[0], t2)


def assert_equal(ours, theirs) -> None:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape)
    np.testing.assert_array_equal(ours, theirs)


CROP_BOXES = np.array(
    [[0.1, 0.2, 0.8, 0.9], [-0.2, 0.3, 1.3, 0.7], [0.5, 0.5, 0.5, 0.5], [0.9, 0.9, 0.1, 0.2]],
    np.float32,
)
CROP_IND = np.array([0, 1, 1, 0], np.int32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("crop", [(5, 4), (1, 1), (1, 6), (6, 1), (3, 3)])
@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_crop_and_resize_grad_image(dtype, crop, method):
    rng = np.random.default_rng(7)
    grads = rng.standard_normal((4, *crop, 3)).astype(np.float32)
    size = np.array([2, 7, 9, 3], np.int32)
    theirs = raw.CropAndResizeGradImage(
        grads=grads, boxes=CROP_BOXES, box_ind=CROP_IND, image_size=size, T=dtype, method=method
    ).numpy()
    attrs = {"T": dtypes.from_numpy(np.dtype(dtype)), "method": method}
    assert_equal(run("CropAndResizeGradImage", [grads, CROP_BOXES, CROP_IND, size], attrs)[0],
                 theirs)  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.uint8])
@pytest.mark.parametrize(
    "crop", [(5, 4), (1, 1), (1, 6), (6, 1), (3, 3), (6, 4), (11, 1), (4, 6), (7, 13)]
)
def test_crop_and_resize_grad_boxes(dtype, crop):
    # Crop heights 6 and 11 on a 7-row image step by an inexact ratio (1.2, 0.6): the
    # box gradient rounds (y2 - y1) * ratio where the image gradient divides last.
    rng = np.random.default_rng(8)
    image = (rng.random((2, 7, 9, 3)) * 100).astype(dtype)
    boxes = np.concatenate([CROP_BOXES, (rng.random((4, 4)) * 1.4 - 0.2).astype(np.float32)])
    ind = np.concatenate([CROP_IND, CROP_IND])
    grads = rng.standard_normal((8, *crop, 3)).astype(np.float32)
    theirs = raw.CropAndResizeGradBoxes(grads=grads, image=image, boxes=boxes, box_ind=ind)
    ours = run("CropAndResizeGradBoxes", [grads, image, boxes, ind])[0]
    assert_equal(ours, theirs.numpy())


def test_crop_and_resize_grads_refuse_a_box_outside_the_batch():
    grads = np.zeros((1, 2, 2, 3), np.float32)
    boxes, ind = CROP_BOXES[:1], np.array([2], np.int32)
    size = np.array([2, 7, 9, 3], np.int32)
    with pytest.raises(tf.errors.OutOfRangeError) as theirs:
        raw.CropAndResizeGradImage(grads=grads, boxes=boxes, box_ind=ind, image_size=size,
                                   T=tf.float32)  # fmt: skip
    with pytest.raises(OutOfRangeError) as ours:
        run("CropAndResizeGradImage", [grads, boxes, ind, size], {"T": dtypes.DataType.DT_FLOAT})
    assert ours.value.message in theirs.value.message


def _jpeg(shape, subsampling: int) -> bytes:
    from PIL import Image

    rng = np.random.default_rng(sum(shape))
    yy, xx = np.mgrid[: shape[0], : shape[1]]
    base = ((np.sin(yy / 5) + np.cos(xx / 7)) * 60 + 128).astype(int)
    noise = (rng.random(shape) * 64).astype(int) - 32
    arr = np.clip(base[..., None] + noise, 0, 255).astype(np.uint8)
    image = Image.fromarray(arr[..., 0], "L") if shape[2] == 1 else Image.fromarray(arr, "RGB")
    buf = io.BytesIO()
    image.save(buf, "JPEG", quality=85, subsampling=subsampling)
    return buf.getvalue()


WINDOWS = [[0, 0, -1, -1], [3, 5, 10, 20], [-7, -9, 7, 9], [1, 17, 20, 3], [8, 8, 16, 16]]


@pytest.mark.parametrize("shape,subsampling", [((37, 53, 3), 0), ((30, 31, 1), 0),
                                               ((64, 48, 3), 2), ((80, 70, 3), 1)])  # fmt: skip
@pytest.mark.parametrize("window", range(len(WINDOWS)))
@pytest.mark.parametrize("channels", [0, 1, 3])
@pytest.mark.parametrize("dct", ["INTEGER_ACCURATE", ""])
def test_decode_and_crop_jpeg(shape, subsampling, window, channels, dct):
    """Equal bytes, chroma-subsampled windows' edge columns and TF's default JDCT_IFAST
    included (libjpeg-turbo's cropped decode through jpeg_shim.c)."""
    from common.ops import libjpeg

    if libjpeg.library() is None:
        pytest.skip("no C compiler or libjpeg headers: jpeg_shim.c not built")
    data = _jpeg(shape, subsampling)
    y, x, h, w = WINDOWS[window]
    win = [y % shape[0], x % shape[1], shape[0] if h < 0 else h, shape[1] if w < 0 else w]
    theirs = raw.DecodeAndCropJpeg(
        contents=data, crop_window=win, channels=channels, dct_method=dct
    ).numpy()
    ours = run(
        "DecodeAndCropJpeg",
        [np.array(data, object), np.array(win, np.int32)],
        {"channels": channels, "dct_method": dct},
    )[0]
    assert_equal(ours, theirs)
    shape_t = raw.ExtractJpegShape(contents=data, output_type=tf.int64).numpy()
    assert_equal(run("ExtractJpegShape", [np.array(data, object)],
                     {"output_type": dtypes.DataType.DT_INT64})[0], shape_t)  # fmt: skip


@pytest.mark.parametrize("ratio", [2, 4])
@pytest.mark.parametrize("fancy", [True, False])
def test_decode_and_crop_jpeg_scaled_and_plain_upsampling(ratio, fancy):
    from common.ops import libjpeg

    if libjpeg.library() is None:
        pytest.skip("no C compiler or libjpeg headers: jpeg_shim.c not built")
    data = _jpeg((97, 131, 3), 2)
    win = [3, 5, 15, 20]
    theirs = raw.DecodeAndCropJpeg(contents=data, crop_window=win, ratio=ratio,
                                   fancy_upscaling=fancy).numpy()  # fmt: skip
    ours = run(
        "DecodeAndCropJpeg",
        [np.array(data, object), np.array(win, np.int32)],
        {"ratio": ratio, "fancy_upscaling": fancy},
    )[0]
    assert_equal(ours, theirs)


def test_decode_and_crop_jpeg_refuses_a_window_outside_the_image():
    data = _jpeg((20, 20, 3), 0)
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        raw.DecodeAndCropJpeg(contents=data, crop_window=[0, 0, 30, 3])
    with pytest.raises(InvalidArgumentError) as ours:
        run("DecodeAndCropJpeg", [np.array(data, object), np.array([0, 0, 30, 3], np.int32)])
    assert ours.value.message in theirs.value.message
