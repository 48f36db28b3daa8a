"""tf.TensorArray reads under TF's control-flow-v2 switch: on (TF 2.x's default) a
TensorArray is TensorList-backed and a read never clears, so an element reads again after
stack(); off (disable_control_flow_v2), TF's v1 TensorArray clears what it read and the
second read fails. Values, gradients and errors compared with TensorFlow's."""

from __future__ import annotations

import numpy as np
import pytest

import client
from client.errors import InvalidArgumentError

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

_X = np.arange(6, dtype=np.float32).reshape(3, 2)


def _read_after_stack(tf):
    x = tf.placeholder(tf.float32, [3, 2], name="x")
    ta = tf.TensorArray(tf.float32, size=3, clear_after_read=True)
    ta = ta.write(0, x[0]).write(1, x[1] * 2.0).write(2, x[2])
    stacked, again = ta.stack(), ta.read(1)
    (gx,) = tf.gradients(tf.reduce_sum(stacked) + tf.reduce_sum(again * again), x)
    return [stacked, again, ta.concat(), gx], {x: _X}


def _run(tf, v2: bool):
    was = tf.control_flow_v2_enabled()
    (tf.enable_control_flow_v2 if v2 else tf.disable_control_flow_v2)()
    try:
        with tf.Graph().as_default() as g:
            fetches, feeds = _read_after_stack(tf)
            with tf.Session(graph=g) as sess:
                return sess.run(fetches, feeds)
    finally:
        (tf.enable_control_flow_v2 if was else tf.disable_control_flow_v2)()


def test_reads_never_clear_with_control_flow_v2():
    ours, theirs = _run(client, True), _run(tf1, True)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_second_read_fails_with_v1_control_flow():
    with pytest.raises(tf_real.errors.InvalidArgumentError, match=r"Could not read index \d twice"):
        _run(tf1, False)
    with pytest.raises(InvalidArgumentError, match=r"Could not read index \d twice"):
        _run(client, False)
