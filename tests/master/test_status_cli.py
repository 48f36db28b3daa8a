"""`python -m master status` against a real cluster started by the CLIs (master with
`--log-format json`): the table and `--json` name every task, the open session and the
failed step with its node; a task killed shows as DOWN; a target nobody serves is exit 3
with UnavailableError naming it. The master's failed-step log line is one JSON object."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import client as tf
from deploy.launcher import LocalCluster, child_env

REPO = Path(__file__).resolve().parents[2]
WORKER1 = "/job:worker/replica:0/task:1"


def _status(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "master", "status", *args],
        cwd=REPO,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(master_args=["--log-format", "json"], log=None) as c:
        yield c


def test_status_shows_tasks_sessions_and_failed_steps(cluster: LocalCluster) -> None:
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:1"):
            x = tf.placeholder(tf.float32, [None], name="x")
            shape = tf.placeholder(tf.int32, [None], name="shape")
            bad = tf.reshape(x, shape, name="bad")
            y = tf.multiply(x, 2.0, name="y")
        with tf.device("/job:worker/task:0"):
            z = tf.reduce_sum(y, name="z")  # worker 1 sends y to worker 0
    with tf.Session(cluster.target, graph=g) as sess:
        assert sess.run(z, {x: [1.0, 2.0, 3.0]}) == 12.0
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(bad, {x: [1.0, 2.0, 3.0], shape: [2]})
        done = _status("--target", cluster.target, "--json")
        assert done.returncode == 0, done.stderr
        snap = json.loads(done.stdout)
        assert sorted(t["name"] for t in snap["tasks"]) == [
            "/job:ps/replica:0/task:0",
            "/job:worker/replica:0/task:0",
            WORKER1,
        ]
        assert all(t["up"] and t["stats"]["rss_bytes"] > 0 for t in snap["tasks"])
        # Every byte one task sent another was received: 3 float32s of y, here.
        sent = sum(sum(t["stats"]["sent_bytes"].values()) for t in snap["tasks"])
        received = sum(sum(t["stats"]["recv_bytes"].values()) for t in snap["tasks"])
        assert sent == received == 12
        [session] = snap["sessions"]
        [failed] = [s for s in snap["steps"] if s["outcome"] != "ok"]
        assert failed["outcome"] == "INVALID_ARGUMENT" and failed["node"] == "bad"
        assert failed["session"] == session["handle"]
        table = _status("--target", cluster.target)
        assert table.returncode == 0, table.stderr
        assert "RECENT FAILED STEPS" in table.stdout
        assert session["handle"] in table.stdout and "INVALID_ARGUMENT" in table.stdout

    # The failed step's log line on the master: one JSON object with its fields.
    deadline = time.monotonic() + 10
    while True:
        lines = [
            json.loads(line)
            for line in cluster.tasks["master"].lines
            if line.startswith("{") and '"step_failed"' in line
        ]
        if lines or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    [line] = lines
    assert line["code"] == "INVALID_ARGUMENT" and line["node"] == "bad"
    assert line["session"] == session["handle"]

    [start] = [
        json.loads(line)
        for line in cluster.tasks["master"].lines
        if line.startswith("{") and '"task_start"' in line
    ]
    assert start["task"] == "master" and start["address"] == cluster.master_address

    cluster.tasks["worker1"].kill()
    down = json.loads(_status("--target", cluster.target, "--json").stdout)
    assert [t["up"] for t in down["tasks"] if t["name"] == WORKER1] == [False]
    assert "DOWN" in _status("--target", cluster.target).stdout


def test_status_of_a_target_nobody_serves_is_unavailable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = _status("--target", f"grpc://127.0.0.1:{port}", "--timeout", "1")
    assert done.returncode == 3
    assert done.stderr.startswith("UnavailableError") and f"127.0.0.1:{port}" in done.stderr
