"""Tests (ops stage): priority queues, barriers and staging areas — signatures against
TensorFlow's OpDefs, the same schedule of steps run by TensorFlow and by our in-process
session (values and errors compared), and parked waits that a closed session cancels."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from common.errors import DeadlineExceededError, OpError
from common.session import Session
from tests.common.ops.signatures import assert_signature_matches_tensorflow, module_ops

OPS = module_ops(
    "common.ops.barrier_ops", "common.ops.priority_queue_ops", "common.ops.staging_ops"
)


def test_every_op_is_registered() -> None:
    assert len(OPS) == 1 + 6 + 5 + 2 * 7, OPS


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name: str) -> None:
    assert_signature_matches_tensorflow(name)


def _tf():
    tf = pytest.importorskip("tensorflow.compat.v1")
    from tensorflow.python.ops import data_flow_ops

    return tf, data_flow_ops


def _first_line(e: BaseException) -> tuple[str, str]:
    """(error class, TensorFlow's message line) of a failed step."""
    message = getattr(e, "message", str(e))
    lines = [
        ln
        for ln in message.split("\n")
        if ln.strip() and "[[" not in ln and not ln.startswith("Hint:")
    ]
    return type(e).__name__, lines[-1].strip()


def _schedule_both(graph: Any, schedule: list[tuple[Any, dict | None]]) -> tuple[list, list]:
    """Run each (fetch, feeds) of `schedule` as one step in TensorFlow's session and in
    ours; the values (None for ops) or (error class, message) per step, per side."""
    tf, _ = _tf()
    theirs, ours = [], []
    with tf.Session(graph=graph) as sess:
        for fetch, feeds in schedule:
            try:
                got = sess.run(fetch, feeds)
                theirs.append(tf.nest.flatten(got) if got is not None else None)
            except tf.errors.OpError as e:
                theirs.append(_first_line(e))
    with Session(graph.as_graph_def().SerializeToString()) as sess:
        for fetch, feeds in schedule:
            fed = {t.name: v for t, v in (feeds or {}).items()}
            try:
                if isinstance(fetch, tf.Operation):
                    sess.run([], fed, targets=[fetch.name])
                    ours.append(None)
                else:
                    ours.append(sess.run([t.name for t in tf.nest.flatten(fetch)], fed))
            except OpError as e:
                ours.append(_first_line(e))
    return theirs, ours


def _assert_same(theirs: list, ours: list) -> None:
    assert len(theirs) == len(ours)
    for t, o in zip(theirs, ours, strict=True):
        if t is None or isinstance(t, tuple):
            assert o == t
            continue
        assert isinstance(o, list) and len(o) == len(t), (t, o)
        for a, b in zip(t, o, strict=True):
            a, b = np.asarray(a), np.asarray(b)
            if a.dtype.kind == "S":  # TensorFlow fetches a string scalar as bare bytes
                a = a.astype(object)
            assert a.dtype == b.dtype and a.shape == b.shape, (a, b)
            np.testing.assert_array_equal(a, b)


def test_priority_queue_dequeues_smallest_priority_first() -> None:
    tf, _ = _tf()
    g = tf.Graph()
    with g.as_default():
        q = tf.PriorityQueue(4, [tf.float32, tf.string], shapes=[[2], []], shared_name="pq")
        e = q.enqueue_many([tf.constant([3, 1, 2], tf.int64),
                            [[3.0, 3], [1, 1], [2, 2]], ["c", "a", "b"]])  # fmt: skip
        e1 = q.enqueue([tf.constant(0, tf.int64), [0.0, 0], "z"])
        d2, d1 = q.dequeue_many(2), q.dequeue()
        up_to = q.dequeue_up_to(5)
        schedule = [(e, None), (e1, None), (q.size(), None), (d2, None), (d1, None),
                    (q.close(), None), (up_to, None), (up_to, None)]  # fmt: skip
    _assert_same(*_schedule_both(g, schedule))


def test_priority_queue_refuses_undefined_shapes_as_tensorflow() -> None:
    tf, dfo = _tf()
    from tensorflow.python.ops import gen_data_flow_ops as gen

    g = tf.Graph()
    with g.as_default():
        q = gen.priority_queue_v2(component_types=[tf.float32], shapes=[[None]])
    _assert_same(*_schedule_both(g, [(q, None)]))


def _barrier_graph(tf: Any, dfo: Any) -> tuple[Any, list]:
    g = tf.Graph()
    with g.as_default():
        b = dfo.Barrier((tf.string, tf.float32), shapes=((), (2,)), shared_name="B", name="B")
        keys = tf.placeholder(tf.string, [None], name="keys")
        ins0 = b.insert_many(0, keys, tf.fill(tf.shape(keys), "v"))
        ins1 = b.insert_many(1, keys, tf.ones(tf.stack([tf.size(keys), 2])))
        sizes = [b.ready_size(), b.incomplete_size()]
        take2, take_small = b.take_many(2), b.take_many(5, allow_small_batch=True)
        close, cancel = b.close(), b.close(cancel_pending_enqueues=True)
        schedule = [
            (ins0, {keys: ["a", "b", "c"]}),
            (sizes, None),
            (ins1, {keys: ["b", "a"]}),
            (ins1, {keys: ["a"]}),  # a second value for component 1 of "a"
            (sizes, None),
            (take2, None),
            (ins0, {keys: ["d"]}),
            (close, None),
            (ins0, {keys: ["e"]}),  # a new key into a closed barrier
            (ins1, {keys: ["c"]}),
            (sizes, None),
            (close, None),  # closed twice
            (take2, None),  # "d" still incomplete: waits for it? no: 1 + 1 >= 2
            (take_small, None),
            (cancel, None),
            (sizes, None),
            (take_small, None),
        ]
    return g, schedule


def test_barrier_matches_tensorflow() -> None:
    tf, dfo = _tf()
    g, schedule = _barrier_graph(tf, dfo)
    # The take of 2 after close would wait forever for "d" in both runtimes: drop it.
    schedule = [s for i, s in enumerate(schedule) if i != 12]
    theirs, ours = _schedule_both(g, schedule)
    _assert_same(theirs, ours)
    assert theirs[-1][0] == "OutOfRangeError"


def test_staging_area_matches_tensorflow() -> None:
    tf, dfo = _tf()
    g = tf.Graph()
    with g.as_default():
        sa = dfo.StagingArea([tf.float32, tf.int32], shapes=[[2], []], capacity=3,
                             shared_name="sa")  # fmt: skip
        x = tf.placeholder(tf.float32, [2], name="x")
        put = sa.put([x, tf.cast(tf.reduce_sum(x), tf.int32)])
        schedule = [(put, {x: [1, 2]}), (put, {x: [3, 4]}), (sa.size(), None),
                    (sa.peek(1), None), (sa.get(), None), (sa.size(), None),
                    (sa.clear(), None), (sa.size(), None)]  # fmt: skip
    _assert_same(*_schedule_both(g, schedule))


def test_staging_area_memory_limit_error_matches_tensorflow() -> None:
    tf, dfo = _tf()
    g = tf.Graph()
    with g.as_default():
        sa = dfo.StagingArea([tf.float32], shapes=[[4]], memory_limit=8, shared_name="m")
        put = sa.put([tf.zeros([4])])
    _assert_same(*_schedule_both(g, [(put, None)]))


@pytest.mark.parametrize("ordered", [True, False])
def test_map_staging_area_matches_tensorflow(ordered: bool) -> None:
    tf, dfo = _tf()
    g = tf.Graph()
    with g.as_default():
        m = dfo.MapStagingArea([tf.float32, tf.int32], ordered=ordered, shared_name="m")
        k = tf.placeholder(tf.int64, [], name="k")
        put = m.put(k, [tf.constant(1.5), tf.constant(3)], indices=[0, 1])
        put0 = m.put(k, [tf.constant(2.5)], indices=[0])
        put1 = m.put(k, [tf.constant(9)], indices=[1])
        sizes = [m.size(), m.incomplete_size()]
        peek = m.peek(k)
        _, got = m.get(k)
        _, half = m.get(k, indices=[1])
        _, got_rest = m.get(k, indices=[0])
        schedule = [(put, {k: 5}), (put0, {k: 9}), (sizes, None), (put0, {k: 9}),
                    (put1, {k: 9}), (sizes, None), (peek, {k: 5}), (got, {k: 5}),
                    (half, {k: 9}), (half, {k: 9}), (got_rest, {k: 9}), (sizes, None),
                    (put, {k: 4}), (m.clear(), None), (sizes, None)]  # fmt: skip
        if ordered:
            key, first = m.get()
            schedule += [(put, {k: 8}), (put, {k: 2}), ([key, first], None), (sizes, None)]
    _assert_same(*_schedule_both(g, schedule))


def _abort_a_parked_step(fetch: str, graph_def: bytes) -> tuple[float, BaseException]:
    """Run `fetch` (which must wait) with a step timeout: the aborted step cancels the
    parked wait. (seconds taken, the step's error)."""
    with Session(graph_def) as sess:
        start = time.monotonic()
        with pytest.raises(OpError) as e:
            sess.run([fetch], timeout_s=0.5)
        return time.monotonic() - start, e.value


@pytest.mark.parametrize("which", ["unstage", "map_unstage", "barrier_take"])
def test_an_aborted_step_cancels_a_parked_wait(which: str) -> None:
    tf, dfo = _tf()
    g = tf.Graph()
    with g.as_default():
        if which == "unstage":
            fetch = dfo.StagingArea([tf.float32], shared_name="w").get()[0]
        elif which == "map_unstage":
            fetch = dfo.MapStagingArea([tf.float32], shared_name="w").get(7)[1][0]
        else:
            fetch = dfo.Barrier([tf.float32], shapes=[[]], name="b").take_many(1)[0]
    took, error = _abort_a_parked_step(fetch.name, g.as_graph_def().SerializeToString())
    assert isinstance(error, DeadlineExceededError), error
    assert took < 10
