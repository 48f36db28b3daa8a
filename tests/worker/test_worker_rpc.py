"""WorkerService over gRPC, one in-process worker on port 0: status, sessions, graph
registration, RunGraph with sends and recv keys, error codes, parked RecvTensor, cleanup."""

from __future__ import annotations

import time

import grpc
import numpy as np
import pytest

from common import tensor as tensor_util
from common.dtypes import DataType
from common.rendezvous import create_key
from protos import worker_pb2
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import worker_stub
from tests.worker import graphs as g
from tests.worker.graphs import CLIENT, CLIENT_INCARNATION

TASK = "/job:worker/replica:0/task:0"
CPU0 = f"{TASK}/device:CPU:0"
CPU1 = f"{TASK}/device:CPU:1"
TIMEOUT = 20.0


@pytest.fixture
def worker(local_cluster):
    _, (server,) = local_cluster({"worker": 1}, num_cpus=2, step_timeout=TIMEOUT)
    channel = grpc.insecure_channel(server.address, options=GRPC_OPTIONS)
    yield server, worker_stub(channel)
    channel.close()


def _incarnation(server, device: str = CPU0) -> int:
    return next(d.incarnation for d in server.worker.devices if d.name == device)


def _session(stub, handle: str = "sess1") -> str:
    stub.CreateWorkerSession(
        worker_pb2.CreateWorkerSessionRequest(session_handle=handle), timeout=TIMEOUT
    )
    return handle


def _register(stub, gd, session: str = "sess1") -> str:
    resp = stub.RegisterGraph(
        worker_pb2.RegisterGraphRequest(
            session_handle=session, create_worker_session_called=True, graph_def=gd
        ),
        timeout=TIMEOUT,
    )
    assert resp.graph_handle
    return resp.graph_handle


def _run(stub, handle, step_id, *, send=(), recv_key=(), in_body=False, session="sess1"):
    req = worker_pb2.RunGraphRequest(
        session_handle=session,
        create_worker_session_called=True,
        graph_handle=handle,
        step_id=step_id,
        recv_key=list(recv_key),
        store_errors_in_response_body=in_body,
    )
    for key, value in send:
        req.send.add(name=key).tensor.CopyFrom(tensor_util.as_proto_tensor_content(value))
    return stub.RunGraph(req, timeout=TIMEOUT)


def _cleanup(stub, step_id):
    stub.CleanupGraph(worker_pb2.CleanupGraphRequest(step_id=step_id), timeout=TIMEOUT)


def _fetch_key(server, name: str, device: str = CPU0) -> str:
    return create_key(device, _incarnation(server, device), CLIENT, name)


def _feed_key(name: str, device: str = CPU0) -> str:
    return create_key(CLIENT, CLIENT_INCARNATION, device, name)


def _const_send_graph(server, value, device=CPU0):
    gd = g.graph_def()
    g.const(gd, "c", device, value)
    g.send(
        gd,
        "c/_send",
        device,
        _incarnation(server, device),
        "c",
        "c:0",
        DataType(tensor_util.infer_dtype(np.asarray(value))),
    )
    return gd


def test_get_status_lists_devices_with_incarnations(worker):
    server, stub = worker
    resp = stub.GetStatus(worker_pb2.GetStatusRequest(), timeout=TIMEOUT)
    assert [(d.name, d.device_type) for d in resp.device_attributes] == [
        (CPU0, "CPU"),
        (CPU1, "CPU"),
    ]
    assert [d.incarnation for d in resp.device_attributes] == [
        d.incarnation for d in server.worker.devices
    ]
    assert len({d.incarnation for d in resp.device_attributes}) == 2


def test_register_and_run_const_send(worker):
    server, stub = worker
    _session(stub)
    handle = _register(stub, _const_send_graph(server, np.arange(6, dtype=np.float32)))
    key = _fetch_key(server, "c:0")
    resp = _run(stub, handle, 11, recv_key=[key])
    assert resp.status_code == 0
    assert [r.name for r in resp.recv] == [key]
    assert resp.recv[0].tensor.tensor_content  # TF's tensor_content form
    np.testing.assert_array_equal(
        tensor_util.to_numpy(resp.recv[0].tensor), np.arange(6, dtype=np.float32)
    )
    assert server.worker.rendezvous_mgr.step_ids() == [11]
    _cleanup(stub, 11)
    assert server.worker.rendezvous_mgr.step_ids() == []


def test_send_feeds_recv_and_graph_spans_two_local_devices(worker):
    server, stub = worker
    _session(stub)
    gd = g.graph_def()
    g.recv(gd, "x", CPU1, "x:0", DataType.DT_INT64)
    g.node(gd, "neg", "Neg", CPU1, ("x",), T=DataType.DT_INT64)
    g.node(gd, "out", "Identity", CPU0, ("neg",), T=DataType.DT_INT64)
    g.send(gd, "out/_send", CPU0, _incarnation(server), "out", "out:0", DataType.DT_INT64)
    handle = _register(stub, gd)
    key = _fetch_key(server, "out:0")
    for step in (21, 22):  # the registered graph runs many steps
        x = np.array([[1, -2], [3, step]], np.int64)
        resp = _run(stub, handle, step, send=[(_feed_key("x:0", CPU1), x)], recv_key=[key])
        np.testing.assert_array_equal(tensor_util.to_numpy(resp.recv[0].tensor), -x)
        _cleanup(stub, step)
    assert len(server.worker.rendezvous_mgr) == 0


def test_variables_survive_steps_until_cleanup_all(worker):
    server, stub = worker
    _session(stub)
    var = {"shared_name": "v", "dtype": DataType.DT_FLOAT, "shape": ()}
    init = g.graph_def()
    g.node(init, "v", "VarHandleOp", CPU0, **var)
    g.const(init, "zero", CPU0, np.float32(10))
    g.node(init, "assign", "AssignVariableOp", CPU0, ("v", "zero"), dtype=DataType.DT_FLOAT)
    inc = g.graph_def()
    g.node(inc, "v", "VarHandleOp", CPU0, **var)
    g.const(inc, "one", CPU0, np.float32(1))
    g.node(inc, "add", "AssignAddVariableOp", CPU0, ("v", "one"), dtype=DataType.DT_FLOAT)
    g.node(inc, "read", "ReadVariableOp", CPU0, ("v", "^add"), dtype=DataType.DT_FLOAT)
    g.send(inc, "read/_send", CPU0, _incarnation(server), "read", "read:0", DataType.DT_FLOAT)
    init_h, inc_h = _register(stub, init), _register(stub, inc)
    key = _fetch_key(server, "read:0")
    _run(stub, init_h, 1)
    values = []
    for step in (2, 3):
        values.append(
            float(tensor_util.to_numpy(_run(stub, inc_h, step, recv_key=[key]).recv[0].tensor))
        )
    assert values == [11.0, 12.0]
    stub.CleanupAll(worker_pb2.CleanupAllRequest(), timeout=TIMEOUT)
    resp = _run(stub, inc_h, 4, recv_key=[key], in_body=True)
    assert resp.status_code in (
        grpc.StatusCode.FAILED_PRECONDITION.value[0],
        grpc.StatusCode.NOT_FOUND.value[0],
    )
    for step in (1, 2, 3, 4):
        _cleanup(stub, step)


def _code(info) -> grpc.StatusCode:
    return info.value.code()


def test_unknown_session_is_aborted(worker):
    server, stub = worker
    with pytest.raises(grpc.RpcError) as info:
        _register(stub, _const_send_graph(server, 1.0), session="nope")
    assert _code(info) == grpc.StatusCode.ABORTED
    assert "Session handle is not found: nope" in info.value.details()


def test_node_on_another_task_is_invalid_argument(worker):
    server, stub = worker
    _session(stub)
    gd = _const_send_graph(server, 1.0)
    gd.node[0].device = "/job:worker/replica:0/task:1/device:CPU:0"
    with pytest.raises(grpc.RpcError) as info:
        _register(stub, gd)
    assert _code(info) == grpc.StatusCode.INVALID_ARGUMENT
    assert "Node c is placed on /job:worker/replica:0/task:1/device:CPU:0" in info.value.details()


def test_unregistered_op_is_not_found(worker):
    _, stub = worker
    _session(stub)
    gd = g.graph_def()
    g.node(gd, "x", "NoSuchOp", CPU0)
    with pytest.raises(grpc.RpcError) as info:
        _register(stub, gd)
    assert _code(info) == grpc.StatusCode.NOT_FOUND
    assert "NoSuchOp" in info.value.details()


def test_unknown_graph_handle_status_in_rpc_or_in_body(worker):
    _, stub = worker
    _session(stub)
    with pytest.raises(grpc.RpcError) as info:
        _run(stub, "deadbeef", 5)
    assert _code(info) == grpc.StatusCode.NOT_FOUND
    resp = _run(stub, "deadbeef", 5, in_body=True)
    assert resp.status_code == grpc.StatusCode.NOT_FOUND.value[0]
    assert resp.status_error_message == "Graph handle is not found: deadbeef"


def test_kernel_error_keeps_code_and_node_and_aborts_waiting_recv(worker):
    _, stub = worker
    _session(stub)
    gd = g.graph_def()
    g.const(gd, "x", CPU0, np.arange(3, dtype=np.float32))
    g.const(gd, "shape", CPU0, np.array([2, 2], np.int32))
    g.node(
        gd,
        "bad_reshape",
        "Reshape",
        CPU0,
        ("x", "shape"),
        T=DataType.DT_FLOAT,
        Tshape=DataType.DT_INT32,
    )
    # A _Recv on the other device that is never fed: the failure must abort it, not wait.
    g.recv(gd, "never", CPU1, "never:0", DataType.DT_FLOAT)
    g.node(gd, "sink", "Identity", CPU1, ("never",), T=DataType.DT_FLOAT)
    handle = _register(stub, gd)
    start = time.monotonic()
    resp = _run(stub, handle, 31, in_body=True)
    assert time.monotonic() - start < TIMEOUT / 2
    assert resp.status_code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert "bad_reshape" in resp.status_error_message
    with pytest.raises(grpc.RpcError) as info:
        _run(stub, handle, 32)
    assert _code(info) == grpc.StatusCode.INVALID_ARGUMENT
    assert "{{node bad_reshape}}" in info.value.details()
    _cleanup(stub, 31)
    _cleanup(stub, 32)


def test_invalid_send_key_is_invalid_argument(worker):
    server, stub = worker
    _session(stub)
    handle = _register(stub, _const_send_graph(server, 1.0))
    resp = _run(stub, handle, 41, send=[("not-a-key", np.float32(1))], in_body=True)
    assert resp.status_code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert "Invalid rendezvous key: not-a-key" in resp.status_error_message
    _cleanup(stub, 41)


def _wait_until(predicate, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


def test_recv_tensor_parked_before_run_graph(worker):
    server, stub = worker
    _session(stub)
    peer = "/job:worker/replica:0/task:9/device:CPU:0"
    gd = g.graph_def()
    g.const(gd, "c", CPU0, np.array([b"ab", b"", b"xyz"], dtype=object))
    g.send(
        gd,
        "c/_send",
        CPU0,
        _incarnation(server),
        "c",
        "edge_1_c",
        DataType.DT_STRING,
        recv_device=peer,
        client_terminated=False,
    )
    handle = _register(stub, gd)
    key = create_key(CPU0, _incarnation(server), peer, "edge_1_c")
    future = stub.RecvTensor.future(
        worker_pb2.RecvTensorRequest(step_id=51, rendezvous_key=key), timeout=TIMEOUT
    )
    _wait_until(lambda: server.worker.rendezvous_mgr.step_ids() == [51])
    assert not future.done()
    _run(stub, handle, 51)
    resp = future.result()
    assert not resp.is_dead
    assert tensor_util.to_numpy(resp.tensor).tolist() == [b"ab", b"", b"xyz"]
    _cleanup(stub, 51)
    assert server.worker.rendezvous_mgr.step_ids() == []


def test_recv_tensor_cleanup_aborts_parked_request(worker):
    server, stub = worker
    key = _fetch_key(server, "never:0")
    future = stub.RecvTensor.future(
        worker_pb2.RecvTensorRequest(step_id=61, rendezvous_key=key), timeout=TIMEOUT
    )
    _wait_until(lambda: server.worker.rendezvous_mgr.step_ids() == [61])
    _cleanup(stub, 61)
    with pytest.raises(grpc.RpcError) as info:
        future.result()
    assert info.value.code() == grpc.StatusCode.ABORTED
    assert "Cleanup 61" in info.value.details()
    assert server.worker.rendezvous_mgr.step_ids() == []


def test_recv_tensor_wrong_incarnation_or_task(worker):
    server, stub = worker
    stale = create_key(CPU0, _incarnation(server) ^ 1, CLIENT, "x")
    with pytest.raises(grpc.RpcError) as info:
        stub.RecvTensor(
            worker_pb2.RecvTensorRequest(step_id=1, rendezvous_key=stale), timeout=TIMEOUT
        )
    assert info.value.code() == grpc.StatusCode.ABORTED
    assert "different device incarnation" in info.value.details()
    other = create_key("/job:worker/replica:0/task:3/device:CPU:0", 1, CLIENT, "x")
    with pytest.raises(grpc.RpcError) as info:
        stub.RecvTensor(
            worker_pb2.RecvTensorRequest(step_id=1, rendezvous_key=other), timeout=TIMEOUT
        )
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert server.worker.rendezvous_mgr.step_ids() == []


def test_delete_session_drops_its_graphs_and_logging_tracing_are_no_ops(worker):
    server, stub = worker
    _session(stub, "s2")
    handle = _register(stub, _const_send_graph(server, 1.0), session="s2")
    assert server.worker.session_handles() == ["s2"]
    stub.DeleteWorkerSession(
        worker_pb2.DeleteWorkerSessionRequest(session_handle="s2"), timeout=TIMEOUT
    )
    assert server.worker.session_handles() == []
    with pytest.raises(grpc.RpcError) as info:
        _run(stub, handle, 71, session="s2")
    assert info.value.code() == grpc.StatusCode.ABORTED
    assert (
        stub.Logging(worker_pb2.LoggingRequest(), timeout=TIMEOUT) == worker_pb2.LoggingResponse()
    )
    assert (
        stub.Tracing(worker_pb2.TracingRequest(), timeout=TIMEOUT) == worker_pb2.TracingResponse()
    )


def test_deregister_graph(worker):
    server, stub = worker
    _session(stub)
    handle = _register(stub, _const_send_graph(server, 1.0))
    req = worker_pb2.DeregisterGraphRequest(
        session_handle="sess1", create_worker_session_called=True, graph_handle=handle
    )
    stub.DeregisterGraph(req, timeout=TIMEOUT)
    with pytest.raises(grpc.RpcError) as info:
        stub.DeregisterGraph(req, timeout=TIMEOUT)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
