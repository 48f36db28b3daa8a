"""Integration: TF_CONFIG names a task whose DNS name resolves only after the cluster has
started (a Kubernetes headless Service publishes a pod's name once the pod exists). The
tasks run in a mount namespace of their own whose /etc/hosts the test controls; the ps
task's name is missing at first, so the master's session waits for it, and it is added
while the client waits: the session starts and runs on the ps, nothing is restarted."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import client as ours
from deploy.launcher import Task, free_port, server_argv, tf_config_env


def _can_unshare() -> str | None:
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True)
    return None if probe.returncode == 0 else f"cannot make a mount namespace: {probe.stderr}"


def test_a_peer_whose_name_resolves_late_is_retried(tmp_path: Path):
    reason = _can_unshare()
    if reason is not None:
        pytest.skip(reason)
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n127.0.0.1 worker-0.flowrt.test\n")
    ports = {"worker": free_port(), "ps": free_port()}
    spec = {
        "jobs": {
            "worker": [f"worker-0.flowrt.test:{ports['worker']}"],
            "ps": [f"ps-0.flowrt.test:{ports['ps']}"],
        }
    }
    tasks = []
    try:
        for job in ("worker", "ps"):
            argv = [
                "unshare",
                "-m",
                "sh",
                "-c",
                f'mount --bind {hosts} /etc/hosts && exec "$@"',
                "sh",
                *server_argv(),
            ]
            tasks.append(Task(job, argv, None, tf_config_env(spec, job, 0)))
        for t in tasks:
            t.wait_listening(60)
        g = ours.Graph()
        with g.as_default():
            with ours.device("/job:ps/task:0"):
                v = ours.Variable(np.float32(3.0), name="v")
            with ours.device("/job:worker/task:0"):
                y = v * 2.0
        result: dict[str, object] = {}

        def run() -> None:
            try:
                with ours.Session(f"grpc://127.0.0.1:{ports['worker']}", graph=g) as sess:
                    sess.run(v.initializer)
                    result["y"] = sess.run(y)
            except Exception as e:  # noqa: BLE001 - reported below
                result["error"] = e

        client = threading.Thread(target=run)
        client.start()
        time.sleep(3.0)
        assert client.is_alive()  # waiting for ps-0.flowrt.test
        with open(hosts, "a") as f:  # in place: the bind mount keeps the inode
            f.write("127.0.0.1 ps-0.flowrt.test\n")
        client.join(60)
        assert not client.is_alive()
        assert "error" not in result, result.get("error")
        assert result["y"] == 6.0
    finally:
        codes = [t.stop() for t in tasks]
    assert codes == [0, 0]
