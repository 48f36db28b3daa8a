"""The master's RunGraph to workers of its own host goes over their Unix sockets
(rpc.local_rpc), and over gRPC when the socket is off; both give the same answers, and a
kernel error keeps its code and node name on the socket path too."""

from __future__ import annotations

import threading

import grpc
import numpy as np
import pytest

from common.dtypes import DataType
from common.errors import InvalidArgumentError
from examples.demo import GraphBuilder
from master.partition_runner import PartitionRunner
from rpc import local_rpc
from tests.master.conftest import Cluster
from tests.master.test_master import F32, W0, W1, add_graph, create, run, values, x2
from worker.worker import Worker


def _count(monkeypatch) -> dict[str, int]:
    """RunGraphs by transport: the socket's connection threads are flowrt-local-conn-*,
    gRPC's handler threads flowrt-<job><task>-rpc*."""
    calls = {"grpc": 0, "local": 0}
    original = Worker.run_graph

    def counted(self, *args, **kwargs):
        local = threading.current_thread().name.startswith("flowrt-local-conn-")
        calls["local" if local else "grpc"] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Worker, "run_graph", counted)
    return calls


def _count_cleanups(monkeypatch) -> dict[str, int]:
    calls = {"grpc": 0, "local": 0}
    original = Worker.cleanup_graph

    def counted(self, step_id):
        local = threading.current_thread().name.startswith("flowrt-local-conn-")
        calls["local" if local else "grpc"] += 1
        return original(self, step_id)

    monkeypatch.setattr(Worker, "cleanup_graph", counted)
    return calls


@pytest.mark.parametrize("local", ["1", "0"])
def test_run_graph_path_follows_the_switch(cluster, monkeypatch, local):
    monkeypatch.setenv("FLOWRT_LOCAL_RPC", local)
    calls = _count(monkeypatch)
    cleanups = _count_cleanups(monkeypatch)
    handle = create(cluster, add_graph())
    for _ in range(3):
        got = values(run(cluster, handle, ["d:0"], x2()))
        np.testing.assert_array_equal(got["d:0"], [121.0, 484.0])
    if local == "1":
        assert calls == {"grpc": 0, "local": 6}  # 2 partitions x 3 steps
    else:
        assert calls == {"grpc": 6, "local": 0}
    assert cluster.live_steps() == {w.task_name: [] for w in cluster.workers}
    assert cleanups["local" if local == "1" else "grpc"] == 6
    assert cleanups["grpc" if local == "1" else "local"] == 0


def test_kernel_error_over_the_socket_names_the_node(cluster, monkeypatch):
    calls = _count(monkeypatch)
    handle = create(cluster, add_graph())
    response = run(cluster, handle, ["d:0"], {"x:0": np.ones(3, np.float32)})
    assert response.status_code == 3  # INVALID_ARGUMENT
    assert (
        "c" in response.status_error_message
        and "Incompatible shapes" in response.status_error_message
    )
    assert calls["local"] >= 1 and calls["grpc"] == 0


def test_run_graph_answers_are_read_on_the_step_thread(cluster, monkeypatch):
    """The master's RPC thread reads the workers' RunGraph answers from their sockets
    itself: no pooled thread is woken per call (one thread hand-off less each)."""
    readers: list[str] = []
    original = local_rpc.LocalCall.finish

    def finish(self):
        if self._method == local_rpc.RUN_GRAPH:
            readers.append(threading.current_thread().name)
        return original(self)

    monkeypatch.setattr(local_rpc.LocalCall, "finish", finish)
    handle = create(cluster, add_graph())
    for _ in range(3):
        got = values(run(cluster, handle, ["d:0"], x2()))
        np.testing.assert_array_equal(got["d:0"], [121.0, 484.0])
    assert len(readers) == 6  # 2 partitions x 3 steps
    assert all(name.startswith("flowrt-master-rpc") for name in readers), readers


def test_a_failed_partition_aborts_the_one_the_step_thread_waits_for(cluster):
    """While the RPC thread waits for one partition's answer (a dequeue that never
    ends), another partition's failure still aborts the step: its answer is read on a
    pooled thread once the RPC thread stays busy."""
    b = GraphBuilder()
    b.node("queue", "FIFOQueueV2", device=W0)
    b.node("waits", "QueueDequeueV2", ["queue"], device=W0)
    for node in b.graph_def.node:  # component_types: [float32]
        node.attr["component_types"].list.type.append(F32)
    b.node("x", "Placeholder", dtype=F32, shape=(None,))
    b.node("shape", "Const", device=W1, dtype=DataType.DT_INT32, value=np.array([7], np.int32))
    b.node("bad", "Reshape", ["x", "shape"], device=W1, T=F32, Tshape=DataType.DT_INT32)
    handle = create(cluster, b)
    response = run(cluster, handle, [], {"x:0": np.ones(3, np.float32)}, ["waits", "bad"])
    assert response.status_code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert "bad" in response.status_error_message
    assert cluster.live_steps() == {w.task_name: [] for w in cluster.workers}


def test_a_step_failing_to_send_still_reads_the_answers_already_due(cluster, monkeypatch):
    """A RunGraph already sent when the next one cannot be built: its answer is still
    read (on a pooled thread), not left on its socket."""
    readers: list[str] = []
    read = threading.Event()
    original_finish = local_rpc.LocalCall.finish

    def finish(self):
        if self._method == local_rpc.RUN_GRAPH:
            readers.append(threading.current_thread().name)
            read.set()
        return original_finish(self)

    monkeypatch.setattr(local_rpc.LocalCall, "finish", finish)
    original_request = PartitionRunner._run_request
    built: list[int] = []

    def run_request(self, *args, **kwargs):
        built.append(1)
        if len(built) == 2:
            raise InvalidArgumentError("no second request")
        return original_request(self, *args, **kwargs)

    monkeypatch.setattr(PartitionRunner, "_run_request", run_request)
    handle = create(cluster, add_graph())
    response = run(cluster, handle, ["d:0"], x2())
    assert response.status_code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert "no second request" in response.status_error_message
    assert read.wait(30.0)
    assert readers == [readers[0]] and readers[0].startswith("flowrt-rpc-call"), readers


@pytest.fixture
def shared_cluster(monkeypatch, request) -> Cluster:
    """The master's cluster with every worker task served in the master's process (as
    `python -m server`'s task hosts the master): share_in_process on, then conftest's
    `cluster` (started and stopped there)."""
    monkeypatch.setattr(local_rpc, "_share_in_process", True)
    return request.getfixturevalue("cluster")


def _count_byte_calls(monkeypatch) -> dict[str, int]:
    """RunGraphs to a task of this process that went as bytes (local_rpc.InProcessCall),
    and those that reached the worker."""
    calls = {"bytes": 0, "run": 0}
    original_start, original_run = local_rpc.LocalClient.start, Worker.run_graph

    def start(self, method, payload, timeout):
        call = original_start(self, method, payload, timeout)
        if method == local_rpc.RUN_GRAPH and isinstance(call, local_rpc.InProcessCall):
            calls["bytes"] += 1
        return call

    def run_graph(self, *args, **kwargs):
        calls["run"] += 1
        return original_run(self, *args, **kwargs)

    monkeypatch.setattr(local_rpc.LocalClient, "start", start)
    monkeypatch.setattr(Worker, "run_graph", run_graph)
    return calls


def test_run_graph_to_a_task_of_this_process_stays_messages(shared_cluster, monkeypatch):
    """RunGraph to a task served in the master's process runs on the step's thread with
    the request the master built and gives back the response the worker built: nothing
    serialized or parsed either way (TensorFlow's master calls its own worker so)."""
    threads = _count(monkeypatch)
    calls = _count_byte_calls(monkeypatch)
    handle = create(shared_cluster, add_graph())
    for _ in range(3):
        got = values(run(shared_cluster, handle, ["d:0", "c"], x2()))
        np.testing.assert_array_equal(got["c"], [11.0, 22.0])
        np.testing.assert_array_equal(got["d:0"], [121.0, 484.0])
    assert calls == {"bytes": 0, "run": 6}  # 2 partitions x 3 steps
    assert threads == {"grpc": 6, "local": 0}  # on the master's RPC threads, no socket
    assert shared_cluster.live_steps() == {w.task_name: [] for w in shared_cluster.workers}


def test_kernel_error_in_a_task_of_this_process_names_the_node(shared_cluster, monkeypatch):
    calls = _count_byte_calls(monkeypatch)
    handle = create(shared_cluster, add_graph())
    response = run(shared_cluster, handle, ["d:0"], {"x:0": np.ones(3, np.float32)})
    assert response.status_code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert response.status_error_message == "Incompatible shapes: [3] vs. [2]\n\t [[{{node c}}]]"
    assert calls["bytes"] == 0 and calls["run"] >= 1
    assert shared_cluster.live_steps() == {w.task_name: [] for w in shared_cluster.workers}
