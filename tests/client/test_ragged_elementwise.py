"""TF's ragged dispatch of the elementwise APIs in the client: unary ops on values
(tf.abs, tf.exp, tf.cast ...), binary ops against scalars, between RaggedTensors with
identical row partitions, tf.where on ragged conditions (coordinates and choice), and
RaggedTensor's operators. Graphs equal tensorflow.compat.v1's node for node where TF's
dispatch builds a small graph; values equal TF's everywhere, including the pairs TF
broadcasts through DynamicRaggedShape (different partition objects, dense operands of
the flat values' rank), whose graphs the client builds smaller (see
client/ops/ragged_dispatch.py)."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.test_ragged_strings import _run
from tests.client.test_ragged_tensor_api import _assert_same

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module


def _unary(tf):
    r = tf.ragged.constant([[1.0, 2.0], [3.0]])
    nested = tf.ragged.constant([[[1.0], [2.0, 3.0]], []])
    return [
        tf.abs(r), tf.exp(r), tf.math.log(r), tf.sqrt(r), tf.cast(r, tf.int32),
        tf.abs(r, name="myabs"), tf.math.exp(nested), -r, tf.logical_not(r > 1.0),
        tf.square(nested), tf.math.sigmoid(r), abs(r),
    ]  # fmt: skip


def _with_scalars(tf):
    r = tf.ragged.constant([[1.0, 2.0], [3.0]])
    i = tf.ragged.constant([[1, 2], [3, -4, 5]], row_splits_dtype=tf.int32)
    return [
        r + 1, 2 * r, r / 2.0, r > 1.5, tf.add(r, 1.0, name="plus"), i // 2, i % 2,
        tf.maximum(r, 2.0), 1.0 - r, r**2, tf.math.equal(i, 3), tf.not_equal(i, 3),
        i <= 2, tf.multiply(i, tf.constant(3)),
    ]  # fmt: skip


def _same_partitions(tf):
    r = tf.ragged.constant([[1.0, 2.0], [3.0], []])
    s = r * 2.0
    b = r > 1.0
    return [
        r * r, r - s, tf.equal(r, s), tf.logical_and(b, r < 3.0), b | (r < 2.0),
        tf.where(b, r, s), tf.math.squared_difference(r, s), tf.math.divide(s, r),
    ]  # fmt: skip


def _coordinates(tf):
    c = tf.ragged.constant([[True, False, True], [], [False, True]])
    nested = tf.ragged.constant([[[True], [False, True]], [[True]]])
    return [tf.where(c), tf.where(nested)]


BUILDS = [_unary, _with_scalars, _same_partitions, _coordinates]


@pytest.mark.parametrize("build", BUILDS)
def test_graph_matches_tensorflow(build):
    ours, theirs = build_both(build)
    assert graph_diff(ours, theirs) == []


def _broadcast(tf):
    """Pairs TF broadcasts through DynamicRaggedShape: values only."""
    a = tf.ragged.constant([[1.0, 2.0], [3.0], []])
    b = tf.ragged.constant([[10.0, 20.0], [30.0], []])
    x = tf.placeholder_with_default(tf.constant([4.0, 5.0, 6.0]), [None])
    fed = tf.RaggedTensor.from_row_lengths(x, [2, 1, 0])
    return [
        a + b, a * fed, tf.maximum(fed, b), a + tf.constant([[1.0], [2.0], [3.0]]),
        a * tf.constant([2.0]), tf.constant([[5.0]]) - a,
    ]  # fmt: skip


@pytest.mark.parametrize("build", [*BUILDS, _broadcast])
def test_values_as_tensorflow(build):
    _assert_same(_run(client, build), _run(tf1, build))


def _mismatched_error(tf):
    with tf.Graph().as_default() as g:
        splits = tf.placeholder(tf.int64, [None], name="splits")
        a = tf.ragged.constant([[1, 2], [3]])
        b = tf.RaggedTensor.from_row_splits(tf.constant([4, 5, 6]), splits, validate=False)
        total = a + b
        with tf.Session(graph=g) as sess:
            with pytest.raises(Exception) as e:  # noqa: PT011 (the class is compared)
                sess.run(total.flat_values, {splits: [0, 1, 3]})
            ok = sess.run(total.flat_values, {splits: [0, 2, 3]})
    return e.value, ok


def test_mismatched_partitions_fail_as_tensorflow():
    ours, ours_ok = _mismatched_error(client)
    theirs, theirs_ok = _mismatched_error(tf1)
    np.testing.assert_array_equal(ours_ok, theirs_ok)
    assert type(ours).__name__ == type(theirs).__name__ == "InvalidArgumentError"
    # TF names its own partition tensors (from its broadcaster) where the client names the
    # row_splits: the condition and the two splits' values are the same.
    head = "assertion failed: [Condition x == y did not hold element-wise:]"
    for err in (ours, theirs):
        (line,) = [x for x in str(err).splitlines() if x.startswith(head)]
        assert line.endswith("[0 2 3] [y (" + line.split("[y (")[1].split(")")[0] + ") = ] [0 1 3]")


def test_mismatched_splits_dtypes_rejected_as_tensorflow():
    for tf in (client, tf1):
        with tf.Graph().as_default():
            a = tf.ragged.constant([[1, 2], [3]], row_splits_dtype=tf.int32)
            b = tf.ragged.constant([[1, 2], [3]])
            with pytest.raises(ValueError, match="mismatched row_splits dtypes"):
                a + b  # noqa: B018
