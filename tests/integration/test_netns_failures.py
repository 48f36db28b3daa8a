"""Integration, multi-host failures (deploy.netns: a host per task, the test a client
host): a link that goes silent (no reset) between the master and a worker or between two
workers mid-step, and a frozen worker (SIGSTOP), fail the step with UnavailableError naming
the task within a bounded time (gRPC keepalives: rpc.channels), well before the step's own
deadline; the master serves sessions that do not need the task meanwhile
(ConfigProto.device_filters); when the link returns (SIGCONT) the same processes and the
same session run steps on the task again. A worker restarted on its address serves new
sessions. Skips where namespaces cannot be made, with the reason."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import client as ours
from client.framework.op_builder import apply_op
from deploy import netns
from deploy.launcher import LocalCluster

W0, W1, PS = "/job:worker/task:0", "/job:worker/task:1", "/job:ps/task:0"
W0_NAME, W1_NAME = "/job:worker/replica:0/task:0", "/job:worker/replica:0/task:1"
STEP_DEADLINE_MS = 45_000  # the steps' own deadline: failures must come well before it
BOUND_S = 20.0  # keepalive detection bound asserted (time + timeout, with slack for load)


@pytest.fixture(scope="module")
def bed() -> Iterator[netns.NetnsBed]:
    reason = netns.available()
    if reason is not None:
        pytest.skip(f"multi-host test bed unavailable: {reason}")
    with netns.NetnsBed(4) as made:
        yield made


@pytest.fixture(scope="module")
def cluster(bed: netns.NetnsBed) -> Iterator[LocalCluster]:
    started = LocalCluster(master_args=["--rpc-timeout", "10"], netns=bed).start()
    try:
        yield started
    finally:
        tasks = list(started.tasks.values()) + started.retired
        started.stop()
        assert [t.name for t in tasks if t.proc.poll() is None] == []


def blocked_dequeue(device: str) -> Any:
    """A step part that waits forever on `device` (a private queue nobody fills)."""
    with ours.device(device):
        queue = apply_op("FIFOQueueV2", [], {"component_types": [ours.float32]}).outputs[0]
        return apply_op("QueueDequeueV2", [queue], {"component_types": [ours.float32]}).outputs[0]


class Background:
    """Runs `fn` in a thread; its error (or None) and how long it took."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.error: BaseException | None = None
        self.elapsed = 0.0
        self._fn = fn
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        start = time.monotonic()
        try:
            self._fn()
        except BaseException as e:  # noqa: BLE001 - reported to the test
            self.error = e
        self.elapsed = time.monotonic() - start

    def join(self) -> None:
        self._thread.join(STEP_DEADLINE_MS / 1000 + 30)
        assert not self._thread.is_alive()


def eventually(fn: Callable[[], Any], timeout: float = 30.0) -> Any:
    """fn() once it stops raising (a channel reconnecting after the link came back)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return fn()
        except ours.errors.OpError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def build() -> tuple[Any, dict[str, Any]]:
    g = ours.Graph()
    with g.as_default():
        with ours.device(PS):
            v = ours.Variable(np.float32(1.0), name="v")
        with ours.device(W0):
            on_w0 = v + 1.0
        with ours.device(W1):
            on_w1 = on_w0 * 2.0
        ops = {
            "init": v.initializer,
            "w0": on_w0,
            "w1": on_w1,
            "stuck_w1": blocked_dequeue(W1) + on_w0,
            "stuck_w0_to_w1": ours.identity(blocked_dequeue(W0)) * 1.0,
        }
        with ours.device(W1):
            ops["stuck_w0_to_w1"] = ours.identity(ops["stuck_w0_to_w1"])
    return g, ops


def no_w1() -> Any:
    return ours.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"])


def fail_then_recover(
    cluster: LocalCluster,
    stuck: str,
    break_it: Callable[[], None],
    repair: Callable[[], None],
    task_named: str,
) -> None:
    g, ops = build()
    sess = ours.Session(cluster.target, graph=g)
    others = ours.Session(cluster.target, graph=g, config=no_w1())
    try:
        sess.run(ops["init"])
        assert sess.run(ops["w1"]) == 4.0
        step = Background(
            lambda: sess.run(ops[stuck], options=ours.RunOptions(timeout_in_ms=STEP_DEADLINE_MS))
        )
        time.sleep(1.0)  # the step is in flight on the workers
        break_it()
        served = 0
        try:
            while step._thread.is_alive() and served < 200:  # other sessions meanwhile
                assert others.run(ops["w0"]) == 2.0
                served += 1
            fresh = ours.Session(cluster.target, graph=g, config=no_w1())
            assert fresh.run(ops["w0"]) == 2.0  # a new session starts at once, too
            fresh.close()
            step.join()
        finally:
            repair()
        assert isinstance(step.error, ours.errors.UnavailableError), repr(step.error)
        assert task_named in step.error.message
        assert step.elapsed < BOUND_S, step.elapsed
        assert served > 0
        assert eventually(lambda: sess.run(ops["w1"])) == 4.0  # same session, same processes
    finally:
        sess.close()
        others.close()


def test_link_cut_between_master_and_worker(cluster, bed):
    m, w1 = cluster.hosts["master"], cluster.hosts["worker1"]
    fail_then_recover(cluster, "stuck_w1", lambda: bed.cut(m, w1), lambda: bed.heal(m, w1), W1_NAME)


def test_link_cut_between_two_workers(cluster, bed):
    w0, w1 = cluster.hosts["worker0"], cluster.hosts["worker1"]
    fail_then_recover(
        cluster, "stuck_w0_to_w1", lambda: bed.cut(w0, w1), lambda: bed.heal(w0, w1), W0_NAME
    )


def test_frozen_worker(cluster):
    proc = cluster.tasks["worker1"].proc
    fail_then_recover(
        cluster, "stuck_w1", lambda: proc.send_signal(19), lambda: proc.send_signal(18), W1_NAME
    )


def test_worker_restarted_on_the_same_address(cluster):
    g, ops = build()
    cluster.tasks["worker1"].kill()
    cluster.restart_task("worker", 1)
    with ours.Session(cluster.target, graph=g) as sess:
        sess.run(ops["init"])
        assert sess.run(ops["w1"]) == 4.0
