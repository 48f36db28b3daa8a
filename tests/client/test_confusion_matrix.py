"""tf.confusion_matrix / tf.math.confusion_matrix against tensorflow.compat.v1: the
matrices (inferred and given num_classes, weights, dtypes) and the InvalidArgument a
negative or out-of-bound label raises from the graph's asserts."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.tf1_oracle import assert_close, run_both, tf1


def test_confusion_matrix_values_match_tensorflow():
    labels = np.array([1, 2, 4, 0, 2], np.int32)
    preds = np.array([2, 2, 4, 0, 1], np.int64)
    w = np.array([0.5, 1.0, 2.0, 0.25, 3.0], np.float32)

    def build(api):
        lab = api.placeholder(api.int32, [None], name="labels")
        pre = api.placeholder(api.int64, [None], name="preds")
        wt = api.placeholder(api.float32, [None], name="w")
        out = [
            api.confusion_matrix(lab, pre),
            api.math.confusion_matrix(lab, pre, num_classes=6),
            api.confusion_matrix(lab, pre, weights=wt, dtype=api.float32),
            api.confusion_matrix(lab[:, None], pre, num_classes=5, dtype=api.int64),
        ]
        return lambda sess: sess.run(out, {lab: labels, pre: preds, wt: w})

    ours, theirs, names, tf_names = run_both(build)
    assert [o.dtype for o in ours] == [t.dtype for t in theirs]
    assert [o.shape for o in ours] == [(5, 5), (6, 6), (5, 5), (5, 5)]
    assert_close(ours, theirs, rtol=0, atol=0)
    assert names == tf_names


@pytest.mark.parametrize(
    "labels, num_classes", [([0, -1], None), ([0, 3], 3)], ids=["negative", "out_of_bound"]
)
def test_confusion_matrix_bad_labels_raise_invalid_argument(labels, num_classes):
    errors = []
    for api, err in ((client, client.errors), (tf1, tf1.errors)):
        with api.Graph().as_default():
            lab = api.placeholder(api.int32, [2], name="labels")
            cm = api.confusion_matrix(lab, [0, 1], num_classes=num_classes)
            with api.Session() as sess, pytest.raises(err.InvalidArgumentError) as e:
                sess.run(cm, {lab: labels})
            # TF's session prefixes "Graph execution error:" and appends the node.
            first = [ln for ln in e.value.message.split("\n") if "assertion failed" in ln]
            errors.append(first[0].strip())
    assert errors[0] == errors[1]
