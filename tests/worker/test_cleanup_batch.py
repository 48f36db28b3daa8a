"""Our batched CleanupGraph RPC (worker.service CleanupGraphBatch) on an in-process worker."""

from __future__ import annotations

import struct

import grpc
import pytest

from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import CLEANUP_BATCH_PATH

TIMEOUT = 20.0


@pytest.fixture
def worker(local_cluster):
    _, (server,) = local_cluster({"worker": 1})
    channel = grpc.insecure_channel(server.address, options=GRPC_OPTIONS)
    yield server, channel.unary_unary(CLEANUP_BATCH_PATH)
    channel.close()


def test_batch_drops_exactly_the_listed_steps(worker):
    server, cleanup_batch = worker
    for step_id in (5, 6, 7, 1 << 56):
        server.worker.rendezvous_mgr.find_or_create(step_id)
    assert cleanup_batch(struct.pack("<3q", 5, 7, 1 << 56), timeout=TIMEOUT) == b""
    assert server.worker.rendezvous_mgr.step_ids() == [6]
    assert cleanup_batch(struct.pack("<q", 6), timeout=TIMEOUT) == b""
    assert server.worker.rendezvous_mgr.step_ids() == []


def test_batch_of_unknown_steps_and_empty_batch_are_ok(worker):
    server, cleanup_batch = worker
    assert cleanup_batch(b"", timeout=TIMEOUT) == b""
    assert cleanup_batch(struct.pack("<2q", 41, 42), timeout=TIMEOUT) == b""
    assert server.worker.rendezvous_mgr.step_ids() == []


def test_ragged_batch_is_invalid_argument(worker):
    _, cleanup_batch = worker
    with pytest.raises(grpc.RpcError) as err:
        cleanup_batch(b"\x01\x02\x03", timeout=TIMEOUT)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "int64 step ids" in err.value.details()
