"""Iterator.from_string_handle (a feedable iterator) against tf.compat.v1: the same
IteratorFromStringHandleV2 node, and the same elements when the string handle of one
iterator or another is fed at run time."""

from __future__ import annotations

import numpy as np
import pytest

import client

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module


def _feedable(tf):
    train = tf.data.Dataset.range(10).map(lambda x: x * 2).batch(3)
    test = tf.data.Dataset.range(100, 104).map(lambda x: x * 2).batch(3)
    train_it = tf.data.make_one_shot_iterator(train)
    test_it = tf.data.make_initializable_iterator(test)
    handle = tf.placeholder(tf.string, shape=[])
    it = tf.data.Iterator.from_string_handle(
        handle, tf.data.get_output_types(train), tf.data.get_output_shapes(train)
    )
    return train_it, test_it, handle, it, it.get_next()


def _run(tf):
    with tf.Graph().as_default() as g, tf.Session() as sess:
        train_it, test_it, handle, it, nxt = _feedable(tf)
        sess.run(test_it.initializer)
        train_h, test_h = sess.run([train_it.string_handle(), test_it.string_handle()])
        seen = [
            sess.run(nxt, {handle: train_h}),
            sess.run(nxt, {handle: test_h}),
            sess.run(nxt, {handle: train_h}),
            sess.run(nxt, {handle: test_h}),
        ]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(nxt, {handle: test_h})
        node = g.get_operation_by_name(it._iterator_resource.op.name)
        shape = nxt.shape.as_list()
        return seen, (node.type, node.name, [t.name for t in node.inputs], shape)


def test_feedable_iterator_matches_tensorflow():
    ours, our_graph = _run(client)
    theirs, tf_graph = _run(tf1)
    assert our_graph == tf_graph
    assert our_graph[0] == "IteratorFromStringHandleV2"
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ours[1], [200, 202, 204])
