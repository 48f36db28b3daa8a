"""tf.tensordot / tf.linalg.tensordot against tensorflow.compat.v1: values and gradients
for static, partly known and unknown-rank operands, int and list axes, outer product."""

from __future__ import annotations

import numpy as np

from tests.client.tf1_oracle import assert_close, run_both


def test_tensordot_values_and_gradients_match_tensorflow():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    y = rng.standard_normal((4, 3, 5)).astype(np.float32)

    def build(api):
        a = api.placeholder(api.float32, [2, 3, 4], name="a")
        b = api.placeholder(api.float32, [4, 3, 5], name="b")
        a_batch = api.placeholder(api.float32, [None, 3, 4], name="a_batch")
        a_any = api.placeholder(api.float32, None, name="a_any")
        outs = [
            api.tensordot(a, b, [[1, 2], [1, 0]]),
            api.linalg.tensordot(a, b, 1),
            api.tensordot(a[0, 0], b[0, 0], 0),
            api.tensordot(a_batch, b, [[2], [0]]),
            api.tensordot(a_any, b, [[-1], [0]]),
            api.tensordot(a_any, b[:, 0], 1),
        ]
        grads = api.gradients([api.reduce_sum(o * o) for o in outs], [a, b, a_batch, a_any])
        feed = {a: x, b: y, a_batch: x, a_any: x}
        return lambda sess: sess.run(outs + grads, feed)

    ours, theirs, names, tf_names = run_both(build)
    shapes = [(2, 5), (2, 3, 3, 5), (4, 5), (2, 3, 3, 5), (2, 3, 3, 5), (2, 3, 5)]
    assert [o.shape for o in ours[:6]] == shapes
    assert_close(ours, theirs)
    assert names == tf_names
