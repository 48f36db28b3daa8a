"""Fuzzing every method of every service of a real cluster (master and worker started by
their CLIs): arbitrary bytes and mutated valid requests get a clean answer (OK or one of
TensorFlow's codes for a bad request, never UNKNOWN or INTERNAL from a Python exception),
no process crashes, and every server keeps serving."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from common.errors import Code, OpError
from deploy.launcher import LocalCluster
from protos import master_pb2, worker_pb2
from rpc import local_rpc
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import (
    MASTER_METHODS,
    MASTER_SERVICE_NAMES,
    WORKER_METHODS,
    WORKER_SERVICE_NAMES,
    master_stub,
    method_path,
    worker_stub,
)

from .conftest import stop_cluster

# Codes a server may answer a malformed or meaningless request with. UNKNOWN and INTERNAL
# are what an unexpected Python exception becomes: never acceptable for bad input.
CLEAN = {
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.UNIMPLEMENTED,
    grpc.StatusCode.OUT_OF_RANGE,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.UNAVAILABLE,  # a worker a random graph names is not in the cluster
}


def _seed(cls: type, name: str) -> bytes:
    """A plausible request to mutate: a few fields that lead past the first checks."""
    message = cls()
    for field, value in (
        ("session_handle", "0123456789abcdef"),
        ("graph_handle", "g"),
        ("step_id", 7),
        ("request_id", 9),
        ("rendezvous_key", "a;0000000000000001;b;t;0:0"),
    ):
        if field in cls.DESCRIPTOR.fields_by_name:
            setattr(message, field, value)
    if "fetch" in cls.DESCRIPTOR.fields_by_name and name == "RunStep":
        message.fetch.append("c:0")
    if "graph_def" in cls.DESCRIPTOR.fields_by_name:
        node = message.graph_def.node.add(name="c", op="Const")
        node.attr["dtype"].type = 1
        node.attr["value"].tensor.dtype = 1
        node.attr["value"].tensor.float_val.append(1.0)
    return message.SerializeToString()


METHODS = [
    (method_path(MASTER_SERVICE_NAMES[0], name), _seed(classes[0], name))
    for name, classes in MASTER_METHODS.items()
] + [
    (method_path(WORKER_SERVICE_NAMES[0], name), _seed(classes[0], name))
    for name, classes in WORKER_METHODS.items()
]


@st.composite
def mutated(draw: Any, seed: bytes) -> bytes:
    data = bytearray(seed)
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "truncate"]))
        if kind == "insert" or not data:
            at = draw(st.integers(0, len(data)))
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
            continue
        at = draw(st.integers(0, len(data) - 1))
        if kind == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 4))]
        else:
            del data[at:]
    return bytes(data)


@pytest.fixture(scope="module")
def fuzz_cluster() -> Iterator[LocalCluster]:
    cluster = LocalCluster(
        jobs={"worker": 1},
        master_args=["--rpc-timeout", "5", "--step-timeout", "5", "--memory-limit", "2G"],
        worker_args=["--step-timeout", "5", "--memory-limit", "2G"],
    ).start()
    try:
        yield cluster
    finally:
        stop_cluster(cluster)


@pytest.mark.parametrize("path,seed", METHODS, ids=[p for p, _ in METHODS])
def test_every_method_answers_garbage_cleanly(
    fuzz_cluster: LocalCluster, path: str, seed: bytes
) -> None:
    address = (
        fuzz_cluster.master_address
        if "MasterService" in path
        else fuzz_cluster.tasks["worker0"].address or fuzz_cluster.spec["jobs"]["worker"][0]
    )
    channel = grpc.insecure_channel(address, options=GRPC_OPTIONS)
    call = channel.unary_unary(path)

    @settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.one_of(st.binary(max_size=64), mutated(seed)))
    def send(payload: bytes) -> None:
        try:
            call(payload, timeout=10)
        except grpc.RpcError as e:
            assert e.code() in CLEAN, (path, payload, e.code(), e.details())
            assert "Traceback" not in (e.details() or "")

    try:
        send()
    finally:
        channel.close()
    for task in fuzz_cluster.tasks.values():
        assert task.proc.poll() is None, f"{task.name} died"
    _check_serving(fuzz_cluster)


def _check_serving(cluster: LocalCluster) -> None:
    with grpc.insecure_channel(cluster.master_address, options=GRPC_OPTIONS) as channel:
        master_stub(channel).ListDevices(master_pb2.ListDevicesRequest(), timeout=30)
    worker = cluster.spec["jobs"]["worker"][0]
    with grpc.insecure_channel(worker, options=GRPC_OPTIONS) as channel:
        worker_stub(channel).GetStatus(worker_pb2.GetStatusRequest(), timeout=30)


@pytest.fixture(scope="module")
def socket_clients(fuzz_cluster: LocalCluster) -> Iterator[list[Any]]:
    found = []
    for address, path in (
        (fuzz_cluster.master_address, local_rpc.MASTER_ENDPOINT_PATH),
        (fuzz_cluster.spec["jobs"]["worker"][0], local_rpc.ENDPOINT_PATH),
    ):
        with grpc.insecure_channel(address, options=GRPC_OPTIONS) as channel:
            client = local_rpc.discover(channel, path, address)
        assert client is not None, f"no socket at {address}"
        found.append(client)
    yield found
    for client in found:
        client.close()


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(method=st.integers(0, 40), payload=st.binary(max_size=96))
def test_the_same_host_sockets_answer_garbage_cleanly(
    socket_clients: list[Any], method: int, payload: bytes
) -> None:
    """The fast paths (our Unix sockets, found through LocalEndpoint) get the same
    treatment: any method number, any bytes."""
    for client in socket_clients:
        try:
            client.call(method, payload, 10.0)
        except OpError as e:
            assert e.code not in (Code.UNKNOWN, Code.INTERNAL), (method, payload, e.message)


def test_no_server_logged_an_internal_error(fuzz_cluster: LocalCluster) -> None:
    for task in fuzz_cluster.tasks.values():
        internal = [line for line in task.lines if "Traceback" in line or "internal error" in line]
        assert internal == [], (task.name, internal[:5])
