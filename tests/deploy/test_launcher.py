"""`python -m deploy`, the local launcher, as a user runs it: tasks die with the launcher
(SIGKILL or SIGHUP of it leave no task process and no temporary directory), --ports fixes
the ports, and --layout tensorflow starts `python -m server` tasks from TF_CONFIG."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from deploy.launcher import REPO_ROOT, child_env, free_port

UP = re.compile(r"cluster is up; connect with tf\.compat\.v1\.Session\('grpc://([^']+)'\)")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead: its parent (the killed launcher) is gone, init reaps it.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


def _children(pid: int) -> list[int]:
    out = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True
    ).stdout
    return [int(x) for x in out.split()]


class Launcher:
    """`python -m deploy --stay-up --no-demo ...`, read until the cluster is up."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "deploy", "--stay-up", "--no-demo", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=REPO_ROOT,
            env=child_env(),
        )
        self.lines: list[str] = []
        self.target = ""
        up = threading.Event()

        def read() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                self.lines.append(line)
                m = UP.search(line)
                if m:
                    self.target = m.group(1)
                    up.set()
            up.set()

        threading.Thread(target=read, daemon=True).start()
        assert up.wait(90) and self.target, "".join(self.lines[-30:])

    def workdir(self) -> Path | None:
        for line in self.lines:
            m = re.search(r"cluster file (\S+)/cluster\.yaml", line)
            if m:
                return Path(m.group(1))
        return None


def _wait_gone(pids: list[int], timeout: float = 30.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [p for p in pids if _alive(p)]
        if not left:
            return []
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGHUP])
def test_tasks_and_temp_dir_die_with_the_launcher(sig):
    launcher = Launcher("--quiet")
    workdir = launcher.workdir()
    assert workdir is not None and (workdir / "cluster.yaml").exists()
    children = _children(launcher.proc.pid)
    assert len(children) == 5  # the watchdog, worker 0, worker 1, ps 0, master
    launcher.proc.send_signal(sig)
    launcher.proc.wait(60)
    assert _wait_gone(children) == []
    assert not workdir.exists()


def test_fixed_ports_and_tensorflow_layout():
    ports = [free_port() for _ in range(3)]
    launcher = Launcher("--quiet", "--layout", "tensorflow", "--ports", ",".join(map(str, ports)))
    try:
        assert launcher.target == f"127.0.0.1:{ports[0]}"  # worker 0 is the master
        out = subprocess.run(
            [
                sys.executable,
                str(REPO_ROOT / "examples" / "demo.py"),
                "--target",
                f"grpc://{launcher.target}",
                "--steps",
                "1",
            ],
            capture_output=True,
            text=True,
            env=child_env(),
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        assert "demo OK" in out.stdout
        for job in (
            "/job:worker/replica:0/task:0",
            "/job:worker/replica:0/task:1",
            "/job:ps/replica:0/task:0",
        ):
            assert f"  {job}/device:CPU:0" in out.stdout
    finally:
        launcher.proc.send_signal(signal.SIGTERM)
        launcher.proc.wait(60)
    assert launcher.proc.returncode == 0
    assert "stopped: worker0 exit 0, worker1 exit 0, ps0 exit 0" in "".join(launcher.lines)


def test_bad_ports_are_a_usage_error():
    proc = subprocess.run(
        [sys.executable, "-m", "deploy", "--ports", "1,2"],
        cwd=REPO_ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "--ports: 4 ports" in proc.stderr


def _namespaces(prefix: str) -> set[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in listed.splitlines() if line.startswith(prefix)}


def test_netns_launcher_killed_leaves_no_namespace():
    from deploy import netns

    reason = netns.available()
    if reason is not None:
        pytest.skip(f"multi-host test bed unavailable: {reason}")
    launcher = Launcher("--quiet", "--netns")
    prefix = f"fr{launcher.proc.pid % 10000:04d}"  # deploy.netns names them by pid
    assert len(_namespaces(prefix)) == 5  # the hub and a host per task
    assert launcher.target.startswith("10.213.")
    children = _children(launcher.proc.pid)
    launcher.proc.send_signal(signal.SIGKILL)
    launcher.proc.wait(60)
    assert _wait_gone(children) == []
    deadline = time.monotonic() + 30
    while _namespaces(prefix) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _namespaces(prefix) == set()
