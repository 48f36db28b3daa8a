"""Real-process clusters for integration tests: master + 2 workers + ps started through
their CLIs on free loopback ports; teardown asserts every child process has exited."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from deploy.launcher import LocalCluster

# TensorFlow's Session.run blocks in C++ without the GIL, where pytest-timeout's alarm never
# fires: a master that died mid-test would hang the run for good. A TF session to a
# cluster gets a gRPC deadline unless the test sets its own (GrpcSession applies
# operation_timeout_in_ms to each call, also when the server is gone).
TF_OPERATION_TIMEOUT_MS = 240_000


@pytest.fixture(autouse=True)
def _bounded_tf_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        from tensorflow.python.client import session as tf_session
    except ImportError:
        return
    original = tf_session.Session.__init__

    def init(self, target="", graph=None, config=None):  # noqa: ANN001 (TF's signature)
        if isinstance(target, str) and target.startswith("grpc://"):
            from tensorflow.core.protobuf import config_pb2

            config = config_pb2.ConfigProto() if config is None else config
            if not config.operation_timeout_in_ms:
                bounded = config_pb2.ConfigProto()
                bounded.CopyFrom(config)
                bounded.operation_timeout_in_ms = TF_OPERATION_TIMEOUT_MS
                config = bounded
        original(self, target, graph, config)

    monkeypatch.setattr(tf_session.Session, "__init__", init)


def _start() -> LocalCluster:
    return LocalCluster(master_args=["--rpc-timeout", "10", "--log-level", "DEBUG"]).start()


def _stop(cluster: LocalCluster) -> None:
    tasks = list(cluster.tasks.values())
    cluster.stop()
    left = [t.name for t in tasks if t.proc.poll() is None]
    assert left == [], f"child processes left running: {left}"


@contextlib.contextmanager
def running(cluster: LocalCluster) -> Iterator[LocalCluster]:
    """A started `cluster`, stopped on exit with no child process left running."""
    try:
        yield cluster
    finally:
        _stop(cluster)


@pytest.fixture(scope="module")
def shared_cluster() -> Iterator[LocalCluster]:
    """One cluster for a module's read-mostly tests."""
    with running(_start()) as cluster:
        yield cluster


@pytest.fixture
def fresh_cluster() -> Iterator[LocalCluster]:
    """A cluster of its own, for tests that kill tasks."""
    with running(_start()) as cluster:
        yield cluster
