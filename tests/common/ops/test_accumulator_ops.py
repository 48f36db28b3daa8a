"""Tests (ops stage): conditional accumulators — signatures, stale gradients dropped by
local step, take waiting for num_required, mean and sum, sparse merges, errors; value for
value against TensorFlow on the same schedule of steps."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from common.errors import InvalidArgumentError
from common.session import Session
from tests.common.ops.signatures import assert_signature_matches_tensorflow, module_ops

OPS = module_ops("common.ops.accumulator_ops")


def test_every_accumulator_op_is_registered() -> None:
    assert len(OPS) == 13, OPS


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name: str) -> None:
    assert_signature_matches_tensorflow(name)


def _schedule_both(build: Callable[[Any], dict], schedule: list[str]) -> tuple[list, list]:
    """`build(tf)` returns named tensors/ops; each side runs `schedule` (names of those) in
    order, one step each; the fetched values (None for ops), per side."""
    tf = pytest.importorskip("tensorflow.compat.v1")
    graph = tf.Graph()
    with graph.as_default():
        named = build(tf)
    theirs, ours = [], []
    with tf.Session(graph=graph) as sess:
        for key in schedule:
            theirs.append(sess.run(named[key]))
    with Session(graph.as_graph_def().SerializeToString()) as sess:
        for key in schedule:
            t = named[key]
            if isinstance(t, (list, tuple)):
                ours.append(sess.run([x.name for x in t]))
            elif hasattr(t, "outputs") and t.type != "Const":  # an op: run as a target
                sess.run([], targets=[t.name])
                ours.append(None)
            else:
                ours.append(sess.run([t.name])[0])
    return theirs, ours


def _assert_same(theirs: list, ours: list) -> None:
    assert len(theirs) == len(ours)
    for t, o in zip(theirs, ours, strict=True):
        if t is None:
            assert o is None
            continue
        pairs = zip(t, o, strict=True) if isinstance(t, list) else [(t, o)]
        for a, b in pairs:
            a, b = np.asarray(a), np.asarray(b)
            assert a.dtype == b.dtype and a.shape == b.shape, (a, b)
            np.testing.assert_array_equal(a, b)


def _dense(tf: Any, resource: bool, reduction: str, dtype: Any = None) -> dict:
    from tensorflow.python.ops import gen_data_flow_ops as g

    dtype = dtype or tf.float32
    make = g.resource_conditional_accumulator if resource else g.conditional_accumulator
    h = make(dtype=dtype, shape=[2, 2], shared_name="acc", reduction_type=reduction)
    apply = g.resource_accumulator_apply_gradient if resource else g.accumulator_apply_gradient
    take = g.resource_accumulator_take_gradient if resource else g.accumulator_take_gradient
    num = g.resource_accumulator_num_accumulated if resource else g.accumulator_num_accumulated
    step = g.resource_accumulator_set_global_step if resource else g.accumulator_set_global_step
    c = lambda v: tf.constant(np.array(v).astype(dtype.as_numpy_dtype))  # noqa: E731
    return {
        "a0": apply(h, tf.constant(0, tf.int64), c([[1, 2], [3, 4]])),
        "a0b": apply(h, tf.constant(0, tf.int64), c([[10, 20], [30, 41]])),
        "a1": apply(h, tf.constant(1, tf.int64), c([[5, 7], [9, 11]])),
        "a5": apply(h, tf.constant(5, tf.int64), c([[2, 2], [2, 2]])),
        "take2": take(h, 2, dtype=dtype),
        "take1": take(h, 1, dtype=dtype),
        "num": num(h),
        "set3": step(h, tf.constant(3, tf.int64)),
        "set1": step(h, tf.constant(1, tf.int64)),
    }


# Applies at the current step are kept, stale ones (local_step below the step) dropped; a
# take advances the step by one; SetGlobalStep moves it either way.
_DENSE_SCHEDULE = ["num", "a0", "a0b", "num", "take2", "num", "a0", "num", "a1", "a1", "a1",
                   "num", "take2", "set3", "a1", "a5", "num", "take1", "set1", "a1", "take1",
                   "num"]  # fmt: skip


@pytest.mark.parametrize("resource", [False, True])
@pytest.mark.parametrize("reduction", ["MEAN", "SUM"])
def test_dense_accumulator_matches_tensorflow(resource: bool, reduction: str) -> None:
    theirs, ours = _schedule_both(lambda tf: _dense(tf, resource, reduction), _DENSE_SCHEDULE)
    _assert_same(theirs, ours)


def test_integer_accumulators_have_no_kernel_as_in_tensorflow() -> None:
    tf = pytest.importorskip("tensorflow.compat.v1")
    graph = tf.Graph()
    with graph.as_default():
        named = _dense(tf, True, "MEAN", tf.int32)
    with tf.Session(graph=graph) as sess, pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(named["num"])
    with (
        Session(graph.as_graph_def().SerializeToString()) as sess,
        pytest.raises(InvalidArgumentError, match="No OpKernel was registered"),
    ):
        sess.run([named["num"].name])


@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_dense_mean_in_the_accumulator_dtype(dtype: str) -> None:
    def build(tf: Any) -> dict:
        return _dense(tf, True, "MEAN", tf.as_dtype(dtype))

    theirs, ours = _schedule_both(build, ["a0", "a1", "a0b", "take1", "a1", "a5", "a1",
                                          "take2"])  # fmt: skip
    _assert_same(theirs, ours)


def _sparse(tf: Any, reduction: str) -> dict:
    from tensorflow.python.ops import gen_data_flow_ops as g

    h = g.sparse_conditional_accumulator(dtype=tf.float32, shape=[4, 2], shared_name="s",
                                         reduction_type=reduction)  # fmt: skip

    def apply(step: int, idx: list, vals: list, known: bool = True) -> Any:
        return g.sparse_accumulator_apply_gradient(
            h, tf.constant(step, tf.int64), tf.constant(idx, tf.int64),
            tf.constant(vals, tf.float32), tf.constant([4, 2], tf.int64),
            has_known_shape=known,
        )  # fmt: skip

    return {
        "a": apply(0, [0, 2], [[1, 2], [3, 4]]),
        "b": apply(1, [1, 2, 3], [[5, 6], [7, 8], [9, 10]], known=False),
        "c": apply(0, [3], [[1, 1]]),
        "stale": apply(0, [0], [[100, 100]]),
        "d": apply(1, [2, 0], [[1, 1], [2, 2]]),
        "take3": list(g.sparse_accumulator_take_gradient(h, 3, dtype=tf.float32)),
        "take1": list(g.sparse_accumulator_take_gradient(h, 1, dtype=tf.float32)),
        "num": g.accumulator_num_accumulated(h),
    }


@pytest.mark.parametrize("reduction", ["MEAN", "SUM"])
def test_sparse_accumulator_matches_tensorflow(reduction: str) -> None:
    schedule = ["a", "b", "c", "num", "take3", "stale", "num", "d", "b", "take1", "a", "num"]
    theirs, ours = _schedule_both(lambda tf: _sparse(tf, reduction), schedule)
    _assert_same(theirs, ours)


def _errors(tf: Any) -> dict:
    from tensorflow.python.ops import gen_data_flow_ops as g

    h = g.resource_conditional_accumulator(dtype=tf.float32, shape=[2], shared_name="e")
    s = g.sparse_conditional_accumulator(dtype=tf.float32, shape=[3, 2], shared_name="es")
    zero = tf.constant(0, tf.int64)
    return {
        "bad_shape": g.resource_accumulator_apply_gradient(h, zero, tf.constant([1.0, 2, 3])),
        "bad_take": g.resource_accumulator_take_gradient(h, 0, dtype=tf.float32),
        "bad_indices": g.sparse_accumulator_apply_gradient(
            s,
            zero,
            tf.constant([[1]], tf.int64),
            tf.constant([[1.0, 2.0]]),
            tf.constant([3, 2], tf.int64),
            has_known_shape=True,
        ),  # fmt: skip
        "bad_index": g.sparse_accumulator_apply_gradient(
            s,
            zero,
            tf.constant([4], tf.int64),
            tf.constant([[1.0, 2.0]]),
            tf.constant([3, 2], tf.int64),
            has_known_shape=True,
        ),  # fmt: skip
    }


@pytest.mark.parametrize("which", ["bad_shape", "bad_take", "bad_indices", "bad_index"])
def test_errors_match_tensorflow(which: str) -> None:
    tf = pytest.importorskip("tensorflow.compat.v1")
    graph = tf.Graph()
    with graph.as_default():
        built = _errors(tf)[which]
    op = getattr(built, "op", built)
    with tf.Session(graph=graph) as sess, pytest.raises(tf.errors.InvalidArgumentError) as te:
        sess.run(op)
    with (
        Session(graph.as_graph_def().SerializeToString()) as sess,
        pytest.raises(InvalidArgumentError) as oe,
    ):
        sess.run([], targets=[op.name])
    assert oe.value.message.split("\n")[0] == te.value.message.split("\n")[-2]
    assert oe.value.node_name == op.name


def test_take_waits_for_num_required_applies() -> None:
    """A take parked before any gradient completes when the second apply lands."""
    tf = pytest.importorskip("tensorflow.compat.v1")
    graph = tf.Graph()
    with graph.as_default():
        named = _dense(tf, True, "MEAN")
    with Session(graph.as_graph_def().SerializeToString()) as sess:
        got: list = []
        taker = threading.Thread(target=lambda: got.append(sess.run([named["take2"].name])))
        taker.start()
        sess.run([], targets=[named["a0"].name])
        taker.join(0.2)
        assert taker.is_alive()  # one gradient of the two it needs
        sess.run([], targets=[named["a0b"].name])
        taker.join(30)
        assert not taker.is_alive()
    np.testing.assert_array_equal(got[0][0], np.array([[5.5, 11], [16.5, 22.5]], np.float32))
