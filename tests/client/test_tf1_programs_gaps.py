"""What whole TF1 programs (tools.tf1_programs_more) needed of the client: tf.linalg.matvec,
tf.sparse_placeholder fed with a SparseTensorValue, and tf.train.NewCheckpointReader /
load_checkpoint / list_variables / load_variable. Graphs node for node and values against
tensorflow.compat.v1; the reader against TensorFlow's on the same checkpoint files."""

from __future__ import annotations

import os

import numpy as np
import pytest

import client
from common import errors
from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, run_both

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1

A = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5]], dtype=np.float32)
B = np.array([1.0, -2.0, 0.5], dtype=np.float32)


def _matvec(api):
    a = api.constant(A)
    b = api.constant(B)
    y = api.linalg.matvec(a, b)
    z = api.linalg.matvec(a, api.constant(B[:2]), transpose_a=True, name="mv_t")
    batched = api.linalg.matvec(api.constant(np.stack([A, 2 * A])), b)
    return a, b, y, z, batched


def test_matvec_builds_tensorflows_graph():
    ours, theirs = build_both(_matvec)
    assert graph_diff(ours, theirs) == []


def test_matvec_values_and_gradients_match_tensorflow():
    def build(api):
        a, b, y, z, batched = _matvec(api)
        grads = api.gradients(api.reduce_sum(y * y) + api.reduce_sum(z), [a, b])
        return lambda sess: sess.run([y, z, batched, grads])

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-6, atol=1e-6)


def _sparse_placeholders(api):
    named = api.sparse_placeholder(api.float32, shape=[3, None], name="sp")
    unnamed = api.sparse.placeholder(api.int32)
    from_tensor = api.sparse_placeholder(api.float32, shape=api.constant([2, 4], api.int64))
    minus_one = api.sparse_placeholder(api.float32, [-1, 5], name="m1")
    return named, unnamed, from_tensor, minus_one


def test_sparse_placeholder_builds_tensorflows_graph_and_shapes():
    ours, theirs = build_both(_sparse_placeholders)
    assert graph_diff(ours, theirs) == []
    with client.Graph().as_default():
        mine = [str(s.shape) for s in _sparse_placeholders(client)]
    with tf1.Graph().as_default():
        want = [str(s.shape) for s in _sparse_placeholders(tf1)]
    assert mine == want


def test_sparse_placeholder_feeds_like_tensorflow():
    indices = np.array([[0, 1], [2, 0], [2, 3]], dtype=np.int64)
    values = np.array([1.5, -2.0, 4.0], dtype=np.float32)

    def build(api):
        sp, _, _, minus_one = _sparse_placeholders(api)
        dense = api.sparse_tensor_to_dense(sp)
        product = api.sparse_tensor_dense_matmul(sp, api.ones([4, 2]))
        value = api.SparseTensorValue(indices, values, np.array([3, 4], np.int64))

        def steps(sess):
            return [
                sess.run([dense, product], {sp: value}),
                sess.run(dense, {sp: (indices, values, [3, 5])}),
                sess.run(
                    api.sparse_tensor_to_dense(minus_one),
                    {minus_one: (indices[:1], values[:1], [2, 5])},
                ),
                sess.run(sp, {sp: value}),
            ]

        return steps

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=0, atol=0)


def test_fetching_only_fed_tensors_runs_no_step():
    def build(api):
        x = api.placeholder(api.float32, [2])
        y = x * 2.0
        # TF returns fed values without a step (which would refuse an empty fetch list).
        return lambda sess: [
            sess.run(x, {x: [1.0, 2.0]}),
            sess.run([x, y], {x: [3.0, 4.0], y: [0.0, 1.0]}),
        ]

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=0, atol=0)


@pytest.fixture
def checkpoint(tmp_path):
    """A TF-written checkpoint with a partitioned, a string and a scalar variable."""
    with tf1.Graph().as_default():
        tf1.get_variable(
            "p", [6, 2], partitioner=tf1.fixed_size_partitioner(2),
            initializer=tf1.random_uniform_initializer(seed=1),
        )  # fmt: skip
        tf1.Variable([b"a", b"bc"], name="s")
        tf1.Variable(3, name="scope/x")
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            return saver.save(sess, os.path.join(tmp_path, "model.ckpt"), global_step=7)


def test_checkpoint_reader_reads_like_tensorflows(checkpoint):
    ours, theirs = (
        client.train.NewCheckpointReader(checkpoint),
        tf1.train.NewCheckpointReader(checkpoint),
    )
    assert ours.get_variable_to_shape_map() == theirs.get_variable_to_shape_map()
    assert {k: v.name for k, v in ours.get_variable_to_dtype_map().items()} == {
        k: v.name for k, v in theirs.get_variable_to_dtype_map().items()
    }
    for name in ("p", "s", "scope/x"):
        got, want = ours.get_tensor(name), theirs.get_tensor(name)
        assert type(got) is type(want)
        np.testing.assert_array_equal(got, want)
        assert ours.has_tensor(name) and not ours.has_tensor(name + "_missing")
    assert ours.debug_string() == theirs.debug_string()
    directory = os.path.dirname(checkpoint)
    assert client.train.list_variables(directory) == tf1.train.list_variables(directory)
    assert client.train.load_variable(directory, "scope/x:0") == 3
    np.testing.assert_array_equal(
        client.train.load_checkpoint(checkpoint).get_tensor("p"),
        tf1.train.load_variable(directory, "p"),
    )


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the error is the result)
        return type(e).__name__, str(e)
    raise AssertionError("no error")


@pytest.mark.parametrize(
    "call",
    [
        lambda tf, ckpt: tf.train.NewCheckpointReader(ckpt).get_tensor("nope"),
        lambda tf, ckpt: tf.train.NewCheckpointReader(ckpt + "-missing"),
        lambda tf, ckpt: tf.train.NewCheckpointReader(os.path.dirname(ckpt)),
        lambda tf, ckpt: tf.train.load_checkpoint(os.path.join(os.path.dirname(ckpt), "empty")),
    ],
    ids=["missing_key", "missing_prefix", "directory", "no_checkpoint_in_dir"],
)
def test_checkpoint_reader_errors_match_tensorflow(checkpoint, call):
    os.makedirs(os.path.join(os.path.dirname(checkpoint), "empty"), exist_ok=True)
    ours, theirs = _error(lambda: call(client, checkpoint)), _error(lambda: call(tf1, checkpoint))
    assert ours == theirs


def test_checkpoint_reader_reads_the_clients_own_checkpoint(tmp_path):
    with client.Graph().as_default():
        w = client.Variable([[1.0, 2.0]], name="w")
        saver = client.train.Saver()
        with client.Session() as sess:
            sess.run(w.initializer)
            prefix = saver.save(sess, str(tmp_path / "ckpt"))
    reader = client.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == {"w": [1, 2]}
    np.testing.assert_array_equal(reader.get_tensor("w"), [[1.0, 2.0]])
    with pytest.raises(errors.NotFoundError):
        reader.get_tensor("v")
