"""Tests (ops stage): MaxPoolWithArgmax and MaxPoolGradWithArgmax against TensorFlow (the
oracle): signatures, values and argmax indices bit for bit (ties, NaNs, SAME padding,
include_batch_in_index, int32 Targmax, dtypes), and the errors on bad input."""

from __future__ import annotations

import os

import ml_dtypes
import numpy as np
import pytest

from common.errors import InvalidArgumentError
from tests.common.ops.kernel_harness import assert_same_as_tf, run
from tests.common.ops.signatures import assert_signature_matches_tensorflow

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

GEOMETRIES = [
    ([1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
    ([1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
    ([1, 3, 2, 1], [1, 1, 2, 1], "SAME"),
    ([1, 2, 3, 1], [1, 3, 1, 1], "VALID"),
]


@pytest.mark.parametrize("name", ["MaxPoolWithArgmax", "MaxPoolGradWithArgmax"])
def test_signature_matches_tensorflow(name: str) -> None:
    assert_signature_matches_tensorflow(name)


def test_first_maximum_of_each_window() -> None:
    x = np.array([[1, 3], [3, 2]], np.float32).reshape(1, 2, 2, 1)
    out, arg = run(
        "MaxPoolWithArgmax",
        [x],
        {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"},
    )
    assert (out.ravel().tolist(), arg.ravel().tolist(), arg.dtype) == ([3.0], [1], np.int64)


@pytest.mark.parametrize(
    "dtype",
    [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int32, np.int64, np.uint8, np.int8],
)
@pytest.mark.parametrize("batch", [False, True])
def test_forward_and_grad_match_tensorflow(dtype: type, batch: bool) -> None:
    pytest.importorskip("tensorflow")
    rng = np.random.default_rng(5)
    x = rng.integers(0, 5, (2, 5, 6, 3)).astype(dtype)  # small range: many ties
    for ksize, strides, padding in GEOMETRIES:
        attrs = {"ksize": ksize, "strides": strides, "padding": padding}
        attrs["include_batch_in_index"] = batch
        for targ in (np.int64, np.int32):
            from common import dtypes

            full = {**attrs, "Targmax": dtypes.from_numpy(np.dtype(targ))}
            assert_same_as_tf("MaxPoolWithArgmax", {"input": x}, full)
        _, arg = run("MaxPoolWithArgmax", [x], attrs)
        grad = rng.integers(-3, 4, arg.shape).astype(dtype)
        inputs = {"input": x, "grad": grad, "argmax": arg}
        assert_same_as_tf("MaxPoolGradWithArgmax", inputs, attrs)


def test_nans_and_infinities_match_tensorflow() -> None:
    pytest.importorskip("tensorflow")
    x = np.array(
        [[np.nan, 1, 2, np.nan], [3, np.nan, -np.inf, -np.inf], [np.inf, 0, -np.inf, np.nan]],
        np.float32,
    ).reshape(1, 3, 4, 1)
    for ksize, strides, padding in GEOMETRIES:
        attrs = {"ksize": ksize, "strides": strides, "padding": padding}
        assert_same_as_tf("MaxPoolWithArgmax", {"input": x}, attrs)


def test_empty_batch_matches_tensorflow() -> None:
    pytest.importorskip("tensorflow")
    attrs = {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "SAME"}
    assert_same_as_tf("MaxPoolWithArgmax", {"input": np.zeros((0, 3, 3, 2), np.float32)}, attrs)


@pytest.mark.parametrize(
    "case", ["rank3", "batch_window", "depth_window", "ksize_len", "grad_shape"]
)
def test_bad_input_errors_match_tensorflow(case: str) -> None:
    pytest.importorskip("tensorflow")
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    attrs = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}
    if case == "grad_shape":
        arg = np.array([5, 7, 13, 15], np.int64).reshape(1, 2, 2, 1)
        grad = np.ones((1, 2, 1, 1), np.float32)
        inputs = {"input": x, "grad": grad, "argmax": arg}
        assert_same_as_tf("MaxPoolGradWithArgmax", inputs, attrs)
        return
    inputs = {"input": x}
    if case == "rank3":
        inputs = {"input": x[0]}
    elif case == "batch_window":
        attrs["ksize"] = [2, 2, 2, 1]
    elif case == "depth_window":
        attrs["ksize"] = [1, 2, 2, 2]
    else:
        attrs["ksize"] = [1, 2, 2, 1, 1]
    assert_same_as_tf("MaxPoolWithArgmax", inputs, attrs)


def test_out_of_range_argmax_is_invalid_argument() -> None:
    """TF's CPU kernel aborts the process here; we refuse the index instead."""
    x = np.zeros((1, 2, 2, 1), np.float32)
    arg = np.array([4], np.int64).reshape(1, 1, 1, 1)
    attrs = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}
    with pytest.raises(InvalidArgumentError, match="Invalid max pooling index"):
        run("MaxPoolGradWithArgmax", [x, np.ones((1, 1, 1, 1), np.float32), arg], attrs)
