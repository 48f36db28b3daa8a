"""Fixtures for the worker tests: in-process clusters on port 0 whose teardown is checked
(servers stopped, channels closed, no RPC or recv threads left)."""

from __future__ import annotations

import threading

import pytest

from worker.server import WorkerServer, start_local_cluster

# The process-wide compute pool (common.device.thread_pool), shared-memory reaper
# (rpc.shm), cached RPC call pool (rpc.call_pool), deadline watcher and the socket hang-up
# watcher (rpc.local_rpc, started at the first watched call) outlive tests by design.
_PERSISTENT_THREADS = (
    "flowrt-compute",
    "flowrt-shm-reaper",
    "flowrt-rpc-call",
    "flowrt-deadlines",
    "flowrt-hangups",
)


def _our_threads() -> list[str]:
    return sorted(
        t.name
        for t in threading.enumerate()
        if t.name.startswith("flowrt") and not t.name.startswith(_PERSISTENT_THREADS)
    )


@pytest.fixture
def local_cluster():
    """local_cluster({"worker": 2}, num_cpus=1, **kw) -> (ClusterSpec, [WorkerServer])."""
    started: list[WorkerServer] = []

    def start(jobs: dict[str, int], num_cpus: int = 1, **kwargs):
        spec, servers = start_local_cluster(jobs, num_cpus, **kwargs)
        started.extend(servers)
        return spec, servers

    yield start
    for server in started:
        server.stop(grace=1.0)
    for server in started:
        assert server.worker.worker_cache.num_channels() == 0
        assert len(server.worker.rendezvous_mgr) == 0
    assert _our_threads() == []
