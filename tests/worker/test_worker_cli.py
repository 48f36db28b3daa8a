"""`python -m worker` as a user starts it: a cluster file on free loopback ports, the
"listening" log line, GetStatus over gRPC, SIGTERM -> exit 0, --help, and bad input."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import grpc
import pytest

from protos import worker_pb2
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import worker_stub

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 60.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spawn(*args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [sys.executable, "-m", "worker", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


class _Lines:
    """Collects a child's output on a thread; `wait_for(text)` blocks until it appears."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self._thread.start()

    def _read(self, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            with self._cond:
                self.lines.append(line)
                self._cond.notify_all()
        with self._cond:
            self.lines.append("")  # EOF marker
            self._cond.notify_all()

    def wait_for(self, text: str, timeout: float = START_TIMEOUT) -> str:
        def found() -> str | None:
            return next((x for x in self.lines if text in x), None) or (
                "<EOF>" if "" in self.lines else None
            )

        with self._cond:
            assert self._cond.wait_for(found, timeout), f"no {text!r} in {self.lines}"
            line = found()
        assert line != "<EOF>", f"process ended before {text!r}: {''.join(self.lines)}"
        return line

    def join(self) -> None:
        self._thread.join(10)


@pytest.fixture
def procs():
    started: list[subprocess.Popen] = []
    yield started
    for p in started:
        if p.poll() is None:
            p.kill()
        p.wait(10)
    assert all(p.returncode is not None for p in started)


@pytest.fixture
def cluster_file(tmp_path):
    ports = [_free_port(), _free_port()]
    path = tmp_path / "cluster.yaml"
    path.write_text("jobs:\n  worker: [" + ", ".join(f"127.0.0.1:{p}" for p in ports) + "]\n")
    return str(path), ports


def test_worker_serves_until_sigterm(procs, cluster_file):
    path, ports = cluster_file
    proc = _spawn("--cluster", path, "--job", "worker", "--task", "1", "--cpus", "2")
    procs.append(proc)
    out = _Lines(proc)
    line = out.wait_for("listening on")
    assert f"worker /job:worker/replica:0/task:1 listening on 127.0.0.1:{ports[1]}" in line
    with grpc.insecure_channel(f"127.0.0.1:{ports[1]}", options=GRPC_OPTIONS) as channel:
        stub = worker_stub(channel)
        resp = stub.GetStatus(worker_pb2.GetStatusRequest(), timeout=10)
        assert [d.name for d in resp.device_attributes] == [
            "/job:worker/replica:0/task:1/device:CPU:0",
            "/job:worker/replica:0/task:1/device:CPU:1",
        ]
        assert _run_const_graph(stub, resp.device_attributes[1]) == [[1, 2], [3, 4]]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    out.join()


def test_sigint_also_exits_zero_and_bind_host_all_interfaces(procs, cluster_file):
    path, ports = cluster_file
    proc = _spawn("--cluster", path, "--job", "worker", "--task", "0", "--bind-host", "0.0.0.0")
    procs.append(proc)
    out = _Lines(proc)
    out.wait_for(f"listening on 127.0.0.1:{ports[0]}")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 0
    out.join()


def test_help_lists_every_flag():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run(
        [sys.executable, "-m", "worker", "--help"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0
    for flag in (
        "--cluster",
        "--job",
        "--task",
        "--bind-host",
        "--cpus",
        "--intra-op-threads",
        "--rpc-timeout",
        "--step-timeout",
        "--grace",
        "--log-level",
    ):
        assert flag in result.stdout


def test_task_not_in_cluster_exits_with_error(procs, cluster_file):
    path, _ = cluster_file
    proc = _spawn("--cluster", path, "--job", "worker", "--task", "5")
    procs.append(proc)
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "Task /job:worker/replica:0/task:5 is not in the cluster" in output


def test_peer_process_killed_mid_recv_is_unavailable(procs, cluster_file):
    """Task 0 (in process) waits on a RecvTensorStream parked in task 1 (a real process);
    SIGKILL on task 1 fails task 0's step with Unavailable naming task 1."""
    import time

    from common.cluster import ClusterSpec
    from common.dtypes import DataType
    from common.rendezvous import create_key
    from tests.worker import graphs as g
    from tests.worker.graphs import CLIENT
    from worker.server import WorkerServer

    path, ports = cluster_file
    proc = _spawn("--cluster", path, "--job", "worker", "--task", "1")
    procs.append(proc)
    out = _Lines(proc)
    out.wait_for("listening on")
    w0 = WorkerServer(ClusterSpec.load(path), "worker", 0, step_timeout=60).start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{ports[1]}", options=GRPC_OPTIONS) as ch1:
            status = worker_stub(ch1).GetStatus(worker_pb2.GetStatusRequest(), timeout=10)
        w1_dev = status.device_attributes[0]
        d0 = w0.worker.devices[0]
        gd = g.graph_def()
        g.recv(
            gd,
            "r",
            d0.name,
            "edge_1_y",
            DataType.DT_FLOAT,
            send_device=w1_dev.name,
            send_incarnation=w1_dev.incarnation,
            client_terminated=False,
        )
        g.send(gd, "r/_send", d0.name, d0.incarnation, "r", "r:0", DataType.DT_FLOAT)
        handle = w0.worker.register_graph("", False, gd)
        fetch = create_key(d0.name, d0.incarnation, CLIENT, "r:0")
        result: list[BaseException | None] = []
        runner = threading.Thread(
            target=lambda: result.append(
                _capture(lambda: w0.worker.run_graph("", False, handle, 5, (), [fetch]))
            )
        )
        runner.start()
        deadline = time.monotonic() + 30
        rz = None
        while rz is None or rz.num_calls_in_flight() == 0:  # the stream call is open
            assert time.monotonic() < deadline
            rz = w0.worker.rendezvous_mgr.find(5)
            time.sleep(0.01)
        start = time.monotonic()
        proc.kill()
        runner.join(30)
        assert not runner.is_alive()
        assert time.monotonic() - start < 10
        error = result[0]
        assert error is not None and error.code == 14, error
        assert "/job:worker/replica:0/task:1 is unavailable" in str(error)
        w0.worker.cleanup_graph(5)
    finally:
        w0.stop(grace=0)


def _capture(fn):
    try:
        fn()
    except BaseException as e:  # noqa: BLE001 - handed to the test thread
        return e
    return None


def _run_const_graph(stub, device) -> list:
    """Register Const -> _Send(client) on `device` in the spawned worker and run it."""
    import numpy as np

    from common import tensor as tensor_util
    from common.dtypes import DataType
    from common.rendezvous import create_key
    from tests.worker import graphs as g
    from tests.worker.graphs import CLIENT

    gd = g.graph_def()
    g.const(gd, "c", device.name, np.array([[1, 2], [3, 4]], np.int32))
    g.send(gd, "c/_send", device.name, device.incarnation, "c", "c:0", DataType.DT_INT32)
    handle = stub.RegisterGraph(worker_pb2.RegisterGraphRequest(graph_def=gd), timeout=30)
    key = create_key(device.name, device.incarnation, CLIENT, "c:0")
    resp = stub.RunGraph(
        worker_pb2.RunGraphRequest(graph_handle=handle.graph_handle, step_id=1, recv_key=[key]),
        timeout=30,
    )
    stub.CleanupGraph(worker_pb2.CleanupGraphRequest(step_id=1), timeout=30)
    return tensor_util.to_numpy(resp.recv[0].tensor).tolist()
