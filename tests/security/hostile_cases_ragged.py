"""Hostile cases (see hostile_cases) for last round's ragged kernels (RaggedRange,
RaggedGather) and for Einsum equations TensorFlow reads otherwise than numpy: labels that
are not letters, spaces, a label of size 1 against a larger one, an ellipsis the output
drops (equations TensorFlow's client refuses to build are in test_hostile_node_defs).
Sizes a kernel would allocate whole are tf_unsafe."""

from __future__ import annotations

from typing import Any

import numpy as np

from .hostile_cases import NAME, Feed, case, f32, i64


def _gather(tf: Any, feed: Feed, splits: list, values: Any, indices: Any, rank: int) -> Any:
    return tf.raw_ops.RaggedGather(
        params_nested_splits=[feed(s) for s in splits],
        params_dense_values=feed(values),
        indices=feed(indices),
        OUTPUT_RAGGED_RANK=rank,
        name=NAME,
    )


def _range(tf: Any, feed: Feed, starts: Any, limits: Any, deltas: Any) -> Any:
    return tf.raw_ops.RaggedRange(
        starts=feed(starts), limits=feed(limits), deltas=feed(deltas), name=NAME
    )


def _einsum(tf: Any, feed: Feed, equation: str, *operands: Any) -> Any:
    return tf.raw_ops.Einsum(inputs=[feed(x) for x in operands], equation=equation, name=NAME)


def ones(*shape: int) -> np.ndarray:
    return np.ones(shape, np.float32)


# -- RaggedGather ----------------------------------------------------------------------------
@case("ragged", "RaggedGather indices with a dimension of 0")
def _(tf: Any, feed: Feed) -> Any:
    return _gather(tf, feed, [i64(0, 1, 2)], f32(1, 2), np.zeros((3, 0), np.int64), 2)


@case("ragged", "RaggedGather indices of shape (2, 0, 2)")
def _(tf: Any, feed: Feed) -> Any:
    return _gather(tf, feed, [i64(0, 1, 2)], f32(1, 2), np.zeros((2, 0, 2), np.int64), 3)


@case("ragged", "RaggedGather negative index")
def _(tf: Any, feed: Feed) -> Any:
    return _gather(tf, feed, [i64(0, 1, 2)], f32(1, 2), i64(-1), 0)


@case("ragged", "RaggedGather index past the rows")
def _(tf: Any, feed: Feed) -> Any:
    return _gather(tf, feed, [i64(0, 1, 2)], f32(1, 2), i64(0, 2), 1)


@case("ragged", "RaggedGather splits past the values")
def _(tf: Any, feed: Feed) -> Any:
    return _gather(tf, feed, [i64(0, 1, 9)], f32(1, 2), i64(1), 1)


@case("ragged", "RaggedGather unsorted splits")
def _(tf: Any, feed: Feed) -> Any:
    return _gather(tf, feed, [i64(0, 2, 1, 2)], f32(1, 2), i64(0), 1)


@case("ragged", "RaggedGather inner splits past the values")
def _(tf: Any, feed: Feed) -> Any:
    return _gather(tf, feed, [i64(0, 1, 2), i64(0, 1, 5)], f32(1, 2), i64(1), 2)


@case("ragged", "RaggedGather a long inner row repeated", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    # One outer row of 2**20 inner rows, gathered 2**12 times: 2**32 inner rows out,
    # 32 GB of positions before any output value is made.
    inner = np.arange(2**20 + 1, dtype=np.int64)
    indices = np.zeros(2**12, np.int64)
    return _gather(tf, feed, [i64(0, 2**20), inner], ones(2**20), indices, 2)


# -- RaggedRange -----------------------------------------------------------------------------
@case("ragged", "RaggedRange delta of 0")
def _(tf: Any, feed: Feed) -> Any:
    return _range(tf, feed, i64(0, 1), i64(5, 5), i64(1, 0))


@case("ragged", "RaggedRange negative deltas")
def _(tf: Any, feed: Feed) -> Any:
    return _range(tf, feed, i64(5, 0, -3), i64(0, 5, -9), i64(-2, -1, -4))


@case("ragged", "RaggedRange NaN limit")
def _(tf: Any, feed: Feed) -> Any:
    return _range(tf, feed, f32(0), f32(np.nan), f32(1))


@case("ragged", "RaggedRange rows of other lengths")
def _(tf: Any, feed: Feed) -> Any:
    return _range(tf, feed, i64(0, 1), i64(5, 5, 5), i64(1))


@case("ragged", "RaggedRange int32 splits overflowed")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.RaggedRange(
        starts=feed(i64(0, 0)),
        limits=feed(i64(2**31 - 10, 2**31 - 10)),
        deltas=feed(i64(2**30, 2**30)),
        Tsplits=tf.int32,
        name=NAME,
    )


@case("ragged", "RaggedRange huge total size", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    return _range(tf, feed, i64(0, 0), i64(2**40, 2**40), i64(1))


# -- Einsum equations --------------------------------------------------------------------------
@case("einsum", "digit labels")
def _(tf: Any, feed: Feed) -> Any:
    return _einsum(tf, feed, "i1->i", ones(2, 3))


@case("einsum", "a space as a label")
def _(tf: Any, feed: Feed) -> Any:
    return _einsum(tf, feed, "i j->ij", ones(2, 3))


@case("einsum", "label of size 1 against 2")
def _(tf: Any, feed: Feed) -> Any:
    return _einsum(tf, feed, "ij,ij->ij", ones(1, 3), ones(2, 3))


@case("einsum", "ellipsis the output drops")
def _(tf: Any, feed: Feed) -> Any:
    return _einsum(tf, feed, "...i->i", ones(2, 3))


@case("einsum", "ellipses that do not broadcast")
def _(tf: Any, feed: Feed) -> Any:
    return _einsum(tf, feed, "...i,...i->...", ones(2, 3), ones(4, 3))


@case("einsum", "ellipses that broadcast")
def _(tf: Any, feed: Feed) -> Any:
    return _einsum(tf, feed, "...i,...i->...", ones(2, 1, 3), ones(4, 3))


@case("einsum", "output ellipsis without input ellipsis")
def _(tf: Any, feed: Feed) -> Any:
    return _einsum(tf, feed, "ij->...ij", ones(2, 3))


@case("einsum", "repeated input label of two sizes")
def _(tf: Any, feed: Feed) -> Any:
    return _einsum(tf, feed, "ii->i", ones(2, 3))


@case("einsum", "huge outer product", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    return _einsum(tf, feed, "i,j->ij", ones(2**17), ones(2**17))
