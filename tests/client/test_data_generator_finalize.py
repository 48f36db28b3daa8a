"""Dataset.from_generator's finalize_func against TensorFlow: run when an iterator is
dropped before its end, as TF's GeneratorDataset iterator destructor runs it (the
generator is forgotten, so its `finally` runs): when the iterator is re-initialized
(MakeIterator replaces it) and when the session closes."""

from __future__ import annotations

import gc
import time

import pytest

import client

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module


def _wait_for(condition, timeout: float = 10.0) -> None:
    """The finalize call may finish on another thread: wait (bounded) for its effect."""
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.01)


def _closed_counts(tf, initializable: bool) -> list[int]:
    closed: list[int] = []

    def gen():
        try:
            yield from range(5)
        finally:
            closed.append(1)

    counts = []
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.from_generator(gen, tf.int64, [])
        if initializable:
            it = tf.data.make_initializable_iterator(ds)
        else:
            it = tf.data.make_one_shot_iterator(ds)
        nxt = it.get_next()
        with tf.Session(graph=g) as sess:
            if initializable:
                sess.run(it.initializer)
            [sess.run(nxt) for _ in range(2)]
            counts.append(len(closed))
            if initializable:
                sess.run(it.initializer)  # the first generator's iterator is dropped
                _wait_for(lambda: len(closed) >= 1)
                counts.append(len(closed))
                [sess.run(nxt) for _ in range(2)]
        _wait_for(lambda: len(closed) >= 1 + initializable)
        counts.append(len(closed))
    return counts


@pytest.mark.parametrize("initializable", [False, True])
def test_dropped_iterators_finalize_like_tensorflow(initializable):
    theirs = _closed_counts(tf1, initializable)
    assert theirs == ([0, 1, 2] if initializable else [0, 1])
    assert _closed_counts(client, initializable) == theirs
