"""SparseTensor kernels beyond the basics (SparseReshape, SparseSlice, SparseSliceGrad,
SparseConcat, SparseSplit, SparseSoftmax, SparseSparseMaximum/Minimum, SparseAddGrad):
signatures, values and errors against TensorFlow's kernels."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import InvalidArgumentError

from .kernel_harness import assert_same_as_tf, run
from .signatures import assert_signature_matches_tensorflow, module_ops

OPS = module_ops(
    "common.ops.sparse_reshape_ops",
    "common.ops.sparse_concat_split_ops",
    "common.ops.sparse_math_ops",
)

IDX = np.array([[0, 1], [1, 0], [1, 3], [3, 2]], np.int64)
SHAPE = np.array([4, 5], np.int64)
VALS = np.array([1.5, -2.0, 3.25, 4.0], np.float32)
I64 = np.int64


def test_the_family_is_registered():
    assert (
        sorted(
            ["SparseAddGrad", "SparseConcat", "SparseReshape", "SparseSlice", "SparseSliceGrad"]
            + ["SparseSoftmax", "SparseSparseMaximum", "SparseSparseMinimum", "SparseSplit"]
        )
        == OPS
    )


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


@pytest.fixture(autouse=True)
def _tf():
    pytest.importorskip("tensorflow")


@pytest.mark.parametrize(
    "new_shape",
    [[-1, 2], [2, 10], [20], [4, 5], [2, -1, 5], [-1, 3], [-1, -1], [3, 7], [-2, 7], [-1, 0]],
)
def test_sparse_reshape(new_shape):
    inputs = {"input_indices": IDX, "input_shape": SHAPE, "new_shape": np.array(new_shape, I64)}
    assert_same_as_tf("SparseReshape", inputs)


@pytest.mark.parametrize(
    "indices, shape, new_shape",
    [
        (IDX, SHAPE[:1], [20]),
        (IDX, SHAPE, 20),
        (IDX[0], SHAPE, [20]),
        (np.zeros((0, 2), I64), [0, 5], [-1, 5]),
        (np.zeros((0, 2), I64), [0, 5], [5, 0]),
        (IDX, [0, 5], [5, 0]),
        (np.zeros((0, 3), I64), [2, 3, 4], [6, 4]),
    ],
)
def test_sparse_reshape_edges(indices, shape, new_shape):
    inputs = {
        "input_indices": np.asarray(indices, I64),
        "input_shape": np.asarray(shape, I64),
        "new_shape": np.asarray(new_shape, I64),
    }
    assert_same_as_tf("SparseReshape", inputs)


@pytest.mark.parametrize(
    "start, size",
    [
        ([0, 0], [4, 5]),
        ([1, 0], [2, 4]),
        ([1, -1], [2, 3]),
        ([5, 1], [2, 3]),
        ([1, 1], [9, 9]),
        ([1, 1], [-2, 3]),
        ([1], [2, 2]),
        ([1, 1], [2]),
        ([[1, 1]], [2, 2]),
    ],
)
@pytest.mark.parametrize("values", [VALS, np.array([b"a", b"b", b"c", b"d"], object)])
def test_sparse_slice(start, size, values):
    inputs = {
        "indices": IDX,
        "values": values,
        "shape": SHAPE,
        "start": np.array(start, I64),
        "size": np.array(size, I64),
    }
    assert_same_as_tf("SparseSlice", inputs)


@pytest.mark.parametrize(
    "indices, values, shape",
    [
        (IDX[:, 0], VALS, SHAPE),
        (IDX, VALS[:3], SHAPE),
        (IDX, VALS, SHAPE[:1]),
        (IDX, VALS[None], SHAPE),
    ],
)
def test_sparse_slice_bad_tensor(indices, values, shape):
    inputs = {"indices": indices, "values": values, "shape": shape,
              "start": np.zeros(2, I64), "size": np.ones(2, I64)}  # fmt: skip
    assert_same_as_tf("SparseSlice", inputs)


@pytest.mark.parametrize(
    "grad, start, out_indices",
    [
        ([1.0, 2.0, 3.0], [1, 0], [[0, 0], [0, 3], [2, 2]]),
        ([1.0, 2.0, 3.0], [1, 0], [[0, 0], [0, 4], [2, 2]]),
        ([1.0, 2.0], [1, 0], [[0, 0], [0, 3], [2, 2]]),
        ([1.0, 2.0, 3.0], [1], [[0, 0], [0, 3], [2, 2]]),
        ([], [0, 0], np.zeros((0, 2))),
        ([[1.0]], [0, 0], [[0, 1]]),
        ([1.0], [0, 0], [0, 1]),
        ([1.0], [0, 0], [[0, 1, 0]]),
    ],
)
def test_sparse_slice_grad(grad, start, out_indices):
    inputs = {
        "backprop_val_grad": np.array(grad, np.float64),
        "input_indices": IDX,
        "input_start": np.array(start, I64),
        "output_indices": np.array(out_indices, I64),
    }
    assert_same_as_tf("SparseSliceGrad", inputs)


def _three(a_idx, b_idx, a_shape=SHAPE, b_shape=SHAPE, dtype=np.float32):
    rng = np.random.default_rng(len(a_idx) * 7 + len(b_idx))
    return {
        "indices": [np.asarray(a_idx, I64), np.asarray(b_idx, I64)],
        "values": [
            (rng.standard_normal(len(a_idx)) * 5).astype(dtype),
            (rng.standard_normal(len(b_idx)) * 5).astype(dtype),
        ],
        "shapes": [np.asarray(a_shape, I64), np.asarray(b_shape, I64)],
    }


@pytest.mark.parametrize("concat_dim", [0, 1, -1, -2, 2, -3])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_sparse_concat(concat_dim, dtype):
    inputs = _three(IDX, IDX[::-1].copy(), SHAPE, [4 if concat_dim % 2 else 3, 5], dtype)
    inputs["shapes"][1][concat_dim % 2] = 3
    assert_same_as_tf("SparseConcat", inputs, {"concat_dim": concat_dim})


def test_sparse_concat_three_and_empty():
    inputs = _three(IDX, np.zeros((0, 2)), SHAPE, SHAPE)
    inputs["indices"].append(IDX[:2])
    inputs["values"].append(np.array([7.0, 8.0], np.float32))
    inputs["shapes"].append(SHAPE)
    assert_same_as_tf("SparseConcat", inputs, {"concat_dim": 1})


@pytest.mark.parametrize(
    "b_idx, b_shape",
    [(IDX, [5, 6]), (IDX[:, :1], [4]), (IDX[:, 0], SHAPE), (IDX, [[4, 5]])],
)
def test_sparse_concat_bad_inputs(b_idx, b_shape):
    assert_same_as_tf("SparseConcat", _three(IDX, b_idx, SHAPE, b_shape), {"concat_dim": 1})
    bad = _three(IDX, IDX, SHAPE, SHAPE)
    bad["values"][1] = bad["values"][1][:3]
    assert_same_as_tf("SparseConcat", bad, {"concat_dim": 1})


@pytest.mark.parametrize(
    "split_dim, num_split", [(0, 1), (0, 2), (0, 3), (1, 3), (1, 5), (-1, 2), (2, 3), (0, 5)]
)
def test_sparse_split(split_dim, num_split):
    inputs = {"split_dim": I64(split_dim), "indices": IDX[[2, 0, 3, 1]], "values": VALS,
              "shape": SHAPE}  # fmt: skip
    _assert_split_same_as_tf(inputs, num_split)


def _assert_split_same_as_tf(inputs: dict, num_split: int) -> None:
    """SparseSplit's outputs are three lists: compared piece by piece."""
    import tensorflow as tf

    try:
        want = tf.raw_ops.SparseSplit(**inputs, num_split=num_split)
    except tf.errors.InvalidArgumentError as e:
        with pytest.raises(InvalidArgumentError) as ours:
            run("SparseSplit", list(inputs.values()), {"num_split": num_split})
        assert str(ours.value) in e.message
        return
    got = run("SparseSplit", list(inputs.values()), {"num_split": num_split})
    flat = [*want.output_indices, *want.output_values, *want.output_shape]
    assert len(got) == len(flat) == 3 * num_split
    for g, w in zip(got, flat):
        assert g.dtype == w.dtype and g.shape == tuple(w.shape)
        np.testing.assert_array_equal(g, w.numpy())


@pytest.mark.parametrize(
    "indices, values, shape",
    [
        (IDX + 3, VALS, SHAPE),
        (IDX, VALS[:3], SHAPE),
        (IDX[:, 0], VALS, SHAPE),
        (IDX, VALS, SHAPE[:1]),
    ],
)
def test_sparse_split_bad_tensor(indices, values, shape):
    inputs = {"split_dim": I64(0), "indices": indices, "values": values, "shape": shape}
    _assert_split_same_as_tf(inputs, 2)


def _softmax_inputs(dtype, rank=2, unordered=False):
    rng = np.random.default_rng(rank)
    dims = [3, 4, 5][-rank:] if rank <= 3 else [2, 2, 3, 4]
    dense = rng.standard_normal(dims) * 3
    mask = rng.random(dims) < 0.6
    idx = np.argwhere(mask).astype(I64)
    if unordered:
        idx = idx[rng.permutation(len(idx))]
    vals = dense[tuple(idx.T)].astype(dtype)
    return {"sp_indices": idx, "sp_values": vals, "sp_shape": np.array(dims, I64)}


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("rank", [2, 3, 4])
@pytest.mark.parametrize("unordered", [False, True])
def test_sparse_softmax(dtype, rank, unordered):
    import tensorflow as tf

    inputs = _softmax_inputs(dtype, rank, unordered)
    want = tf.raw_ops.SparseSoftmax(**inputs).numpy()
    got = run("SparseSoftmax", list(inputs.values()))[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-14}[dtype]
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "indices, values, shape",
    [
        (IDX, VALS[:3], SHAPE),
        (IDX[:, :1], VALS, SHAPE[:1]),
        (IDX, VALS, SHAPE[:1]),
        (IDX[0], VALS, SHAPE),
        (IDX, VALS[None], SHAPE),
        (IDX + 4, VALS, SHAPE),
    ],
)
def test_sparse_softmax_errors(indices, values, shape):
    assert_same_as_tf("SparseSoftmax", {"sp_indices": indices, "sp_values": values,
                                        "sp_shape": shape})  # fmt: skip


def _pair(a_idx, b_idx, a_shape=SHAPE, b_shape=SHAPE, dtype=np.float32):
    rng = np.random.default_rng(len(a_idx) + 3 * len(b_idx))
    return {
        "a_indices": np.asarray(a_idx, I64),
        "a_values": (rng.standard_normal(len(a_idx)) * 5).astype(dtype),
        "a_shape": np.asarray(a_shape, I64),
        "b_indices": np.asarray(b_idx, I64),
        "b_values": (rng.standard_normal(len(b_idx)) * 5).astype(dtype),
        "b_shape": np.asarray(b_shape, I64),
    }


B_IDX = np.array([[0, 1], [0, 2], [3, 2], [3, 4]], I64)


@pytest.mark.parametrize("op", ["SparseSparseMaximum", "SparseSparseMinimum"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
def test_sparse_sparse_maximum_minimum(op, dtype):
    assert_same_as_tf(op, _pair(IDX, B_IDX, dtype=dtype))
    assert_same_as_tf(op, _pair(IDX, np.zeros((0, 2)), dtype=dtype))
    assert_same_as_tf(op, _pair(np.zeros((0, 2)), B_IDX, dtype=dtype))


@pytest.mark.parametrize(
    "change",
    [
        {"b_shape": [4, 6]},
        {"b_shape": [4, 5, 1], "b_indices": np.zeros((0, 3))},
        {"b_shape": [4]},
        {"a_indices": IDX + 5},
        {"a_indices": IDX[0]},
        {"b_values": np.ones((1, 4), np.float32)},
        {"a_shape": [[4, 5]]},
    ],
)
def test_sparse_sparse_maximum_errors(change):
    inputs = _pair(IDX, B_IDX)
    inputs.update({k: np.asarray(v, inputs[k].dtype) for k, v in change.items()})
    assert_same_as_tf("SparseSparseMaximum", inputs)


SUM_IDX = np.array([[0, 2], [1, 0], [1, 3], [3, 2], [3, 3]], I64)


@pytest.mark.parametrize(
    "a_idx, b_idx, sum_idx",
    [
        (IDX, B_IDX[:3], SUM_IDX),
        (IDX, B_IDX, np.array([[0, 1], [0, 2], [1, 0], [1, 3], [3, 2], [3, 4]])),
        (IDX, np.zeros((0, 2)), IDX),
        (np.zeros((0, 2)), B_IDX, B_IDX),
        (IDX, B_IDX, np.zeros((0, 2))),
    ],
)
def test_sparse_add_grad(a_idx, b_idx, sum_idx):
    n = len(sum_idx)
    inputs = {
        "backprop_val_grad": np.arange(1, n + 1, dtype=np.float64),
        "a_indices": np.asarray(a_idx, I64),
        "b_indices": np.asarray(b_idx, I64),
        "sum_indices": np.asarray(sum_idx, I64),
    }
    assert_same_as_tf("SparseAddGrad", inputs)


@pytest.mark.parametrize(
    "grad, a_idx",
    [
        (np.ones(4), IDX),
        (np.ones(5), IDX[0]),
        (np.ones(5), IDX[:, :1]),
        (np.ones((1, 5)), IDX),
    ],
)
def test_sparse_add_grad_errors(grad, a_idx):
    inputs = {"backprop_val_grad": grad, "a_indices": a_idx, "b_indices": B_IDX[:3],
              "sum_indices": SUM_IDX}  # fmt: skip
    assert_same_as_tf("SparseAddGrad", inputs)


def test_sparse_add_grad_matches_sparse_add_pairing():
    """The gradient of a real SparseAdd: a cancelled entry (3 + -3) gets no gradient."""
    import tensorflow as tf

    a_vals, b_vals = np.array([1.0, 3.0, 2.0, 5.0]), np.array([4.0, -3.0, 6.0, 1.0])
    b_idx = np.array([[0, 1], [1, 0], [3, 2], [3, 4]], I64)
    s = tf.raw_ops.SparseAdd(a_indices=IDX, a_values=a_vals, a_shape=SHAPE, b_indices=b_idx,
                             b_values=b_vals, b_shape=SHAPE, thresh=0.5)  # fmt: skip
    inputs = {"backprop_val_grad": np.arange(1.0, len(s.sum_values) + 1),
              "a_indices": IDX, "b_indices": b_idx, "sum_indices": s.sum_indices.numpy()}  # fmt: skip
    assert_same_as_tf("SparseAddGrad", inputs)
