"""Image resizing kernels against TensorFlow's (tf.raw_ops, eager): bilinear, nearest,
bicubic and their gradients, area, crop_and_resize, over align_corners / half_pixel_centers,
up- and down-scaling, integer and float inputs. Bit-equal: bilinear, nearest, bicubic,
crop_and_resize and the bilinear and nearest gradients; ResizeArea and ResizeBicubicGrad
within float32 rounding (rtol 2e-6)."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import InvalidArgumentError

from . import run1
from .signatures import assert_signature_matches_tensorflow, module_ops

tf = pytest.importorskip("tensorflow")
MY_OPS = module_ops("common.ops.image_resize_ops")
MODES = [(False, False), (True, False), (False, True)]
SIZES = [(7, 5), (3, 9), (1, 1), (12, 11), (2, 4)]


def _images(dtype=np.float32) -> np.ndarray:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 4, 3)) * 50
    return x.astype(dtype) if np.dtype(dtype).kind == "f" else np.abs(x).astype(dtype)


def _close(ours, theirs, exact=True):
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if exact:
        np.testing.assert_array_equal(ours, theirs)
    else:
        np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=2e-5)


@pytest.mark.parametrize("op", MY_OPS)
def test_signature_matches_tensorflow(op):
    assert_signature_matches_tensorflow(op)


@pytest.mark.parametrize("op", ["ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic"])
@pytest.mark.parametrize("align,half", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.int32])
def test_resize_equals_tensorflow(op, align, half, dtype):
    images = _images(dtype)
    for size in SIZES:
        theirs = getattr(tf.raw_ops, op)(images=images, size=size, align_corners=align,
                                         half_pixel_centers=half).numpy()  # fmt: skip
        ours = run1(op, images, np.int32(size), align_corners=align, half_pixel_centers=half)
        _close(ours, theirs)


@pytest.mark.parametrize("align", [False, True])
def test_resize_area_equals_tensorflow(align):
    images = _images()
    for size in SIZES:
        theirs = tf.raw_ops.ResizeArea(images=images, size=size, align_corners=align).numpy()
        # Area sums its weighted spans in another order: float32 rounding.
        _close(run1("ResizeArea", images, np.int32(size), align_corners=align), theirs, False)


@pytest.mark.parametrize("op", ["ResizeBilinearGrad", "ResizeBicubicGrad"])
@pytest.mark.parametrize("align,half", MODES)
def test_resize_grads_equal_tensorflow(op, align, half):
    original = _images()
    for size in SIZES:
        grads = np.random.default_rng(1).standard_normal((2, *size, 3)).astype(np.float32)
        theirs = getattr(tf.raw_ops, op)(grads=grads, original_image=original,
                                         align_corners=align, half_pixel_centers=half).numpy()  # fmt: skip
        ours = run1(op, grads, original, align_corners=align, half_pixel_centers=half)
        # Bicubic's gradient sums 16 products per pixel in another order: float32 rounding.
        _close(ours, theirs, exact=op == "ResizeBilinearGrad")


@pytest.mark.parametrize("align,half", MODES)
def test_resize_nearest_grad_equals_tensorflow(align, half):
    for size in SIZES:
        grads = np.random.default_rng(1).standard_normal((2, *size, 3)).astype(np.float32)
        theirs = tf.raw_ops.ResizeNearestNeighborGrad(
            grads=grads, size=[6, 4], align_corners=align, half_pixel_centers=half
        ).numpy()
        ours = run1("ResizeNearestNeighborGrad", grads, np.int32([6, 4]), align_corners=align,
                    half_pixel_centers=half)  # fmt: skip
        _close(ours, theirs)


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_crop_and_resize_equals_tensorflow(method):
    image = _images()
    boxes = np.float32([[0, 0, 1, 1], [0.1, 0.2, 0.7, 0.9], [-0.2, 0.3, 1.3, 0.5],
                        [0.5, 0.5, 0.5, 0.5], [0.9, 0.8, 0.1, 0.2]])  # fmt: skip
    box_ind = np.int32([0, 1, 0, 1, 1])
    for crop in [(3, 4), (1, 1), (5, 2)]:
        theirs = tf.raw_ops.CropAndResize(image=image, boxes=boxes, box_ind=box_ind,
                                          crop_size=crop, method=method,
                                          extrapolation_value=-1.0).numpy()  # fmt: skip
        ours = run1("CropAndResize", image, boxes, box_ind, np.int32(crop), method=method,
                    extrapolation_value=-1.0)  # fmt: skip
        _close(ours, theirs)


def test_resize_errors_are_invalid_argument():
    with pytest.raises(InvalidArgumentError, match="half_pixel_centers"):
        run1("ResizeBilinear", _images(), np.int32([2, 2]), align_corners=True,
             half_pixel_centers=True)  # fmt: skip
    with pytest.raises(InvalidArgumentError):
        run1("ResizeBilinear", _images()[0], np.int32([2, 2]))
