"""Worker partial runs (RunGraph is_partial / is_last_partial_run) and isolated session
state, over gRPC against one in-process worker with two CPU devices."""

from __future__ import annotations

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
from tests.worker.test_worker_rpc import (
    CPU0,
    CPU1,
    TIMEOUT,
    _cleanup,
    _fetch_key,
    _incarnation,
    _register,
    _session,
)

F = DataType.DT_FLOAT
ABORTED = grpc.StatusCode.ABORTED.value[0]
FAILED_PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION.value[0]


@pytest.fixture
def worker(local_cluster):
    _, (server,) = local_cluster({"worker": 1}, num_cpus=2, step_timeout=TIMEOUT)
    channel = grpc.insecure_channel(server.address, options=GRPC_OPTIONS)
    yield server, worker_stub(channel)
    channel.close()


def _counter_graph(server):
    """c += 1 (CPU0); s1 = c + x (x fed on CPU1); s2 = s1 * y (CPU0)."""
    gd = g.graph_def()
    g.node(gd, "c", "VarHandleOp", CPU0, shared_name="c", dtype=F, shape=())
    g.const(gd, "one", CPU0, np.float32(1))
    g.node(gd, "inc", "AssignAddVariableOp", CPU0, ("c", "one"), dtype=F)
    g.node(gd, "r", "ReadVariableOp", CPU0, ("c", "^inc"), dtype=F)
    # Feeds arrive through RunGraphRequest.send possibly after their _Recv started, so
    # both key ends name the consuming device (as the master pins them): a local recv.
    g.recv(gd, "x", CPU1, "x:0", F, CPU1, _incarnation(server, CPU1))
    g.recv(gd, "y", CPU0, "y:0", F, CPU0, _incarnation(server))
    g.node(gd, "s1", "AddV2", CPU1, ("r", "x"), T=F)
    g.node(gd, "s2", "Mul", CPU0, ("s1", "y"), T=F)
    g.send(gd, "s1/_send", CPU1, _incarnation(server, CPU1), "s1", "s1:0", F)
    g.send(gd, "s2/_send", CPU0, _incarnation(server), "s2", "s2:0", F)
    return gd


def _init_graph(value: float):
    gd = g.graph_def()
    g.node(gd, "c", "VarHandleOp", CPU0, shared_name="c", dtype=F, shape=())
    g.const(gd, "v", CPU0, np.float32(value))
    g.node(gd, "assign", "AssignVariableOp", CPU0, ("c", "v"), dtype=F)
    return gd


def _pinned_feed(server, name: str, device: str = CPU0) -> str:
    return create_key(device, _incarnation(server, device), device, name)


def _prun(stub, handle, step_id, *, send=(), recv_key=(), last=False, session="sess1"):
    req = worker_pb2.RunGraphRequest(
        session_handle=session,
        create_worker_session_called=True,
        graph_handle=handle,
        step_id=step_id,
        recv_key=list(recv_key),
        is_partial=True,
        is_last_partial_run=last,
        store_errors_in_response_body=True,
    )
    for key, value in send:
        req.send.add(name=key).tensor.CopyFrom(tensor_util.as_proto_tensor_content(value))
    return stub.RunGraph(req, timeout=TIMEOUT)


def _value(resp) -> float:
    assert resp.status_code == 0, resp.status_error_message
    return float(tensor_util.to_numpy(resp.recv[0].tensor))


def _mgr(server, session="sess1"):
    return server.worker.graph_mgr(session, True)


def test_one_step_over_several_calls(worker):
    server, stub = worker
    _session(stub)
    _prun(stub, _register(stub, _init_graph(0.0)), 1, last=True)
    _cleanup(stub, 1)
    handle = _register(stub, _counter_graph(server))
    s1 = _fetch_key(server, "s1:0", CPU1)
    s2 = _fetch_key(server, "s2:0")
    one = _prun(
        stub, handle, 5, send=[(_pinned_feed(server, "x:0", CPU1), np.float32(3))], recv_key=[s1]
    )
    assert _value(one) == 4.0
    assert _mgr(server).partial_step_ids() == [5]
    two = _prun(
        stub,
        handle,
        5,
        send=[(_pinned_feed(server, "y:0"), np.float32(5))],
        recv_key=[s2],
        last=True,
    )
    assert _value(two) == 20.0
    assert _mgr(server).partial_step_ids() == []
    _cleanup(stub, 5)
    # the counter was incremented once: the next run sees 2
    again = _prun(
        stub,
        handle,
        6,
        send=[
            (_pinned_feed(server, "x:0", CPU1), np.float32(0)),
            (_pinned_feed(server, "y:0"), np.float32(1)),
        ],
        recv_key=[s2],
        last=True,
    )
    assert _value(again) == 2.0
    _cleanup(stub, 6)


def test_cleanup_graph_aborts_an_unfinished_partial_step(worker):
    server, stub = worker
    _session(stub)
    _prun(stub, _register(stub, _init_graph(0.0)), 1, last=True)
    _cleanup(stub, 1)
    handle = _register(stub, _counter_graph(server))
    s1 = _fetch_key(server, "s1:0", CPU1)
    _value(
        _prun(
            stub,
            handle,
            7,
            send=[(_pinned_feed(server, "x:0", CPU1), np.float32(1))],
            recv_key=[s1],
        )
    )
    _cleanup(stub, 7)
    assert _mgr(server).partial_step_ids() == []
    late = _prun(stub, handle, 7, send=[(_pinned_feed(server, "y:0"), np.float32(1))], last=True)
    assert (late.status_code, late.status_error_message) == (ABORTED, "Step 7 was cleaned up")
    assert len(server.worker.rendezvous_mgr) == 0


@pytest.mark.parametrize("isolate", [False, True], ids=["shared", "isolated"])
def test_isolate_session_state(worker, isolate):
    server, stub = worker
    for name in ("a", "b"):
        stub.CreateWorkerSession(
            worker_pb2.CreateWorkerSessionRequest(
                session_handle=name, isolate_session_state=isolate
            ),
            timeout=TIMEOUT,
        )
    _prun(stub, _register(stub, _init_graph(4.0), "a"), 1, last=True, session="a")
    read = g.graph_def()
    g.node(read, "c", "VarHandleOp", CPU0, shared_name="c", dtype=F, shape=())
    g.node(read, "r", "ReadVariableOp", CPU0, ("c",), dtype=F)
    g.send(read, "r/_send", CPU0, _incarnation(server), "r", "r:0", F)
    key = _fetch_key(server, "r:0")
    got = {}
    for step, name in ((2, "a"), (3, "b")):
        got[name] = _prun(
            stub, _register(stub, read, name), step, recv_key=[key], last=True, session=name
        )
        _cleanup(stub, step)
    _cleanup(stub, 1)
    assert _value(got["a"]) == 4.0
    if isolate:
        assert got["b"].status_code == FAILED_PRECONDITION
    else:
        assert _value(got["b"]) == 4.0
    stub.CleanupAll(worker_pb2.CleanupAllRequest(), timeout=TIMEOUT)
    for name in ("a", "b"):
        stub.DeleteWorkerSession(
            worker_pb2.DeleteWorkerSessionRequest(session_handle=name), timeout=TIMEOUT
        )
