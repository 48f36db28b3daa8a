"""tf.roll, tf.math.cumulative_logsumexp, tf.math.nextafter (and their gradients),
tf.searchsorted, tf.unravel_index and tf.unique_with_counts on a real cluster (CLIs on
loopback), built by an unmodified tf.compat.v1 client and by ours, against TensorFlow's
in-process session as the oracle; a bad index fails the step with TF's error naming
the node."""

from __future__ import annotations

import numpy as np
import pytest

import client as ours

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1

X = np.arange(12, dtype=np.float32).reshape(3, 4)
SORTED = np.array([[1.0, 2.0, 2.0, 9.0], [0.0, 0.0, 3.0, 4.0], [-1.0, 5.0, 6.0, 7.0]], np.float32)


def _build(api):
    x = api.placeholder(api.float32, [None, 4], name="x")
    rolled = api.roll(x, [1, -3], [0, 1])
    grad = api.gradients(api.reduce_sum(rolled * rolled), x)[0]
    lse = api.math.cumulative_logsumexp(x, axis=1, exclusive=True, reverse=True)
    uniq = api.unique_with_counts(api.reshape(api.cast(x, api.int32) // 3, [-1]), api.int64)
    return {
        "unique_y": uniq.y,
        "unique_idx": uniq.idx,
        "unique_count": uniq.count,
        "rolled": rolled,
        "grad": grad,
        "left": api.searchsorted(SORTED, x, side="left"),
        "right": api.searchsorted(SORTED, x, side="right", out_type=api.int64),
        "unravel": api.unravel_index(api.constant([0, 5, 11], api.int64), [3, 4]),
        "nextafter": api.math.nextafter(x, [[0.0, 1.0, 1e9, -1e9]]),
        "nextafter_grad": api.gradients(api.math.nextafter(x, x[:1] * 0.0), x)[0],
        "logsumexp": lse,
        "logsumexp_grad": api.gradients(lse * (x - 5.0), x)[0],
    }


def _run(api, target: str) -> dict:
    g = api.Graph()
    with g.as_default():
        fetches = _build(api)
        x = g.get_tensor_by_name("x:0")
    with api.Session(target, graph=g) as sess:
        return sess.run(fetches, {x: X})


@pytest.mark.parametrize("api", [tf1, ours], ids=["tf_client", "our_client"])
def test_roll_searchsorted_unravel_as_tensorflow(shared_cluster, api):
    got, want = _run(api, shared_cluster.target), _run(tf1, "")
    assert sorted(got) == sorted(want)
    for key in want:
        assert got[key].dtype == want[key].dtype, key
        if key.startswith("logsumexp"):  # numpy's logaddexp rounds unlike Eigen's
            np.testing.assert_allclose(got[key], want[key], rtol=1e-5, err_msg=key)
        else:
            np.testing.assert_array_equal(got[key], want[key], err_msg=key)


@pytest.mark.parametrize("api", [tf1, ours], ids=["tf_client", "our_client"])
def test_unravel_index_out_of_bound_fails_the_step(shared_cluster, api):
    g = api.Graph()
    with g.as_default():
        out = api.unravel_index(api.constant([1, 8]), [2, 4], name="bad_unravel")
    sess = api.Session(shared_cluster.target, graph=g)
    with sess, pytest.raises(api.errors.InvalidArgumentError) as e:
        sess.run(out)
    assert "index is out of bound as with dims" in e.value.message
    assert "bad_unravel" in e.value.message
