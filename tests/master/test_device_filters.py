"""ConfigProto.device_filters, as TensorFlow's master honours them: only the tasks a filter
names are contacted and only matching devices are placed on, so a session that does not
need a dead task starts (and runs) at once while one that does fails with Unavailable."""

from __future__ import annotations

import grpc
import pytest

from protos import config_pb2, graph_pb2, master_pb2
from tests.master.conftest import Cluster

T = 60.0
W0, PS = "/job:worker/replica:0/task:0", "/job:ps/replica:0/task:0"


def _create(cluster: Cluster, filters: list[str], timeout: float = T) -> str:
    graph = graph_pb2.GraphDef()
    request = master_pb2.CreateSessionRequest(
        graph_def=graph, config=config_pb2.ConfigProto(device_filters=filters)
    )
    return cluster.stub.CreateSession(request, timeout=timeout).session_handle


def _devices(cluster: Cluster, handle: str) -> list[str]:
    response = cluster.stub.ListDevices(
        master_pb2.ListDevicesRequest(session_handle=handle), timeout=T
    )
    return [d.name for d in response.remote_device]


def test_filters_choose_the_tasks_and_devices(cluster):
    handle = _create(cluster, ["/job:ps", "/job:worker/task:0/device:CPU:0"])
    assert _devices(cluster, handle) == [f"{W0}/device:CPU:0", f"{PS}/device:CPU:0"]
    cluster.stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=handle), timeout=T)


def test_a_session_not_needing_a_dead_task_starts(cluster):
    cluster.workers[1].stop(0)  # /job:worker/task:1 is gone
    handle = _create(cluster, ["/job:ps", "/job:worker/task:0"], timeout=5.0)
    assert _devices(cluster, handle) == [f"{W0}/device:CPU:0", f"{PS}/device:CPU:0"]
    cluster.stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=handle), timeout=T)
    with pytest.raises(grpc.RpcError) as e:  # every task: waits for task 1 until the deadline
        _create(cluster, [])
    assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert "/job:worker/replica:0/task:1" in e.value.details()


def test_filters_matching_no_task_are_invalid(cluster):
    with pytest.raises(grpc.RpcError) as e:
        _create(cluster, ["/job:nosuch"])
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "/job:nosuch" in e.value.details()
