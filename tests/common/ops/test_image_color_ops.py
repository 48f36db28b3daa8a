"""Image color kernels against TensorFlow's (tf.raw_ops, eager): RGBToHSV, HSVToRGB,
AdjustContrastv2, AdjustHue, AdjustSaturation on random pixels, gray pixels, black and
saturated corners."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import InvalidArgumentError

from . import run1
from .signatures import assert_signature_matches_tensorflow, module_ops

tf = pytest.importorskip("tensorflow")
MY_OPS = module_ops("common.ops.image_color_ops")


def _pixels() -> np.ndarray:
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 1, (3, 7, 5, 3)).astype(np.float32)
    x[0, 0, 0] = [0.5, 0.5, 0.5]
    x[0, 0, 1] = [0, 0, 0]
    x[0, 0, 2] = [1, 0, 0]
    x[0, 0, 3] = [0.2, 0.9, 0.9]
    x[0, 0, 4] = [0.3, 0.3, 0.8]
    x[1, 1, :] = np.round(x[1, 1, :] * 4) / 4  # ties between channels
    return x


def _same(ours, theirs, exact=True):
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if exact:
        np.testing.assert_array_equal(ours, theirs)
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("op", MY_OPS)
def test_signature_matches_tensorflow(op):
    assert_signature_matches_tensorflow(op)


def test_colorspace_conversions_equal_tensorflow():
    x = _pixels()
    hsv = tf.raw_ops.RGBToHSV(images=x).numpy()
    _same(run1("RGBToHSV", x), hsv)
    _same(run1("HSVToRGB", hsv), tf.raw_ops.HSVToRGB(images=hsv).numpy())
    x64 = x.astype(np.float64)
    _same(run1("RGBToHSV", x64), tf.raw_ops.RGBToHSV(images=tf.constant(x64)).numpy())


@pytest.mark.parametrize("delta", [0.0, 0.1, -0.35, 0.5, 0.99])
def test_adjust_hue_equals_tensorflow(delta):
    x = _pixels()
    _same(
        run1("AdjustHue", x, np.float32(delta)), tf.raw_ops.AdjustHue(images=x, delta=delta).numpy()
    )


@pytest.mark.parametrize("scale", [0.0, 0.5, 1.0, 1.7, 5.0])
def test_adjust_saturation_equals_tensorflow(scale):
    x = _pixels()
    theirs = tf.raw_ops.AdjustSaturation(images=x, scale=scale).numpy()
    _same(run1("AdjustSaturation", x, np.float32(scale)), theirs)


@pytest.mark.parametrize("factor", [0.0, 0.3, 1.0, 2.5])
def test_adjust_contrast_equals_tensorflow(factor):
    x = _pixels() * 255
    theirs = tf.raw_ops.AdjustContrastv2(images=x, contrast_factor=factor).numpy()
    # The per-channel mean is a float sum in another order: float32 rounding.
    _same(run1("AdjustContrastv2", x, np.float32(factor)), theirs, exact=False)


def test_adjust_errors_are_invalid_argument():
    with pytest.raises(InvalidArgumentError, match="3 channels"):
        run1("AdjustHue", np.zeros((2, 2, 4), np.float32), np.float32(0.1))
    with pytest.raises(InvalidArgumentError, match="scalar"):
        run1("AdjustSaturation", np.zeros((2, 2, 3), np.float32), np.float32([1, 2]))
