"""Ops, UnbatchDataset: TensorFlow's OpDef; rows of every element in order (tuples,
strings, partly unknown shapes) as TensorFlow's; TensorFlow's errors, naming the node,
for components of differing batch sizes and scalar components."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tools.tf1_probe import _flatten, run_case

from .signatures import assert_signature_matches_tensorflow

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1


def test_signature_matches_tensorflow():
    assert_signature_matches_tensorflow("UnbatchDataset")


def _drain(tf, ds):
    nxt = tf.data.make_one_shot_iterator(ds).get_next()

    def run(sess):
        out = []
        while True:
            try:
                out.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                return out

    return run


BUILDS = {
    "tuple": lambda tf: tf.data.Dataset.from_tensor_slices(
        (np.arange(12).reshape(2, 3, 2), np.array([["a", "b", "c"], ["d", "e", "f"]]))
    ).unbatch(),
    "ragged_rows": lambda tf: (
        tf.data.Dataset.range(4)
        .map(lambda i: tf.fill(tf.reshape(i, [1]), tf.cast(i, tf.float32)))
        .unbatch()
    ),
    "batched_back": lambda tf: tf.data.Dataset.range(7).batch(3).unbatch().batch(2),
}


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_rows_match_tensorflow(name):
    def build(tf):
        return _drain(tf, BUILDS[name](tf))

    ours, theirs = run_case(client, build), run_case(tf1, build)
    for g, w in zip(_flatten(ours), _flatten(theirs), strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


def test_mismatched_batch_sizes_fail_as_tensorflow():
    def build(tf):
        ds = tf.data.Dataset.range(1, 3).map(
            lambda i: (tf.fill(tf.reshape(i, [1]), i), tf.constant([7, 8], tf.int64))
        )
        return _drain(tf, ds.unbatch())

    with pytest.raises(client.errors.InvalidArgumentError) as ours:
        run_case(client, build)
    with pytest.raises(tf1.errors.InvalidArgumentError) as theirs:
        run_case(tf1, build)
    # Ours names the dataset node that failed; TensorFlow the IteratorGetNext reading it.
    assert "UnbatchDataset" in ours.value.node_name
    assert "IteratorGetNext" in str(theirs.value)
    errors = [ours.value.message, str(theirs.value)]
    sentence = (
        "Input element must have the same batch size in each component. "
        "Component 0 had size 1 but component 1 had size, 2."
    )
    assert all(sentence in text for text in errors)


def test_scalar_components_are_rejected_at_graph_building():
    for api in (client, tf1):
        with (
            api.Graph().as_default(),
            pytest.raises(ValueError, match="Cannot unbatch an input with scalar components"),
        ):
            api.data.Dataset.range(3).unbatch()
