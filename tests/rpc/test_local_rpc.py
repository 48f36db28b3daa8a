"""Same-host fast path (rpc.local_rpc): calls over a worker's Unix socket.

First the transport alone (a LocalServer with test handlers: round trips, reused
connections, concurrent and late answers, error codes, deadline, cancel, a server going
away, large answers), then between two in-process workers on port 0: tensors of every
path (inline, raw bytes, shared memory, streamed over gRPC when neither fits), discovery
through LocalEndpoint and when it says no, and a stale socket being asked for again."""

from __future__ import annotations

import os
import select
import socket
import struct
import threading
import time
from collections import Counter

import numpy as np
import pytest

from common import tensor as tensor_util
from common.dtypes import DataType
from common.errors import (
    AbortedError,
    CancelledError,
    DataLossError,
    DeadlineExceededError,
    InternalError,
    InvalidArgumentError,
    UnavailableError,
    UnimplementedError,
)
from common.rendezvous import create_key
from protos import worker_pb2
from rpc import local_rpc, shm, tensor_stream
from tests.worker.graphs import CLIENT, CLIENT_INCARNATION
from tests.worker.test_recv_tensor import (
    TIMEOUT,
    W0,
    W1,
    _consumer_graph,
    _inc,
    _no_unary,
    _producer_graph,
    _register,
    _run_req,
    _stub,
    _transfer,
)
from tests.worker.test_recv_tensor_one import _count_calls
from worker.service import WorkerServicer

ECHO, BLOCK, FAIL, CRASH = 1, 2, 3, 4
PEER = "/job:test/replica:0/task:7"


@pytest.fixture
def server():
    gate = threading.Event()
    parked: list = []

    def echo(payload, timeout, reply):
        reply(0, bytes(payload), f"|{timeout}".encode())

    def block(payload, timeout, reply):
        parked.append(reply)  # answered later, from the test's thread
        gate.set()

    def fail(payload, timeout, reply):
        raise InvalidArgumentError(f"bad input to node {bytes(payload).decode()}")

    def crash(payload, timeout, reply):
        raise ValueError("boom")

    s = local_rpc.LocalServer({ECHO: echo, BLOCK: block, FAIL: fail, CRASH: crash}, "test")
    s.gate, s.parked = gate, parked
    yield s
    s.close()


def test_round_trips_reuse_one_connection(server):
    client = server.client(PEER)
    answers = [bytes(client.call(ECHO, f"m{i}".encode(), 2.5)) for i in range(20)]
    assert answers == [f"m{i}|2.5".encode() for i in range(20)]
    assert bytes(client.call(ECHO, b"x", None)) == b"x|None"
    assert len(server._threads) == 1  # one connection served all 21 calls
    client.close()


def test_small_call_is_one_read_each_way_in_blocking_mode(server, monkeypatch):
    """Each system call releases the GIL (a hand-off to another thread under load): a
    small request and its answer are read with one recv each, and the deadline is the
    kernel's receive timeout, not a poll() before every read and a switch of the
    socket's mode per call."""
    counts: Counter = Counter()

    class Counting(socket.socket):  # a read counts once it returns (the server's next
        # one waits for a request that never comes)
        def recv(self, *args):
            data = super().recv(*args)
            counts["recv"] += 1
            return data

        def recv_into(self, *args):
            n = super().recv_into(*args)
            counts["recv"] += 1
            return n

        def settimeout(self, value):
            counts["settimeout"] += 1
            super().settimeout(value)

    monkeypatch.setattr(socket, "socket", Counting)
    client = server.client(PEER)
    assert bytes(client.call(ECHO, b"warm", 5.0)) == b"warm|5.0"  # connects (+ secret)
    counts.clear()
    for i in range(5):
        assert bytes(client.call(ECHO, b"m%d" % i, 5.0)) == b"m%d|5.0" % i
    assert counts == {"recv": 10}  # the server's read and the client's, per call
    client.close()


def test_concurrent_calls_are_answered_out_of_order(server):
    client = server.client(PEER)
    slow = client.start(BLOCK, b"", 10.0)
    assert server.gate.wait(10.0)
    assert bytes(client.call(ECHO, b"fast", 10.0)) == b"fast|10.0"  # own connection
    threading.Thread(target=server.parked[0], args=(0, b"late")).start()
    assert bytes(slow.finish()) == b"late"
    client.close()


def test_errors_keep_their_code_and_message(server):
    client = server.client(PEER)
    with pytest.raises(InvalidArgumentError, match="bad input to node n1"):
        client.call(FAIL, b"n1", 5.0)
    with pytest.raises(InternalError, match="boom"):
        client.call(CRASH, b"", 5.0)
    with pytest.raises(UnimplementedError, match="method 99"):
        client.call(99, b"", 5.0)
    assert bytes(client.call(ECHO, b"ok", 5.0)) == b"ok|5.0"  # the connection survived
    client.close()


def test_deadline_names_the_peer(server):
    client = server.client(PEER)
    start = time.monotonic()
    with pytest.raises(DeadlineExceededError, match=f"Call to {PEER} .* timed out"):
        client.start(BLOCK, b"", 0.2).finish()
    assert time.monotonic() - start < 5.0


def test_deadline_counts_from_the_start_and_the_socket_polls_readable(server):
    """A call's deadline runs from when it started, not from finish() (a recv awaited
    later by a thread that polled it: worker.remote_rendezvous); its descriptor turns
    readable when the answer arrives."""
    client = server.client(PEER)
    late = client.start(BLOCK, b"", 0.3)
    assert server.gate.wait(10.0)
    time.sleep(0.4)
    start = time.monotonic()
    with pytest.raises(DeadlineExceededError, match=f"Call to {PEER} .* timed out"):
        late.finish()
    assert time.monotonic() - start < 0.2
    server.gate.clear()
    answered = client.start(BLOCK, b"", 10.0)
    assert server.gate.wait(10.0)
    poller = select.poll()
    poller.register(answered.fileno(), select.POLLIN)
    assert poller.poll(50) == []
    server.parked[-1](0, b"now")
    assert poller.poll(5000) != []
    assert bytes(answered.finish()) == b"now"
    client.close()


def test_cancel_ends_the_wait(server):
    client = server.client(PEER)
    call = client.start(BLOCK, b"", 30.0)
    assert server.gate.wait(10.0)
    threading.Timer(0.05, call.cancel).start()
    with pytest.raises(CancelledError):
        call.finish()
    client.close()


def test_closed_server_fails_calls_as_unavailable_naming_the_peer(server):
    client = server.client(PEER)
    call = client.start(BLOCK, b"", 30.0)
    assert server.gate.wait(10.0)
    server.close()
    with pytest.raises(UnavailableError, match=f"^{PEER} is unavailable"):
        call.finish()
    assert not os.path.exists(server.path)
    with pytest.raises(ConnectionError):
        client.start(ECHO, b"", 1.0)
    assert not any(t.name.startswith("flowrt-local-") for t in threading.enumerate())


def test_large_answer_in_parts_arrives_exactly(server):
    big = np.random.default_rng(1).standard_normal(4 << 20, dtype=np.float32)  # 16 MB

    def answer(payload, timeout, reply):
        reply(0, *local_rpc.pack_messages([b"head", memoryview(big).cast("B"), b""]))

    server._handlers[ECHO] = answer
    client = server.client(PEER)
    head, body, empty = local_rpc.unpack_messages(client.call(ECHO, b"", 30.0))
    assert bytes(head) == b"head" and bytes(empty) == b""
    assert np.array_equal(np.frombuffer(body, np.float32), big)
    client.close()


def test_malformed_answer_is_data_loss():
    packed = b"".join(bytes(p) for p in local_rpc.pack_messages([b"ab", b"c"]))
    assert [bytes(m) for m in local_rpc.unpack_messages(packed)] == [b"ab", b"c"]
    with pytest.raises(DataLossError, match="1 bytes after 2 messages"):
        local_rpc.unpack_messages(packed + b"x")


def test_directories_of_dead_processes_are_swept():
    dead_pid = 2**22 + 12345  # above Linux's pid_max default range
    stale = os.path.join(shm.SHM_DIR, f"flowrt-rpc-{dead_pid}-{'ab' * 8}")
    os.mkdir(stale, 0o700)
    s = local_rpc.LocalServer({}, "sweep")
    try:
        assert not os.path.exists(stale)
        assert os.path.exists(s.path)
    finally:
        s.close()


# -- between two workers --------------------------------------------------------------------
def _count_grpc_recvs(monkeypatch) -> Counter:
    """RecvTensorOne / RecvTensorStream (gRPC) and local RecvTensor calls served."""
    calls = _count_calls(monkeypatch)
    original_local = WorkerServicer.local_recv_tensor

    def counted_local(self, payload, timeout, reply):
        calls["local"] += 1
        return original_local(self, payload, timeout, reply)

    monkeypatch.setattr(WorkerServicer, "local_recv_tensor", counted_local)
    return calls


@pytest.mark.parametrize(
    "value",
    [
        np.arange(12, dtype=np.float32).reshape(3, 4),  # inline in the head
        np.arange(1 << 18, dtype=np.float32),  # 1 MB: raw bytes on the socket
        np.arange(5 << 20, dtype=np.float32),  # 20 MB: shared memory
    ],
    ids=["inline", "raw-1MB", "shm-20MB"],
)
def test_tensors_cross_the_local_socket(local_cluster, monkeypatch, value):
    _no_unary(monkeypatch)
    calls = _count_grpc_recvs(monkeypatch)
    out, _ = _transfer(local_cluster, value, DataType.DT_FLOAT)
    assert out.dtype == value.dtype and out.shape == value.shape
    assert out.tobytes() == value.tobytes()
    assert calls == {"local": 1}


def test_repeated_1mb_value_goes_into_the_receivers_segment(local_cluster, monkeypatch):
    """Step 1 sends the 1 MB value as raw bytes on the socket; from step 2 on, the
    receiver lends a segment made for the key and the producer copies into it in place,
    by the hop's short path on both ends (tensor_stream.write_lent, whose mapping the
    sender looked up when the request came, and _lent_value), not the general one
    (encode_stream's shm.write_into)."""
    _no_unary(monkeypatch)
    calls = _count_grpc_recvs(monkeypatch)
    raw, written, general, viewed = [], [], [], []
    real_raw, real_lent, real_view = (
        tensor_stream.raw_messages,
        tensor_stream.write_lent,
        tensor_stream._lent_value,
    )
    monkeypatch.setattr(
        tensor_stream, "raw_messages", lambda a: raw.append(a.nbytes) or real_raw(a)
    )
    monkeypatch.setattr(
        tensor_stream,
        "write_lent",
        lambda v, name, m: written.append(real_lent(v, name, m)) or written[-1],
    )
    monkeypatch.setattr(shm, "write_into", lambda name, c: general.append(name))

    def view(head, key, lent):
        got = real_view(head, key, lent)
        viewed.append((got.shape, got.dtype))  # not the array: it holds the segment
        return got

    monkeypatch.setattr(tensor_stream, "_lent_value", view)
    _, (w0, w1) = local_cluster({"worker": 2}, step_timeout=TIMEOUT)
    c0, s0 = _stub(w0)
    c1, s1 = _stub(w1)
    try:
        h1 = _register(s1, _producer_graph(w1, DataType.DT_FLOAT))
        h0 = _register(s0, _consumer_graph(w0, w1, DataType.DT_FLOAT))
        fetch = create_key(W0, _inc(w0), CLIENT, "z:0")
        feed = create_key(CLIENT, CLIENT_INCARNATION, W1, "x:0")
        for step in range(1, 4):
            value = np.full(1 << 18, float(step), np.float32)
            f0 = s0.RunGraph.future(_run_req(h0, step, recv_key=[fetch]), timeout=TIMEOUT)
            r1 = s1.RunGraph(_run_req(h1, step, send=[(feed, value)]), timeout=TIMEOUT)
            r0 = f0.result()
            assert (r1.status_code, r0.status_code) == (0, 0), r0.status_error_message
            assert tensor_util.to_numpy(r0.recv[0].tensor).tobytes() == value.tobytes()
            for stub in (s0, s1):
                stub.CleanupGraph(worker_pb2.CleanupGraphRequest(step_id=step), timeout=TIMEOUT)
    finally:
        c0.close()
        c1.close()
    assert raw == [value.nbytes] and general == []
    assert [type(w) for w in written] == [bytes, bytes]
    assert viewed == [((1 << 18,), np.float32)] * 2
    assert calls == {"local": 3}


def test_strings_cross_the_local_socket(local_cluster, monkeypatch):
    calls = _count_grpc_recvs(monkeypatch)
    value = np.array([[b"ab", b""], [b"\x00xyz", b"q" * 100_000]], dtype=object)
    out, _ = _transfer(local_cluster, value, DataType.DT_STRING)
    assert out.tolist() == value.tolist()
    assert calls == {"local": 1}


def test_value_fitting_no_single_answer_streams_over_grpc(local_cluster, monkeypatch):
    monkeypatch.setenv("FLOWRT_SHM", "0")
    monkeypatch.setattr("worker.service.LOCAL_RAW_BYTES", 1 << 20)
    calls = _count_grpc_recvs(monkeypatch)
    value = np.arange(600_000, dtype=np.float32)  # 2.4 MB: above both, chunked
    assert value.nbytes > tensor_stream.INLINE_BYTES
    out, _ = _transfer(local_cluster, value, DataType.DT_FLOAT)
    assert out.tobytes() == value.tobytes()
    assert calls == {"RecvTensorStream": 1, "local": 1}


def test_discovery_finds_our_worker_on_this_host(local_cluster):
    _, (w0, w1) = local_cluster({"worker": 2})
    peers = w0.worker.recv_client.local
    task = "/job:worker/replica:0/task:1"
    client = peers.client(task)
    assert client is not None and client.path == w1._local.path
    assert peers.client(task) is client  # asked once


def test_discovery_says_grpc_when_disabled_or_another_host(local_cluster, monkeypatch):
    _, (w0, _) = local_cluster({"worker": 2})
    task = "/job:worker/replica:0/task:1"
    monkeypatch.setenv("FLOWRT_LOCAL_RPC", "0")
    assert local_rpc.LocalPeers(w0.worker.worker_cache.channel).client(task) is None
    monkeypatch.setenv("FLOWRT_LOCAL_RPC", "1")
    monkeypatch.setattr(shm, "host_id", lambda: b"some-other-host|boot|1|2")
    assert local_rpc.LocalPeers(w0.worker.worker_cache.channel).client(task) is None


def test_worker_without_local_server_is_reached_over_grpc(local_cluster, monkeypatch):
    monkeypatch.setenv("FLOWRT_LOCAL_RPC", "0")
    _, (w0, w1) = local_cluster({"worker": 2})  # started without sockets
    monkeypatch.setenv("FLOWRT_LOCAL_RPC", "1")
    assert w1._local is None
    peers = local_rpc.LocalPeers(w0.worker.worker_cache.channel)
    assert peers.client("/job:worker/replica:0/task:1") is None  # LocalEndpoint: UNIMPLEMENTED


def test_stale_socket_is_asked_for_again(local_cluster):
    _, (w0, w1) = local_cluster({"worker": 2})
    task = "/job:worker/replica:0/task:1"
    peers = w0.worker.recv_client.local
    channel = w0.worker.worker_cache.channel(task)
    stale = local_rpc.LocalClient(os.path.join(shm.SHM_DIR, "flowrt-rpc-gone", "sock"), task)
    peers._clients[task] = (channel, stale)  # as after the worker restarted elsewhere
    assert peers.start(task, local_rpc.RECV_TENSOR, b"", 1.0) is None  # caller uses gRPC
    fresh = peers.client(task)
    assert fresh is not None and fresh.path == w1._local.path


def test_socket_refusing_twice_means_grpc(local_cluster):
    """A socket the task keeps naming but that does not connect (another user's, say)."""
    _, (w0, w1) = local_cluster({"worker": 2})
    task = "/job:worker/replica:0/task:1"
    peers = local_rpc.LocalPeers(w0.worker.worker_cache.channel)
    client = peers.client(task)
    assert client is not None
    peers.forget(task, client)  # what a refused connect does (see LocalPeers.start)
    assert peers.client(task) is None  # the task names the same socket: gRPC from now on
    assert peers.start(task, local_rpc.RECV_TENSOR, b"", 1.0) is None


def test_peer_stopping_mid_recv_is_unavailable_naming_the_task(local_cluster):
    _, (w0, w1) = local_cluster({"worker": 2})
    task = "/job:worker/replica:0/task:1"
    key = create_key(W1, _inc(w1), W0, "never_sent")
    errors: list = []

    def fetch():
        try:
            w0.worker.recv_client.fetch(task, 5, key, lambda call: True)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    t = threading.Thread(target=fetch)
    t.start()
    deadline = time.monotonic() + 10.0
    while not w1.worker.rendezvous_mgr.step_ids() and time.monotonic() < deadline:
        time.sleep(0.01)  # the request is parked on task 1
    w1.stop(grace=0)
    t.join(10.0)
    assert not t.is_alive()
    assert len(errors) == 1
    assert isinstance(errors[0], (UnavailableError, AbortedError)), errors[0]
    assert task in errors[0].message


def test_raw_answer_is_viewed_in_place_not_copied():
    value = np.arange(1 << 18, dtype=np.float32).reshape(512, 512)
    parts = local_rpc.pack_messages(tensor_stream.raw_messages(value))
    body = bytearray(b"".join(bytes(p) for p in parts))  # what a LocalCall receives
    messages = local_rpc.unpack_messages(body)
    out, is_dead = tensor_stream.decode_chunks(messages, "test")
    assert not is_dead and out.shape == (512, 512) and out.dtype == np.float32
    np.testing.assert_array_equal(out, value)
    assert np.shares_memory(out, np.frombuffer(body, np.uint8))


def test_cleanup_batch_over_the_socket(local_cluster):
    _, (w0, _) = local_cluster({"worker": 2})
    for step in (41, 42, 43):
        w0.worker.rendezvous_mgr.find_or_create(step)
    client = w0._local.client("/job:worker/replica:0/task:0")
    assert bytes(client.call(local_rpc.CLEANUP_BATCH, struct.pack("<2q", 41, 43), 5.0)) == b""
    assert w0.worker.rendezvous_mgr.step_ids() == [42]
    with pytest.raises(InvalidArgumentError, match="5 bytes is not a list of int64 step ids"):
        client.call(local_rpc.CLEANUP_BATCH, b"12345", 5.0)
    client.call(local_rpc.CLEANUP_BATCH, struct.pack("<q", 42), 5.0)
    assert w0.worker.rendezvous_mgr.step_ids() == []
    client.close()


@pytest.fixture
def shared_server(monkeypatch):
    """A LocalServer callable directly from this process (share_in_process)."""
    monkeypatch.setattr(local_rpc, "_share_in_process", True)
    gate = threading.Event()
    parked: list = []

    def run(payload, timeout, reply):  # RUN_GRAPH: blocks on the caller's thread
        reply(0, threading.current_thread().name.encode(), b"|", bytes(payload))

    def later(payload, timeout, reply):  # RECV_TENSOR: answered by another thread
        parked.append(reply)
        gate.set()

    s = local_rpc.LocalServer(
        {
            local_rpc.RUN_GRAPH: run,
            local_rpc.RECV_TENSOR: later,
            FAIL: lambda p, t, r: r(3, b"bad node n2"),
        },
        "shared",
    )
    s.gate, s.parked = gate, parked
    yield s
    s.close()
    assert s.path not in local_rpc._in_process


def test_in_process_calls_skip_the_socket(shared_server):
    client = local_rpc.LocalClient(shared_server.path, PEER)
    call = client.start(local_rpc.RUN_GRAPH, b"step", 5.0)
    assert isinstance(call, local_rpc.InProcessCall)
    assert bytes(call.finish()) == threading.current_thread().name.encode() + b"|step"
    assert shared_server._threads == set()  # no connection was made
    pending = client.start(local_rpc.RECV_TENSOR, b"", 5.0)
    assert shared_server.gate.wait(5.0)  # parked at start, before finish()
    threading.Timer(0.05, shared_server.parked[0], args=(0, b"value")).start()
    assert bytes(pending.finish()) == b"value"
    with pytest.raises(InvalidArgumentError, match="bad node n2"):
        client.call(FAIL, b"", 5.0)


def test_in_process_call_deadline_and_cancel(shared_server):
    client = local_rpc.LocalClient(shared_server.path, PEER)
    with pytest.raises(DeadlineExceededError, match=f"Call to {PEER} .* timed out"):
        client.start(local_rpc.RECV_TENSOR, b"", 0.1).finish()
    call = client.start(local_rpc.RECV_TENSOR, b"", 30.0)
    threading.Timer(0.05, call.cancel).start()
    with pytest.raises(CancelledError):
        call.finish()
