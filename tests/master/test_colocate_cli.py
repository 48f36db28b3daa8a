"""`python -m master --colocate /job:worker/task:0`: the master process also runs worker
task 0 (TensorFlow's layout, whose master lives in worker 0) and calls it directly. Real
processes on loopback: steps that cross into the other worker give the right values, and
SIGTERM stops both parts with exit 0."""

from __future__ import annotations

import numpy as np

import client as tf
from bench import workloads
from bench.cluster import LocalCluster, MasterClient


def test_master_with_worker_zero_in_its_process_runs_steps():
    cluster = LocalCluster(2, log_level="INFO", colocate=True)
    try:
        assert len(cluster.procs) == 2  # worker 1 and the master: no separate worker 0
        assert cluster.worker_pids[0] == cluster.procs[-1].pid
        with open(cluster._log("master")) as f:
            assert "worker /job:worker/replica:0/task:0 listening on" in f.read()
        for make in (workloads.trivial, workloads.mlp, lambda: workloads.transfer(2 << 20)):
            w = make()
            client = MasterClient(cluster.master_address, w.graph_def, workloads.config_proto())
            try:
                client.run([], {}, w.init_targets)
                for _ in range(3):
                    w.check(client.run([w.fetch], w.feeds, [])[0])
            finally:
                client.close()
        chain = workloads.chain(50)
        client = MasterClient(cluster.master_address, chain.graph_def, workloads.config_proto())
        value = client.run([chain.fetch], {"x:0": np.float32(2.0)}, [])[0]
        client.close()
        assert float(value) == 102.0
        # A large feed and fetch (views passed as parts: rpc.wire) to either worker.
        big = np.arange(1 << 19, dtype=np.float32)
        for task in (0, 1):
            with tf.Graph().as_default() as g:
                x = tf.placeholder(tf.float32, [None], name="x")
                with tf.device(f"/job:worker/task:{task}"):
                    tf.multiply(x, 2.0, name="y")
            client = MasterClient(
                cluster.master_address, g.as_graph_def(), workloads.config_proto()
            )
            np.testing.assert_array_equal(client.run(["y:0"], {"x:0": big}, [])[0], big * 2.0)
            client.close()
    finally:
        procs = list(cluster.procs)
        cluster.stop()
    assert [p.returncode for p in procs] == [0, 0]
