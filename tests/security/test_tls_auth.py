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
from deploy.certs import _write_pair, make_ca, make_leaf
from deploy.launcher import LocalCluster
from protos import master_pb2, worker_pb2
from rpc import auth, local_rpc
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import master_stub, worker_stub

from .conftest import stop_cluster

TOKEN = "cluster-token-0123456789abcdef"
ADMIN = "admin-token-0123456789abcdef"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pki")
    ca, ca_key = make_ca()
    _write_pair(out, "ca", ca, ca_key)
    for stem in ("node", "client"):  # every task shares "node" (all on 127.0.0.1)
        _write_pair(out, stem, *make_leaf(stem, "127.0.0.1", ca, ca_key))
    (out / "token").write_text(TOKEN + "\n")
    (out / "admin_token").write_text(ADMIN + "\n")
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
    cluster = LocalCluster(
        jobs={"worker": 2}, master_args=["--rpc-timeout", "10", *flags], worker_args=flags
    ).start()
    try:
        yield cluster
    finally:
        stop_cluster(cluster)


def _creds(pki: Path, token: str | None = TOKEN, cert: bool = True) -> Credentials:
    return Credentials(
        cert=(pki / "client.pem").read_bytes() if cert else None,
        key=(pki / "client.key").read_bytes() if cert else None,
        ca=(pki / "ca.pem").read_bytes(),
        token=token,
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


def test_the_same_host_socket_needs_its_secret(closed_cluster: LocalCluster, pki: Path) -> None:
    with auth.channel(closed_cluster.master_address, GRPC_OPTIONS, _creds(pki)) as channel:
        found = local_rpc.discover(channel, local_rpc.MASTER_ENDPOINT_PATH, "master")
    assert found is not None
    found.close()
    stranger = local_rpc.LocalClient(found.path, "master", b"x" * 16)
    with pytest.raises(UnavailableError):
        stranger.call(
            local_rpc.MASTER_METHOD_IDS["ListDevices"],
            master_pb2.ListDevicesRequest().SerializeToString(),
            5.0,
        )
    stranger.close()
