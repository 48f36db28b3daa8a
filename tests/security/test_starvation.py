"""No starvation, through real processes (gRPC and the same-host socket): with more RunSteps blocked than the master has
threads, the extra ones are refused at once with UNAVAILABLE, and control calls
(ListDevices, CreateSession, CloseSession) and other sessions' steps still answer."""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Iterator

import grpc
import pytest

import client as tf
from deploy.launcher import LocalCluster
from master.service import DEFAULT_MAX_STEPS
from protos import master_pb2
from rpc import local_rpc
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import MASTER_METHODS, master_stub

from .conftest import stop_cluster

BLOCKED = DEFAULT_MAX_STEPS // 2 + 8  # one session may hold half the step slots


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    cluster = LocalCluster(
        jobs={"worker": 1},
        master_args=["--rpc-timeout", "10"],
        worker_args=["--step-timeout", "60"],
    ).start()
    try:
        yield cluster
    finally:
        stop_cluster(cluster)


def _blocking_graph() -> bytes:
    with tf.Graph().as_default() as g:
        with tf.device("/job:worker/task:0"):
            queue = tf.FIFOQueue(1, tf.float32, shapes=[[]], shared_name="never_fed")
            queue.dequeue(name="wait")
        return g.as_graph_def().SerializeToString()


def test_blocked_steps_leave_threads_for_control_calls(cluster: LocalCluster) -> None:
    channel = grpc.insecure_channel(cluster.master_address, options=GRPC_OPTIONS)
    stub = master_stub(channel)
    request = master_pb2.CreateSessionRequest()
    request.graph_def.ParseFromString(_blocking_graph())
    handle = stub.CreateSession(request, timeout=60).session_handle
    step = master_pb2.RunStepRequest(session_handle=handle, fetch=["wait:0"])
    blocked = [stub.RunStep.future(step, timeout=120) for _ in range(BLOCKED)]
    try:
        deadline = time.monotonic() + 30
        while sum(f.done() for f in blocked) < BLOCKED - DEFAULT_MAX_STEPS // 2:
            assert time.monotonic() < deadline, "the steps over the limit were not refused"
            time.sleep(0.1)
        refused = [f.exception() for f in blocked if f.done()]
        assert [e.code() for e in refused] == [grpc.StatusCode.UNAVAILABLE] * len(refused)
        assert "steps running" in refused[0].details()
        devices = stub.ListDevices(master_pb2.ListDevicesRequest(), timeout=5)
        assert devices.remote_device
        with (
            tf.Graph().as_default(),
            tf.Session(
                cluster.target, config=tf.ConfigProto(operation_timeout_in_ms=10000)
            ) as sess,
        ):
            assert sess.run(tf.constant(4.0)) == 4.0
    finally:
        stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=handle), timeout=30)
        for f in blocked:
            f.cancel()
        channel.close()


def test_blocked_steps_over_the_socket_leave_room_for_control_calls(cluster: LocalCluster) -> None:
    # Our client's path on one host: the master's Unix socket (rpc.local_rpc).
    channel = grpc.insecure_channel(cluster.master_address, options=GRPC_OPTIONS)
    stub = master_stub(channel)
    local = local_rpc.discover(channel, local_rpc.MASTER_ENDPOINT_PATH, "master")
    assert local is not None, "the master offered no same-host socket"
    socket_stub = local_rpc.UnaryStub(local, MASTER_METHODS, local_rpc.MASTER_BASE)
    request = master_pb2.CreateSessionRequest()
    request.graph_def.ParseFromString(_blocking_graph())
    handle = stub.CreateSession(request, timeout=60).session_handle
    step = master_pb2.RunStepRequest(session_handle=handle, fetch=["wait:0"])
    pool = concurrent.futures.ThreadPoolExecutor(BLOCKED)
    blocked = [pool.submit(socket_stub.call, "RunStep", step, 120.0) for _ in range(BLOCKED)]
    try:
        deadline = time.monotonic() + 30
        while sum(f.done() for f in blocked) < BLOCKED - DEFAULT_MAX_STEPS // 2:
            assert time.monotonic() < deadline, "the steps over the limit were not refused"
            time.sleep(0.1)
        refused = [f.exception() for f in blocked if f.done()]
        assert all(isinstance(e, tf.errors.UnavailableError) for e in refused), refused
        assert "steps running" in str(refused[0])
        for ask in (
            lambda: socket_stub.call("ListDevices", master_pb2.ListDevicesRequest(), 5.0),
            lambda: stub.ListDevices(master_pb2.ListDevicesRequest(), timeout=5),
        ):
            assert ask().remote_device
        with (
            tf.Graph().as_default(),
            tf.Session(
                cluster.target, config=tf.ConfigProto(operation_timeout_in_ms=10000)
            ) as sess,
        ):
            assert sess.run(tf.constant(4.0)) == 4.0
    finally:
        stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=handle), timeout=30)
        pool.shutdown(wait=True, cancel_futures=True)
        socket_stub.close()
        channel.close()
