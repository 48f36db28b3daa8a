"""A TensorList crosses workers: two in-process workers on port 0; task 1 builds a list with
unset items (TensorListReserve + TensorListScatterIntoExistingList) from a fed tensor and
_Sends it; task 0 _Recvs it and reads it (TensorListStack, TensorListGetItem,
TensorListLength) and also hands the list itself back to the client in RunGraph. Over each
path a received tensor takes: the gRPC stream, the same-host socket, and TensorFlow's
unary RecvTensor."""

from __future__ import annotations

import grpc
import numpy as np
import pytest

from common import tensor as tensor_util
from common.dtypes import DataType
from common.ops.list_ops import TensorList
from common.rendezvous import create_key
from protos import worker_pb2
from rpc import local_rpc
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import worker_stub
from tests.worker import graphs as g
from tests.worker.graphs import CLIENT, CLIENT_INCARNATION

W0 = "/job:worker/replica:0/task:0/device:CPU:0"
W1 = "/job:worker/replica:0/task:1/device:CPU:0"
TASK1 = "/job:worker/replica:0/task:1"
TIMEOUT = 30.0
F32, I32, VARIANT = DataType.DT_FLOAT, DataType.DT_INT32, DataType.DT_VARIANT
ROWS = [0, 2, 3, 5]  # of 6 items; 1 and 4 stay unset
FETCHES = ("stack:0", "item:0", "unset:0", "length:0", "lst:0")


def _inc(server) -> int:
    return server.worker.devices[0].incarnation


def _producer_graph(producer):
    """Task 1: x (fed) scattered into a reserved list of 6 -> _Send to task 0."""
    gd = g.graph_def()
    g.recv(gd, "x", W1, "x:0", F32)
    g.const(gd, "shape", W1, np.array([3], np.int32))
    g.const(gd, "n", W1, np.int32(6))
    g.const(gd, "rows", W1, np.array(ROWS, np.int32))
    g.node(
        gd, "reserve", "TensorListReserve", W1, ("shape", "n"), element_dtype=F32, shape_type=I32
    )
    g.node(
        gd,
        "lst",
        "TensorListScatterIntoExistingList",
        W1,
        ("reserve", "x", "rows"),
        element_dtype=F32,
    )
    g.send(
        gd,
        "lst/_send",
        W1,
        _inc(producer),
        "lst",
        "edge_1_lst",
        VARIANT,
        recv_device=W0,
        client_terminated=False,
    )
    return gd


def _consumer_graph(consumer, producer):
    """Task 0: _Recv the list; stack it, read a set and an unset item, its length; fetch
    those and the list itself."""
    gd = g.graph_def()
    g.recv(
        gd,
        "lst",
        W0,
        "edge_1_lst",
        VARIANT,
        send_device=W1,
        send_incarnation=_inc(producer),
        client_terminated=False,
    )
    g.const(gd, "shape", W0, np.array([3], np.int32))
    g.const(gd, "unknown", W0, np.int32(-1))
    g.const(gd, "two", W0, np.int32(2))
    g.const(gd, "four", W0, np.int32(4))
    g.node(gd, "stack", "TensorListStack", W0, ("lst", "shape"), element_dtype=F32, num_elements=-1)
    g.node(gd, "item", "TensorListGetItem", W0, ("lst", "two", "unknown"), element_dtype=F32)
    g.node(gd, "unset", "TensorListGetItem", W0, ("lst", "four", "shape"), element_dtype=F32)
    g.node(gd, "length", "TensorListLength", W0, ("lst",))
    types = {"stack": F32, "item": F32, "unset": F32, "length": I32, "lst": VARIANT}
    for name, dt in types.items():
        g.send(gd, f"{name}/_send", W0, _inc(consumer), name, f"{name}:0", dt)
    return gd


def _run(local_cluster, x: np.ndarray, path: str) -> list:
    _, (w0, w1) = local_cluster({"worker": 2}, step_timeout=TIMEOUT)
    client = w0.worker.recv_client
    if path == "unary":  # as with a TensorFlow peer: TF's unary RecvTensor
        client._unary_tasks.add(TASK1)
    local_calls: list = []
    start_local = client.local.start

    def spy(*args, **kwargs):
        local_calls.append(start_local(*args, **kwargs))
        return local_calls[-1]

    client.local.start = spy
    channels = [grpc.insecure_channel(w.address, options=GRPC_OPTIONS) for w in (w0, w1)]
    s0, s1 = (worker_stub(c) for c in channels)
    try:
        h1 = s1.RegisterGraph(
            worker_pb2.RegisterGraphRequest(graph_def=_producer_graph(w1)), timeout=TIMEOUT
        ).graph_handle
        h0 = s0.RegisterGraph(
            worker_pb2.RegisterGraphRequest(graph_def=_consumer_graph(w0, w1)), timeout=TIMEOUT
        ).graph_handle
        keys = [create_key(W0, _inc(w0), CLIENT, f) for f in FETCHES]
        req0 = worker_pb2.RunGraphRequest(
            graph_handle=h0, step_id=5, recv_key=keys, store_errors_in_response_body=True
        )
        req1 = worker_pb2.RunGraphRequest(
            graph_handle=h1, step_id=5, store_errors_in_response_body=True
        )
        feed = create_key(CLIENT, CLIENT_INCARNATION, W1, "x:0")
        req1.send.add(name=feed).tensor.CopyFrom(tensor_util.as_proto_tensor_content(x))
        f0 = s0.RunGraph.future(req0, timeout=TIMEOUT)
        r1 = s1.RunGraph(req1, timeout=TIMEOUT)
        r0 = f0.result()
        assert (r1.status_code, r0.status_code) == (0, 0), (
            r1.status_error_message + r0.status_error_message
        )
        out = {named.name: tensor_util.to_numpy(named.tensor) for named in r0.recv}
        for stub in (s0, s1):
            stub.CleanupGraph(worker_pb2.CleanupGraphRequest(step_id=5), timeout=TIMEOUT)
        if path == "unary":
            assert TASK1 in client._unary_tasks
        took_socket = any(call is not None for call in local_calls)
        assert took_socket == (path == "local_socket")
        return [out[k] for k in keys]
    finally:
        for c in channels:
            c.close()


@pytest.mark.parametrize("path", ["stream", "local_socket", "unary"])
def test_a_list_built_on_one_worker_is_read_on_another(local_cluster, monkeypatch, path):
    monkeypatch.setenv("FLOWRT_LOCAL_RPC", "1" if path == "local_socket" else "0")
    if path == "local_socket" and not local_rpc.enabled():
        pytest.skip("no shared-memory directory for the same-host socket")
    x = np.arange(12, dtype=np.float32).reshape(4, 3) + 0.25
    stack, item, unset, length, lst = _run(local_cluster, x, path)
    want = np.zeros((6, 3), np.float32)
    want[ROWS] = x
    np.testing.assert_array_equal(stack, want)
    np.testing.assert_array_equal(item, x[1])
    np.testing.assert_array_equal(unset, np.zeros(3, np.float32))
    assert length == 6
    # The list itself reaches the client intact, unset items and all.
    tl = lst.item()
    assert isinstance(tl, TensorList)
    assert (tl.element_dtype, tl.element_shape, tl.max_num_elements) == (F32, (3,), -1)
    assert [i for i, item in enumerate(tl.items) if item is None] == [1, 4]
    np.testing.assert_array_equal(np.stack([tl.items[i] for i in ROWS]), x)
