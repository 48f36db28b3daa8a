"""Ops that block (a barrier take, a staging-area get, a map-staging get, a priority-queue
dequeue) on an empty resource, through a real cluster driven by TensorFlow's client:
each wait ends within its bound when the session's operation timeout passes (as
TensorFlow's own session does for the barrier and the queue: DeadlineExceeded; its
staging areas wait on a condition variable no timeout reaches, so TensorFlow hangs there
and ours must still end), when the session is closed from another thread, and when the client process is killed mid-wait; the workers then serve a normal
step and the blocked step is not left running."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from deploy.launcher import REPO_ROOT, LocalCluster, child_env

from .conftest import stop_cluster
from .test_hostile_kernels import assert_alive

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

TIMEOUT_MS = 1500
BOUND_S = 30.0  # a generous bound on a loaded machine; the waits end in about TIMEOUT_MS


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    # The workers' own step timeout is far away: only the client's bound may end a wait.
    started = LocalCluster(
        master_args=["--rpc-timeout", "10"], worker_args=["--step-timeout", "600"]
    ).start()
    try:
        yield started
    finally:
        stop_cluster(started)


def _barrier_take(shared: str) -> Any:
    b = tf.raw_ops.Barrier(component_types=[tf.float32], shapes=[[]], shared_name=shared)
    return tf.raw_ops.BarrierTakeMany(
        handle=b, num_elements=1, component_types=[tf.float32], name="blocked"
    )[2]


def _unstage(shared: str) -> Any:
    return tf.raw_ops.Unstage(dtypes=[tf.float32], shared_name=shared, name="blocked")


def _map_unstage(shared: str) -> Any:
    return tf.raw_ops.MapUnstage(
        key=tf.constant(7, tf.int64),
        indices=tf.constant([0]),
        dtypes=[tf.float32],
        shared_name=shared,
        name="blocked",
    )


def _priority_dequeue(shared: str) -> Any:
    q = tf.raw_ops.PriorityQueueV2(component_types=[tf.float32], shapes=[[]], shared_name=shared)
    return tf.raw_ops.QueueDequeueV2(
        handle=q, component_types=[tf.int64, tf.float32], name="blocked"
    )


WAITS: dict[str, Callable[[str], Any]] = {
    "barrier take": _barrier_take,
    "staging get": _unstage,
    "map staging get": _map_unstage,
    "priority queue dequeue": _priority_dequeue,
}
# TensorFlow 2.21's in-process session hangs past its operation timeout on these.
TF_UNBOUNDED = {"staging get", "map staging get"}
SOURCES = {  # the same graphs for a client process of its own
    "barrier take": "tf.raw_ops.BarrierTakeMany(handle=tf.raw_ops.Barrier("
    "component_types=[tf.float32], shapes=[[]], shared_name=NAME), num_elements=1, "
    "component_types=[tf.float32])[2]",
    "staging get": "tf.raw_ops.Unstage(dtypes=[tf.float32], shared_name=NAME)",
}


def _graph(wait: str, shared: str, device: str | None) -> tuple[Any, Any]:
    graph = tf1.Graph()
    with graph.as_default():
        if device:
            with tf.device(device):
                fetch = WAITS[wait](shared)
        else:
            fetch = WAITS[wait](shared)
    return graph, fetch


def _timed_error(target: str, wait: str, shared: str, device: str | None) -> tuple[Any, float]:
    graph, fetch = _graph(wait, shared, device)
    config = tf1.ConfigProto(operation_timeout_in_ms=TIMEOUT_MS)
    start = time.monotonic()
    with (
        tf1.Session(target, graph=graph, config=config) as sess,
        pytest.raises(tf.errors.OpError) as info,
    ):
        sess.run(fetch)
    return info.value, time.monotonic() - start


@pytest.mark.parametrize("wait", list(WAITS))
def test_a_blocked_op_ends_at_the_operation_timeout_as_in_tensorflow(
    cluster: LocalCluster, wait: str
) -> None:
    if wait not in TF_UNBOUNDED:
        theirs, _ = _timed_error("", wait, f"timeout_{wait}", None)
        assert type(theirs) is tf.errors.DeadlineExceededError, theirs.message
    ours, took = _timed_error(cluster.target, wait, f"timeout_{wait}", "/job:worker/task:1")
    assert type(ours) is tf.errors.DeadlineExceededError, ours.message
    assert took < BOUND_S
    assert_alive(cluster)


@pytest.mark.parametrize("wait", list(WAITS))
def test_a_blocked_op_ends_when_its_session_is_closed(cluster: LocalCluster, wait: str) -> None:
    graph, fetch = _graph(wait, f"close_{wait}", "/job:worker/task:1")
    # The session's own bound is far away: only the close may end the wait.
    config = tf1.ConfigProto(operation_timeout_in_ms=120_000)
    sess = tf1.Session(cluster.target, graph=graph, config=config)
    ended: list[BaseException] = []

    def run() -> None:
        try:
            sess.run(fetch)
        except BaseException as error:  # noqa: BLE001 (handed to the test's thread)
            ended.append(error)

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    time.sleep(2.0)
    assert runner.is_alive(), f"the wait did not block: {ended}"
    start = time.monotonic()
    sess.close()
    runner.join(BOUND_S)
    assert not runner.is_alive(), "the blocked step outlived its session"
    assert time.monotonic() - start < BOUND_S
    assert ended and isinstance(ended[0], tf.errors.OpError), ended
    assert ended[0].error_code not in (tf.errors.UNKNOWN, tf.errors.INTERNAL), ended[0].message
    assert_alive(cluster)


CLIENT = textwrap.dedent(
    """
    import sys
    import tensorflow as tf

    tf.compat.v1.disable_eager_execution()
    NAME = sys.argv[2]
    with tf.device("/job:worker/task:1"):
        blocked = {source}
    with tf.compat.v1.Session(sys.argv[1]) as sess:
        sess.run(tf.constant(1.0))
        print("running", flush=True)
        sess.run(blocked)
    """
)


@pytest.mark.parametrize("wait", list(SOURCES))
def test_a_client_killed_mid_wait_has_its_step_ended(cluster: LocalCluster, wait: str) -> None:
    master = cluster.tasks["master"]
    logged = len(master.lines)
    proc = subprocess.Popen(
        [sys.executable, "-c", CLIENT.format(source=SOURCES[wait]), cluster.target, f"kill_{wait}"],
        cwd=REPO_ROOT,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "running"
        time.sleep(2.0)
        proc.kill()
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    end = time.monotonic() + BOUND_S
    while not any("step failed" in line for line in master.lines[logged:]):
        assert time.monotonic() < end, "the master did not end the lost client's step"
        time.sleep(0.2)
    failed = [line for line in master.lines[logged:] if "step failed" in line]
    assert "code=CANCELLED" in failed[0], failed
    assert_alive(cluster)
