"""TF1's queue-based input pipeline in the client (tf.FIFOQueue & co, Coordinator,
QueueRunner / start_queue_runners, limit_epochs, *_input_producer, batch, batch_join,
shuffle_batch) against tensorflow.compat.v1: the same graph node names and, where the
order is deterministic, the same batches until OutOfRange."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import client

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True


def _drain(tf, build, target=""):
    """Build, start the queue runners under a Coordinator, fetch until OutOfRange;
    (fetched values, node names)."""
    g = tf.Graph()
    with g.as_default():
        fetch = build(tf)
        init = [tf.global_variables_initializer(), tf.local_variables_initializer()]
        names = sorted(n.name for n in g.as_graph_def().node)
        with tf.Session(target, graph=g) as sess:
            sess.run(init)
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord=coord)
            got = []
            try:
                while not coord.should_stop():
                    got.append(sess.run(fetch))
            except tf.errors.OutOfRangeError:
                pass
            finally:
                coord.request_stop()
            coord.join(threads)
            return got, names


def _slices(tf):
    xs = np.arange(10, dtype=np.float32).reshape(5, 2)
    ys = np.arange(5, dtype=np.int32)
    x, y = tf.train.slice_input_producer([xs, ys], num_epochs=2, shuffle=False)
    return tf.train.batch([x, y], batch_size=3, allow_smaller_final_batch=True)


def _strings(tf):
    q = tf.train.string_input_producer([b"a", b"b", b"c"], num_epochs=2, shuffle=False)
    return q.dequeue()


def _join(tf):
    a = tf.train.limit_epochs(tf.constant([1, 2], tf.int64), num_epochs=3)
    b = tf.train.limit_epochs(tf.constant([7, 8], tf.int64), num_epochs=3)
    return tf.train.batch_join([[a], [b]], batch_size=2, enqueue_many=True)


@pytest.mark.parametrize("build", [_slices, _strings, _join], ids=["slices", "strings", "join"])
def test_pipeline_like_tensorflow(build):
    ours, our_names = _drain(client, build)
    theirs, tf_names = _drain(tf1, build)
    assert our_names == tf_names
    if build is _join:  # two enqueue threads: the order between them is not fixed
        ours, theirs = (
            sorted(np.concatenate(ours).tolist()),
            sorted(np.concatenate(theirs).tolist()),
        )
        assert ours == theirs
        return
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        for x, y in zip(a if isinstance(a, list) else [a], b if isinstance(b, list) else [b]):
            np.testing.assert_array_equal(x, y)


def _shuffled(tf):
    x = tf.train.limit_epochs(tf.range(20), num_epochs=1)
    return tf.train.shuffle_batch(
        [x], 4, capacity=10, min_after_dequeue=5, enqueue_many=True, seed=3,
        allow_smaller_final_batch=True,
    )  # fmt: skip


def test_shuffle_batch_returns_every_element_once_with_tensorflow_names():
    ours, our_names = _drain(client, _shuffled)
    _, tf_names = _drain(tf1, _shuffled)
    assert our_names == tf_names
    assert sorted(np.concatenate(ours).tolist()) == list(range(20))


def test_queue_ops_named_and_shaped_as_tensorflow():
    def build(tf):
        q = tf.FIFOQueue(4, [tf.float32, tf.int32], shapes=[[2], []], name="q")
        r = tf.RandomShuffleQueue(4, 1, [tf.float32], seed=1, shared_name="rs")
        p = tf.PaddingFIFOQueue(4, [tf.int32], shapes=[[None]])
        ops = [q.enqueue([[1.0, 2.0], 3]), q.enqueue_many([[[1.0, 2.0]], [3]]), q.size()]
        ops += [q.dequeue(), q.dequeue_many(2), q.dequeue_up_to(3), q.close(), q.is_closed()]
        ops += [r.dequeue(), p.dequeue_many(2)]
        return tf.get_default_graph(), [o if isinstance(o, list) else [o] for o in ops]

    graphs = {}
    for tf in (client, tf1):
        g = tf.Graph()
        with g.as_default():
            _, outs = build(tf)
            graphs[tf] = (
                {n.name: (n.op, dict(n.attr).get("seed2")) for n in g.as_graph_def().node},
                [[str(t.shape) for t in o if hasattr(t, "shape")] for o in outs],
            )
    (ours, our_shapes), (theirs, tf_shapes) = graphs[client], graphs[tf1]
    assert {k: v[0] for k, v in ours.items()} == {k: v[0] for k, v in theirs.items()}
    assert our_shapes == tf_shapes


def test_coordinator_join_reraises_the_first_error_and_ignores_out_of_range():
    coord = client.train.Coordinator()

    def worker(err):
        with coord.stop_on_exception():
            raise err

    threads = [
        threading.Thread(target=worker, args=(client.errors.OutOfRangeError("done"),)),
    ]
    threads[0].start()
    coord.join(threads)  # OutOfRange is a clean stop
    assert coord.should_stop() and coord.joined
    coord.clear_stop()
    t = threading.Thread(target=worker, args=(ValueError("boom"),))
    t.start()
    with pytest.raises(ValueError, match="boom"):
        coord.join([t])
