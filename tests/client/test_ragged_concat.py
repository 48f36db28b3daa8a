"""tf.concat / tf.stack / tf.ragged.stack of RaggedTensors along axis 0 in the client,
built as TF's ragged_concat_ops.py: GraphDefs equal tensorflow.compat.v1's node for node,
values equal TF's (ints exact), an axis out of range rejected with TF's message."""

from __future__ import annotations

import pytest

import client
from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.test_ragged_strings import _run
from tests.client.test_ragged_tensor_api import _assert_same

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module


def _concat(tf):
    a = tf.ragged.constant([[1, 2], [3]])
    b = tf.ragged.constant([[4], [], [5, 6]])
    n = tf.ragged.constant([[[1], [2, 3]]])
    m = tf.ragged.constant([[], [[4, 5]]])
    return [
        tf.concat([a, b], axis=0), tf.concat([a, b, a], 0, name="joined"),
        tf.concat([n, m], axis=0), tf.concat([a], 0), tf.concat([a, b], axis=-2),
    ]  # fmt: skip


def _stack(tf):
    a = tf.ragged.constant([[1.0, 2.0], [3.0]])
    x = tf.placeholder_with_default(tf.constant([4.0, 5.0, 6.0]), [None], name="x")
    b = tf.RaggedTensor.from_row_lengths(x, [1, 0, 2])
    return [tf.stack([a, b]), tf.stack([a, b, a], axis=0, name="stacked"), tf.ragged.stack([a, b])]


BUILDS = [_concat, _stack]


@pytest.mark.parametrize("build", BUILDS)
def test_graph_matches_tensorflow(build):
    ours, theirs = build_both(build)
    assert graph_diff(ours, theirs) == []


@pytest.mark.parametrize("build", BUILDS)
def test_values_as_tensorflow(build):
    _assert_same(_run(client, build), _run(tf1, build))


def test_axis_out_of_range_rejected_as_tensorflow():
    for tf in (client, tf1):
        with tf.Graph().as_default():
            a = tf.ragged.constant([[1, 2], [3]])
            with pytest.raises(ValueError, match=r"axis=3 out of bounds: expected -2<=axis<2"):
                tf.concat([a, a], axis=3)
