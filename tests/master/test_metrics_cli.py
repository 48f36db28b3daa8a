"""`python -m master --metrics-port 0` and `python -m worker ... --metrics-port 0`: real
processes on loopback serve Prometheus metrics over HTTP (common.metrics). A client runs
steps across both workers and one failing step; the counts scraped from each process are
exact: steps and RunGraphs by outcome, sessions and registered graphs back to 0 after the
session closes, the bytes worker 1 received over the same-host socket (or, with the socket
off, over gRPC and through shared memory)."""

from __future__ import annotations

import re
import sys
import urllib.request
from collections.abc import Iterator

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

import client as tf
from deploy.launcher import Task, master_argv, worker_argv, write_cluster_file

STEPS = 5
N = 1000  # float32 elements worker 1 receives per step: 4000 bytes, inline on the socket
METRICS_LINE = re.compile(r"INFO (master|worker): metrics on (http://127\.0\.0\.1:(\d+)/metrics)$")


def _start(tmp_path) -> Iterator[dict[str, Task]]:
    """A master and worker tasks 0 and 1, each serving metrics on a free port; all exit 0
    on SIGTERM."""
    cluster_file = tmp_path / "cluster.yaml"
    write_cluster_file(cluster_file, {"worker": 2})
    flags = ["--metrics-port", "0"]
    started: dict[str, Task] = {}
    try:
        for i in range(2):
            started[f"worker{i}"] = Task(
                f"worker{i}", worker_argv(cluster_file, "worker", i) + flags, log=None
            )
        started["master"] = Task("master", master_argv(cluster_file, *flags), log=None)
        for task in started.values():
            task.wait_listening(60)
        yield started
    finally:
        codes = {name: t.stop() for name, t in started.items()}
        assert codes == {name: 0 for name in started}


@pytest.fixture
def tasks(tmp_path) -> Iterator[dict[str, Task]]:
    yield from _start(tmp_path)


@pytest.fixture
def tasks_without_socket(monkeypatch, tmp_path) -> Iterator[dict[str, Task]]:
    monkeypatch.setenv("FLOWRT_LOCAL_RPC", "0")  # the tasks and this client use gRPC
    monkeypatch.setenv("FLOWRT_SHM", "1")
    yield from _start(tmp_path)


def _url(task: Task) -> str:
    """The endpoint the task logged (before its "listening on" line)."""
    found = [m for m in map(METRICS_LINE.search, task.lines) if m]
    assert len(found) == 1, task.lines
    listening = next(i for i, line in enumerate(task.lines) if " listening on " in line)
    assert task.lines.index(found[0].string) < listening
    assert int(found[0].group(3)) > 0
    return found[0].group(2)


def _scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} of the endpoint's text exposition."""
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        text = response.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _get(samples: dict, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def _outcomes(samples: dict, name: str) -> dict[str, float]:
    return {dict(labels)["outcome"]: v for (n, labels), v in samples.items() if n == name}


def _graph() -> tuple[tf.Graph, tf.Tensor, tf.Tensor, tf.Tensor]:
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [N], name="x")
            shifted = x + 1.0
        with tf.device("/job:worker/task:1"):
            total = tf.reduce_sum(shifted * 2.0, name="total")
    return g, x, shifted, total


def test_master_and_workers_serve_exact_step_counts(tasks):
    urls = {name: _url(task) for name, task in tasks.items()}
    assert len(set(urls.values())) == 3
    g, x, shifted, total = _graph()
    with tf.Session(f"grpc://{tasks['master'].address}", graph=g) as sess:
        for i in range(STEPS):
            value = sess.run(total, {x: np.full(N, i, np.float32)})
            assert value == pytest.approx(2.0 * N * (i + 1))
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
            sess.run(shifted)  # x not fed: fails on worker 0 only
        during = _scrape(urls["master"])
        assert _get(during, "flowrt_master_sessions") == 1
    master = _scrape(urls["master"])
    assert _outcomes(master, "flowrt_master_steps_total") == {"ok": STEPS, "INVALID_ARGUMENT": 1}
    assert _get(master, "flowrt_master_step_seconds_count") == STEPS
    assert _get(master, "flowrt_master_step_seconds_sum") > 0
    assert _get(master, "flowrt_master_plan_seconds_count") == 2  # two signatures
    assert _get(master, "flowrt_master_partitions_registered_total") == 3  # 2 + 1 tasks
    assert _get(master, "flowrt_master_sessions") == 0
    assert _get(master, "process_resident_memory_bytes") > 0
    assert not any(
        name.startswith("flowrt_worker_") and value
        for (name, _), value in master.items()
        if not name.endswith("_created")
    )

    w0, w1 = _scrape(urls["worker0"]), _scrape(urls["worker1"])
    assert _outcomes(w0, "flowrt_worker_run_graph_total") == {"ok": STEPS, "INVALID_ARGUMENT": 1}
    assert _outcomes(w1, "flowrt_worker_run_graph_total") == {"ok": STEPS}
    for w in (w0, w1):
        assert _get(w, "flowrt_worker_run_graph_seconds_count") == STEPS
        assert _get(w, "flowrt_worker_active_steps") == 0
        assert _get(w, "flowrt_worker_registered_graphs") == 0  # dropped with the session
    assert _get(w0, "flowrt_worker_aborted_steps_total") == 1
    assert _get(w1, "flowrt_worker_aborted_steps_total") == 0
    # Worker 1 received `shifted` every step from worker 0 over the same-host socket.
    received = {
        t: (
            _get(w1, "flowrt_worker_recv_tensors_total", transport=t),
            _get(w1, "flowrt_worker_recv_bytes_total", transport=t),
        )
        for t in ("grpc", "local", "shm", "in_process")
    }
    assert received == {
        "grpc": (0, 0),
        "local": (STEPS, STEPS * N * 4),
        "shm": (0, 0),
        "in_process": (0, 0),
    }
    assert _get(w0, "flowrt_worker_recv_tensors_total", transport="local") == 0


def test_metrics_flags_are_checked(tmp_path):
    import subprocess

    cluster_file = tmp_path / "cluster.yaml"
    write_cluster_file(cluster_file, {"worker": 1})
    done = subprocess.run(
        [sys.executable, "-m", "master", "--cluster", str(cluster_file), "--metrics-port", "70000"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--metrics-port must be in 0..65535" in done.stderr


def test_received_tensors_are_counted_per_transport_without_the_socket(tasks_without_socket):
    """FLOWRT_LOCAL_RPC=0: a small tensor comes inline over gRPC, a large one through
    shared memory (offered on the gRPC call)."""
    big = 1 << 16  # float32 elements: 256 KiB, above shm.MIN_BYTES
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [N], name="x")
            y = tf.placeholder(tf.float32, [big], name="y")
            small, large = x + 1.0, y + 1.0
        with tf.device("/job:worker/task:1"):
            total = tf.reduce_sum(small) + tf.reduce_sum(large)
    tasks = tasks_without_socket
    with tf.Session(f"grpc://{tasks['master'].address}", graph=g) as sess:
        for _ in range(STEPS):
            got = sess.run(total, {x: np.zeros(N, np.float32), y: np.zeros(big, np.float32)})
            assert got == N + big
    w1 = _scrape(_url(tasks["worker1"]))
    received = {
        t: (
            _get(w1, "flowrt_worker_recv_tensors_total", transport=t),
            _get(w1, "flowrt_worker_recv_bytes_total", transport=t),
        )
        for t in ("grpc", "local", "shm", "in_process")
    }
    assert received == {
        "grpc": (STEPS, STEPS * N * 4),
        "local": (0, 0),
        "shm": (STEPS, STEPS * big * 4),
        "in_process": (0, 0),
    }
    master = _scrape(_url(tasks["master"]))
    assert _outcomes(master, "flowrt_master_steps_total") == {"ok": STEPS}
