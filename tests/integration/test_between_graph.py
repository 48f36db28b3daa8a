"""Between-graph replication on a real cluster (master, 2 workers, ps started by their
CLIs): two client processes, one per worker, each building its own graph under
replica_device_setter (variables on ps) and training asynchronously with
MonitoredTrainingSession (worker 0 the chief) until the shared global step reaches 40.
One client is ours (`import client as tf`), the other TensorFlow's own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from deploy.launcher import child_env

SCRIPT = Path(__file__).with_name("between_graph_worker.py")
STEPS = 40


def _start(api: str, task: int, target: str) -> subprocess.Popen:
    argv = [sys.executable, str(SCRIPT), "--api", api, "--task", str(task), "--target",
            target, "--steps", str(STEPS)]  # fmt: skip
    return subprocess.Popen(argv, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip


@pytest.mark.parametrize("apis", [("client", "client"), ("client", "tf")], ids=["ours", "mixed"])
def test_two_clients_train_shared_ps_variables(fresh_cluster, apis):
    if "tf" in apis:
        pytest.importorskip("tensorflow")
    procs = [_start(api, task, fresh_cluster.target) for task, api in enumerate(apis)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    for task, r in enumerate(results):
        worker = f"/job:worker/task:{task}"
        assert r["devices"] == {
            "w": "/job:ps/task:0",
            "b": "/job:ps/task:0",
            "global_step": "/job:ps/task:0",
            "MatMul": worker,
            "GradientDescent/update_w/ResourceApplyGradientDescent": "/job:ps/task:0",
        }
        # Each saw the model the two train improve (worker 1 may start late).
        assert r["losses"][-1] < results[0]["losses"][0]
    # Both trained the one set of ps variables: each train op bumped the one global step,
    # and each worker stopped once it saw the step reach STEPS. Training is asynchronous:
    # a worker whose step read the global step just before the other's bump runs one
    # more, so each worker may add one past STEPS (as with TensorFlow's runtime).
    runs = sum(len(r["steps"]) for r in results)
    assert all(r["steps"] for r in results)
    assert STEPS <= runs <= STEPS + len(results)
    assert STEPS - 1 <= max(s for r in results for s in r["steps"]) <= runs
