"""Integration, compose: docker-compose.yml's services run as local processes.

No Docker engine here: parse docker-compose.yml, check every service runs the CLI
contract, rewrite the compose cluster file's hosts to 127.0.0.1 with free ports, start
each service's exact command (the image's ENTRYPOINT is python) and run the demo job
through the master."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from deploy.launcher import REPO_ROOT, Task, free_port
from examples.demo import run_demo

COMPOSE = REPO_ROOT / "docker-compose.yml"
IN_IMAGE_CLUSTER = "/app/deploy/cluster-compose.yaml"


def _services() -> dict:
    return yaml.safe_load(COMPOSE.read_text())["services"]


def test_services_run_the_cli_contract():
    cluster = yaml.safe_load((REPO_ROOT / "deploy/cluster-compose.yaml").read_text())
    services = _services()
    metrics = ["--metrics-port", "9100"]
    dashboard = ["--dashboard-port", "8080", "--dashboard-host", "0.0.0.0"]
    expected = {"master": ["-m", "master", "--cluster", IN_IMAGE_CLUSTER, *metrics, *dashboard]}
    for job, addresses in cluster["jobs"].items():
        for i, address in enumerate(addresses):
            assert address.split(":")[0] in services, f"no service for {job} task {i}"
            expected[address.split(":")[0]] = [
                "-m",
                "worker",
                "--cluster",
                IN_IMAGE_CLUSTER,
                "--job",
                job,
                "--task",
                str(i),
                *metrics,
            ]
    assert cluster["master"].split(":")[0] == "master"
    assert {name: s["command"] for name, s in services.items()} == expected
    dockerfile = (REPO_ROOT / "deploy/Dockerfile").read_text()
    assert "FROM python:3.11-slim" in dockerfile and 'ENTRYPOINT ["python"]' in dockerfile


def _local_cluster_file(tmp_path: Path) -> Path:
    cluster = yaml.safe_load((REPO_ROOT / "deploy/cluster-compose.yaml").read_text())
    cluster["master"] = f"127.0.0.1:{free_port()}"
    cluster["jobs"] = {
        job: [f"127.0.0.1:{free_port()}" for _ in tasks] for job, tasks in cluster["jobs"].items()
    }
    path = tmp_path / "cluster-compose.yaml"
    path.write_text(yaml.safe_dump(cluster))
    return path


def test_compose_services_run_a_graph(tmp_path):
    import sys

    cluster_file = _local_cluster_file(tmp_path)
    tasks: list[Task] = []
    try:
        for name, service in _services().items():
            # One host here: each task's metrics endpoint and the dashboard on free ports.
            argv = [sys.executable] + [
                str(cluster_file)
                if arg == IN_IMAGE_CLUSTER
                else "0"
                if arg in ("9100", "8080")
                else arg
                for arg in service["command"]
            ]
            tasks.append(Task(name, argv, log=None))
        for task in tasks:
            task.wait_listening(60)
        master = next(t for t in tasks if t.name == "master")
        assert any(" dashboard on http://" in line for line in master.lines), master.lines
        out = io.StringIO()
        assert run_demo(f"grpc://{master.address}", steps=2, out=out), out.getvalue()
        assert out.getvalue().count("matches numpy") == 2
    finally:
        codes = {t.name: t.stop() for t in tasks}
    assert codes == {name: 0 for name in _services()}
    assert all(t.proc.poll() is not None for t in tasks)


def test_launcher_runs_the_demo(capfd):
    from deploy.launcher import main

    assert main(["--quiet", "--steps", "2"]) == 0
    out = capfd.readouterr().out
    assert out.count("matches numpy") == 2
    assert "demo OK" in out
    assert "dashboard: http://127.0.0.1:" in out
    assert "master exit 0, worker0 exit 0, worker1 exit 0, ps0 exit 0" in out


pytestmark = pytest.mark.timeout(240)
