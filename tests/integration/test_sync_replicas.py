"""SyncReplicasOptimizer in between-graph replication on a real cluster (master, 2
workers, ps started by their CLIs): two client processes, one per worker, aggregate both
replicas' gradients in conditional accumulators on ps and take the chief's tokens, until
the global step reaches STEPS. The same two programs run on TensorFlow's own runtime
(tf.distribute.Server tasks) give the oracle: the same final variables and global step,
through TensorFlow's client on our master, through `import client as tf`, and with
one replica of each."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from deploy.launcher import child_env

HERE = Path(__file__).parent
STEPS = 12
pytestmark = pytest.mark.timeout(600)


def _train(api: str, target: str) -> list[dict]:
    """Both replicas through `api` ("tf", "client"), or "mixed": the chief ours, the other
    TensorFlow's client."""
    apis = ["client", "tf"] if api == "mixed" else [api, api]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(HERE / "between_graph_worker.py"),
                "--api",
                apis[task],
                "--task",
                str(task),
                "--target",
                target,
                "--steps",
                str(STEPS),
                "--sync",
                "2",
            ],
            env=child_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for task in range(2)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


@pytest.fixture(scope="module")
def tensorflow_runtime() -> Iterator[list[dict]]:
    """The two programs trained with TensorFlow's client on TensorFlow's runtime."""
    pytest.importorskip("tensorflow")
    server = subprocess.Popen(
        [sys.executable, str(HERE / "tf_runtime_cluster.py")], env=child_env(),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        target = server.stdout.readline().strip()
        yield _train("tf", target)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=60)


@pytest.mark.parametrize("api", ["tf", "client", "mixed"])
def test_sync_replicas_match_tensorflow_runtime(fresh_cluster, tensorflow_runtime, api):
    ours = _train(api, fresh_cluster.target)
    theirs = tensorflow_runtime
    want = theirs[0]["final"]
    assert want["global_step"] == STEPS
    for r in ours:
        got = r["final"]
        assert got["global_step"] == STEPS
        np.testing.assert_allclose(got["w"], want["w"], rtol=1e-6)
        np.testing.assert_allclose(got["b"], want["b"], rtol=1e-6)
        assert r["devices"]["GradientDescent/update_w/ResourceApplyGradientDescent"] == (
            "/job:ps/task:0"
        )
    # Each update took two gradients and gave two tokens (one replica may supply both):
    # the steps run, over both replicas, are two per update plus the free first steps.
    for side in (ours, theirs):
        assert 2 * STEPS <= sum(len(r["steps"]) for r in side) <= 2 * STEPS + 2
