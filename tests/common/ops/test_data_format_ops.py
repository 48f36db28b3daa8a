"""Tests (ops stage): DataFormatVecPermute and DataFormatDimMap against TensorFlow (the
oracle): signatures, values for 4-D and 5-D formats, and the errors on bad input."""

from __future__ import annotations

import os

import numpy as np
import pytest

from common.errors import InvalidArgumentError
from tests.common.ops import run1
from tests.common.ops.kernel_harness import assert_same_as_tf
from tests.common.ops.signatures import assert_signature_matches_tensorflow

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

FORMATS = [
    ("NHWC", "NCHW"),
    ("NCHW", "NHWC"),
    ("NHWC", "NWHC"),
    ("NDHWC", "NCDHW"),
    ("NCDHW", "NDHWC"),
]


@pytest.mark.parametrize("name", ["DataFormatVecPermute", "DataFormatDimMap"])
def test_signature_matches_tensorflow(name: str) -> None:
    assert_signature_matches_tensorflow(name)


def test_vec_permute_nhwc_to_nchw() -> None:
    out = run1("DataFormatVecPermute", np.array([7, 4, 9, 3], np.int32))
    assert out.tolist() == [7, 3, 4, 9]


def test_dim_map_below_minus_rank_maps_to_the_last_axis() -> None:
    out = run1("DataFormatDimMap", np.array([-7, -5, -1, 0, 3, 4], np.int64))
    assert out.tolist() == [1, 1, 1, 0, 1, 0]
    assert out.dtype == np.int64


@pytest.mark.parametrize("src,dst", FORMATS)
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_vec_permute_matches_tensorflow(src: str, dst: str, dtype: type) -> None:
    pytest.importorskip("tensorflow")
    n = len(src)
    attrs = {"src_format": src, "dst_format": dst}
    for x in (
        np.arange(n) + 10,
        np.arange(n - 2) + 10,
        np.arange(2 * n).reshape(n, 2),
        np.arange(2 * n - 4).reshape(n - 2, 2),
    ):
        assert_same_as_tf("DataFormatVecPermute", {"x": x.astype(dtype)}, attrs)


@pytest.mark.parametrize("src,dst", FORMATS)
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_dim_map_matches_tensorflow(src: str, dst: str, dtype: type) -> None:
    pytest.importorskip("tensorflow")
    n = len(src)
    attrs = {"src_format": src, "dst_format": dst}
    x = np.arange(-2 * n, 2 * n, dtype=dtype)
    assert_same_as_tf("DataFormatDimMap", {"x": x}, attrs)
    assert_same_as_tf("DataFormatDimMap", {"x": x.reshape(2, -1)}, attrs)
    assert_same_as_tf("DataFormatDimMap", {"x": np.array(n - 1, dtype)}, attrs)


@pytest.mark.parametrize(
    "x,src,dst",
    [
        ([1, 2, 3], "NHWC", "NCHW"),
        ([[1, 2, 3]] * 4, "NHWC", "NCHW"),
        ([[1]] * 4, "NHWC", "NCHW"),
        ([[1, 2]] * 3, "NHWC", "NCHW"),
        (5, "NHWC", "NCHW"),
        ([[[1, 2]]] * 4, "NHWC", "NCHW"),
        ([1, 2, 3, 4], "NHWC", "NHWD"),
        ([1, 2, 3], "NHW", "NWH"),
        ([1, 2, 3, 4], "NHWC", "NCDHW"),
        ([1, 2, 3, 4, 5], "NHWC", "NCHW"),
    ],
)
def test_vec_permute_errors_match_tensorflow(x, src: str, dst: str) -> None:
    pytest.importorskip("tensorflow")
    attrs = {"src_format": src, "dst_format": dst}
    assert_same_as_tf("DataFormatVecPermute", {"x": np.array(x, np.int32)}, attrs)
    if len(src) not in (4, 5) or sorted(src) != sorted(dst):  # fails before x is read
        assert_same_as_tf("DataFormatDimMap", {"x": np.array(x, np.int32)}, attrs)


def test_bad_format_fails_at_kernel_construction() -> None:
    with pytest.raises(InvalidArgumentError, match="must determine a permutation"):
        run1("DataFormatDimMap", np.int32(0), src_format="NHWC", dst_format="NHWD")
