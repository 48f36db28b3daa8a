"""Tests (ops stage): ExtractImagePatches, ExtractVolumePatches, Dilation2D and its two
gradients, and LRNGrad against TensorFlow (the oracle): OpDefs, values (bit for bit for
patches and dilations, float tolerance for LRNGrad) and the errors of bad input."""

from __future__ import annotations

import os

import ml_dtypes
import numpy as np
import pytest

from tests.common.ops import compare_with_tf
from tests.common.ops.kernel_harness import assert_same_as_tf
from tests.common.ops.signatures import assert_signature_matches_tensorflow

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

OPS = [
    "ExtractImagePatches",
    "ExtractVolumePatches",
    "Dilation2D",
    "Dilation2DBackpropInput",
    "Dilation2DBackpropFilter",
    "LRNGrad",
]


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name: str) -> None:
    assert_signature_matches_tensorflow(name)


def _ints(shape: tuple, dtype: type, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 9, shape).astype(dtype)


IMAGE_GEOMETRIES = [
    ([1, 2, 3, 1], [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
    ([1, 2, 2, 1], [1, 2, 3, 1], [1, 1, 1, 1], "VALID"),
    ([1, 3, 2, 1], [1, 2, 2, 1], [1, 2, 3, 1], "SAME"),
    ([1, 2, 2, 1], [1, 3, 1, 1], [1, 2, 1, 1], "VALID"),
    ([1, 1, 1, 1], [1, 4, 5, 1], [1, 1, 1, 1], "SAME"),
    ([1, 4, 3, 1], [1, 5, 5, 1], [1, 1, 1, 1], "SAME"),
]


@pytest.mark.parametrize("ksizes,strides,rates,padding", IMAGE_GEOMETRIES)
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8, np.complex64])
def test_extract_image_patches_match_tensorflow(ksizes, strides, rates, padding, dtype) -> None:
    pytest.importorskip("tensorflow")
    x = _ints((2, 5, 7, 3), dtype)
    attrs = {"ksizes": ksizes, "strides": strides, "rates": rates, "padding": padding}
    assert_same_as_tf("ExtractImagePatches", {"images": x}, attrs)


@pytest.mark.parametrize(
    "ksizes,strides,padding",
    [
        ([1, 1, 2, 3, 1], [1, 1, 1, 1, 1], "SAME"),
        ([1, 2, 2, 2, 1], [1, 2, 1, 3, 1], "VALID"),
        ([1, 3, 2, 1, 1], [1, 1, 2, 2, 1], "SAME"),
        ([1, 5, 2, 2, 1], [1, 1, 1, 1, 1], "VALID"),
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.int32, ml_dtypes.bfloat16])
def test_extract_volume_patches_match_tensorflow(ksizes, strides, padding, dtype) -> None:
    pytest.importorskip("tensorflow")
    x = _ints((2, 4, 5, 6, 2), dtype)
    attrs = {"ksizes": ksizes, "strides": strides, "padding": padding}
    assert_same_as_tf("ExtractVolumePatches", {"input": x}, attrs)


@pytest.mark.parametrize(
    "case",
    ["batch_ksize", "depth_ksize", "stride", "rate", "rank", "too_big", "zero_ksize", "empty"],
)
def test_extract_image_patches_errors_match_tensorflow(case: str) -> None:
    pytest.importorskip("tensorflow")
    x = _ints((2, 5, 7, 3), np.float32)
    attrs = {"ksizes": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "rates": [1, 1, 1, 1]}
    attrs["padding"] = "VALID"
    if case == "batch_ksize":
        attrs["ksizes"] = [2, 2, 2, 1]
    elif case == "depth_ksize":
        attrs["ksizes"] = [1, 2, 2, 2]
    elif case == "stride":
        attrs["strides"] = [2, 1, 1, 1]
    elif case == "rate":
        attrs["rates"] = [1, 1, 1, 2]
    elif case == "rank":
        x = x[0]
    elif case == "too_big":
        attrs["ksizes"] = [1, 6, 2, 1]
    elif case == "zero_ksize":
        attrs["ksizes"] = [1, 0, 2, 1]
    else:
        x = x[:0]
    assert_same_as_tf("ExtractImagePatches", {"images": x}, attrs)


@pytest.mark.parametrize("case", ["ksize", "stride", "rank"])
def test_extract_volume_patches_errors_match_tensorflow(case: str) -> None:
    pytest.importorskip("tensorflow")
    x = _ints((1, 3, 4, 5, 2), np.float32)
    attrs = {"ksizes": [1, 2, 2, 2, 1], "strides": [1, 1, 1, 1, 1], "padding": "SAME"}
    if case == "ksize":
        attrs["ksizes"] = [1, 2, 2, 2, 2]
    elif case == "stride":
        attrs["strides"] = [2, 1, 1, 1, 1]
    else:
        x = x[0]
    assert_same_as_tf("ExtractVolumePatches", {"input": x}, attrs)


DILATION_GEOMETRIES = [
    ([1, 1, 1, 1], [1, 1, 1, 1], "SAME", (3, 2)),
    ([1, 2, 1, 1], [1, 1, 2, 1], "VALID", (2, 3)),
    ([1, 2, 3, 1], [1, 2, 2, 1], "SAME", (2, 2)),
    ([1, 1, 2, 1], [1, 3, 1, 1], "SAME", (1, 3)),
]


@pytest.mark.parametrize("strides,rates,padding,fsize", DILATION_GEOMETRIES)
@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int32, np.uint8]
)
def test_dilation_and_gradients_match_tensorflow(strides, rates, padding, fsize, dtype) -> None:
    pytest.importorskip("tensorflow")
    x = _ints((2, 6, 7, 3), dtype, 1)  # small range: many ties
    f = _ints((*fsize, 3), dtype, 2)
    attrs = {"strides": strides, "rates": rates, "padding": padding}
    assert_same_as_tf("Dilation2D", {"input": x, "filter": f}, attrs)
    import tensorflow as tf

    y = tf.raw_ops.Dilation2D(input=x, filter=f, **attrs).numpy()
    g = _ints(y.shape, dtype, 3)
    inputs = {"input": x, "filter": f, "out_backprop": g}
    assert_same_as_tf("Dilation2DBackpropInput", inputs, attrs)
    assert_same_as_tf("Dilation2DBackpropFilter", inputs, attrs)


def test_dilation_of_infinities_matches_tensorflow() -> None:
    pytest.importorskip("tensorflow")
    x = np.full((1, 3, 3, 1), -np.inf, np.float32)
    x[0, 1, 1, 0] = 2.0
    f = np.zeros((2, 2, 1), np.float32)
    attrs = {"strides": [1, 1, 1, 1], "rates": [1, 1, 1, 1], "padding": "SAME"}
    assert_same_as_tf("Dilation2D", {"input": x, "filter": f}, attrs)
    g = np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1)
    assert_same_as_tf(
        "Dilation2DBackpropInput", {"input": x, "filter": f, "out_backprop": g}, attrs
    )
    assert_same_as_tf(
        "Dilation2DBackpropFilter", {"input": x, "filter": f, "out_backprop": g}, attrs
    )


@pytest.mark.parametrize(
    "case", ["stride", "rate", "rank", "filter_rank", "depth", "too_big", "backprop_shape"]
)
def test_dilation_errors_match_tensorflow(case: str) -> None:
    pytest.importorskip("tensorflow")
    x, f = _ints((2, 5, 5, 2), np.float32), _ints((2, 2, 2), np.float32)
    attrs = {"strides": [1, 1, 1, 1], "rates": [1, 1, 1, 1], "padding": "VALID"}
    op, inputs = "Dilation2D", {"input": x, "filter": f}
    if case == "stride":
        attrs["strides"] = [1, 1, 1, 2]
    elif case == "rate":
        attrs["rates"] = [2, 1, 1, 1]
    elif case == "rank":
        inputs["input"] = x[0]
    elif case == "filter_rank":
        inputs["filter"] = f[0]
    elif case == "depth":
        inputs["filter"] = _ints((2, 2, 3), np.float32)
    elif case == "too_big":
        inputs["filter"] = _ints((6, 2, 2), np.float32)
    else:
        op = "Dilation2DBackpropFilter"
        inputs["out_backprop"] = _ints((2, 5, 5, 2), np.float32)
    assert_same_as_tf(op, inputs, attrs)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])  # no bfloat16 LRN on TF CPU
@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"depth_radius": 2, "bias": 2.0, "alpha": 0.3, "beta": 0.75},
        {"depth_radius": 0, "bias": 1.5, "alpha": 1e-3, "beta": 1.0},
        {"depth_radius": 7, "bias": 0.5, "alpha": 2.0, "beta": 0.25},
    ],
)
def test_lrn_grad_matches_tensorflow(dtype: type, attrs: dict) -> None:
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 4, 9)).astype(dtype)
    y = tf.raw_ops.LRN(input=tf.constant(x), **attrs).numpy().astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    compare_with_tf("LRNGrad", [g, x, y], **attrs)


@pytest.mark.parametrize("case", ["rank", "shapes", "radius"])
def test_lrn_grad_errors_match_tensorflow(case: str) -> None:
    pytest.importorskip("tensorflow")
    x = np.ones((1, 2, 2, 3), np.float32)
    inputs = {"input_grads": x, "input_image": x, "output_image": x}
    attrs: dict = {}
    if case == "rank":
        inputs = {k: v[0] for k, v in inputs.items()}
    elif case == "shapes":
        inputs["output_image"] = np.ones((1, 2, 2, 4), np.float32)
    else:
        attrs["depth_radius"] = -1
    assert_same_as_tf("LRNGrad", inputs, attrs)


@pytest.mark.parametrize(
    "start,size",
    [([1, 0], [3, 5]), ([4, 4], [9, 9]), ([6, 0], [2, 2]), ([0, 0], [0, 5]), ([0, 1], [5, 3])],
)
def test_sparse_slice_matches_tensorflow(start, size) -> None:
    """SparseSlice, used by ExtractVolumePatches' gradient."""
    pytest.importorskip("tensorflow")
    idx = np.array([[0, 0], [1, 2], [3, 1], [4, 4], [2, 3]], np.int64)
    inputs = {
        "indices": idx,
        "values": np.arange(5, dtype=np.float32),
        "shape": np.array([5, 5], np.int64),
        "start": np.array(start, np.int64),
        "size": np.array(size, np.int64),
    }
    assert_same_as_tf("SparseSlice", inputs)


@pytest.mark.parametrize("case", ["start_len", "values_len", "indices_rank", "negative_size"])
def test_sparse_slice_errors_match_tensorflow(case: str) -> None:
    pytest.importorskip("tensorflow")
    inputs = {
        "indices": np.array([[0, 0], [1, 2]], np.int64),
        "values": np.ones(2, np.int32),
        "shape": np.array([3, 3], np.int64),
        "start": np.array([0, 0], np.int64),
        "size": np.array([2, 2], np.int64),
    }
    if case == "start_len":
        inputs["start"] = np.array([0], np.int64)
    elif case == "values_len":
        inputs["values"] = np.ones(3, np.int32)
    elif case == "indices_rank":
        inputs["indices"] = np.array([0, 1], np.int64)
    else:
        inputs["size"] = np.array([-3, 2], np.int64)
    assert_same_as_tf("SparseSlice", inputs)


def test_sparse_slice_signature_matches_tensorflow() -> None:
    assert_signature_matches_tensorflow("SparseSlice")
