"""tf.reduce_sum / prod / min / max / mean / any / all on RaggedTensors in the client,
built as TF's ragged_math_ops.ragged_reduce_aggregate (axis None on the flat values, axis
0 and 1 through UnsortedSegment* ops, deeper axes through the values, axis lists one axis
at a time, keepdims, TF1's reduction_indices / keep_dims): the GraphDefs equal
tensorflow.compat.v1's node for node and the values equal TF's (ints and bools exact)."""

from __future__ import annotations

import pytest

import client
from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.test_ragged_strings import _run
from tests.client.test_ragged_tensor_api import _assert_same

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module


def _rows(tf):
    r = tf.ragged.constant([[1.0, 2.0], [3.0], []])
    i = tf.ragged.constant([[1, 2], [3, -4, 5], [], [6]], row_splits_dtype=tf.int32)
    return [
        tf.reduce_sum(r, axis=1), tf.reduce_max(r, 1), tf.reduce_min(r, axis=-1, keepdims=True),
        tf.reduce_sum(r, axis=0), tf.reduce_prod(r, axis=0, keepdims=True),
        tf.reduce_sum(r), tf.reduce_max(r, keepdims=True), tf.math.reduce_sum(r, name="total"),
        tf.reduce_sum(i, axis=1), tf.reduce_min(i, axis=0), tf.reduce_prod(i),
    ]  # fmt: skip


def _means_and_bools(tf):
    r = tf.ragged.constant([[1.0, 2.0], [3.0], []])
    b = tf.ragged.constant([[True, False], [True], []])
    return [
        tf.reduce_mean(r, axis=1), tf.reduce_mean(r, axis=0), tf.reduce_mean(r),
        tf.reduce_any(b, axis=1), tf.reduce_all(b, axis=1), tf.reduce_all(b, axis=0),
        tf.reduce_any(b), tf.math.reduce_mean(r, axis=1, name="avg"),
    ]  # fmt: skip


def _nested(tf):
    n = tf.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6]]])
    inner = tf.RaggedTensor.from_row_lengths(tf.reshape(tf.range(10.0), [5, 2]), [3, 2])
    return [
        tf.reduce_sum(n, axis=2), tf.reduce_sum(n, axis=1), tf.reduce_sum(n, axis=0),
        tf.reduce_max(n, axis=[1, 2]), tf.reduce_sum(n, axis=[0, 1]),
        tf.reduce_sum(inner, axis=1), tf.reduce_sum(inner, axis=2),
        tf.reduce_mean(inner, axis=0),
        tf.reduce_sum(inner, reduction_indices=1, keep_dims=True),
    ]  # fmt: skip


def _fed(tf):
    x = tf.placeholder_with_default(tf.constant([1.0, 2.0, 3.0, 4.0]), [None], name="x")
    lengths = tf.placeholder_with_default(tf.constant([3, 0, 1], tf.int64), [None])
    r = tf.RaggedTensor.from_row_lengths(x, lengths)
    return [tf.reduce_sum(r, axis=1), tf.reduce_max(r, axis=0), tf.reduce_mean(r, axis=1)]


BUILDS = [_rows, _means_and_bools, _nested, _fed]


@pytest.mark.parametrize("build", BUILDS)
def test_graph_matches_tensorflow(build):
    ours, theirs = build_both(build)
    assert graph_diff(ours, theirs) == []


@pytest.mark.parametrize("build", BUILDS)
def test_values_as_tensorflow(build):
    _assert_same(_run(client, build), _run(tf1, build))


def test_bad_axes_rejected_as_tensorflow():
    for tf in (client, tf1):
        with tf.Graph().as_default():
            r = tf.ragged.constant([[1.0, 2.0], [3.0]])
            with pytest.raises(ValueError, match=r"axis=2 out of bounds: expected -2<=axis<2"):
                tf.reduce_sum(r, axis=2)
            fed = tf.placeholder(tf.int32, [])
            with pytest.raises(ValueError, match="axis must be known at graph construction"):
                tf.reduce_sum(r, axis=fed)
