"""Integration, TensorFlow's deployment contract: a cluster started from TF_CONFIG alone
(every task `python -m server`, no cluster file) serves MasterService and WorkerService on
each task's one port, as tf.distribute.Server does. An unmodified TensorFlow
between-graph program (two client processes, replica_device_setter, variables on the ps)
whose processes get only TF_CONFIG trains on it through the chief (worker 0)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from deploy.launcher import LocalCluster, child_env, tf_config_env
from protos import master_pb2, worker_pb2
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import master_stub, worker_stub

PROGRAM = Path(__file__).parent / "programs" / "between_graph.py"
STEPS = 40


@pytest.fixture
def tf_cluster():
    cluster = LocalCluster({"worker": 2, "ps": 1}, layout="tensorflow").start()
    tasks = list(cluster.tasks.values())
    try:
        yield cluster
    finally:
        codes = cluster.stop()
        assert [t.name for t in tasks if t.proc.poll() is None] == []
    assert set(codes.values()) == {0}, codes


def test_tasks_get_only_tf_config_and_every_task_is_a_master(tf_cluster):
    import grpc

    assert not tf_cluster.cluster_file.exists()  # TF_CONFIG only, no cluster file
    for name, task in tf_cluster.tasks.items():
        assert task.argv[1:] == ["-m", "server"]
        assert f"server /job:{name[:-1]}/replica:0/task:{name[-1]} listening on" in "\n".join(
            task.lines
        )
    for job, addresses in tf_cluster.spec["jobs"].items():
        for i, address in enumerate(addresses):
            with grpc.insecure_channel(address, options=GRPC_OPTIONS) as channel:
                local = (
                    master_stub(channel)
                    .ListDevices(master_pb2.ListDevicesRequest(), timeout=30)
                    .local_device
                )
                status = worker_stub(channel).GetStatus(worker_pb2.GetStatusRequest(), timeout=30)
            own = f"/job:{job}/replica:0/task:{i}/device:CPU:0"
            assert [d.name for d in local] == [own]  # its task's device: it runs ops
            assert [d.name for d in status.device_attributes] == [own]


def test_unmodified_between_graph_program_trains_through_worker_zero(tf_cluster):
    pytest.importorskip("tensorflow")
    clients = [
        subprocess.Popen(
            [sys.executable, str(PROGRAM), str(STEPS)],
            env={**child_env(), **tf_config_env(tf_cluster.spec, "worker", i)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    outputs = [c.communicate(timeout=240) for c in clients]
    for c, (_, err) in zip(clients, outputs):
        assert c.returncode == 0, err[-3000:]
    results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert [r["task"] for r in results] == ["/job:worker/task:0", "/job:worker/task:1"]
    assert {d.rsplit("/device:", 1)[0] for d in results[1]["devices"]} == {
        "/job:ps/task:0",
        "/job:worker/task:1",
    }
    # Both replicas' updates reached the one global step and the weights on the ps.
    assert max(r["global_step"] for r in results) == 2 * STEPS
    for r in results:
        assert r["loss"] < 0.05 * r["first_loss"]
    w = np.array(results[int(np.argmax([r["global_step"] for r in results]))]["w"])
    assert np.all(np.isfinite(w))


def test_tf_config_errors_name_the_field():
    env = {
        **child_env(),
        "TF_CONFIG": json.dumps(
            {"cluster": {"worker": ["localhost:1"]}, "task": {"type": "ps", "index": 0}}
        ),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "server"], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert "TF_CONFIG: task type 'ps' is not a job of the cluster" in proc.stderr
    env.pop("TF_CONFIG")
    proc = subprocess.run(
        [sys.executable, "-m", "server"], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and "TF_CONFIG is not set" in proc.stderr
