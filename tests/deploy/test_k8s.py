"""deploy/k8s: the Kubernetes manifests and the Kubeflow TFJob example.

Validated against Kubernetes' own schemas (kubernetes-validate, offline, strict); the
TFJob is a custom resource, so its pod templates are validated as Pods and its shape
checked. Then every pod's command runs as a local process with the TF_CONFIG and the
environment that pod would get (its DNS names mapped to loopback ports, the TLS secret's
mount to certificates our `python -m deploy certs` made from the manifests' cluster files),
and the cluster must run the demo job under mutual TLS and tokens: the StatefulSets' tasks
with their pod index, the TFJob's with the operator's TF_CONFIG and its chief running the
client program to exit 0. Each pod's exec probe, run the same way, finds its task serving;
a plaintext probe (what kubelet's own gRPC probe sends) does not."""

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
SECRET_MOUNT = "/etc/flowrt/tls"
PROBE = ["python", "-m", "deploy", "health", "localhost:2222"]


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
        assert container["readinessProbe"]["exec"]["command"] == PROBE
        assert container["livenessProbe"]["exec"]["command"] == PROBE
        assert container["resources"]["requests"]
        assert_mounts_tls_secret(s["spec"]["template"]["spec"], "flowrt-tls")


def assert_mounts_tls_secret(spec: dict[str, Any], secret: str) -> None:
    """The pod mounts `secret` read-only where its FLOWRT_TLS_* and token variables point."""
    (volume,) = spec["volumes"]
    assert volume["secret"]["secretName"] == secret
    (container,) = [c for c in spec["containers"] if c["name"] in ("flowrt", "tensorflow")]
    (mount,) = container["volumeMounts"]
    assert (mount["name"], mount["mountPath"], mount["readOnly"]) == (
        volume["name"],
        SECRET_MOUNT,
        True,
    )
    env = {e["name"]: e.get("value", "") for e in container["env"]}
    for name in ("FLOWRT_TLS_CERT", "FLOWRT_TLS_KEY", "FLOWRT_TLS_CA", "FLOWRT_AUTH_TOKEN_FILE"):
        assert env[name].startswith(SECRET_MOUNT + "/"), name


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
        assert_mounts_tls_secret(spec["template"]["spec"], "flowrt-demo-tls")


def test_cluster_files_name_the_manifests_pods():
    """The certs command's inputs (deploy/k8s/*cluster.yaml) list the pods the manifests run,
    so every pod finds its certificate, valid for its DNS name."""
    _, worker, _ = docs("flowrt.yaml")
    (container,) = worker["spec"]["template"]["spec"]["containers"]
    tf_config = json.loads(pod_env(container, {"POD_INDEX": "0"})["TF_CONFIG"])
    assert yaml.safe_load((K8S / "cluster.yaml").read_text()) == {
        "layout": "tensorflow",
        "jobs": tf_config["cluster"],
    }
    (job,) = docs("tfjob.yaml")
    cluster = json.loads(operator_tf_config(job, "Worker", 0))["cluster"]
    assert yaml.safe_load((K8S / "tfjob-cluster.yaml").read_text()) == {
        "layout": "tensorflow",
        "jobs": cluster,
    }


# -- the pods' commands, run locally -----------------------------------------------------
def expand(text: str, env: dict[str, str]) -> str:
    """$(VAR) references expanded as Kubernetes does in args and env values."""
    return re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], text)


def pod_env(
    container: dict[str, Any], fields: dict[str, str], certs: Path | None = None
) -> dict[str, str]:
    """The container's environment: values in order, each expanding those before it,
    `fields` for the downward-API values (pod labels), the secret's mount at `certs`."""
    env: dict[str, str] = {}
    for e in container.get("env", []):
        value = fields[e["name"]] if "valueFrom" in e else expand(e["value"], env)
        if certs is not None:
            value = value.replace(SECRET_MOUNT, str(certs))
        env[e["name"]] = value
    return env


def local_argv(container: dict[str, Any], env: dict[str, str], ports: dict[str, int]) -> list[str]:
    """The container's command as a local process: $(VAR) expanded as Kubernetes does,
    `python` this interpreter, localhost:2222 and metrics port 9100 mapped."""
    argv = [*container.get("command", []), *container.get("args", [])]
    argv = [expand(a, env) for a in argv]
    if argv[:2] == ["sh", "-c"]:
        script = argv[2].replace("python ", f"{sys.executable} ")
        script = script.replace("localhost:2222", f"localhost:{ports['self']}")
        return ["sh", "-c", script]
    return [sys.executable, *("0" if a == "9100" else a for a in argv)]


def run_probe(
    container: dict[str, Any], env: dict[str, str], port: int
) -> subprocess.CompletedProcess:
    """The container's readiness probe (an exec probe) run in the pod's environment."""
    command = container["readinessProbe"]["exec"]["command"]
    assert command == PROBE
    argv = [sys.executable, *command[1:-1], f"localhost:{port}"]
    return subprocess.run(
        argv, cwd=REPO_ROOT, env={**child_env(), **env}, capture_output=True, text=True, timeout=60
    )


def make_certs(cluster_file: str, out: Path) -> Path:
    """`python -m deploy certs` for a manifests' cluster file, as the README says; ca.key is
    left out of the "secret" as the manifests ask."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "deploy",
            "certs",
            "--cluster",
            str(K8S / cluster_file),
            "--out",
            str(out),
        ],
        cwd=REPO_ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    (out / "ca.key").unlink()
    return out


def client_env(certs: Path) -> dict[str, str]:
    """A client's environment for the closed cluster: client.pem, the CA and the token."""
    return {
        "FLOWRT_TLS_CERT": str(certs / "client.pem"),
        "FLOWRT_TLS_KEY": str(certs / "client.key"),
        "FLOWRT_TLS_CA": str(certs / "ca.pem"),
        "FLOWRT_AUTH_TOKEN_FILE": str(certs / "token"),
    }


def local_tf_config(text: str, ports: dict[str, int]) -> str:
    """Each pod DNS name -> 127.0.0.1:<its port>."""
    return re.sub(r"([\w.-]+):2222", lambda m: f"127.0.0.1:{ports[m.group(1)]}", text)


def plaintext_health(address: str) -> str:
    """What kubelet's built-in gRPC probe does: a plaintext health check; its status code."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(address) as channel:
        try:
            health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        except grpc.RpcError as e:
            return e.code().name
    return "OK"


def test_statefulset_pods_run_a_closed_cluster(tmp_path):
    _, worker, ps = docs("flowrt.yaml")
    certs = make_certs("cluster.yaml", tmp_path / "secret")
    hosts = ["worker-0.flowrt", "worker-1.flowrt", "ps-0.flowrt"]
    ports = {h: free_port() for h in hosts}
    tasks, pods = [], []
    try:
        for s in (worker, ps):
            (container,) = s["spec"]["template"]["spec"]["containers"]
            for index in range(s["spec"]["replicas"]):
                env = pod_env(container, {"POD_INDEX": str(index)}, certs)
                env["TF_CONFIG"] = local_tf_config(env["TF_CONFIG"], ports)
                name = f"{s['metadata']['name']}-{index}"
                tasks.append(Task(name, local_argv(container, env, ports), None, env))
                pods.append((container, env, ports[f"{name}.flowrt"]))
        for t in tasks:
            t.wait_listening(60)
        for container, env, port in pods:  # each pod's exec probe, as kubelet runs it
            probe = run_probe(container, env, port)
            assert probe.returncode == 0, probe.stderr
            assert plaintext_health(f"127.0.0.1:{port}") == "UNAVAILABLE"  # TLS only
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
            env={**child_env(), **client_env(certs)},
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        assert "demo OK" in out.stdout
        # Without the cluster's token (a certificate alone) calls are refused.
        no_token = {**child_env(), **client_env(certs), "FLOWRT_AUTH_TOKEN_FILE": ""}
        refused = subprocess.run(
            out.args, capture_output=True, text=True, env=no_token, timeout=120
        )
        assert refused.returncode != 0
        assert "UNAUTHENTICATED" in refused.stderr
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


def replica_env(
    container: dict[str, Any], tf_config: str, index: int, certs: Path
) -> dict[str, str]:
    """A TFJob pod's environment: the operator's TF_CONFIG and replica-index label."""
    return {**pod_env(container, {"REPLICA_INDEX": str(index)}, certs), "TF_CONFIG": tf_config}


def test_tfjob_pods_run_the_job_to_success(tmp_path):
    (job,) = docs("tfjob.yaml")
    specs = job["spec"]["tfReplicaSpecs"]
    certs = make_certs("tfjob-cluster.yaml", tmp_path / "secret")
    ports = {
        f"flowrt-demo-{r.lower()}-{i}.default.svc": free_port()
        for r, s in specs.items()
        for i in range(s["replicas"])
    }
    servers: list[Task] = []
    pods = []
    chief = None
    try:
        for rtype in ("PS", "Worker"):
            (container,) = specs[rtype]["template"]["spec"]["containers"]
            for index in range(specs[rtype]["replicas"]):
                tf_config = local_tf_config(operator_tf_config(job, rtype, index), ports)
                env = replica_env(container, tf_config, index, certs)
                servers.append(
                    Task(f"{rtype}{index}", local_argv(container, env, ports), None, env)
                )
                pods.append(
                    (container, env, ports[f"flowrt-demo-{rtype.lower()}-{index}.default.svc"])
                )
        for server in servers:
            server.wait_listening(60)
        for container, env, port in pods:
            probe = run_probe(container, env, port)
            assert probe.returncode == 0, probe.stderr
        (container,) = specs["Chief"]["template"]["spec"]["containers"]
        tf_config = local_tf_config(operator_tf_config(job, "Chief", 0), ports)
        env = replica_env(container, tf_config, 0, certs)
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
    assert {p.name for p in Path(K8S).iterdir()} >= {
        "flowrt.yaml",
        "tfjob.yaml",
        "cluster.yaml",
        "tfjob-cluster.yaml",
    }
