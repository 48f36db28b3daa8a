"""Client graph building: tf.PriorityQueue, Barrier, StagingArea and MapStagingArea build
the GraphDef tensorflow.compat.v1 builds (node names, ops, inputs, every attr) and their
programs give TensorFlow's values."""

from __future__ import annotations

import numpy as np
import pytest

import client
from client.ops import data_flow_ops as ours_dfo
from tests.client.tf1_oracle import run_both

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
from tensorflow.core.framework import graph_pb2  # noqa: E402
from tensorflow.python.ops import data_flow_ops as tf_dfo  # noqa: E402


def _dfo(api):
    return ours_dfo if api is client else tf_dfo


def _priority_queue(api):
    q = api.PriorityQueue(5, [api.float32], shapes=[[2]], name="pq")
    e = q.enqueue_many(
        [api.constant([3, 1, 2], api.int64), api.constant([[1.0, 2], [3, 4], [5, 6]])]
    )
    d = q.dequeue_many(2)
    q2 = api.queue.PriorityQueue(3, [api.string], shapes=[[]], shared_name="shared")
    e2 = q2.enqueue([api.constant(7, api.int64), "x"])
    return [e, e2], [d, q.size(), q2.dequeue(), q.close()]


def _barrier(api):
    b = _dfo(api).Barrier([api.string, api.float32], shapes=[[], [2]], name="b")
    i0 = b.insert_many(0, ["k1", "k2"], ["a", "b"])
    i1 = b.insert_many(1, ["k2", "k1"], [[1.0, 2], [3, 4]])
    take = b.take_many(2)
    return [i0, i1], [b.ready_size(), b.incomplete_size(), take, b.close()]


def _staging(api):
    sa = _dfo(api).StagingArea([api.float32, api.int32], shapes=[[2], []], capacity=2)
    put = sa.put([api.constant([1.0, 2]), api.constant(3)])
    return [put, put], [sa.size(), sa.peek(1), sa.get(), sa.size(), sa.clear()]


def _map_staging(api):
    m = _dfo(api).MapStagingArea([api.float32, api.int32], names=["f", "i"], ordered=True)
    p0 = m.put(api.constant(4, api.int64), {"f": api.constant(1.5)})
    p1 = m.put(api.constant(4, api.int64), {"i": api.constant(2)})
    p2 = m.put(api.constant(1, api.int64), {"f": api.constant(0.5), "i": api.constant(9)})
    return [p0, p1, p2], [
        m.size(),
        m.incomplete_size(),
        m.peek(4),
        m.get(),
        m.get(api.constant(4, api.int64), ["i"]),
    ]


CASES = {
    "priority_queue": _priority_queue,
    "barrier": _barrier,
    "staging_area": _staging,
    "map_staging_area": _map_staging,
}


def _graph_def(api, build) -> graph_pb2.GraphDef:
    with api.Graph().as_default() as g:
        build(api)
        out = graph_pb2.GraphDef()
        out.ParseFromString(g.as_graph_def().SerializeToString())
        return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_graph_matches_tensorflow(case: str) -> None:
    ours, theirs = (_graph_def(api, CASES[case]) for api in (client, tf1))
    assert [n.name for n in ours.node] == [n.name for n in theirs.node]
    for a, b in zip(ours.node, theirs.node, strict=True):
        assert (a.op, list(a.input)) == (b.op, list(b.input)), a.name
        assert dict(a.attr) == dict(b.attr), a.name


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_match_tensorflow(case: str) -> None:
    def build(api):
        puts, fetches = CASES[case](api)

        def steps(sess):
            for put in puts:
                sess.run(put)
            out = []
            for f in fetches:
                out.append(sess.run(f))
            return out

        return steps

    ours, theirs, _, _ = run_both(build)
    _assert_nested_equal(ours, theirs)


def _assert_nested_equal(a, b) -> None:
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            _assert_nested_equal(a[k], b[k])
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b, strict=True):
            _assert_nested_equal(x, y)
    elif a is None or b is None:
        assert a is None and b is None
    else:
        x, y = np.asarray(a), np.asarray(b)
        assert x.shape == y.shape, (x, y)
        np.testing.assert_array_equal(x, y)
