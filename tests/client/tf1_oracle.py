"""TensorFlow's compat.v1 as the oracle for client model-building tests.

`run_both(build)` builds the same TF1 program with `client` and with
tensorflow.compat.v1, initializes both, copies TensorFlow's initial variable values into
the client's variables by name (so the check covers the model, not the random draw; a
variable TensorFlow has and the client lacks fails the test), and runs the program's steps
in each session. TensorFlow's graph is built with Python's `random` seeded (its state
restored after): tf_keras's initializers without a seed (rnn_cell, layers) draw their op
seeds from it, so unseeded the initial values, and how close float32 sums land, changed
from process to process. TF 2.21 serves compat.v1.layers and rnn_cell from tf_keras
(TF_USE_LEGACY_KERAS=1); without tf_keras those tests skip.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

import client

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")


def need_tf_keras() -> None:
    pytest.importorskip("tf_keras")


def _run(tf, build, target, values):
    g = tf.Graph()
    with g.as_default():
        state = random.getstate()
        random.seed(0)
        try:
            steps = build(tf)
        finally:
            random.setstate(state)
        init = [tf.global_variables_initializer(), tf.local_variables_initializer()]
        names = [n.name for n in g.as_graph_def().node]
        with tf.Session(target, graph=g) as sess:
            sess.run(init)
            if values is None:
                values = {v.op.name: sess.run(v) for v in tf.global_variables()}
            else:
                for v in tf.global_variables():
                    v.load(values[v.op.name], sess)
            return steps(sess), values, names


def run_both(build, target: str = ""):
    """(client's result, TensorFlow's result, client's node names, TensorFlow's)."""
    tf_out, values, tf_names = _run(tf1, build, "", None)
    out, _, names = _run(client, build, target, values)
    return out, tf_out, names, tf_names


def forward_names(names):
    """Node names outside initializers, gradients and init ops (where the client's and
    TensorFlow's graphs may legitimately differ: random initializer kernels, gradient
    helper nodes)."""
    return {
        n
        for n in names
        if "Initializer" not in n
        and not n.startswith("gradients")
        and not n.startswith("init")
        and "/Assign" not in n
        and "/IsInitialized" not in n
    }


def assert_close(a, b, rtol=1e-5, atol=1e-5):
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            assert_close(a[k], b[k], rtol, atol)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_close(x, y, rtol, atol)
    elif a is None:
        assert b is None
    else:
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, (a.shape, b.shape)
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(a, b)
