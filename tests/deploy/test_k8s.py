"""deploy/k8s: the Kubernetes manifests and the Kubeflow TFJob example.

Validated against Kubernetes' own schemas (kubernetes-validate, offline, strict); the
TFJob is a custom resource, so its pod templates are validated as Pods and its shape
checked. Then every pod's command runs as a local process with the TF_CONFIG that pod
would get (its DNS names mapped to loopback ports), and the cluster must run the demo
job: the StatefulSets' tasks with their pod index, the TFJob's with the operator's TF_CONFIG
and its chief running the client program to exit 0."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from deploy.launcher import REPO_ROOT, Task, child_env, free_port

K8S = REPO_ROOT / "deploy" / "k8s"
VERSION = "1.30.0"


def docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((K8S / name).read_text()) if d]


def pod(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def test_manifests_are_valid_kubernetes_objects():
    kv = pytest.importorskip("kubernetes_validate")
    kinds = []
    for doc in docs("flowrt.yaml"):
        kv.validate(doc, VERSION, strict=True)
        kinds.append((doc["kind"], doc["metadata"]["name"]))
    assert kinds == [("Service", "flowrt"), ("StatefulSet", "worker"), ("StatefulSet", "ps")]
    service, *sets = docs("flowrt.yaml")
    assert service["spec"]["clusterIP"] == "None"
    for s in sets:
        assert s["spec"]["serviceName"] == "flowrt"
        (container,) = s["spec"]["template"]["spec"]["containers"]
        assert container["readinessProbe"]["grpc"]["port"] == 2222
        assert container["resources"]["requests"]


def test_tfjob_is_a_valid_tfjob_with_valid_pods():
    kv = pytest.importorskip("kubernetes_validate")
    (job,) = docs("tfjob.yaml")
    assert (job["apiVersion"], job["kind"]) == ("kubeflow.org/v1", "TFJob")
    replicas = job["spec"]["tfReplicaSpecs"]
    assert set(replicas) == {"Chief", "Worker", "PS"}
    for spec in replicas.values():
        assert spec["restartPolicy"] in ("OnFailure", "Never", "Always", "ExitCode")
        assert spec["replicas"] >= 1
        kv.validate(pod(spec["template"]["spec"]), VERSION, strict=True)
        names = [c["name"] for c in spec["template"]["spec"]["containers"]]
        assert "tensorflow" in names  # the container TFJob gives TF_CONFIG and the port


# -- the pods' commands, run locally -----------------------------------------------------
def local_argv(container: dict[str, Any], env: dict[str, str], ports: dict[str, int]) -> list[str]:
    """The container's command as a local process: $(VAR) expanded as Kubernetes does,
    `python` this interpreter, localhost:2222 and metrics port 9100 mapped."""
    argv = [*container.get("command", []), *container.get("args", [])]
    argv = [re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], a) for a in argv]
    if argv[:2] == ["sh", "-c"]:
        script = argv[2].replace("python ", f"{sys.executable} ")
        script = script.replace("localhost:2222", f"localhost:{ports['self']}")
        return ["sh", "-c", script]
    return [sys.executable, *("0" if a == "9100" else a for a in argv)]


def local_tf_config(text: str, ports: dict[str, int]) -> str:
    """Each pod DNS name -> 127.0.0.1:<its port>."""
    return re.sub(r"([\w.-]+):2222", lambda m: f"127.0.0.1:{ports[m.group(1)]}", text)


def health(address: str) -> str:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(address) as channel:
        answer = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(), timeout=30, wait_for_ready=True
        )
    return health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)


def test_statefulset_pods_run_a_cluster():
    _, worker, ps = docs("flowrt.yaml")
    hosts = ["worker-0.flowrt", "worker-1.flowrt", "ps-0.flowrt"]
    ports = {h: free_port() for h in hosts}
    tasks = []
    try:
        for s in (worker, ps):
            (container,) = s["spec"]["template"]["spec"]["containers"]
            values = {e["name"]: e.get("value") for e in container["env"]}
            for index in range(s["spec"]["replicas"]):
                env = {
                    "TF_CONFIG": local_tf_config(values["TF_CONFIG"], ports),
                    "POD_INDEX": str(index),
                }
                name = f"{s['metadata']['name']}-{index}"
                tasks.append(Task(name, local_argv(container, env, ports), None, env))
        for t in tasks:
            t.wait_listening(60)
        for host in hosts:  # what the pods' gRPC readiness and liveness probes ask
            assert health(f"127.0.0.1:{ports[host]}") == "SERVING"
        out = subprocess.run(
            [
                sys.executable,
                str(REPO_ROOT / "examples" / "demo.py"),
                "--target",
                f"grpc://127.0.0.1:{ports['worker-0.flowrt']}",
                "--steps",
                "2",
            ],
            capture_output=True,
            text=True,
            env=child_env(),
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        assert "demo OK" in out.stdout
    finally:
        codes = [t.stop() for t in tasks]
    assert codes == [0, 0, 0]


def operator_tf_config(job: dict[str, Any], rtype: str, index: int) -> str:
    """TF_CONFIG as Kubeflow's training operator writes it for one replica."""
    name, namespace = job["metadata"]["name"], "default"
    cluster = {
        r.lower(): [f"{name}-{r.lower()}-{i}.{namespace}.svc:2222" for i in range(s["replicas"])]
        for r, s in job["spec"]["tfReplicaSpecs"].items()
    }
    return json.dumps(
        {
            "cluster": cluster,
            "task": {"type": rtype.lower(), "index": index},
            "environment": "cloud",
        }
    )


def test_tfjob_pods_run_the_job_to_success(tmp_path):
    (job,) = docs("tfjob.yaml")
    specs = job["spec"]["tfReplicaSpecs"]
    ports = {
        f"flowrt-demo-{r.lower()}-{i}.default.svc": free_port()
        for r, s in specs.items()
        for i in range(s["replicas"])
    }
    servers: list[Task] = []
    chief = None
    try:
        for rtype in ("PS", "Worker"):
            (container,) = specs[rtype]["template"]["spec"]["containers"]
            for index in range(specs[rtype]["replicas"]):
                env = {"TF_CONFIG": local_tf_config(operator_tf_config(job, rtype, index), ports)}
                servers.append(
                    Task(f"{rtype}{index}", local_argv(container, env, ports), None, env)
                )
        (container,) = specs["Chief"]["template"]["spec"]["containers"]
        env = {"TF_CONFIG": local_tf_config(operator_tf_config(job, "Chief", 0), ports)}
        argv = local_argv(container, env, {"self": ports["flowrt-demo-chief-0.default.svc"]})
        with open(tmp_path / "out", "w") as out, open(tmp_path / "err", "w") as err:
            chief = subprocess.Popen(  # its pod: the server and the client, one group
                argv,
                cwd=REPO_ROOT,
                env={**child_env(), **env},
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        # The container's main process is the client (exec): the job ends with it.
        assert chief.wait(180) == 0, (tmp_path / "err").read_text()[-3000:]
        assert "demo OK" in (tmp_path / "out").read_text()
    finally:
        if chief is not None:
            try:
                os.killpg(chief.pid, signal.SIGTERM)  # the pod ends: its server goes too
            except ProcessLookupError:
                pass
        codes = [t.stop() for t in servers]
    assert codes == [0, 0, 0]


def test_manifest_paths_exist():
    assert {p.name for p in Path(K8S).iterdir()} >= {"flowrt.yaml", "tfjob.yaml"}
