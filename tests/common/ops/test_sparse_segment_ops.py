"""SparseSegmentSum/Mean/SqrtN (and WithNumSegments) and their dense and sparse (GradV2)
gradients (sparse_segment_ops): signatures against TensorFlow's, TensorFlow's raw ops as
the oracle, and its errors for bad indices."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import InvalidArgumentError

from . import compare_with_tf, run_kernel
from .signatures import assert_signature_matches_tensorflow, module_ops

MY_OPS = module_ops("common.ops.sparse_segment_ops")
f32, f64, i32, i64 = np.float32, np.float64, np.int32, np.int64
DATA = np.random.default_rng(0).standard_normal((5, 3)).astype(f32)
INDICES = np.array([1, 3, 0, 1, 4, 4], i32)
SEGMENTS = np.array([0, 0, 1, 3, 3, 3], i32)  # segment 2 empty
KINDS = ["Sum", "Mean", "SqrtN"]


def test_registered_the_whole_family():
    assert len(MY_OPS) == 12


@pytest.mark.parametrize("name", MY_OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [f32, f64])
def test_oracle_reductions(kind, dtype):
    pytest.importorskip("tensorflow")
    data = DATA.astype(dtype)
    compare_with_tf(f"SparseSegment{kind}", [data, INDICES, SEGMENTS])
    compare_with_tf(
        f"SparseSegment{kind}WithNumSegments", [data, INDICES.astype(i64), SEGMENTS, np.int32(6)]
    )


def test_oracle_integer_sum():
    pytest.importorskip("tensorflow")
    compare_with_tf("SparseSegmentSum", [np.arange(15, dtype=i64).reshape(5, 3), INDICES, SEGMENTS])


@pytest.mark.parametrize("kind", KINDS)
def test_oracle_gradients_dense_and_sparse(kind):
    pytest.importorskip("tensorflow")
    grad = np.random.default_rng(1).standard_normal((4, 3)).astype(f32)
    compare_with_tf(f"SparseSegment{kind}Grad", [grad, INDICES, SEGMENTS, np.int32(5)])
    compare_with_tf(f"SparseSegment{kind}GradV2", [grad, INDICES, SEGMENTS, np.int32(5)])


def test_bad_index_and_unsorted_segments_are_invalid_argument():
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] == 7 out of range \[0, 5\)"):
        run_kernel("SparseSegmentSum", [DATA, np.array([0, 7], i32), np.array([0, 0], i32)])
    with pytest.raises(InvalidArgumentError, match="segment ids are not increasing"):
        run_kernel("SparseSegmentMean", [DATA, np.array([0, 1], i32), np.array([1, 0], i32)])
