"""The same TensorFlow-client scenarios with the same-host socket off (FLOWRT_LOCAL_RPC=0 in
every task's environment), so that master -> worker RunGraph, worker -> worker RecvTensor
and CleanupGraph all cross gRPC, as they do between hosts: values, a 100 MB tensor through
shared memory, training with variables on ps, and a killed worker reported as Unavailable."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration import conftest
from tests.integration import test_tf_client as scenarios

pytest.importorskip("tensorflow")

TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module


@pytest.fixture(scope="module")
def grpc_cluster() -> Iterator[conftest.LocalCluster]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FLOWRT_LOCAL_RPC", "0")  # read by the tasks the launcher spawns
        cluster = conftest._start()
    try:
        yield cluster
    finally:
        conftest._stop(cluster)


@pytest.fixture
def fresh_grpc_cluster() -> Iterator[conftest.LocalCluster]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FLOWRT_LOCAL_RPC", "0")
        cluster = conftest._start()
        try:
            yield cluster  # restarted tasks inherit the setting too
        finally:
            conftest._stop(cluster)


def _no_local_sockets(cluster) -> None:
    """Every task really runs with the socket off."""
    for task in cluster.tasks.values():
        with open(f"/proc/{task.proc.pid}/environ", "rb") as f:
            assert b"FLOWRT_LOCAL_RPC=0" in f.read().split(b"\0"), task.name


def test_arithmetic_with_feeds(grpc_cluster):
    _no_local_sockets(grpc_cluster)
    scenarios.test_arithmetic_with_feeds(grpc_cluster)


def test_dense_layers_split_across_workers(grpc_cluster):
    scenarios.test_dense_layers_split_across_workers(grpc_cluster)


def test_100mb_tensor_crosses_workers(grpc_cluster):
    scenarios.test_100mb_tensor_crosses_workers(grpc_cluster)


def test_training_loop_variables_on_ps(grpc_cluster):
    scenarios.test_training_loop_variables_on_ps(grpc_cluster)


def test_killed_worker_fails_step_with_unavailable(fresh_grpc_cluster):
    scenarios.test_killed_worker_fails_step_with_unavailable(fresh_grpc_cluster)
