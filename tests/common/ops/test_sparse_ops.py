"""SparseTensor kernels (SparseToDense, SparseTensorDenseMatMul, SparseTensorDenseAdd,
SparseReorder, SparseAdd, SparseFillEmptyRows, SparseDenseCwise*, SparseReduceSum/Max):
signatures and values against TensorFlow's kernels, errors with TensorFlow's codes."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import InvalidArgumentError

from .kernel_harness import run
from .signatures import assert_signature_matches_tensorflow, module_ops

OPS = module_ops(
    "common.ops.sparse_ops", "common.ops.sparse_reduce_ops", "common.ops.sparse_to_dense_ops"
)

IDX = np.array([[0, 1], [1, 0], [1, 3], [3, 2]], np.int64)
SHAPE = np.array([4, 5], np.int64)


def test_the_family_is_registered():
    assert (
        sorted(
            ["SparseAdd", "SparseDenseCwiseAdd", "SparseDenseCwiseDiv", "SparseDenseCwiseMul"]
            + ["SparseFillEmptyRows", "SparseReduceMax", "SparseReduceSum", "SparseReorder"]
            + ["SparseTensorDenseAdd", "SparseTensorDenseMatMul", "SparseToDense"]
        )
        == OPS
    )


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


def _tf():
    return pytest.importorskip("tensorflow")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("tindices", [np.int32, np.int64])
def test_sparse_to_dense(dtype, tindices):
    tf = _tf()
    idx, shape = IDX.astype(tindices), SHAPE.astype(tindices)
    vals, default = np.array([1, 2, 3, 4], dtype), dtype(7)
    for v in (vals, dtype(5)):
        want = tf.raw_ops.SparseToDense(
            sparse_indices=idx, output_shape=shape, sparse_values=v, default_value=default
        ).numpy()
        got = run("SparseToDense", [idx, shape, v, default])[0]
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    # A vector of indices into a vector; a scalar index.
    want = tf.raw_ops.SparseToDense(
        sparse_indices=np.array([3, 0], tindices), output_shape=np.array([5], tindices),
        sparse_values=np.array([1, 2], dtype), default_value=dtype(0), validate_indices=False,
    ).numpy()  # fmt: skip
    got = run("SparseToDense", [np.array([3, 0], tindices), np.array([5], tindices),
                                np.array([1, 2], dtype), dtype(0)], {"validate_indices": False})  # fmt: skip
    np.testing.assert_array_equal(got[0], want)


@pytest.mark.parametrize(
    "indices, match",
    [
        ([[0, 1], [0, 1]], r"indices\[1\] = \[0,1\] is repeated"),
        ([[1, 0], [0, 1]], r"indices\[1\] = \[0,1\] is out of order"),
        ([[0, 1], [4, 0]], r"indices\[1\] = \[4,0\] is out of bounds: need 0 <= index < \[4,5\]"),
    ],
)
def test_sparse_to_dense_validates_indices_as_tensorflow(indices, match):
    tf = _tf()
    idx = np.array(indices, np.int64)
    args = [idx, SHAPE, np.array([1.0, 2.0], np.float32), np.float32(0)]
    with pytest.raises(tf.errors.InvalidArgumentError, match=match):
        tf.raw_ops.SparseToDense(
            sparse_indices=args[0], output_shape=args[1], sparse_values=args[2],
            default_value=args[3],
        )  # fmt: skip
    with pytest.raises(InvalidArgumentError, match=match):
        run("SparseToDense", args)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64])
@pytest.mark.parametrize("adjoint_a", [False, True])
@pytest.mark.parametrize("adjoint_b", [False, True])
def test_sparse_tensor_dense_matmul(dtype, adjoint_a, adjoint_b):
    tf = _tf()
    rng = np.random.default_rng(3)
    idx = np.array([[0, 0], [0, 2], [1, 1], [2, 0], [2, 2], [2, 2]], np.int64)
    vals = (rng.standard_normal(6) * 4).astype(dtype)
    if dtype == np.complex64:
        vals = vals + 1j * rng.standard_normal(6).astype(np.float32)
    b = (rng.standard_normal((3, 4)) * 4).astype(dtype)
    if adjoint_b:
        b = np.ascontiguousarray(b.T)
    shape = np.array([3, 3], np.int64)
    attrs = {"adjoint_a": adjoint_a, "adjoint_b": adjoint_b}
    want = tf.raw_ops.SparseTensorDenseMatMul(
        a_indices=idx, a_values=vals, a_shape=shape, b=b, **attrs
    ).numpy()
    got = run("SparseTensorDenseMatMul", [idx, vals, shape, b], attrs)[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_sparse_tensor_dense_matmul_bad_index_as_tensorflow():
    tf = _tf()
    idx, vals = np.array([[0, 7]], np.int64), np.array([1.0], np.float32)
    shape, b = np.array([2, 3], np.int64), np.ones((3, 2), np.float32)
    match = r"k \(7\) from index\[0,1\] out of bounds \(>=3\)"
    with pytest.raises(tf.errors.InvalidArgumentError, match=match):
        tf.raw_ops.SparseTensorDenseMatMul(a_indices=idx, a_values=vals, a_shape=shape, b=b)
    with pytest.raises(InvalidArgumentError, match=match):
        run("SparseTensorDenseMatMul", [idx, vals, shape, b])


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_sparse_tensor_dense_add(dtype):
    tf = _tf()
    b = np.arange(20, dtype=dtype).reshape(4, 5)
    vals = np.array([1, 2, 3, 4], dtype)
    want = tf.raw_ops.SparseTensorDenseAdd(a_indices=IDX, a_values=vals, a_shape=SHAPE, b=b)
    got = run("SparseTensorDenseAdd", [IDX, vals, SHAPE, b])[0]
    np.testing.assert_array_equal(got, want.numpy())


def test_sparse_reorder():
    tf = _tf()
    idx = np.array([[3, 2], [0, 1], [1, 3], [1, 0]], np.int64)
    vals = np.array([b"d", b"a", b"c", b"b"], object)
    want = tf.raw_ops.SparseReorder(input_indices=idx, input_values=vals, input_shape=SHAPE)
    got = run("SparseReorder", [idx, vals, SHAPE])
    np.testing.assert_array_equal(got[0], want.output_indices.numpy())
    assert list(got[1]) == list(want.output_values.numpy())
    empty = run("SparseReorder", [np.zeros((0, 2), np.int64), np.zeros(0, np.float32), SHAPE])
    assert empty[0].shape == (0, 2) and empty[1].shape == (0,)


@pytest.mark.parametrize("thresh", [0.0, 2.5])
def test_sparse_add(thresh):
    tf = _tf()
    a_idx, a_val = IDX, np.array([1.0, -2.0, 3.0, 4.0], np.float32)
    b_idx = np.array([[0, 0], [1, 0], [1, 3], [3, 4]], np.int64)
    b_val = np.array([5.0, 2.0, -1.0, 6.0], np.float32)
    args = [a_idx, a_val, SHAPE, b_idx, b_val, SHAPE, np.float32(thresh)]
    want = tf.raw_ops.SparseAdd(
        a_indices=a_idx, a_values=a_val, a_shape=SHAPE, b_indices=b_idx, b_values=b_val,
        b_shape=SHAPE, thresh=np.float32(thresh),
    )  # fmt: skip
    got = run("SparseAdd", args)
    for g, w in zip(got, want):
        assert g.dtype == w.numpy().dtype
        np.testing.assert_array_equal(g, w.numpy())


def test_sparse_fill_empty_rows():
    tf = _tf()
    idx = np.array([[3, 1], [1, 0], [1, 2], [3, 0]], np.int64)
    vals = np.array([10, 20, 30, 40], np.int32)
    shape = np.array([6, 4], np.int64)
    want = tf.raw_ops.SparseFillEmptyRows(
        indices=idx, values=vals, dense_shape=shape, default_value=np.int32(-1)
    )
    got = run("SparseFillEmptyRows", [idx, vals, shape, np.int32(-1)])
    for g, w in zip(got, want):
        assert g.dtype == w.numpy().dtype
        np.testing.assert_array_equal(g, w.numpy())


@pytest.mark.parametrize("op", ["Add", "Mul", "Div"])
@pytest.mark.parametrize("dense_shape", [(4, 5), (5,), (4, 1), ()])
def test_sparse_dense_cwise(op, dense_shape):
    tf = _tf()
    vals = np.array([1.5, -2.0, 3.0, 4.25], np.float32)
    dense = (np.arange(int(np.prod(dense_shape)), dtype=np.float32) + 1).reshape(dense_shape)
    want = getattr(tf.raw_ops, f"SparseDenseCwise{op}")(
        sp_indices=IDX, sp_values=vals, sp_shape=SHAPE, dense=dense
    ).numpy()
    got = run(f"SparseDenseCwise{op}", [IDX, vals, SHAPE, dense])[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", ["SparseReduceSum", "SparseReduceMax"])
@pytest.mark.parametrize("axes", [[0], [1], [-1], [0, 1], [1, 2]])
@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_sparse_reduce(op, axes, keep_dims, dtype):
    tf = _tf()
    idx = np.array([[0, 0, 1], [0, 2, 0], [1, 1, 1], [1, 1, 2], [2, 0, 0]], np.int64)
    vals = np.array([3, -1, 4, -5, 9], dtype)
    shape = np.array([3, 3, 3], np.int64)
    axes_arr = np.array(axes, np.int32)
    want = getattr(tf.raw_ops, op)(
        input_indices=idx, input_values=vals, input_shape=shape, reduction_axes=axes_arr,
        keep_dims=keep_dims,
    ).numpy()  # fmt: skip
    got = run(op, [idx, vals, shape, axes_arr], {"keep_dims": keep_dims})[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_sparse_reduce_bad_axis_as_tensorflow():
    tf = _tf()
    args = [IDX, np.ones(4, np.float32), SHAPE, np.array([2], np.int32)]
    match = "Invalid reduction dimension 2, for input with 2 dimensions."
    with pytest.raises(tf.errors.InvalidArgumentError, match=match):
        tf.raw_ops.SparseReduceSum(
            input_indices=args[0], input_values=args[1], input_shape=args[2],
            reduction_axes=args[3],
        )  # fmt: skip
    with pytest.raises(InvalidArgumentError, match=match):
        run("SparseReduceSum", args)
