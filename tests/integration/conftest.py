"""Real-process clusters for integration tests: master + 2 workers + ps started through
their CLIs on free loopback ports; teardown asserts every child process has exited."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from deploy.launcher import LocalCluster


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
