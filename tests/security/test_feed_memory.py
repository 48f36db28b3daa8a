"""Large feeds and fetches pass through the master without copies: its peak RSS over a
step feeding (and fetching) N bytes grows by about N, not a multiple of it, through real
processes (the master's VmHWM, reset before the step)."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import numpy as np
import pytest

import client as tf
from bench.suite import peak_rss_mb, reset_peak_rss
from common import tensor as tensor_util
from deploy.launcher import LocalCluster
from protos import master_pb2
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import master_stub

from .conftest import stop_cluster

N_MB = 256


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    started = LocalCluster(jobs={"worker": 1}, master_args=["--rpc-timeout", "60"]).start()
    try:
        yield started
    finally:
        stop_cluster(started)


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise OSError(f"no VmRSS for pid {pid}")


def _growth_mb(cluster: LocalCluster, fetch_back: bool) -> float:
    """The master's peak RSS growth over one step feeding N_MB to a worker."""
    pid = cluster.tasks["master"].proc.pid
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        with tf.device("/job:worker/task:0"):
            y = tf.identity(x) if fetch_back else tf.reduce_sum(x)
        with tf.Session(cluster.target) as sess:
            sess.run(y, {x: np.ones(4, np.float32)})  # plans and registers the graph
            big = np.full(N_MB << 18, 2.0, np.float32)
            if not reset_peak_rss(pid):
                pytest.skip("cannot reset the master's VmHWM (/proc/PID/clear_refs)")
            before = _rss_mb(pid)
            out = sess.run(y, {x: big})
            growth = peak_rss_mb(pid) - before
    if fetch_back:
        assert out.shape == big.shape and out[-1] == 2.0
    else:
        assert out == 2.0 * big.size
    return growth


def test_a_large_feed_costs_the_master_about_its_size(cluster: LocalCluster) -> None:
    # Before: parsed, copied into RunGraph, serialized: about 4x N.
    growth = _growth_mb(cluster, fetch_back=False)
    assert growth < 1.5 * N_MB, f"feeding {N_MB} MB grew the master by {growth:.0f} MB"


def test_a_large_feed_and_fetch_cost_the_master_about_their_size(cluster: LocalCluster) -> None:
    # The request's bytes and the worker's answer are alive together: 2x N, no more.
    growth = _growth_mb(cluster, fetch_back=True)
    assert growth < 2.5 * N_MB, f"feeding and fetching {N_MB} MB grew the master by {growth:.0f} MB"


def test_large_feeds_and_fetches_over_grpc_keep_their_values(cluster: LocalCluster) -> None:
    # gRPC (a TensorFlow client's path) gets the fetched views joined into one answer.
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None], name="x")
        with tf.device("/job:worker/task:0"):
            tf.identity(x, name="y")
            tf.reduce_sum(x, name="total")
        graph_def = g.as_graph_def()
    value = np.arange(3 << 20, dtype=np.float32)
    channel = grpc.insecure_channel(cluster.master_address, options=GRPC_OPTIONS)
    stub = master_stub(channel)
    try:
        request = master_pb2.CreateSessionRequest()
        request.graph_def.CopyFrom(graph_def)
        handle = stub.CreateSession(request, timeout=60).session_handle
        step = master_pb2.RunStepRequest(session_handle=handle, fetch=["y:0", "total:0", "y:0"])
        step.feed.add(name="x:0").tensor.CopyFrom(tensor_util.as_proto_tensor_content(value))
        response = stub.RunStep(step, timeout=60)
        got = [(t.name, tensor_util.to_numpy(t.tensor)) for t in response.tensor]
        assert [name for name, _ in got] == ["total:0", "y:0", "y:0"]
        assert got[0][1] == value.sum(dtype=np.float32)
        np.testing.assert_array_equal(got[1][1], value)
        np.testing.assert_array_equal(got[2][1], value)
        stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=handle), timeout=60)
    finally:
        channel.close()
