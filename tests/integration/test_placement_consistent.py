"""Integration, placement: a node placed by the whole graph, not by the run. A variable
with no device whose Adam slots are made under /job:ps lives where TensorFlow's placer
puts it for the whole graph, so a run that reads only the variable finds it where the
training runs updated it (before: the read-only run placed it on the default worker and
failed with "Could not find variable"). TensorFlow's client and ours, against our master,
print TensorFlow's local numbers."""

from __future__ import annotations

import numpy as np
import pytest

import client as ours

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

X = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)
Y = np.array([[0.5], [-0.25], [1.0], [0.0]], np.float32)


def _program(api, target: str) -> list:
    with api.Graph().as_default():
        w = api.get_variable("w", initializer=np.full([3, 1], 0.1, np.float32))
        with api.device("/job:worker/task:1" if target else None):
            loss = api.reduce_mean(api.square(api.matmul(X, w) - Y))
        with api.device("/job:ps/task:0" if target else None):
            train = api.train.AdamOptimizer(0.1).minimize(loss)
        with api.Session(target) as sess:
            sess.run(api.global_variables_initializer())
            seen = [sess.run(w)]
            for _ in range(3):
                sess.run(train)
                seen.append(sess.run(w))  # a run of the variable alone
            seen.append(sess.run(loss))
        return seen


@pytest.mark.parametrize("api", [tf1, ours], ids=["tf_client", "our_client"])
def test_variable_read_alone_is_where_training_updates_it(shared_cluster, api):
    expected = _program(tf1, "")
    got = _program(api, shared_cluster.target)
    assert not np.allclose(expected[0], expected[-2])  # training moved w
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
