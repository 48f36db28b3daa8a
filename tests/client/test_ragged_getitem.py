"""RaggedTensor.__getitem__ in the client, built as TF's ragged_getitem.py: an int row,
row slices (with steps), column slices of the ragged dimension, ints and Ellipsis on
uniform inner dimensions of the values, nested RaggedTensors. The GraphDefs equal
tensorflow.compat.v1's node for node, the values equal TF's (ints exact), and indexing a
ragged dimension fails as in TF."""

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
    r = tf.ragged.constant([[1, 2], [3], [], [4, 5, 6]])
    return [r[1], r[-1], r[0, 1], r[3, -1], r[1:3], r[:2], r[-2:], r[::2], r[1:]]


def _columns(tf):
    r = tf.ragged.constant([[1, 2], [3], [], [4, 5, 6]])
    return [r[:, 1:], r[:, :2], r[:, -1:], r[1:3, :1], r[:, ::2]]


def _inner_dims(tf):
    r = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]], []], ragged_rank=1)
    return [r[:, :, 0], r[..., 1], r[0, 1], r[:, 1:, 1], r[1]]


def _nested(tf):
    n = tf.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6]]])
    return [n[0], n[2, 0], n[0, 0, 1], n[1:], n[:, :1], n[:, :, 1:]]


def _fed(tf):
    x = tf.placeholder_with_default(tf.constant([1.0, 2.0, 3.0, 4.0]), [None], name="x")
    i = tf.placeholder_with_default(tf.constant(2, tf.int64), [], name="i")
    r = tf.RaggedTensor.from_row_lengths(x, [3, 0, 1])
    return [r[i], r[1:i], r[:, :i]]


BUILDS = [_rows, _columns, _inner_dims, _nested, _fed]


@pytest.mark.parametrize("build", BUILDS)
def test_graph_matches_tensorflow(build):
    ours, theirs = build_both(build)
    assert graph_diff(ours, theirs) == []


@pytest.mark.parametrize("build", BUILDS)
def test_values_as_tensorflow(build):
    _assert_same(_run(client, build), _run(tf1, build))


def test_ragged_dimension_index_fails_as_tensorflow():
    for tf in (client, tf1):
        with tf.Graph().as_default():
            r = tf.ragged.constant([[1, 2], [3]])
            with pytest.raises(ValueError, match="Cannot index into an inner ragged dimension"):
                r[:, 1]  # noqa: B018
            with pytest.raises(IndexError, match="Too many indices for RaggedTensor"):
                r[..., 0, 1, 2]  # noqa: B018
