"""Worker step tombstones: a RecvTensor or RunGraph arriving after its step's CleanupGraph
is Aborted at once and does not recreate the step (no sockets except the last test)."""

from __future__ import annotations

import grpc
import pytest

from common.errors import AbortedError
from common.rendezvous import create_key
from worker.remote_rendezvous import RemoteRendezvous
from worker.rendezvous_mgr import RendezvousMgr

T0 = "/job:worker/replica:0/task:0"


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _mgr(clock: _Clock, seconds: float = 60.0, most: int = 3) -> RendezvousMgr:
    return RendezvousMgr(
        lambda sid: RemoteRendezvous(sid, T0, None),
        3600.0,
        clock,
        tombstone_seconds=seconds,
        max_tombstones=most,
    )


def test_cleaned_step_is_aborted_not_recreated():
    mgr = _mgr(_Clock())
    mgr.find_or_create(7)
    mgr.cleanup(7)
    for get in (mgr.find_or_create, mgr.hold):
        with pytest.raises(AbortedError) as info:
            get(7)
        assert info.value.message == "Step 7 was cleaned up"
    assert mgr.step_ids() == []


def test_cleanup_before_first_use_also_tombstones():
    mgr = _mgr(_Clock())
    mgr.cleanup(8)  # CleanupGraph overtook the step's RunGraph
    with pytest.raises(AbortedError):
        mgr.hold(8)
    assert mgr.was_cleaned(8) and not mgr.was_cleaned(9)


def test_tombstones_expire_with_time():
    clock = _Clock()
    mgr = _mgr(clock, seconds=60.0)
    mgr.cleanup(1)
    clock.now = 59.0
    assert mgr.was_cleaned(1)
    clock.now = 61.0
    assert not mgr.was_cleaned(1)
    assert mgr.find_or_create(1) is not None


def test_tombstones_are_bounded_oldest_first():
    mgr = _mgr(_Clock(), most=3)
    for step_id in (1, 2, 3, 4):
        mgr.cleanup(step_id)
    assert [mgr.was_cleaned(s) for s in (1, 2, 3, 4)] == [False, True, True, True]


def test_late_recv_tensor_and_run_graph_rpcs_are_aborted():
    from protos import error_codes_pb2, graph_pb2, worker_pb2
    from rpc.channels import GRPC_OPTIONS
    from rpc.service_paths import worker_stub
    from tests.worker.graphs import const
    from worker.server import start_local_cluster

    _, servers = start_local_cluster({"worker": 1})
    try:
        server = servers[0]
        device = server.worker.devices[0]
        gd = graph_pb2.GraphDef()
        const(gd, "c", device.name, 1.0)
        handle = server.worker.register_graph("", False, gd)
        key = create_key(device.name, device.incarnation, device.name, "x")
        with grpc.insecure_channel(server.address, options=GRPC_OPTIONS) as channel:
            stub = worker_stub(channel)
            stub.CleanupGraph(worker_pb2.CleanupGraphRequest(step_id=42), timeout=10)
            with pytest.raises(grpc.RpcError) as info:
                stub.RecvTensor(
                    worker_pb2.RecvTensorRequest(step_id=42, rendezvous_key=key), timeout=10
                )
            assert info.value.code() == grpc.StatusCode.ABORTED
            assert info.value.details() == "Step 42 was cleaned up"
            response = stub.RunGraph(
                worker_pb2.RunGraphRequest(
                    step_id=42, graph_handle=handle, store_errors_in_response_body=True
                ),
                timeout=10,
            )
            assert response.status_code == error_codes_pb2.ABORTED
            assert response.status_error_message == "Step 42 was cleaned up"
            ok = stub.RunGraph(
                worker_pb2.RunGraphRequest(
                    step_id=43, graph_handle=handle, store_errors_in_response_body=True
                ),
                timeout=10,
            )
            assert ok.status_code == 0
        assert server.worker.rendezvous_mgr.step_ids() == [43]
    finally:
        for s in servers:
            s.stop(0)
