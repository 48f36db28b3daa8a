"""Integration, staging areas, priority queues and vocabulary tables through a real
cluster: a producer on worker 0 stages tensors and enqueues them by priority; a consumer
on worker 1 reads them (the values cross workers); a vocabulary file table lives on the
ps and is read from worker 1. Built once by TensorFlow's own client
(tf.compat.v1.Session against OUR master, processes started through the CLIs) and once by
ours; both compared with TensorFlow's local session."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import client as ours
from client.ops import data_flow_ops as ours_dfo

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
from tensorflow.python.ops import data_flow_ops as tf_dfo  # noqa: E402

TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

W0, W1 = "/job:worker/task:0", "/job:worker/task:1"
ROWS = np.array([[3.0, 1, 0], [0.5, 0, 0], [1, 1, 0.25]], np.float32)


def _no_device(name):
    return contextlib.nullcontext()  # the local oracle has only /job:localhost


def _run(api, dfo, target: str, dev) -> list:
    g = api.Graph()
    with g.as_default():
        with dev(W0):
            x = api.placeholder(api.float32, [3], name="x")
            area = dfo.StagingArea([api.float32, api.int32], shapes=[[3], []], capacity=2)
            put = area.put([x * 2.0, api.constant(7)])
            pq = api.PriorityQueue(8, [api.float32], shapes=[[3]], name="by_priority")
            enqueue = pq.enqueue([api.cast(api.reduce_sum(x) * 10.0, api.int64), x])
            ordered = pq.dequeue_many(3)
            keyed = dfo.MapStagingArea([api.float32], ordered=True)
            k = api.placeholder(api.int64, [], name="k")
            keyed_put = keyed.put(k, [x], indices=[0])
        with dev(W1):
            got = area.get()
            consumed = api.reduce_sum(got[0]) + api.cast(got[1], api.float32)
            sums = api.reduce_sum(ordered[1], axis=1)
            first_key, first = keyed.get()
            first_sum = api.reduce_sum(first[0])
    out = []
    with api.Session(target, graph=g) as sess:
        for i, row in enumerate(ROWS):
            sess.run(put, {x: row})
            out.append(sess.run(consumed))
            sess.run([enqueue, keyed_put], {x: row, k: 10 - i})
        out.append(sess.run([ordered[0], sums]))
        out.append(sess.run([first_key, first_sum]))
        out.append(sess.run([area.size(), keyed.size()]))
    return out


def _flat(values: list) -> list[np.ndarray]:
    flat: list[np.ndarray] = []
    for v in values:
        flat.extend(_flat(v) if isinstance(v, (list, tuple)) else [np.asarray(v)])
    return flat


def test_staging_and_priority_queue_across_workers_with_both_clients(shared_cluster):
    want = _flat(_run(tf1, tf_dfo, "", _no_device))
    for api, dfo in ((tf1, tf_dfo), (ours, ours_dfo)):
        got = _flat(_run(api, dfo, shared_cluster.target, api.device))
        assert len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6)
    # Smallest priority first: sums 4, 0.5, 2.25 -> priorities 40, 5, 22.
    np.testing.assert_array_equal(want[3], [5, 22, 40])


PS = "/job:ps/task:0"
WORDS = ["the", "cat", "sat", "on", "mat"]


def _vocabulary(api, lookup, vocab: str, target: str, dev) -> list:
    g = api.Graph()
    with g.as_default():
        with dev(PS):
            table = lookup.index_table_from_file(vocab, key_column_index=0)
            back = lookup.index_to_string_table_from_file(vocab, value_column_index=0)
        with dev(W1):
            words = api.placeholder(api.string, [None], name="words")
            ids = table.lookup(words)
            again = back.lookup(ids)
        init = api.tables_initializer()
    with api.Session(target, graph=g) as sess:
        sess.run(init)
        return sess.run([ids, again, table.size()], {words: ["mat", "dog", "the"]})


def test_vocabulary_file_table_on_ps_with_both_clients(shared_cluster, tmp_path):
    from tensorflow.python.ops import lookup_ops as tf_lookup

    from client.ops import lookup_ops as ours_lookup

    vocab = tmp_path / "vocab.txt"
    vocab.write_text("".join(f"{w}\t{i}\n" for i, w in enumerate(WORDS)))
    want = _vocabulary(tf1, tf_lookup, str(vocab), "", _no_device)
    np.testing.assert_array_equal(want[0], [4, -1, 0])
    for api, lookup in ((tf1, tf_lookup), (ours, ours_lookup)):
        got = _vocabulary(api, lookup, str(vocab), shared_cluster.target, api.device)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
