"""The standard gRPC health service on every task, probed the way docker-compose does
(`python -m deploy health HOST:PORT`), and the compose file's healthchecks and restarts."""

from __future__ import annotations

import subprocess
import sys

import yaml

from deploy.launcher import REPO_ROOT, LocalCluster, child_env, free_port


def _probe(address: str) -> int:
    return subprocess.run(
        [sys.executable, "-m", "deploy", "health", address],
        env=child_env(),
        capture_output=True,
        timeout=60,
    ).returncode


def test_every_task_answers_the_health_probe(shared_cluster: LocalCluster) -> None:
    addresses = [shared_cluster.master_address] + [
        a for tasks in shared_cluster.spec["jobs"].values() for a in tasks
    ]
    assert [_probe(a) for a in addresses] == [0] * len(addresses)
    assert _probe(f"127.0.0.1:{free_port()}") == 1


def test_compose_checks_health_and_restarts_every_task() -> None:
    services = yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())["services"]
    for name, service in services.items():
        assert service["restart"] == "unless-stopped", name
        assert service["healthcheck"]["test"][:5] == ["CMD", "python", "-m", "deploy", "health"]
    assert all(
        c == {"condition": "service_healthy"} for c in services["master"]["depends_on"].values()
    )
