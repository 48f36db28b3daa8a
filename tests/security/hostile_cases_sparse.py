"""Hostile cases (see hostile_cases) for SparseTensor feeds whose parts disagree: a
dense_shape of more than 2**63 - 1 elements, and one larger than memory, fed to the
kernels a sparse_placeholder usually reaches."""

from __future__ import annotations

from typing import Any

from .hostile_cases import NAME, Feed, case, f32, i32, i64

HUGE_SHAPE = i64(2**40, 2**40)  # 2**80 elements: no TensorShape holds it


@case("sparse", "SparseToDense shape past int64")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseToDense(
        sparse_indices=feed(i64([0, 0])),
        output_shape=feed(HUGE_SHAPE),
        sparse_values=feed(f32(1)),
        default_value=feed(f32(0)),
        name=NAME,
    )


@case("sparse", "SparseReduceSum shape past int64")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseReduceSum(
        input_indices=feed(i64([0, 0])),
        input_values=feed(f32(1)),
        input_shape=feed(HUGE_SHAPE),
        reduction_axes=feed(i32(0)),
        name=NAME,
    )


@case("sparse", "SparseReduceSum output larger than memory", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseReduceSum(
        input_indices=feed(i64([0, 0])),
        input_values=feed(f32(1)),
        input_shape=feed(i64(2, 2**36)),
        reduction_axes=feed(i32(0)),
        name=NAME,
    )


@case("sparse", "SparseReduceSum index past the shape")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.SparseReduceSum(
        input_indices=feed(i64([0, 0], [1, 9])),
        input_values=feed(f32(1, 2)),
        input_shape=feed(i64(2, 2)),
        reduction_axes=feed(i32(1)),
        name=NAME,
    )
