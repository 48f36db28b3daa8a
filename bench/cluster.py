"""Benchmark, process edge: a loopback cluster of real processes, and a raw MasterService
client.

`LocalCluster(num_workers)` writes a cluster file with free loopback ports, spawns
`python -m worker` per task (and per task of job "ps" with `num_ps`) and
`python -m master` (with `colocate`, worker task 0 runs in the master's process, as in
TensorFlow's servers), and waits for each "listening" line
(their stderr goes to log files in a temporary directory). `stop()` sends SIGTERM to the
processes it started (by pid) and kills the ones that do not exit. `MasterClient` drives
the master with raw MasterService RPCs (CreateSession, RunStep, CloseSession).
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np
from typing_extensions import Self

from client.master_connection import MasterConnection
from common import tensor as tensor_util
from common.errors import OpError, UnavailableError, from_code
from protos import master_pb2

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START_TIMEOUT = 120.0


def free_ports(n: int) -> list[int]:
    """`n` distinct free TCP ports on 127.0.0.1 (held open together while picking)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def wait_for_line(proc: subprocess.Popen, log_path: str, needle: str, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        with open(log_path, errors="replace") as f:
            if needle in f.read():
                return
        if proc.poll() is not None:
            with open(log_path, errors="replace") as f:
                raise UnavailableError(f"{what} exited with {proc.returncode}:\n{f.read()}")
        time.sleep(0.05)
    raise UnavailableError(f"{what} did not start within {START_TIMEOUT:g} s")


class LocalCluster:
    """Worker processes /job:worker/task:0..n-1 and a master process on loopback."""

    def __init__(
        self, num_workers: int, log_level: str = "WARNING", colocate: bool = False, num_ps: int = 0
    ) -> None:
        self.dir = tempfile.mkdtemp(prefix="flowrt-bench-")
        ports = free_ports(num_workers + num_ps + 1)
        self.master_address = f"127.0.0.1:{ports[0]}"
        self.worker_addresses = [f"127.0.0.1:{p}" for p in ports[1 : num_workers + 1]]
        self.ps_addresses = [f"127.0.0.1:{p}" for p in ports[num_workers + 1 :]]
        self.cluster_file = os.path.join(self.dir, "cluster.yaml")
        with open(self.cluster_file, "w") as f:
            f.write(f"master: {self.master_address}\njobs:\n  worker:\n")
            f.writelines(f"    - {address}\n" for address in self.worker_addresses)
            if num_ps:
                f.write("  ps:\n")
                f.writelines(f"    - {address}\n" for address in self.ps_addresses)
        self.procs: list[subprocess.Popen] = []
        self.worker_pids: list[int] = []  # by task (the master's pid for a colocated task 0)
        spawned: list[tuple[int, subprocess.Popen]] = []
        wait_ps: list[tuple[int, subprocess.Popen]] = []
        try:
            for task in range(1 if colocate else 0, num_workers):
                proc = self._spawn(
                    f"worker{task}",
                    [
                        "-m",
                        "worker",
                        "--cluster",
                        self.cluster_file,
                        "--job",
                        "worker",
                        "--task",
                        str(task),
                        "--log-level",
                        log_level,
                    ],
                )
                spawned.append((task, proc))
            for task in range(num_ps):
                proc = self._spawn(
                    f"ps{task}",
                    [
                        "-m",
                        "worker",
                        "--cluster",
                        self.cluster_file,
                        "--job",
                        "ps",
                        "--task",
                        str(task),
                        "--log-level",
                        log_level,
                    ],
                )
                wait_ps.append((task, proc))
            extra = ["--colocate", "/job:worker/task:0"] if colocate else []
            master = self._spawn(
                "master",
                ["-m", "master", "--cluster", self.cluster_file, "--log-level", log_level, *extra],
            )
            self.worker_pids = ([master.pid] if colocate else []) + [p.pid for _, p in spawned]
            for task, proc in spawned:
                wait_for_line(proc, self._log(f"worker{task}"), "listening on", f"worker {task}")
            for task, proc in wait_ps:
                wait_for_line(proc, self._log(f"ps{task}"), "listening on", f"ps {task}")
            wait_for_line(master, self._log("master"), "listening on", "master")
        except BaseException:
            self.stop()
            raise

    def _log(self, name: str) -> str:
        return os.path.join(self.dir, f"{name}.log")

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
        with open(self._log(name), "w") as log:
            proc = subprocess.Popen(
                [sys.executable, *args], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=log
            )
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs = []

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class MasterClient:
    """One session on a master, driven with raw MasterService RPCs through the client's
    transport (client.master_connection: gRPC, then the master's Unix socket on this
    host unless `local` is False)."""

    def __init__(self, address: str, graph_def: Any, config: Any, local: bool = True) -> None:
        self.connection = MasterConnection(address, local=local)
        request = master_pb2.CreateSessionRequest(graph_def=graph_def, config=config)
        self.handle = self.connection.call("CreateSession", request).session_handle

    def run(
        self,
        fetches: list[str],
        feeds: dict[str, Any] | None = None,
        targets: list[str] | None = None,
    ) -> list[np.ndarray]:
        request = master_pb2.RunStepRequest(
            session_handle=self.handle,
            fetch=fetches,
            target=targets or [],
            store_errors_in_response_body=True,
            request_id=random.getrandbits(62) + 1,
        )
        for name, value in (feeds or {}).items():
            request.feed.add(name=name).tensor.CopyFrom(
                tensor_util.as_proto_tensor_content(np.asarray(value))
            )
        response = self.connection.call("RunStep", request)
        if response.status_code:
            raise from_code(response.status_code, response.status_error_message)
        by_name = {t.name: tensor_util.to_numpy(t.tensor) for t in response.tensor}
        return [by_name[f] for f in fetches]

    def close(self) -> None:
        try:
            self.connection.call(
                "CloseSession", master_pb2.CloseSessionRequest(session_handle=self.handle)
            )
        except OpError:
            pass
        self.connection.close()
