"""Tests (ops stage): Bucketize and HistogramFixedWidth against TensorFlow (the oracle):
signatures, values and dtypes bit for bit, and the errors on bad input."""

from __future__ import annotations

import os

import numpy as np
import pytest

from common.errors import InvalidArgumentError
from tests.common.ops import run1
from tests.common.ops.kernel_harness import assert_same_as_tf
from tests.common.ops.signatures import assert_signature_matches_tensorflow

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

DTYPES = (np.int32, np.int64, np.float32, np.float64)


@pytest.mark.parametrize("name", ["Bucketize", "HistogramFixedWidth"])
def test_signature_matches_tensorflow(name: str) -> None:
    assert_signature_matches_tensorflow(name)


def test_bucketize_counts_boundaries_at_or_below() -> None:
    out = run1(
        "Bucketize", np.array([-5, 0, 10, 150, 1000], np.int32), boundaries=[0.0, 10.0, 100.0]
    )
    assert out.tolist() == [0, 1, 2, 3, 3]
    assert out.dtype == np.int32


def test_bucketize_unsorted_boundaries_are_rejected() -> None:
    with pytest.raises(InvalidArgumentError, match="Expected sorted boundaries"):
        run1("Bucketize", np.zeros(2, np.float32), boundaries=[2.0, 1.0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_bucketize_matches_tensorflow(dtype: type) -> None:
    pytest.importorskip("tensorflow")
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((3, 4, 5)) * 10).astype(dtype)
    # float32 boundaries against double inputs: 0.1f < 0.1 compares in double
    bounds = [-10.0, -0.1, 0.0, 0.1, 1.0, 2.5, 7.0, 7.0, 16777217.0]
    assert_same_as_tf("Bucketize", {"input": x}, {"boundaries": bounds})
    edge = np.array([0.1, 7, 16777216, 16777217, 2**31 - 1], np.float64).astype(dtype)
    assert_same_as_tf("Bucketize", {"input": edge}, {"boundaries": bounds})
    assert_same_as_tf("Bucketize", {"input": np.zeros((0, 3), dtype)}, {"boundaries": bounds})
    assert_same_as_tf("Bucketize", {"input": x}, {"boundaries": []})


def test_histogram_fixed_width_tf_docstring_example() -> None:
    values = np.array([-1.0, 0.0, 1.5, 2.0, 5.0, 15], np.float32)
    out = run1("HistogramFixedWidth", values, np.array([0.0, 5.0], np.float32), np.int32(5))
    assert out.tolist() == [2, 1, 1, 0, 2]
    assert out.dtype == np.int32


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("out", [np.int32, np.int64])
def test_histogram_fixed_width_matches_tensorflow(dtype: type, out: type) -> None:
    pytest.importorskip("tensorflow")
    from common import dtypes

    rng = np.random.default_rng(5)
    values = (rng.standard_normal((4, 25)) * 7).astype(dtype)
    for lo, hi, n in ((-10, 10, 7), (0, 3, 1), (-3, 9, 40)):
        assert_same_as_tf(
            "HistogramFixedWidth",
            {"values": values, "value_range": np.array([lo, hi], dtype), "nbins": np.int32(n)},
            {"dtype": dtypes.from_numpy(np.dtype(out))},
        )
    assert_same_as_tf(
        "HistogramFixedWidth",
        {
            "values": np.zeros(0, dtype),
            "value_range": np.array([0, 1], dtype),
            "nbins": np.int32(3),
        },
        {"dtype": dtypes.from_numpy(np.dtype(out))},
    )


@pytest.mark.parametrize(
    "value_range,nbins",
    [
        ([[0.0, 1.0]], 3),
        ([0.0, 1.0, 2.0], 3),
        ([0.0, 1.0], [3]),
        ([0.0, 1.0], 0),
        ([0.0, 1.0], -2),
        ([1.0, 1.0], 3),
        ([2.0, 1.0], 3),
    ],
)
def test_histogram_fixed_width_errors_match_tensorflow(value_range: list, nbins) -> None:
    pytest.importorskip("tensorflow")
    assert_same_as_tf(
        "HistogramFixedWidth",
        {
            "values": np.array([0.5, 1.5], np.float32),
            "value_range": np.array(value_range, np.float32),
            "nbins": np.array(nbins, np.int32),
        },
    )
