"""A client that goes away mid-step (SIGKILL: its connections close without a cancel) has
its step stopped on the workers, as a cancel does, and the master logs it CANCELLED;
through real processes: a cluster started by the CLIs and a client process, over the
same-host socket (our client's path) and over gRPC (FLOWRT_LOCAL_RPC=0)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator

import pytest

import client as tf
from deploy.launcher import REPO_ROOT, LocalCluster, child_env

from .conftest import stop_cluster

_TICKS = os.sysconf("SC_CLK_TCK")

CLIENT = textwrap.dedent(
    """
    import sys
    import client as tf

    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            spin = tf.while_loop(
                lambda i: i < 10**12, lambda i: i + 1, [tf.constant(0, tf.int64)], name="spin"
            )
        with tf.Session(sys.argv[1]) as sess:
            sess.run(tf.constant(1.0))
            print("running", flush=True)
            sess.run(spin)
    """
)


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    # The worker's own step timeout is far away: only the lost client can stop the step.
    started = LocalCluster(
        jobs={"worker": 1},
        master_args=["--rpc-timeout", "10"],
        worker_args=["--step-timeout", "600"],
    ).start()
    try:
        yield started
    finally:
        stop_cluster(started)


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _busy(pid: int, window: float) -> float:
    """The share of one core `pid` used over the next `window` seconds."""
    before = _cpu_s(pid)
    time.sleep(window)
    return (_cpu_s(pid) - before) / window


def _wait_for(pid: int, busy: bool, within: float) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        share = _busy(pid, 0.5)
        if (share > 0.2) if busy else (share < 0.05):
            return True
    return False


@pytest.mark.parametrize("transport", ["socket", "grpc"])
def test_a_killed_client_has_its_step_stopped_on_the_worker(
    cluster: LocalCluster, transport: str
) -> None:
    worker = cluster.tasks["worker0"].proc.pid
    master = cluster.tasks["master"]
    env = {**child_env(), "FLOWRT_LOCAL_RPC": "1" if transport == "socket" else "0"}
    proc = subprocess.Popen(
        [sys.executable, "-c", CLIENT, cluster.target],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "running"
        assert _wait_for(worker, busy=True, within=60), "the loop never ran on the worker"
        logged = len(master.lines)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        assert _wait_for(worker, busy=False, within=30), (
            "the worker still runs the killed client's step"
        )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    end = time.monotonic() + 30
    while not any("step failed" in line for line in master.lines[logged:]):
        assert time.monotonic() < end, "the master did not log the lost client's step"
        time.sleep(0.2)
    failed = [line for line in master.lines[logged:] if "step failed" in line]
    assert "code=CANCELLED" in failed[0], failed
    # The cluster serves new sessions.
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            total = tf.constant(2.0) + 3.0
        with tf.Session(cluster.target) as sess:
            assert sess.run(total) == 5.0
