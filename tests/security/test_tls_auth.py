"""A closed cluster, started by the CLIs with the certificates and tokens `python -m deploy
certs` makes: mutual TLS on every channel, the shared token on every call (the same-host
sockets included), the admin token for Reset and CleanupAll, the health service open."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

import client as tf
from common.credentials import Credentials
from common.errors import UnauthenticatedError, UnavailableError
from common.task_stats import CLUSTER_STATUS_PATH, TASK_STATS_PATH
from deploy.certs import _write_pair, make_ca, make_leaf
from deploy.launcher import LocalCluster
from protos import master_pb2, worker_pb2
from rpc import auth, local_rpc
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import (
    CLEANUP_BATCH_PATH,
    KEEPALIVE_PATH,
    MASTER_METHODS,
    MASTER_SERVICE_NAMES,
    ONE_PATH,
    STREAM_PATH,
    WORKER_METHODS,
    WORKER_SERVICE_NAMES,
    master_stub,
    method_path,
    worker_stub,
)

from .conftest import stop_cluster

TOKEN = "cluster-token-0123456789abcdef"
ADMIN = "admin-token-0123456789abcdef"
CLIENT = "client-token-0123456789abcdef"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pki")
    ca, ca_key = make_ca()
    _write_pair(out, "ca", ca, ca_key)
    for stem in ("node", "client"):  # every task shares "node" (all on 127.0.0.1)
        _write_pair(out, stem, *make_leaf(stem, "127.0.0.1", ca, ca_key))
    (out / "token").write_text(TOKEN + "\n")
    (out / "admin_token").write_text(ADMIN + "\n")
    (out / "client_token").write_text(CLIENT + "\n")
    return out


@pytest.fixture(scope="module")
def closed_cluster(pki: Path) -> Iterator[LocalCluster]:
    flags = [
        "--tls-cert",
        str(pki / "node.pem"),
        "--tls-key",
        str(pki / "node.key"),
        "--tls-ca",
        str(pki / "ca.pem"),
        "--auth-token-file",
        str(pki / "token"),
        "--admin-token-file",
        str(pki / "admin_token"),
    ]
    client_token = ["--client-token-file", str(pki / "client_token")]
    cluster = LocalCluster(
        jobs={"worker": 2},
        master_args=["--rpc-timeout", "10", *flags, *client_token],
        worker_args=flags,
    ).start()
    try:
        yield cluster
    finally:
        stop_cluster(cluster)


def _creds(
    pki: Path, token: str | None = TOKEN, cert: bool = True, client_token: str | None = None
) -> Credentials:
    return Credentials(
        cert=(pki / "client.pem").read_bytes() if cert else None,
        key=(pki / "client.key").read_bytes() if cert else None,
        ca=(pki / "ca.pem").read_bytes(),
        token=token,
        client_token=client_token,
    )


def _run(target: str, creds: Credentials | None) -> Any:
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            a = tf.constant(np.arange(4, dtype=np.float32)) * 2.0
        with tf.device("/job:worker/task:1"):
            b = a + 1.0
        with tf.Session(
            target, config=tf.ConfigProto(operation_timeout_in_ms=5000), credentials=creds
        ) as sess:
            return sess.run(b)


def test_a_client_with_the_credentials_runs_steps_across_workers(
    closed_cluster: LocalCluster, pki: Path
) -> None:
    assert _run(closed_cluster.target, _creds(pki)).tolist() == [1.0, 3.0, 5.0, 7.0]


@pytest.mark.parametrize("local", ["1", "0"])
def test_the_client_token_runs_steps_through_the_master(
    closed_cluster: LocalCluster, pki: Path, local: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Over the master's same-host socket (found with the client token) and over gRPC.
    monkeypatch.setenv("FLOWRT_LOCAL_RPC", local)
    creds = _creds(pki, token=None, client_token=CLIENT)
    assert _run(closed_cluster.target, creds).tolist() == [1.0, 3.0, 5.0, 7.0]


REFUSED = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)
WORKER_CALLS = [
    ("GetStatus", worker_pb2.GetStatusRequest()),
    ("CreateWorkerSession", worker_pb2.CreateWorkerSessionRequest(session_handle="s")),
    ("RegisterGraph", worker_pb2.RegisterGraphRequest(session_handle="s")),
    ("RunGraph", worker_pb2.RunGraphRequest(session_handle="s", graph_handle="g")),
    ("RecvTensor", worker_pb2.RecvTensorRequest(step_id=1, rendezvous_key="k")),
    ("CleanupGraph", worker_pb2.CleanupGraphRequest(step_id=1)),
    ("CleanupAll", worker_pb2.CleanupAllRequest()),
]


@pytest.mark.parametrize("method,request_", WORKER_CALLS, ids=[m for m, _ in WORKER_CALLS])
def test_the_client_token_opens_no_worker_method(
    closed_cluster: LocalCluster, pki: Path, method: str, request_: Any
) -> None:
    worker = closed_cluster.spec["jobs"]["worker"][0]
    with auth.channel(worker, GRPC_OPTIONS, _creds(pki, None, client_token=CLIENT)) as channel:
        with pytest.raises(grpc.RpcError) as info:
            getattr(worker_stub(channel), method)(request_, timeout=10)
        # Workers do not know the client token at all (a task hosting the master too
        # knows it, and refuses it outside MasterService: PERMISSION_DENIED).
        assert info.value.code() in REFUSED
        # Nor the worker's same-host socket: its secret is a worker method's answer.
        assert local_rpc.discover(channel, local_rpc.ENDPOINT_PATH, "worker0") is None


def test_the_client_token_cannot_reset(closed_cluster: LocalCluster, pki: Path) -> None:
    creds = _creds(pki, None, client_token=CLIENT)
    with auth.channel(closed_cluster.master_address, GRPC_OPTIONS, creds) as channel:
        _expect(
            master_stub(channel).Reset, master_pb2.ResetRequest(), grpc.StatusCode.PERMISSION_DENIED
        )


@pytest.mark.parametrize("case", ["insecure", "no client certificate"])
def test_without_tls_or_a_client_certificate_nothing_connects(
    closed_cluster: LocalCluster, pki: Path, case: str
) -> None:
    creds = Credentials() if case == "insecure" else _creds(pki, cert=False)
    with pytest.raises(UnavailableError):
        _run(closed_cluster.target, creds)


@pytest.mark.parametrize("token", [None, "wrong-token-0123456789"])
def test_without_the_token_every_call_is_unauthenticated(
    closed_cluster: LocalCluster, pki: Path, token: str | None
) -> None:
    with pytest.raises(UnauthenticatedError):
        _run(closed_cluster.target, _creds(pki, token))
    worker = closed_cluster.spec["jobs"]["worker"][0]
    with (
        auth.channel(worker, GRPC_OPTIONS, _creds(pki, token)) as channel,
        pytest.raises(grpc.RpcError) as info,
    ):
        worker_stub(channel).GetStatus(worker_pb2.GetStatusRequest(), timeout=10)
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_reset_and_cleanup_all_need_the_admin_token(
    closed_cluster: LocalCluster, pki: Path
) -> None:
    worker = closed_cluster.spec["jobs"]["worker"][0]
    user = _creds(pki)
    admin = Credentials(user.cert, user.key, user.ca, None, ADMIN)
    for creds, expected in ((user, grpc.StatusCode.PERMISSION_DENIED), (admin, None)):
        with auth.channel(closed_cluster.master_address, GRPC_OPTIONS, creds) as channel:
            _expect(master_stub(channel).Reset, master_pb2.ResetRequest(), expected)
        with auth.channel(worker, GRPC_OPTIONS, creds) as channel:
            _expect(worker_stub(channel).CleanupAll, worker_pb2.CleanupAllRequest(), expected)


def _expect(call: Any, request: Any, code: grpc.StatusCode | None) -> None:
    if code is None:
        call(request, timeout=30)
        return
    with pytest.raises(grpc.RpcError) as info:
        call(request, timeout=30)
    assert info.value.code() == code


def test_the_health_service_answers_without_a_token(
    closed_cluster: LocalCluster, pki: Path
) -> None:
    for address in (closed_cluster.master_address, *closed_cluster.spec["jobs"]["worker"]):
        with auth.channel(address, (), _creds(pki, token=None)) as channel:
            answer = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=10
            )
        assert answer.status == health_pb2.HealthCheckResponse.SERVING


def _every_path() -> list[str]:
    paths = [
        method_path(service, name)
        for names, table in (
            (MASTER_SERVICE_NAMES, MASTER_METHODS),
            (WORKER_SERVICE_NAMES, WORKER_METHODS),
        )
        for service in names
        for name in table
    ]
    return [
        *paths,
        *(STREAM_PATH, ONE_PATH, CLEANUP_BATCH_PATH, KEEPALIVE_PATH, TASK_STATS_PATH),
        *(local_rpc.ENDPOINT_PATH, local_rpc.MASTER_ENDPOINT_PATH, CLUSTER_STATUS_PATH),
    ]


def test_nothing_but_health_answers_without_a_token(
    closed_cluster: LocalCluster, pki: Path
) -> None:
    for address in (closed_cluster.master_address, *closed_cluster.spec["jobs"]["worker"]):
        with auth.channel(address, (), _creds(pki, token=None)) as channel:
            for path in _every_path():
                with pytest.raises(grpc.RpcError) as info:
                    channel.unary_unary(path)(b"", timeout=10)
                assert info.value.code() in REFUSED, (address, path, info.value)
            watch = health_pb2_grpc.HealthStub(channel).Watch(
                health_pb2.HealthCheckRequest(), timeout=10
            )
            assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
            watch.cancel()


def test_the_same_host_socket_needs_its_secret(closed_cluster: LocalCluster, pki: Path) -> None:
    with auth.channel(closed_cluster.master_address, GRPC_OPTIONS, _creds(pki)) as channel:
        found = local_rpc.discover(channel, local_rpc.MASTER_ENDPOINT_PATH, "master")
    assert found is not None
    found.close()
    stranger = local_rpc.LocalClient(found.path, "master", b"x" * 16)
    # The server reads the wrong secret and closes the connection: a request already sent
    # reads the close as UnavailableError; one sent after it gets a broken pipe, which a
    # socket client takes as "use gRPC" (ConnectionError). Either way, no answer.
    with pytest.raises((UnavailableError, ConnectionError)):
        stranger.call(
            local_rpc.MASTER_METHOD_IDS["ListDevices"],
            master_pb2.ListDevicesRequest().SerializeToString(),
            5.0,
        )
    stranger.close()


def test_in_tensorflows_layout_the_client_token_opens_the_master_half_only(pki: Path) -> None:
    # One task serves MasterService and WorkerService on one port and knows both tokens.
    flags = [
        *("--tls-cert", str(pki / "node.pem"), "--tls-key", str(pki / "node.key")),
        *("--tls-ca", str(pki / "ca.pem"), "--auth-token-file", str(pki / "token")),
        *("--client-token-file", str(pki / "client_token")),
    ]
    cluster = LocalCluster(jobs={"worker": 1}, layout="tensorflow", worker_args=flags).start()
    try:
        creds = _creds(pki, None, client_token=CLIENT)
        with tf.Graph().as_default():
            with tf.device("/job:worker/task:0"):
                total = tf.constant(2.0) * 4.0
            with tf.Session(cluster.target, credentials=creds) as sess:
                assert sess.run(total) == 8.0
        with auth.channel(cluster.master_address, GRPC_OPTIONS, creds) as channel:
            _expect(
                worker_stub(channel).GetStatus,
                worker_pb2.GetStatusRequest(),
                grpc.StatusCode.PERMISSION_DENIED,
            )
    finally:
        stop_cluster(cluster)
