"""A step its client gives no deadline is still bounded by the workers' --step-timeout
(the master used to send a 7-day deadline that overrode it), through real processes."""

from __future__ import annotations

import time
from collections.abc import Iterator

import grpc
import pytest

import client as tf
from deploy.launcher import LocalCluster
from protos import master_pb2
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import master_stub

from .conftest import stop_cluster


@pytest.fixture(scope="module")
def short_steps() -> Iterator[LocalCluster]:
    cluster = LocalCluster(
        jobs={"worker": 1},
        master_args=["--rpc-timeout", "10"],
        worker_args=["--step-timeout", "2"],
    ).start()
    try:
        yield cluster
    finally:
        stop_cluster(cluster)


def test_a_blocked_step_without_a_client_deadline_ends_at_the_worker_step_timeout(
    short_steps: LocalCluster,
) -> None:
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            queue = tf.FIFOQueue(1, tf.float32, shapes=[[]])
            value = queue.dequeue()  # nothing is ever enqueued
        with tf.Session(short_steps.target) as sess:
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(value)
            assert sess.run(tf.constant(3.0)) == 3.0


@pytest.fixture(scope="module")
def long_steps() -> Iterator[LocalCluster]:
    cluster = LocalCluster(
        jobs={"worker": 1},
        master_args=["--rpc-timeout", "10"],
        worker_args=["--step-timeout", "120"],
    ).start()
    try:
        yield cluster
    finally:
        stop_cluster(cluster)


def test_a_client_deadline_cancels_the_step_on_the_worker(long_steps: LocalCluster) -> None:
    # No RunOptions timeout: only the gRPC deadline of the call ends it. The worker must
    # stop the step then, not at its own 120 s step timeout.
    with tf.Graph().as_default() as g:
        with tf.device("/job:worker/task:0"):
            queue = tf.FIFOQueue(1, tf.float32, shapes=[[]])
            queue.dequeue(name="wait")
        graph_def = g.as_graph_def()
    channel = grpc.insecure_channel(long_steps.master_address, options=GRPC_OPTIONS)
    stub = master_stub(channel)
    request = master_pb2.CreateSessionRequest()
    request.graph_def.CopyFrom(graph_def)
    handle = stub.CreateSession(request, timeout=60).session_handle
    try:
        with pytest.raises(grpc.RpcError) as info:
            stub.RunStep(
                master_pb2.RunStepRequest(session_handle=handle, fetch=["wait:0"]), timeout=1.0
            )
        assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        ended = time.monotonic()
        worker = long_steps.tasks["worker0"]
        while not any("step failed" in line and handle in line for line in worker.lines):
            assert time.monotonic() - ended < 10, "the worker kept running the step"
            time.sleep(0.05)
        # The master ends and counts the step with the code its client saw.
        master = long_steps.tasks["master"]
        while not any("step failed" in line and handle in line for line in master.lines):
            assert time.monotonic() - ended < 10, "the master logged no failed step"
            time.sleep(0.05)
        [line] = [line for line in master.lines if "step failed" in line and handle in line]
        assert "code=DEADLINE_EXCEEDED" in line, line
    finally:
        stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=handle), timeout=30)
        channel.close()
