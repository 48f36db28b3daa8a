"""RandomShuffleQueue's dequeue order against TensorFlow 2.21: the same seeds and the
same sequence of enqueues, dequeues, closes and DequeueUpTo give the same elements in
the same order (TF's Philox word % size pick, the last element moved into the hole),
also for a batch taken partly while min_after_dequeue holds it back and returned to
the queue when the queue closes under it. Skipped without TensorFlow."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from common.errors import OutOfRangeError
from common.session import Session

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1


def _ops(seed: int, graph_seed: int | None = None) -> dict:
    if graph_seed is not None:
        tf1.set_random_seed(graph_seed)
    q = tf1.RandomShuffleQueue(50, 5, [tf.int32], shapes=[[]], seed=seed)
    return {
        "e": q.enqueue_many([tf.range(30)]),
        "e2": q.enqueue_many([tf.range(100, 120)]),
        "e1": q.enqueue([tf.constant(-1)]),
        "d": q.dequeue(),
        "dm": q.dequeue_many(4),
        "dm0": q.dequeue_many(0),
        "du": q.dequeue_up_to(10),
        "c": q.close(),
        "s": q.size(),
    }


def _script_both(script: list[str], **kw) -> tuple[list, list]:
    g = tf.Graph()
    with g.as_default():
        ops = _ops(**kw)
    theirs, ours = [], []
    with tf1.Session(graph=g) as sess:
        for k in script:
            try:
                theirs.append(sess.run(ops[k]))
            except tf.errors.OutOfRangeError:
                theirs.append("OutOfRange")
    with Session(g.as_graph_def().SerializeToString()) as sess:
        for k in script:
            op = ops[k]
            try:
                if isinstance(op, tf.Operation):
                    sess.run([], {}, targets=[op.name])
                    ours.append(None)
                else:
                    ours.append(sess.run([op.name], {})[0])
            except OutOfRangeError:
                ours.append("OutOfRange")
    return theirs, ours


def _assert_same(theirs: list, ours: list) -> None:
    assert len(theirs) == len(ours)
    for i, (t, o) in enumerate(zip(theirs, ours)):
        if t is None or isinstance(t, str):
            assert o == t, i
        else:
            assert np.asarray(o).dtype == np.asarray(t).dtype, i
            np.testing.assert_array_equal(o, t, err_msg=f"call {i}")


SCRIPT = ["e", "d", "dm", "dm", "e2", "dm", "d", "e1", "dm0", "s", "c", "du", "du", "du", "s"]


@pytest.mark.parametrize("seed,graph_seed", [(7, None), (1, 99), (12345, 3)])
def test_dequeue_order_matches_tensorflow(seed, graph_seed):
    _assert_same(*_script_both(SCRIPT, seed=seed, graph_seed=graph_seed))


def test_closed_queue_dequeue_many_fails_and_up_to_takes_the_rest():
    script = ["e", "dm", "c", "dm", "dm", "dm", "dm", "dm", "dm", "dm", "du", "du", "s"]
    _assert_same(*_script_both(script, seed=5))


def _partial_then_close(run, size) -> list:
    """A dequeue_many(10) takes 3 of 8 elements (min_after_dequeue 5) and waits; the
    queue is closed under it: the batch fails, its 3 elements go back (last taken
    first), and a dequeue_up_to(10) then returns all 8."""
    run("e")
    outcome: list = []

    def blocked():
        try:
            outcome.append(run("dm10"))
        except Exception as e:  # noqa: BLE001 (either runtime's OutOfRange)
            outcome.append(type(e).__name__)

    t = threading.Thread(target=blocked)
    t.start()
    deadline = time.monotonic() + 30
    while size() != 5:  # the batch has taken what min_after_dequeue allows
        assert time.monotonic() < deadline, "the dequeue never took its first elements"
        time.sleep(0.01)
    run("c")
    t.join(30)
    return [*outcome, run("du")]


def test_a_partly_taken_batch_returns_to_the_queue_on_close():
    g = tf.Graph()
    with g.as_default():
        q = tf1.RandomShuffleQueue(50, 5, [tf.int32], shapes=[[]], seed=21)
        ops = {
            "e": q.enqueue_many([tf.range(8)]),
            "dm10": q.dequeue_many(10),
            "c": q.close(),
            "du": q.dequeue_up_to(10),
            "s": q.size(),
        }
    with tf1.Session(graph=g) as sess:
        theirs = _partial_then_close(lambda k: sess.run(ops[k]), lambda: sess.run(ops["s"]))
    with Session(g.as_graph_def().SerializeToString()) as sess:

        def run(k):
            op = ops[k]
            if isinstance(op, tf.Operation):
                return sess.run([], {}, targets=[op.name])
            return sess.run([op.name], {})[0]

        ours = _partial_then_close(run, lambda: int(run("s")))
    assert theirs[0] == "OutOfRangeError" and ours[0] == "OutOfRangeError"
    np.testing.assert_array_equal(ours[1], theirs[1])
    assert sorted(ours[1]) == list(range(8))
