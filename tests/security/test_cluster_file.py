"""The cluster file is validated at start-up: unknown keys, a job or task listed twice,
two tasks (or the master and a task) on one address each stop the CLI with one error
line naming the entry, and exit code 2."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from deploy.launcher import Task, child_env, free_port

CASES = {
    "unknown_key": (
        "master: 127.0.0.1:1\njobs:\n  worker: [127.0.0.1:2]\nworkers: [127.0.0.1:3]\n",
        "unknown keys ['workers']",
    ),
    "job_twice": (
        "master: 127.0.0.1:1\njobs:\n  worker: [127.0.0.1:2]\n  worker: [127.0.0.1:3]\n",
        "line 4: 'worker' is listed twice",
    ),
    "task_twice": (
        "master: 127.0.0.1:1\njobs:\n  worker: {0: 127.0.0.1:2, 0: 127.0.0.1:3}\n",
        "line 3: 0 is listed twice",
    ),
    "same_address": (
        "master: 127.0.0.1:1\njobs:\n  worker: [127.0.0.1:2, 127.0.0.1:2]\n",
        "/job:worker/replica:0/task:1 and /job:worker/replica:0/task:0 have the same address",
    ),
    "master_is_a_worker": (
        "master: 127.0.0.1:2\njobs:\n  worker: [127.0.0.1:2]\n",
        "/job:worker/replica:0/task:0 and the master have the same address 127.0.0.1:2",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", ["worker", "master"])
def test_a_bad_cluster_file_is_one_error_line(tmp_path: Path, case: str, command: str) -> None:
    text, expected = CASES[case]
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    argv = [sys.executable, "-m", command, "--cluster", str(path)]
    if command == "worker":
        argv += ["--job", "worker", "--task", "0"]
    out = subprocess.run(argv, env=child_env(), capture_output=True, text=True, timeout=60)
    assert out.returncode == 2, out.stderr
    errors = [line for line in out.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1 and expected in errors[0], out.stderr
    assert "Traceback" not in out.stderr


def test_a_port_another_process_holds_is_refused_in_one_line(tmp_path: Path) -> None:
    # gRPC sets SO_REUSEPORT by default: a second task on a held port used to bind
    # silently and share it.
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    path = tmp_path / "cluster.yaml"
    path.write_text(f"master: 127.0.0.1:{free_port()}\njobs:\n  worker: [127.0.0.1:{port}]\n")
    try:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "worker",
                "--cluster",
                str(path),
                "--job",
                "worker",
                "--task",
                "0",
            ],
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        holder.close()
    assert out.returncode == 2, out.stderr
    errors = [line for line in out.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1, out.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in errors[0]
    assert "Traceback" not in out.stderr


def test_an_open_server_on_a_public_address_warns_loudly(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(
        f"master: 127.0.0.1:{free_port()}\njobs:\n  worker: [127.0.0.1:{free_port()}]\n"
    )
    task = Task(
        "worker0",
        [
            sys.executable,
            "-m",
            "worker",
            "--cluster",
            str(path),
            "--job",
            "worker",
            "--task",
            "0",
            "--bind-host",
            "0.0.0.0",
        ],
        None,
    )
    try:
        task.wait_listening(60)
    finally:
        task.stop()
    assert any(
        "INSECURE" in line and "neither TLS nor an auth token" in line for line in task.lines
    ), task.lines
