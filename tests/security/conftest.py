"""Real-process clusters for the security tests: tasks started through their CLIs on free
loopback ports (deploy.launcher); teardown asserts every child process has exited."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from deploy.launcher import LocalCluster


def stop_cluster(cluster: LocalCluster) -> None:
    tasks = list(cluster.tasks.values())
    cluster.stop()
    left = [t.name for t in tasks if t.proc.poll() is None]
    assert left == [], f"child processes left running: {left}"


@pytest.fixture(scope="module")
def shared_cluster() -> Iterator[LocalCluster]:
    """A master, 2 workers and a ps, shared by a module's tests."""
    cluster = LocalCluster(master_args=["--rpc-timeout", "10"]).start()
    try:
        yield cluster
    finally:
        stop_cluster(cluster)
