"""The master's RunGraph to workers of its own host goes over their Unix sockets
(rpc.local_rpc), and over gRPC when the socket is off; both give the same answers, and a
kernel error keeps its code and node name on the socket path too."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from tests.master.test_master import add_graph, create, run, values, x2
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
