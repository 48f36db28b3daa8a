"""Convolutions by pieces (conv_ops.conv2d_padded and the filter/input gradients built on
it) against TensorFlow's raw ops, at sizes where the work is cut into several pieces of
images or of rows and split over the compute pool: the bench CNN's layers, one large
image, strides and dilations, NCHW, and paddings past a window's extent."""

from __future__ import annotations

import numpy as np
import pytest

from common.ops import conv_ops

from . import run_kernel, run_tf

pytest.importorskip("tensorflow")


def _r(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _close(ours: np.ndarray, theirs: np.ndarray, terms: int) -> None:
    """Equal up to float32 rounding of sums of `terms` products, relative to the largest
    element (BLAS sums in another order than Eigen)."""
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    atol = 1e-6 * np.sqrt(terms) * max(np.abs(theirs).max(), 1.0)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=atol)


def _all_three(x: np.ndarray, f: np.ndarray, **attrs: object) -> None:
    (y,) = run_tf("Conv2D", [x, f], **attrs)
    (ours,) = run_kernel("Conv2D", [x, f], **attrs)
    _close(ours, y, f.shape[0] * f.shape[1] * f.shape[2])
    dy = _r(*y.shape, seed=2)
    bpi = [np.array(x.shape, np.int32), f, dy]
    _close(
        run_kernel("Conv2DBackpropInput", bpi, **attrs)[0],
        run_tf("Conv2DBackpropInput", bpi, **attrs)[0],
        f.shape[0] * f.shape[1] * f.shape[3],
    )
    bpf = [x, np.array(f.shape, np.int32), dy]
    _close(
        run_kernel("Conv2DBackpropFilter", bpf, **attrs)[0],
        run_tf("Conv2DBackpropFilter", bpf, **attrs)[0],
        y.shape[0] * y.shape[1] * y.shape[2],
    )


SAME1 = {"strides": [1, 1, 1, 1], "padding": "SAME"}


@pytest.mark.parametrize(
    "xs,fs",
    [((64, 28, 28, 1), (5, 5, 1, 32)), ((64, 14, 14, 32), (5, 5, 32, 64))],
    ids=["conv1", "conv2"],
)
def test_bench_cnn_layers(xs, fs):
    # Several pieces of whole images, split over the pool (more than PARALLEL_MACS).
    _all_three(_r(*xs), _r(*fs, seed=1), **SAME1)


def test_one_large_image_cut_into_rows():
    x, f = _r(1, 150, 120, 8), _r(3, 3, 8, 16, seed=1)
    assert conv_ops._pieces(1, 150, 120 * 3 * 3 * 8 * 4)[1:]  # several pieces of rows
    _all_three(x, f, **SAME1)


@pytest.mark.parametrize(
    "attrs",
    [
        {"strides": [1, 2, 2, 1], "padding": "SAME"},
        {"strides": [1, 1, 1, 1], "padding": "VALID", "dilations": [1, 2, 3, 1]},
        {"strides": [1, 1, 1, 1], "padding": "SAME", "dilations": [1, 2, 2, 1]},
        {"strides": [1, 3, 2, 1], "padding": "VALID"},
        # Pads past the window's extent: rows of the output see only padding.
        {
            "strides": [1, 1, 1, 1],
            "padding": "EXPLICIT",
            "explicit_paddings": [0, 0, 4, 1, 0, 5, 0, 0],
        },
    ],
    ids=["stride2-same", "dilated-valid", "dilated-same", "stride32-valid", "explicit-wide"],
)
def test_strides_dilations_paddings(attrs):
    _all_three(_r(16, 19, 17, 6), _r(3, 3, 6, 24, seed=1), **attrs)


def test_nchw_pieces():
    # TF's CPU Conv2D has no NCHW kernel: compare with its NHWC results, transposed.
    x, f = _r(8, 20, 20, 16), _r(5, 5, 16, 32, seed=1)
    (y,) = run_tf("Conv2D", [x, f], **SAME1)
    nchw = {"strides": [1, 1, 1, 1], "padding": "SAME", "data_format": "NCHW"}
    xt = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    (ours,) = run_kernel("Conv2D", [xt, f], **nchw)
    _close(ours, y.transpose(0, 3, 1, 2), 5 * 5 * 16)
    dy = _r(*y.shape, seed=2)
    dyt = np.ascontiguousarray(dy.transpose(0, 3, 1, 2))
    (dx,) = run_kernel("Conv2DBackpropInput", [np.array(xt.shape, np.int32), f, dyt], **nchw)
    (want,) = run_tf("Conv2DBackpropInput", [np.array(x.shape, np.int32), f, dy], **SAME1)
    _close(dx, want.transpose(0, 3, 1, 2), 5 * 5 * 32)
    (df,) = run_kernel("Conv2DBackpropFilter", [xt, np.array(f.shape, np.int32), dyt], **nchw)
    (want_f,) = run_tf("Conv2DBackpropFilter", [x, np.array(f.shape, np.int32), dy], **SAME1)
    _close(df, want_f, 8 * 20 * 20)


def test_float64_and_half():
    x, f = _r(8, 12, 12, 4), _r(3, 3, 4, 8, seed=1)
    for dtype in (np.float64, np.float16):
        xd, fd = x.astype(dtype), f.astype(dtype)
        (ours,) = run_kernel("Conv2D", [xd, fd], **SAME1)
        (theirs,) = run_tf("Conv2D", [xd, fd], **SAME1)
        assert ours.dtype == dtype
        tol = 1e-10 if dtype == np.float64 else 2e-2
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)
