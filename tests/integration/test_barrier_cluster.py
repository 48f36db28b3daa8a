"""Integration, barriers through a real cluster: a barrier on worker 0 filled from both
workers (component 0 made on worker 1, component 1 on worker 0) and taken on worker 1;
a second barrier under the same shared_name with other component types is refused with
TensorFlow's error. Built once by TensorFlow's own client (tf.compat.v1.Session against
OUR master) and once by ours; values compared with TensorFlow's local session."""

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


def _no_device(name):
    return contextlib.nullcontext()  # the local oracle has only /job:localhost


def _fill_and_take(api, dfo, target: str, dev, shared_name: str) -> list:
    """A shared barrier outlives its session on a worker: each run names its own."""
    g = api.Graph()
    with g.as_default():
        with dev(W0):
            b = dfo.Barrier((api.string, api.float32), shapes=((), (2,)), shared_name=shared_name)
            keys = api.placeholder(api.string, [None], name="keys")
            ones = api.ones(api.stack([api.size(keys), 2]))
            ins1 = b.insert_many(1, keys, ones * 1.5)
        with dev(W1):
            labels = api.strings.join([keys, api.fill(api.shape(keys), "!")])
            ins0 = b.insert_many(0, keys, labels)
            sizes = [b.ready_size(), b.incomplete_size()]
            taken = b.take_many(2)
    with api.Session(target, graph=g) as sess:
        sess.run(ins0, {keys: ["a", "b", "c"]})
        first = sess.run(sizes)
        sess.run(ins1, {keys: ["c", "a"]})
        return [first, sess.run(sizes), sess.run(taken), sess.run(sizes)]


def _flat(values: list) -> list[np.ndarray]:
    flat: list[np.ndarray] = []
    for v in values:
        flat.extend(_flat(v) if isinstance(v, (list, tuple)) else [np.asarray(v)])
    return flat


def test_barrier_across_workers_with_both_clients(shared_cluster) -> None:
    want = _flat(_fill_and_take(tf1, tf_dfo, "", _no_device, "B"))
    for api, dfo, tag in ((tf1, tf_dfo, "tf"), (ours, ours_dfo, "ours")):
        got = _flat(_fill_and_take(api, dfo, shared_cluster.target, api.device, f"B_{tag}"))
        assert len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
    # "a" and "c" share their first insert's index: they leave in the order they completed
    # ("c" first); "b" stays incomplete.
    np.testing.assert_array_equal(want[5], [b"c", b"a"])
    np.testing.assert_array_equal(want[8:], [0, 1])


def _mismatched_shared_barrier(api, dfo, target: str, dev, shared_name: str) -> str:
    g = api.Graph()
    with g.as_default(), dev(W0):
        first = dfo.Barrier((api.string,), shapes=((),), shared_name=shared_name)
        second = dfo.Barrier((api.float32,), shapes=((),), shared_name=shared_name)
        size_first, size_second = first.ready_size(), second.ready_size()
    with (
        api.Session(target, graph=g) as sess,
        pytest.raises(api.errors.InvalidArgumentError) as info,
    ):
        sess.run(size_first)
        sess.run(size_second)
    return str(info.value)


def _refusal(name: str) -> str:
    return (
        f"Shared barrier '{name}' has component types string but requested component "
        "types were float"
    )


@pytest.mark.parametrize("api, dfo", [(ours, ours_dfo), (tf1, tf_dfo)], ids=["ours", "tf"])
def test_shared_barrier_with_other_types_is_tensorflows_error(shared_cluster, api, dfo) -> None:
    assert _refusal("S") in _mismatched_shared_barrier(tf1, tf_dfo, "", _no_device, "S")
    name = f"S_{api.__name__.replace('.', '_')}"
    message = _mismatched_shared_barrier(api, dfo, shared_cluster.target, api.device, name)
    assert _refusal(name) in message
    assert "barrier_1" in message  # the node that asked for the barrier
