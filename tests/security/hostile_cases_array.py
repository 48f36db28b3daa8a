"""Hostile cases (see hostile_cases): scatters and in-place updates, unique and
bincount, einsum, sparse extras and sets."""

from __future__ import annotations

from typing import Any

import numpy as np

from .hostile_cases import HUGE, NAME, Feed, case, f32, i32, i64


# -- scatters, in-place updates -------------------------------------------------------------
@case("scatter", "ScatterNd index out of range")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.ScatterNd(
        indices=feed(i32([7])), updates=feed(f32(1.0)), shape=feed(i32(4)), name=NAME
    )


@case("scatter", "ScatterNd negative index")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.ScatterNd(
        indices=feed(i32([-1])), updates=feed(f32(1.0)), shape=feed(i32(4)), name=NAME
    )


@case("scatter", "ScatterNd negative shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.ScatterNd(
        indices=feed(i32([0])), updates=feed(f32(1.0)), shape=feed(i32(-4)), name=NAME
    )


@case("scatter", "ScatterNd huge shape", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.ScatterNd(
        indices=feed(i64([0, 0])),
        updates=feed(f32(1.0)),
        shape=feed(i64(2**20, 2**20)),
        name=NAME,
    )


@case("scatter", "ScatterNd index deeper than the shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.ScatterNd(
        indices=feed(i32([0, 0, 0])), updates=feed(f32(1.0)), shape=feed(i32(4, 4)), name=NAME
    )


@case("scatter", "ScatterNd updates of the wrong shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.ScatterNd(
        indices=feed(i32([0], [1])),
        updates=feed(f32(1.0, 2.0, 3.0)),
        shape=feed(i32(4)),
        name=NAME,
    )


@case("scatter", "TensorScatterUpdate index out of range")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.TensorScatterUpdate(
        tensor=feed(f32(0, 0, 0)), indices=feed(i32([3])), updates=feed(f32(1.0)), name=NAME
    )


@case("scatter", "TensorScatterAdd into a scalar")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.TensorScatterAdd(
        tensor=feed(f32(0)[0]), indices=feed(i32([0])), updates=feed(f32(1.0)), name=NAME
    )


@case("scatter", "TensorScatterMax updates of the wrong shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.TensorScatterMax(
        tensor=feed(np.zeros((3, 2), np.float32)),
        indices=feed(i32([0])),
        updates=feed(f32(1.0, 2.0, 3.0)),
        name=NAME,
    )


@case("scatter", "InplaceUpdate row out of range")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.InplaceUpdate(
        x=feed(np.zeros((3, 2), np.float32)),
        i=feed(i32(5)),
        v=feed(np.ones((1, 2), np.float32)),
        name=NAME,
    )


@case("scatter", "InplaceAdd v of the wrong shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.InplaceAdd(
        x=feed(np.zeros((3, 2), np.float32)),
        i=feed(i32(0)),
        v=feed(np.ones((2, 2), np.float32)),
        name=NAME,
    )


@case("scatter", "InplaceSub negative row")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.InplaceSub(
        x=feed(np.zeros((3, 2), np.float32)),
        i=feed(i32(-1)),
        v=feed(np.ones((1, 2), np.float32)),
        name=NAME,
    )


# -- unique, bincount ----------------------------------------------------------------------
@case("counting", "UniqueV2 axis out of range")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.UniqueV2(x=feed(i32(1, 2, 1)), axis=feed(i64(3)), name=NAME)[0]


@case("counting", "UniqueV2 two axes")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.UniqueV2(x=feed(np.ones((2, 2), np.int32)), axis=feed(i64(0, 1)), name=NAME)[
        0
    ]


@case("counting", "UniqueWithCountsV2 of an empty tensor")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.UniqueWithCountsV2(
        x=feed(np.zeros((0,), np.int32)), axis=feed(np.zeros((0,), np.int64)), name=NAME
    )


@case("counting", "Bincount negative size")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Bincount(
        arr=feed(i32(1, 2)), size=feed(i32(-1)[0]), weights=feed(f32()), name=NAME
    )


@case("counting", "Bincount huge size", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Bincount(
        arr=feed(i32(1, 2)),
        size=feed(i32(HUGE)[0]),
        weights=feed(np.zeros((0,), np.float64)),
        name=NAME,
    )


@case("counting", "Bincount negative values")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Bincount(
        arr=feed(i32(1, -2)), size=feed(i32(4)[0]), weights=feed(f32()), name=NAME
    )


@case("counting", "Bincount weights of another length")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Bincount(
        arr=feed(i32(1, 2)), size=feed(i32(4)[0]), weights=feed(f32(1, 2, 3)), name=NAME
    )


@case("counting", "DenseBincount rank-3 input")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.DenseBincount(
        input=feed(np.ones((1, 1, 2), np.int32)),
        size=feed(i32(4)[0]),
        weights=feed(f32()),
        name=NAME,
    )


@case("counting", "DenseBincount huge size over rows", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.DenseBincount(
        input=feed(np.ones((64, 2), np.int32)),
        size=feed(i32(2**27)[0]),
        weights=feed(np.zeros((0,), np.float64)),
        name=NAME,
    )


# -- einsum ---------------------------------------------------------------------------------
@case("einsum", "dimension mismatch")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Einsum(
        inputs=[feed(np.ones((2, 3), np.float32)), feed(np.ones((4, 2), np.float32))],
        equation="ij,jk->ik",
        name=NAME,
    )


@case("einsum", "label of another rank")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Einsum(
        inputs=[feed(np.ones((2, 3, 4), np.float32))], equation="ij->ji", name=NAME
    )


@case("einsum", "malformed equation")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Einsum(
        inputs=[feed(np.ones((2, 3), np.float32))], equation="i$j->", name=NAME
    )


@case("einsum", "empty operand")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Einsum(
        inputs=[feed(np.ones((0, 3), np.float32)), feed(np.ones((3, 2), np.float32))],
        equation="ij,jk->ik",
        name=NAME,
    )


# -- sparse extras, sets --------------------------------------------------------------------
@case("sparse", "fill empty rows index past the dense shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseFillEmptyRows(
        indices=feed(i64([9, 0])),
        values=feed(f32(1.0)),
        dense_shape=feed(i64(2, 2)),
        default_value=feed(f32(0.0)[0]),
        name=NAME,
    )


@case("sparse", "fill empty rows of empty dense shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseFillEmptyRows(
        indices=feed(np.zeros((0, 2), np.int64)),
        values=feed(f32()),
        dense_shape=feed(np.zeros((0,), np.int64)),
        default_value=feed(f32(0.0)[0]),
        name=NAME,
    )


@case("sparse", "reduce sum axis out of range")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseReduceSum(
        input_indices=feed(i64([0, 0])),
        input_values=feed(f32(1.0)),
        input_shape=feed(i64(2, 2)),
        reduction_axes=feed(i32(5)),
        name=NAME,
    )


@case("sparse", "add of different dense shapes")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseAdd(
        a_indices=feed(i64([0, 0])),
        a_values=feed(f32(1.0)),
        a_shape=feed(i64(2, 2)),
        b_indices=feed(i64([0, 0])),
        b_values=feed(f32(1.0)),
        b_shape=feed(i64(3, 2)),
        thresh=feed(f32(0.0)[0]),
        name=NAME,
    )[1]


@case("sparse", "reshape to a negative size")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseReshape(
        input_indices=feed(i64([0, 0])),
        input_shape=feed(i64(2, 2)),
        new_shape=feed(i64(-1, -1)),
        name=NAME,
    )[1]


@case("sparse", "slice with a negative size")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseSlice(
        indices=feed(i64([0, 0])),
        values=feed(f32(1.0)),
        shape=feed(i64(2, 2)),
        start=feed(i64(0, 0)),
        size=feed(i64(-1, 2)),
        name=NAME,
    )[1]


@case("sparse", "dense matmul index out of range")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseTensorDenseMatMul(
        a_indices=feed(i64([0, 7])),
        a_values=feed(f32(1.0)),
        a_shape=feed(i64(2, 2)),
        b=feed(np.ones((2, 2), np.float32)),
        name=NAME,
    )


@case("sparse", "split into more pieces than the dimension")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseSplit(
        split_dim=feed(i64(0)[0]),
        indices=feed(i64([0, 0])),
        values=feed(f32(1.0)),
        shape=feed(i64(2, 2)),
        num_split=4,
        name=NAME,
    )[1]


@case("sparse", "split dim out of range")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseSplit(
        split_dim=feed(i64(5)[0]),
        indices=feed(i64([0, 0])),
        values=feed(f32(1.0)),
        shape=feed(i64(2, 2)),
        num_split=2,
        name=NAME,
    )[1]


@case("sets", "set size of rank-1 indices")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SetSize(
        set_indices=feed(i64(0, 1)),
        set_values=feed(i32(1, 2)),
        set_shape=feed(i64(2)),
        name=NAME,
    )


@case("sets", "set size index past the shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SetSize(
        set_indices=feed(i64([0, 0], [5, 0])),
        set_values=feed(i32(1, 2)),
        set_shape=feed(i64(2, 2)),
        name=NAME,
    )


@case("sets", "dense sets of different ranks")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.DenseToDenseSetOperation(
        set1=feed(np.ones((2, 2), np.int32)),
        set2=feed(np.ones((2, 2, 2), np.int32)),
        set_operation="union",
        name=NAME,
    )[1]


@case("sets", "unknown set operation")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.DenseToDenseSetOperation(
        set1=feed(np.ones((2, 2), np.int32)),
        set2=feed(np.ones((2, 2), np.int32)),
        set_operation="xor",
        name=NAME,
    )[1]


@case("sets", "rank-1 dense sets")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.DenseToDenseSetOperation(
        set1=feed(i32(1, 2)), set2=feed(i32(2, 3)), set_operation="union", name=NAME
    )[1]


@case("sets", "sparse set with unsorted indices")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.DenseToSparseSetOperation(
        set1=feed(np.ones((2, 2), np.int32)),
        set2_indices=feed(i64([1, 0], [0, 0])),
        set2_values=feed(i32(1, 2)),
        set2_shape=feed(i64(2, 2)),
        set_operation="union",
        name=NAME,
    )[1]
