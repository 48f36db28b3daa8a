"""Worker-to-worker tensors over gRPC: two in-process workers on port 0; the consumer pulls
from the producer over RecvTensorStream (large float, string, dead values), falls back to
the unary TF RecvTensor for a peer without the stream, and reports a dead peer as
Unavailable naming its task. The same-host socket (rpc.local_rpc) is off here, as
between hosts; tests/worker/test_local_rpc.py covers it."""

from __future__ import annotations

import time
from concurrent import futures

import grpc
import numpy as np
import pytest

from common import tensor as tensor_util
from common.dtypes import DataType
from common.errors import UnavailableError
from common.rendezvous import create_key
from protos import worker_pb2
from rpc.channels import GRPC_OPTIONS
from rpc.recv_tensor import RecvTensorClient
from rpc.service_paths import add_worker_servicer, worker_stub
from tests.worker import graphs as g
from tests.worker.graphs import CLIENT, CLIENT_INCARNATION
from worker.service import WorkerServicer
from worker.worker import Worker

W0 = "/job:worker/replica:0/task:0/device:CPU:0"
W1 = "/job:worker/replica:0/task:1/device:CPU:0"
TIMEOUT = 30.0


@pytest.fixture(autouse=True)
def _grpc_only(monkeypatch):
    monkeypatch.setenv("FLOWRT_LOCAL_RPC", "0")


def _inc(server) -> int:
    return server.worker.devices[0].incarnation


def _stub(server):
    channel = grpc.insecure_channel(server.address, options=GRPC_OPTIONS)
    return channel, worker_stub(channel)


def _register(stub, gd) -> str:
    return stub.RegisterGraph(
        worker_pb2.RegisterGraphRequest(graph_def=gd), timeout=TIMEOUT
    ).graph_handle


def _run_req(handle, step_id, send=(), recv_key=()):
    req = worker_pb2.RunGraphRequest(
        graph_handle=handle,
        step_id=step_id,
        recv_key=list(recv_key),
        store_errors_in_response_body=True,
    )
    for key, value in send:
        req.send.add(name=key).tensor.CopyFrom(tensor_util.as_proto_tensor_content(value))
    return req


def _producer_graph(producer, dtype):
    """On task 1: x (fed by the client) -> Identity -> _Send to task 0."""
    gd = g.graph_def()
    g.recv(gd, "x", W1, "x:0", dtype)
    g.node(gd, "y", "Identity", W1, ("x",), T=dtype)
    g.send(
        gd,
        "y/_send",
        W1,
        _inc(producer),
        "y",
        "edge_1_y",
        dtype,
        recv_device=W0,
        client_terminated=False,
    )
    return gd


def _consumer_graph(consumer, producer, dtype):
    """On task 0: _Recv from task 1 -> Identity -> client fetch."""
    gd = g.graph_def()
    g.recv(
        gd,
        "y/_recv",
        W0,
        "edge_1_y",
        dtype,
        send_device=W1,
        send_incarnation=_inc(producer),
        client_terminated=False,
    )
    g.node(gd, "z", "Identity", W0, ("y/_recv",), T=dtype)
    g.send(gd, "z/_send", W0, _inc(consumer), "z", "z:0", dtype)
    return gd


def _transfer(local_cluster, value, dtype, monkeypatch=None):
    """Run the producer/consumer pair for one step; returns the fetched value."""
    _, (w0, w1) = local_cluster({"worker": 2}, step_timeout=TIMEOUT)
    c0, s0 = _stub(w0)
    c1, s1 = _stub(w1)
    try:
        h1 = _register(s1, _producer_graph(w1, dtype))
        h0 = _register(s0, _consumer_graph(w0, w1, dtype))
        fetch = create_key(W0, _inc(w0), CLIENT, "z:0")
        feed = create_key(CLIENT, CLIENT_INCARNATION, W1, "x:0")
        # Consumer first: its RecvTensorStream is parked on task 1 until the value exists.
        f0 = s0.RunGraph.future(_run_req(h0, 7, recv_key=[fetch]), timeout=TIMEOUT)
        r1 = s1.RunGraph(_run_req(h1, 7, send=[(feed, value)]), timeout=TIMEOUT)
        r0 = f0.result()
        assert (r1.status_code, r0.status_code) == (0, 0), r0.status_error_message
        out = tensor_util.to_numpy(r0.recv[0].tensor)
        for stub in (s0, s1):
            stub.CleanupGraph(worker_pb2.CleanupGraphRequest(step_id=7), timeout=TIMEOUT)
        assert w0.worker.rendezvous_mgr.step_ids() == []
        assert w1.worker.rendezvous_mgr.step_ids() == []
        return out, w0
    finally:
        c0.close()
        c1.close()


def _no_unary(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("the unary RecvTensor path was used between our workers")

    monkeypatch.setattr(RecvTensorClient, "_fetch_unary", fail)


def test_100mb_float_tensor_streams_exactly(local_cluster, monkeypatch):
    _no_unary(monkeypatch)
    value = np.random.default_rng(0).standard_normal(25 * 1024 * 1024, dtype=np.float32)
    out, _ = _transfer(local_cluster, value, DataType.DT_FLOAT)
    assert out.dtype == np.float32 and out.shape == value.shape
    assert out.tobytes() == value.tobytes()


def test_string_tensor_streams(local_cluster, monkeypatch):
    _no_unary(monkeypatch)
    value = np.array([[b"ab", b""], [b"\x00xyz", b"q" * 5000]], dtype=object)
    out, _ = _transfer(local_cluster, value, DataType.DT_STRING)
    assert out.shape == (2, 2)
    assert out.tolist() == value.tolist()


def test_dead_tensor_crosses_workers_as_dead(local_cluster, monkeypatch):
    _no_unary(monkeypatch)
    _, (w0, w1) = local_cluster({"worker": 2}, step_timeout=TIMEOUT)
    c0, s0 = _stub(w0)
    c1, s1 = _stub(w1)
    # task 1: Switch(x, false) -> output_true is dead -> _Send to task 0
    p = g.graph_def()
    g.const(p, "x", W1, np.float32(3))
    g.const(p, "pred", W1, np.bool_(False))
    g.node(p, "sw", "Switch", W1, ("x", "pred"), T=DataType.DT_FLOAT)
    g.send(
        p,
        "sw/_send",
        W1,
        _inc(w1),
        "sw:1",
        "edge_1_sw",
        DataType.DT_FLOAT,
        recv_device=W0,
        client_terminated=False,
    )
    # task 0: Merge(dead recv, 5.0) takes input 1 -> value_index == 1
    c = g.graph_def()
    g.recv(
        c,
        "r",
        W0,
        "edge_1_sw",
        DataType.DT_FLOAT,
        send_device=W1,
        send_incarnation=_inc(w1),
        client_terminated=False,
    )
    g.const(c, "five", W0, np.float32(5))
    g.node(c, "m", "Merge", W0, ("r", "five"), T=DataType.DT_FLOAT, N=2)
    g.send(c, "m/_send", W0, _inc(w0), "m:1", "m:1", DataType.DT_INT32)
    try:
        h1, h0 = _register(s1, p), _register(s0, c)
        fetch = create_key(W0, _inc(w0), CLIENT, "m:1")
        f0 = s0.RunGraph.future(_run_req(h0, 9, recv_key=[fetch]), timeout=TIMEOUT)
        assert s1.RunGraph(_run_req(h1, 9), timeout=TIMEOUT).status_code == 0
        r0 = f0.result()
        assert r0.status_code == 0, r0.status_error_message
        assert tensor_util.to_numpy(r0.recv[0].tensor) == 1
        # The same dead value over the TF-compatible unary RecvTensor.
        assert s1.RunGraph(_run_req(h1, 10), timeout=TIMEOUT).status_code == 0
        key = create_key(W1, _inc(w1), W0, "edge_1_sw")
        resp = s1.RecvTensor(
            worker_pb2.RecvTensorRequest(step_id=10, rendezvous_key=key), timeout=TIMEOUT
        )
        assert resp.is_dead
        for stub in (s0, s1):
            for step in (9, 10):
                stub.CleanupGraph(worker_pb2.CleanupGraphRequest(step_id=step), timeout=TIMEOUT)
    finally:
        c0.close()
        c1.close()


def test_dead_peer_is_unavailable_naming_the_task(local_cluster):
    _, (w0, w1) = local_cluster({"worker": 2}, step_timeout=TIMEOUT)
    c0, s0 = _stub(w0)
    try:
        h0 = _register(s0, _consumer_graph(w0, w1, DataType.DT_FLOAT))
        w1.stop(grace=0)
        start = time.monotonic()
        fetch = create_key(W0, _inc(w0), CLIENT, "z:0")
        r0 = s0.RunGraph(_run_req(h0, 12, recv_key=[fetch]), timeout=TIMEOUT)
        elapsed = time.monotonic() - start
        assert r0.status_code == grpc.StatusCode.UNAVAILABLE.value[0]
        assert "/job:worker/replica:0/task:1 is unavailable" in r0.status_error_message
        assert elapsed < 10.0
        s0.CleanupGraph(worker_pb2.CleanupGraphRequest(step_id=12), timeout=TIMEOUT)
    finally:
        c0.close()


def test_direct_client_dead_peer_raises_unavailable(local_cluster):
    _, (w0, w1) = local_cluster({"worker": 2})
    w1.stop(grace=0)
    key = create_key(W1, _inc(w1), W0, "t")
    with pytest.raises(UnavailableError) as info:
        w0.worker.recv_client.fetch("/job:worker/replica:0/task:1", 1, key, lambda call: True)
    assert info.value.message.startswith("/job:worker/replica:0/task:1 is unavailable")


def test_falls_back_to_unary_recv_tensor_for_a_peer_without_the_stream(local_cluster):
    """A TensorFlow worker only has the unary RecvTensor; the client remembers that."""
    spec, (w0,) = local_cluster({"worker": 1})
    peer = Worker(spec.with_address("worker", 0, w0.address), "worker", 0)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), options=GRPC_OPTIONS)
    add_worker_servicer(server, WorkerServicer(peer))  # no RecvTensorStream
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        dev = peer.devices[0]
        key = create_key(dev.name, dev.incarnation, "/job:x/replica:0/task:0/device:CPU:0", "t")
        peer.rendezvous_mgr.find_or_create(3).send(key, np.arange(5, dtype=np.int64))
        cache_spec = spec.with_address("worker", 0, f"127.0.0.1:{port}")
        w0.set_cluster(cache_spec)
        client = w0.worker.recv_client
        value, is_dead = client.fetch("/job:worker/replica:0/task:0", 3, key, lambda c: True)
        assert not is_dead
        assert value.tolist() == [0, 1, 2, 3, 4]
        assert "/job:worker/replica:0/task:0" in client._unary_tasks
        peer.cleanup_graph(3)
    finally:
        peer.shutdown()
        server.stop(0).wait()
