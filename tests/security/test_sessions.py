"""Open sessions are bounded, through a real master: --max-sessions refuses more with
RESOURCE_EXHAUSTED, and --session-idle-timeout closes a session nobody uses."""

from __future__ import annotations

import time
from collections.abc import Iterator

import grpc
import pytest

from deploy.launcher import LocalCluster
from protos import master_pb2
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import master_stub

from .conftest import stop_cluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    cluster = LocalCluster(
        jobs={"worker": 1},
        master_args=["--max-sessions", "2", "--session-idle-timeout", "2"],
    ).start()
    try:
        yield cluster
    finally:
        stop_cluster(cluster)


def test_sessions_are_bounded_and_idle_ones_closed(cluster: LocalCluster) -> None:
    channel = grpc.insecure_channel(cluster.master_address, options=GRPC_OPTIONS)
    stub = master_stub(channel)
    create = master_pb2.CreateSessionRequest()
    try:
        first = stub.CreateSession(create, timeout=60).session_handle
        stub.CreateSession(create, timeout=60)
        with pytest.raises(grpc.RpcError) as info:
            stub.CreateSession(create, timeout=60)
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "--max-sessions" in info.value.details()
        time.sleep(2.5)  # both idle now: the next CreateSession closes them
        third = stub.CreateSession(create, timeout=60).session_handle
        with pytest.raises(grpc.RpcError) as info:
            stub.ListDevices(master_pb2.ListDevicesRequest(session_handle=first), timeout=30)
        assert info.value.code() == grpc.StatusCode.ABORTED
        stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=third), timeout=30)
    finally:
        channel.close()
    assert any("unused for 2 s" in line for line in cluster.tasks["master"].lines)
