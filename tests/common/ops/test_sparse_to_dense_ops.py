"""Tests (ops stage): SparseToDense — its signature, results and error messages, each
against TensorFlow's kernel run eagerly."""

from __future__ import annotations

import numpy as np
import pytest

import common.ops  # noqa: F401  (registers every op)
from common.errors import InvalidArgumentError
from tests.common.ops.kernel_harness import op_def_mismatches, run

tf = pytest.importorskip("tensorflow")

M = [[0, 1], [2, 3]]
CASES = {
    "matrix": (M, [3, 4], [1.0, 2.0], 0.0, True),
    "scalar_value": (M, [3, 4], 5.0, -1.0, False),
    "vector": ([1, 3], [5], [1.0, 2.0], 0.0, True),
    "scalar_index": (2, [5], [1.0], 0.0, True),
    "unsorted_unvalidated": ([[2, 3], [0, 1]], [3, 4], [1.0, 2.0], 0.0, False),
    "unsorted": ([[2, 3], [0, 1]], [3, 4], [1.0, 2.0], 0.0, True),
    "repeated": ([[0, 1], [0, 1]], [3, 4], [1.0, 2.0], 0.0, True),
    "out_of_bounds": ([[0, 1], [3, 1]], [3, 4], [1.0, 2.0], 0.0, True),
    "out_of_bounds_unvalidated": ([[0, -1]], [3, 4], [1.0], 0.0, False),
    "values_shape": (M, [3, 4], [1.0, 2.0, 3.0], 0.0, True),
    "shape_size": (M, [3, 4, 5], [1.0, 2.0], 0.0, True),
    "default_not_scalar": (M, [3, 4], [1.0, 2.0], [0.0], True),
    "indices_rank": ([[[0, 1]]], [3, 4], [1.0, 2.0], 0.0, True),
    "shape_rank": (M, [[3, 4]], [1.0, 2.0], 0.0, True),
}


def test_op_def_matches_tensorflow():
    assert op_def_mismatches("SparseToDense") == []


@pytest.mark.parametrize("case", CASES)
def test_sparse_to_dense_matches_tensorflow(case):
    indices, shape, values, default, validate = CASES[case]
    inputs = [
        np.array(indices, np.int32),
        np.array(shape, np.int32),
        np.array(values, np.float32),
        np.array(default, np.float32),
    ]
    try:
        expected = tf.raw_ops.SparseToDense(
            sparse_indices=inputs[0],
            output_shape=inputs[1],
            sparse_values=inputs[2],
            default_value=inputs[3],
            validate_indices=validate,
        ).numpy()
    except tf.errors.InvalidArgumentError as e:
        # Eager messages end with " [Op:SparseToDense]" after the kernel's own text.
        message = e.message.split("}} ", 1)[-1].rsplit(" [Op:", 1)[0]
        with pytest.raises(InvalidArgumentError) as ours:
            run("SparseToDense", inputs, {"validate_indices": validate})
        assert str(ours.value) == message
        return
    got = run("SparseToDense", inputs, {"validate_indices": validate})[0]
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.float32
