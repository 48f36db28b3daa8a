"""tf.clip_by_average_norm against tensorflow.compat.v1: TF's forward nodes, the clipped
values and their gradient."""

from __future__ import annotations

import numpy as np

from tests.client.tf1_oracle import assert_close, run_both


def test_clip_by_average_norm_matches_tensorflow():
    def build(api):
        t = api.placeholder(api.float32, [2, 3], name="t")
        c = api.clip_by_average_norm(t, 0.5)
        (g,) = api.gradients(api.reduce_sum(c * c), t)
        x = np.array([[3.0, -4.0, 1.0], [0.5, 2.0, -1.0]], np.float32)
        return lambda sess: sess.run([c, g, api.clip_by_average_norm(t, 100.0)], {t: x})

    ours, theirs, names, tf_names = run_both(build)
    assert_close(ours, theirs)
    assert [n for n in names if "gradients" not in n] == [
        n for n in tf_names if "gradients" not in n
    ]
