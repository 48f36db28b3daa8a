"""Hostile input to the kernels added last round, through a real cluster (master, 2
workers and a ps started by their CLIs, each task under a 2 GB memory limit): each case of
hostile_cases runs on TensorFlow 2.21 in-process and, built by TensorFlow's client with
the op on worker 1 and its inputs fed on worker 0, on our master. Ours must answer as
TensorFlow does: the same values, or an error of the same code naming the node; where
TensorFlow aborts its process, a clean error naming the node. Every family ends with a
normal step on both workers: a hostile graph never takes a task down."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from deploy.launcher import LocalCluster

from .conftest import stop_cluster
from .hostile_cases import CASES, NAME, Case

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

# A kernel that allocates what a hostile size asks for fails under this budget instead
# of taking the machine's memory (TensorFlow's own CPU allocator would try).
MEMORY_LIMIT = "2G"
STEP_TIMEOUT_MS = 60_000
# Codes an unexpected Python exception becomes: never acceptable for a checked input.
UNCLEAN = {tf.errors.UNKNOWN, tf.errors.INTERNAL}


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    started = LocalCluster(
        master_args=["--rpc-timeout", "10", "--memory-limit", MEMORY_LIMIT],
        worker_args=["--memory-limit", MEMORY_LIMIT],
    ).start()
    try:
        yield started
    finally:
        stop_cluster(started)


def _device(name: str | None) -> Any:
    return tf.device(name) if name else contextlib.nullcontext()


def build(case: Case, op_device: str | None, feed_device: str | None) -> tuple[Any, Any, dict]:
    """(graph, fetches, feeds) of `case`, the op on `op_device`, its feeds on `feed_device`."""
    graph = tf1.Graph()
    feeds: dict[Any, Any] = {}

    def feed(value: Any) -> Any:
        value = np.asarray(value)
        with _device(feed_device):
            placeholder = tf1.placeholder(tf.as_dtype(value.dtype), name=f"in{len(feeds)}")
        feeds[placeholder] = value
        return placeholder

    with graph.as_default(), _device(op_device):
        fetches = case.build(tf, feed)
    return graph, fetches, feeds


def outcome(target: str, case: Case, op_device: str | None, feed_device: str | None) -> Any:
    """The fetched values, or the OpError the step raised."""
    graph, fetches, feeds = build(case, op_device, feed_device)
    config = tf1.ConfigProto(operation_timeout_in_ms=STEP_TIMEOUT_MS)
    with tf1.Session(target, graph=graph, config=config) as sess:
        try:
            return sess.run(fetches, feeds)
        except tf.errors.OpError as error:
            return error


def _flat(values: Any) -> list[np.ndarray]:
    if isinstance(values, (list, tuple)):
        return [v for item in values for v in _flat(item)]
    if hasattr(values, "_fields"):  # a namedtuple of raw_ops outputs
        return [v for item in tuple(values) for v in _flat(item)]
    return [] if values is None else [np.asarray(values)]


def assert_same(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, tf.errors.OpError):
        assert isinstance(ours, tf.errors.OpError), f"TensorFlow: {theirs!r}; ours ran: {ours}"
        assert (ours.error_code, ours.__class__) == (theirs.error_code, theirs.__class__), (
            f"TensorFlow: {theirs.message!r}; ours: {ours.message!r}"
        )
        assert NAME in ours.message or (ours.node_def and ours.node_def.name), ours.message
        return
    assert not isinstance(ours, tf.errors.OpError), f"TensorFlow ran; ours: {ours.message!r}"
    got, want = _flat(ours), _flat(theirs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g, w)
        if g.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)


def assert_alive(cluster: LocalCluster) -> None:
    """A normal step on both workers after the hostile ones."""
    graph = tf1.Graph()
    with graph.as_default():
        with tf.device("/job:worker/task:0"):
            a = tf.constant([1.0, 2.0])
        with tf.device("/job:worker/task:1"):
            b = a * 3.0
    with tf1.Session(cluster.target, graph=graph) as sess:
        assert sess.run(b).tolist() == [3.0, 6.0]
    for name, task in cluster.tasks.items():
        assert task.proc.poll() is None, f"{name} exited"


@pytest.mark.parametrize("case", CASES, ids=[f"{c.family}: {c.name}" for c in CASES])
def test_hostile_input_is_answered_as_tensorflow_does(cluster: LocalCluster, case: Case) -> None:
    ours = outcome(cluster.target, case, "/job:worker/task:1", "/job:worker/task:0")
    if case.tf_unsafe:
        if isinstance(ours, tf.errors.OpError):
            assert ours.error_code not in UNCLEAN, ours.message
            assert NAME in ours.message
    else:
        assert_same(ours, outcome("", case, None, None))
    for name, task in cluster.tasks.items():
        assert task.proc.poll() is None, f"{name} exited after {case.name}"


def test_the_workers_serve_a_normal_step_after_the_hostile_ones(cluster: LocalCluster) -> None:
    assert_alive(cluster)
