"""Session features beyond run(): partial runs, list_devices, callables — in-process
and against our master over gRPC."""

from __future__ import annotations

import numpy as np
import pytest

import client as tf
from tests.client.test_cluster import target  # noqa: F401  (fixture)


def _partial_graph():
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.float32, [], name="p")
        q = tf.placeholder(tf.float32, [], name="q")
        a = tf.identity(p * 2.0, name="a")
        b = tf.add(a, q, name="b")
    return g, p, q, a, b


def _partial_run_errors(sess, p, q, a, b, errors=tf.errors):
    """The partial-run sequence of tests/client's TF probe, with TF's messages."""
    h = sess.partial_run_setup([a, b], [p, q])
    out = [sess.partial_run(h, a, {p: 1.0})]
    for fetch, feeds in [(b, {}), (b, {p: 3.0}), (a, {q: 1.0})]:
        with pytest.raises(errors.InvalidArgumentError) as e:
            sess.partial_run(h, fetch, feeds)
        out.append(e.value.message)
    out.append(sess.partial_run(h, [b], {q: 5.0}))
    with pytest.raises(errors.InvalidArgumentError) as e:
        sess.partial_run(h, b, {})
    out.append(e.value.message)
    return out


EXPECTED_PARTIAL = [
    2.0,
    "Fetch q:0 can't be computed from the feeds that have been fed so far.",
    "The feed p:0 has already been fed.",
    "The fetch a:0 has already been fetched.",
    [7.0],
    "Must run 'setup' before performing partial runs!",
]


def test_partial_run_in_process_like_tensorflow():
    g, p, q, a, b = _partial_graph()
    with tf.Session(graph=g) as sess:
        assert _partial_run_errors(sess, p, q, a, b) == EXPECTED_PARTIAL
        h = sess.partial_run_setup([b], [p, q])
        with pytest.raises(
            tf.errors.InvalidArgumentError,
            match="The fetch a:0 was not specified in partial_run_setup.",
        ):
            sess.partial_run(h, a, {p: 1.0})
        with pytest.raises(
            tf.errors.InvalidArgumentError,
            match="The feed b:0 was not specified in partial_run_setup.",
        ):
            sess.partial_run(h, b, {b: 1.0})


def test_partial_run_targets_run_with_the_last_fetch():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(0.0)
        p = tf.placeholder(tf.float32, [])
        inc = v.assign_add(1.0)
        with tf.Session(graph=g) as sess:
            sess.run(v.initializer)
            h = sess.partial_run_setup([p * 3.0, inc.op], [p])
            assert sess.partial_run(h, g.get_tensor_by_name("mul:0"), {p: 2.0}) == 6.0
            assert sess.run(v) == 1.0


def test_partial_run_over_grpc_sends_setup_and_handle(target):  # noqa: F811
    g, p, q, a, b = _partial_graph()
    with tf.Session(target, graph=g) as sess:
        h = sess.partial_run_setup([a, b], [p, q])
        assert isinstance(h, str) and h
        assert sess.partial_run(h, a, {p: 1.0}) == 2.0
        assert sess.partial_run(h, [b], {q: 5.0}) == [7.0]
        # TF's MasterSession words it so (DirectSession: "Must run 'setup' ...").
        with pytest.raises(
            tf.errors.InvalidArgumentError,
            match="^Must run PartialRunSetup before performing partial runs$",
        ):
            sess.partial_run(h, b, {})


def test_partial_run_over_grpc_errors_like_tensorflow(target):  # noqa: F811
    g, p, q, a, b = _partial_graph()
    with tf.Session(target, graph=g) as sess:
        assert _partial_run_errors(sess, p, q, a, b) == EXPECTED_PARTIAL[:-1] + [
            "Must run PartialRunSetup before performing partial runs"
        ]


def test_partial_run_matches_tensorflow():
    tf_real = pytest.importorskip("tensorflow")
    tf1 = tf_real.compat.v1
    tg = tf1.Graph()
    with tg.as_default():
        p = tf1.placeholder(tf1.float32, [], name="p")
        q = tf1.placeholder(tf1.float32, [], name="q")
        a = tf1.identity(p * 2.0, name="a")
        b = tf1.add(a, q, name="b")
        with tf1.Session(graph=tg) as sess:
            theirs = _partial_run_errors(sess, p, q, a, b, tf1.errors)
    assert [
        t if isinstance(t, (float, np.floating, list)) else t.splitlines()[-1] for t in theirs
    ] == EXPECTED_PARTIAL


def test_list_devices_in_process():
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Session(graph=tf.Graph(), config=config) as sess:
        devices = sess.list_devices()
    assert [(d.name, d.device_type) for d in devices] == [
        ("/job:localhost/replica:0/task:0/device:CPU:0", "CPU"),
        ("/job:localhost/replica:0/task:0/device:CPU:1", "CPU"),
    ]
    assert all(d.memory_limit_bytes > 0 and d.incarnation != 0 for d in devices)
    assert repr(devices[0]).startswith(
        "_DeviceAttributes(/job:localhost/replica:0/task:0/device:CPU:0, CPU, "
    )


def test_list_devices_over_grpc_creates_the_session_first(target):  # noqa: F811
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(2.0, name="x")
        with tf.Session(target, graph=g) as sess:
            devices = sess.list_devices()
            graph_version = sess._runner.graph_version
            y = x * 3.0
            assert sess.run(y) == 6.0  # the whole graph goes in an ExtendSession
            assert sess._runner.graph_version > graph_version
    names = [d.name for d in devices]
    assert sorted(names) == [  # the master runs no ops, so it lists no device of its own
        "/job:ps/replica:0/task:0/device:CPU:0",
        "/job:worker/replica:0/task:0/device:CPU:0",
        "/job:worker/replica:0/task:1/device:CPU:0",
    ]
    assert {d.device_type for d in devices} == {"CPU"}
    assert all(d.memory_limit_bytes > 0 for d in devices)
    assert len({d.incarnation for d in devices}) == 3


@pytest.fixture
def master():
    from tests.in_process import in_process_cluster

    with in_process_cluster({"worker": 2}) as server:
        yield server


def _callable_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        k = tf.placeholder(tf.int32, [], name="k")
        v = tf.Variable(0.0, name="v")
        inc = v.assign_add(1.0)
        y = tf.reduce_sum(x) * tf.cast(k, tf.float32)
    return g, x, k, v, inc, y


def test_make_callable_over_grpc_uses_make_and_release_callable(master):
    g, x, k, v, inc, y = _callable_graph()
    with tf.Session(master.target, graph=g) as sess:
        sess.run(v.initializer)
        call = sess.make_callable({"y": y, "pair": (y, [x])}, feed_list=[x, k])
        (handle,) = master.master.session_handles()
        ms = master.master.session(handle)
        assert len(ms._callables) == 1
        out = call([1.0, 2.0], 3)
        assert out["y"] == 9.0 and out["pair"][0] == 9.0
        np.testing.assert_array_equal(out["pair"][1][0], np.array([1.0, 2.0], np.float32))
        assert out["pair"][1][0].dtype == np.float32
        bump = sess.make_callable(inc.op)
        assert bump() is None and bump() is None
        assert sess.run(v) == 2.0
        with pytest.raises(TypeError, match="Callable expected 2 arguments, got 1"):
            call([1.0])
        del call, bump
        import gc

        gc.collect()
        assert ms._callables == {}


def test_make_callable_from_options_over_grpc(master):
    g, x, k, v, inc, y = _callable_graph()
    with tf.Session(master.target, graph=g) as sess:
        opts = tf.CallableOptions(feed=["x:0", "k:0"], fetch=[y.name, "Sum:0"])
        run = sess._make_callable_from_options(opts)
        values = run(np.array([0.5, 0.5], np.float32), np.int32(4))
        assert [np.asarray(a).tolist() for a in values] == [4.0, 1.0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="x:0 is both fed and fetched"):
            sess._make_callable_from_options(tf.CallableOptions(feed=["x:0"], fetch=["x:0"]))


def test_make_callable_in_process_wraps_run():
    g, x, k, v, inc, y = _callable_graph()
    with tf.Session(graph=g) as sess:
        call = sess.make_callable([y], feed_list=[x, k])
        assert call([1.0, 2.0], 2) == [6.0]
        run = sess._make_callable_from_options(
            tf.CallableOptions(feed=["k:0", "x:0"], fetch=[y.name])
        )
        assert run(1, np.array([3.0], np.float32)) == [3.0]
