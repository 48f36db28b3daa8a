"""RunStep request ids: drawn by each client from the OS's generator, de-duplicated by the
master per (session, request id), and a replayed id must carry the same request."""

from __future__ import annotations

import subprocess
import sys

import grpc
import pytest

from common.tensor import to_numpy
from deploy.launcher import LocalCluster, child_env
from protos import master_pb2
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import master_stub

# A seeded training script: `random` is seeded alike in every process that runs it.
_SEEDED_CLIENT = """
import random, sys
random.seed(1234)
import client as tf
value = float(sys.argv[2])
with tf.Graph().as_default():
    y = tf.constant(value) * tf.constant(1.0)
    with tf.Session(sys.argv[1]) as sess:
        print(sess.run(y))
"""


def _run_client(target: str, value: float) -> float:
    out = subprocess.run(
        [sys.executable, "-c", _SEEDED_CLIENT, target, str(value)],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def test_two_identically_seeded_clients_get_their_own_answers(
    shared_cluster: LocalCluster,
) -> None:
    assert _run_client(shared_cluster.target, 1.0) == 1.0
    assert _run_client(shared_cluster.target, 5.0) == 5.0


@pytest.fixture
def stub_and_session(shared_cluster: LocalCluster):  # type: ignore[no-untyped-def]
    channel = grpc.insecure_channel(shared_cluster.master_address, options=GRPC_OPTIONS)
    stub = master_stub(channel)
    graph = master_pb2.CreateSessionRequest()
    for name, value in (("a", 2.0), ("b", 3.0)):
        node = graph.graph_def.node.add(name=name, op="Const")
        node.attr["dtype"].type = 1
        node.attr["value"].tensor.dtype = 1
        node.attr["value"].tensor.float_val.append(value)
    handle = stub.CreateSession(graph, timeout=60).session_handle
    try:
        yield stub, handle
    finally:
        stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=handle), timeout=30)
        channel.close()


def _run(stub, handle: str, fetch: str, request_id: int):  # type: ignore[no-untyped-def]
    request = master_pb2.RunStepRequest(session_handle=handle, fetch=[fetch], request_id=request_id)
    return stub.RunStep(request, timeout=60)


def test_a_retry_gets_the_first_answer(stub_and_session) -> None:  # type: ignore[no-untyped-def]
    stub, handle = stub_and_session
    first = _run(stub, handle, "a:0", 77)
    again = _run(stub, handle, "a:0", 77)
    assert first == again
    assert to_numpy(first.tensor[0].tensor) == 2.0


def test_a_reused_id_with_another_request_is_invalid(stub_and_session) -> None:  # type: ignore[no-untyped-def]
    stub, handle = stub_and_session
    _run(stub, handle, "a:0", 78)
    with pytest.raises(grpc.RpcError) as info:
        _run(stub, handle, "b:0", 78)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "request_id 78" in info.value.details()


def test_the_same_id_in_two_sessions_runs_both(shared_cluster: LocalCluster) -> None:
    channel = grpc.insecure_channel(shared_cluster.master_address, options=GRPC_OPTIONS)
    stub = master_stub(channel)
    answers = []
    for value in (1.0, 5.0):
        request = master_pb2.CreateSessionRequest()
        node = request.graph_def.node.add(name="c", op="Const")
        node.attr["dtype"].type = 1
        node.attr["value"].tensor.dtype = 1
        node.attr["value"].tensor.float_val.append(value)
        handle = stub.CreateSession(request, timeout=60).session_handle
        answers.append(float(to_numpy(_run(stub, handle, "c:0", 99).tensor[0].tensor)))
        stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=handle), timeout=30)
    channel.close()
    assert answers == [1.0, 5.0]
