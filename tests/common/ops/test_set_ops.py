"""tf.sets kernels (SetSize, DenseToDense/DenseToSparse/SparseToSparseSetOperation):
signatures, values and errors against TensorFlow's set_kernels."""

from __future__ import annotations

import numpy as np
import pytest

from .kernel_harness import assert_same_as_tf
from .signatures import assert_signature_matches_tensorflow, module_ops

OPS = module_ops("common.ops.set_ops")
I64 = np.int64
SET_OPS = ["a-b", "b-a", "intersection", "union", "UNION"]


def test_the_family_is_registered():
    assert (
        sorted(
            ["DenseToDenseSetOperation", "DenseToSparseSetOperation", "SetSize"]
            + ["SparseToSparseSetOperation"]
        )
        == OPS
    )


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


@pytest.fixture(autouse=True)
def _tf():
    pytest.importorskip("tensorflow")


def _dense(dtype, shape, seed):
    vals = np.random.default_rng(seed).integers(0, 6, shape)
    if dtype is object:
        return np.array([b"v%d" % v for v in vals.reshape(-1)], object).reshape(shape)
    return vals.astype(dtype)


def _sparse(dense: np.ndarray, seed: int, keep: float = 0.6):
    mask = np.random.default_rng(seed).random(dense.shape) < keep
    idx = np.argwhere(mask).astype(I64)
    return idx, dense[tuple(idx.T)], np.array(dense.shape, I64)


DTYPES = [np.int32, np.int64, np.int8, np.uint8, np.uint16, np.int16, object]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5)])
def test_set_size(dtype, shape):
    idx, vals, dims = _sparse(_dense(dtype, shape, 1), 2)
    assert_same_as_tf("SetSize", {"set_indices": idx, "set_values": vals, "set_shape": dims})


@pytest.mark.parametrize(
    "indices, shape, validate",
    [
        ([[0, 0], [2, 0], [0, 1], [2, 3]], [4, 5], True),
        ([[0, 0], [2, 0], [0, 1], [2, 3]], [4, 5], False),
        ([[0, 0], [0, 0], [0, 1], [2, 3]], [4, 5], True),
        ([[0, 0], [0, 1], [2, 0], [4, 3]], [4, 5], True),
        ([[0, 0], [0, 1], [2, 0], [2, 6]], [4, 5], False),
        ([[0], [1], [2], [3]], [4], True),
        ([[0, 0], [0, 1], [2, 0], [2, 3]], [[4, 5]], True),
        ([[0, 0, 0], [0, 1, 0], [2, 0, 0], [2, 3, 0]], [4, 5], True),
    ],
)
def test_set_size_errors(indices, shape, validate):
    inputs = {
        "set_indices": np.array(indices, I64),
        "set_values": np.array([5, 3, 3, 5], I64),
        "set_shape": np.array(shape, I64),
    }
    assert_same_as_tf("SetSize", inputs, {"validate_indices": validate})


@pytest.mark.parametrize("op", SET_OPS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 2)), ((2, 3, 4), (2, 3, 5)), ((2, 0), (2, 3))])
def test_dense_to_dense(op, dtype, shapes):
    a, b = _dense(dtype, shapes[0], 3), _dense(dtype, shapes[1], 4)
    assert_same_as_tf("DenseToDenseSetOperation", {"set1": a, "set2": b}, {"set_operation": op})


@pytest.mark.parametrize("op", SET_OPS)
@pytest.mark.parametrize("dtype", [np.int32, np.int64, object])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 2)), ((2, 3, 4), (2, 3, 5))])
def test_dense_to_sparse_and_sparse_to_sparse(op, dtype, shapes):
    a, b = _dense(dtype, shapes[0], 5), _dense(dtype, shapes[1], 6)
    i2, v2, s2 = _sparse(b, 7, keep=0.4)
    attrs = {"set_operation": op}
    inputs = {"set1": a, "set2_indices": i2, "set2_values": v2, "set2_shape": s2}
    assert_same_as_tf("DenseToSparseSetOperation", inputs, attrs)
    i1, v1, s1 = _sparse(a, 8, keep=0.4)
    inputs = {"set1_indices": i1, "set1_values": v1, "set1_shape": s1,
              "set2_indices": i2, "set2_values": v2, "set2_shape": s2}  # fmt: skip
    assert_same_as_tf("SparseToSparseSetOperation", inputs, attrs)


@pytest.mark.parametrize(
    "set1, set2, op",
    [
        (np.ones((2, 3), np.int32), np.ones((3, 3), np.int32), "union"),
        (np.ones((2, 3), np.int32), np.ones((1, 2, 3), np.int32), "union"),
        (np.ones(3, np.int32), np.ones(3, np.int32), "union"),
        (np.ones((2, 3), np.int32), np.ones((2, 3), np.int32), "xor"),
    ],
)
def test_dense_to_dense_errors(set1, set2, op):
    assert_same_as_tf(
        "DenseToDenseSetOperation", {"set1": set1, "set2": set2}, {"set_operation": op}
    )


@pytest.mark.parametrize(
    "indices, shape, validate",
    [
        ([[0, 1], [0, 0], [1, 2]], [2, 3], True),
        ([[0, 1], [0, 0], [1, 2]], [2, 3], False),
        ([[1, 1], [0, 0], [1, 2]], [2, 3], False),
        ([[0, 0], [0, 1], [1, 2]], [3, 3], True),
        ([[0, 0], [0, 1], [1, 5]], [2, 3], False),
    ],
)
def test_dense_to_sparse_unordered_and_invalid(indices, shape, validate):
    inputs = {
        "set1": np.array([[1, 2, 3], [4, 5, 6]], np.int64),
        "set2_indices": np.array(indices, I64),
        "set2_values": np.array([1, 7, 5], I64),
        "set2_shape": np.array(shape, I64),
    }
    attrs = {"set_operation": "a-b", "validate_indices": validate}
    assert_same_as_tf("DenseToSparseSetOperation", inputs, attrs)
    sparse = {"set1_indices": np.array([[0, 0], [1, 1]], I64), "set1_values":
              np.array([1, 5], I64), "set1_shape": np.array(shape, I64)}  # fmt: skip
    sparse.update({k: v for k, v in inputs.items() if k != "set1"})
    assert_same_as_tf("SparseToSparseSetOperation", sparse, attrs)
