"""Our client's MasterService calls to a master on its own host go over the master's Unix
socket after the first call (client.master_connection, rpc.local_rpc); the answers,
errors and shutdown behaviour are the same as over gRPC."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np
import pytest

import client as tf
from client.master_connection import MasterConnection
from common import tensor as tensor_util
from common.errors import AbortedError, InvalidArgumentError, UnavailableError
from master.master import Master
from master.server import MasterServer
from protos import master_pb2
from tests.in_process import in_process_cluster
from tests.master.test_master import add_graph, x2


@pytest.fixture
def master() -> Iterator[MasterServer]:
    with in_process_cluster({"worker": 2}) as server:
        yield server


def _count_run_steps(monkeypatch) -> dict[str, int]:
    """RunSteps by transport: the socket's connection threads are flowrt-local-conn-*,
    gRPC's handler threads flowrt-master-rpc*."""
    calls = {"grpc": 0, "local": 0}
    original = Master.run_step

    def counted(self, *args, **kwargs):
        local = threading.current_thread().name.startswith("flowrt-local-conn-")
        calls["local" if local else "grpc"] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Master, "run_step", counted)
    return calls


def _product_graph() -> tuple[tf.Graph, tf.Tensor, tf.Tensor]:
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:1"):
            p = tf.placeholder(tf.float32, [None], name="p")
            doubled = p * 2.0
        with tf.device("/job:worker/task:0"):
            out = tf.reduce_sum(doubled, name="out")
    return g, p, out


@pytest.mark.parametrize("switch", ["1", "0"])
def test_runs_go_over_the_socket_after_the_first_call(master, monkeypatch, switch):
    monkeypatch.setenv("FLOWRT_LOCAL_RPC", switch)
    calls = _count_run_steps(monkeypatch)
    g, p, out = _product_graph()
    with g.as_default(), tf.Session(master.target) as sess:
        got = [float(sess.run(out, {p: np.arange(k, dtype=np.float32)})) for k in range(4)]
        assert sess._runner.connection.is_local == (switch == "1")
    assert got == [0.0, 0.0, 2.0, 6.0]
    if switch == "1":
        assert calls == {"grpc": 0, "local": 4}  # CreateSession went over gRPC
    else:
        assert calls == {"grpc": 4, "local": 0}


def test_local_false_keeps_grpc(master, monkeypatch):
    calls = _count_run_steps(monkeypatch)
    conn = MasterConnection(master.address, local=False)
    try:
        handle = conn.call(
            "CreateSession", master_pb2.CreateSessionRequest(graph_def=add_graph().graph_def)
        ).session_handle
        request = _run_request(handle)
        assert _fetched(conn.call("RunStep", request)) == [[11.0, 22.0]]
        assert not conn.is_local
        conn.call("CloseSession", master_pb2.CloseSessionRequest(session_handle=handle))
    finally:
        conn.close()
    assert calls == {"grpc": 1, "local": 0}


def _run_request(handle: str, *, body: bool = True, feed_x: bool = True):
    request = master_pb2.RunStepRequest(
        session_handle=handle, fetch=["c:0"], store_errors_in_response_body=body
    )
    if feed_x:
        for name, value in x2().items():
            request.feed.add(name=name).tensor.CopyFrom(tensor_util.as_proto_tensor_content(value))
    return request


def _fetched(response) -> list[list[float]]:
    return [tensor_util.to_numpy(t.tensor).tolist() for t in response.tensor]


def test_errors_are_the_same_over_the_socket_and_grpc(master):
    """A step error, as a status and in the body, and an unknown session: same code and
    message on both paths (the node named)."""
    seen = []
    for local in (True, False):
        conn = MasterConnection(master.address, local=local)
        try:
            handle = conn.call(
                "CreateSession", master_pb2.CreateSessionRequest(graph_def=add_graph().graph_def)
            ).session_handle
            assert conn.is_local == local
            with pytest.raises(InvalidArgumentError) as as_status:
                conn.call("RunStep", _run_request(handle, body=False, feed_x=False))
            in_body = conn.call("RunStep", _run_request(handle, body=True, feed_x=False))
            with pytest.raises(AbortedError) as unknown:
                conn.call("RunStep", _run_request("no-such-session", body=False))
            conn.call("CloseSession", master_pb2.CloseSessionRequest(session_handle=handle))
        finally:
            conn.close()
        seen.append(
            (
                str(as_status.value),
                in_body.status_code,
                in_body.status_error_message,
                str(unknown.value),
            )
        )
    assert seen[0] == seen[1]
    message = seen[0][0]
    assert "x" in message and "{{node " in message
    assert seen[0][1] == InvalidArgumentError.code


def test_concurrent_runs_each_get_their_own_answer(master):
    g, p, out = _product_graph()
    with g.as_default(), tf.Session(master.target) as sess:
        sess.run(out, {p: np.ones(1, np.float32)})
        results: dict[int, float] = {}

        def run(k: int) -> None:
            for _ in range(5):
                results[k] = float(sess.run(out, {p: np.full(k + 1, k, np.float32)}))

        threads = [threading.Thread(target=run, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert sess._runner.connection.is_local
    assert results == {k: 2.0 * k * (k + 1) for k in range(6)}


def test_master_gone_fails_at_once_naming_it(master):
    """After the master stops, the next call neither hangs on the socket nor waits for a
    master to come back over gRPC: UnavailableError naming the master."""
    conn = MasterConnection(master.address)
    try:
        handle = conn.call(
            "CreateSession", master_pb2.CreateSessionRequest(graph_def=add_graph().graph_def)
        ).session_handle
        assert conn.is_local
        master.stop(0)
        with pytest.raises(UnavailableError) as e:
            conn.call("RunStep", _run_request(handle), timeout_s=60.0)
        assert master.address in str(e.value)
        assert not conn.is_local  # the socket is forgotten
    finally:
        conn.close()


def test_stop_lets_a_running_step_answer(master, monkeypatch):
    """stop(grace) drains: a RunStep already running on the socket gets its answer."""
    entered, release = threading.Event(), threading.Event()
    original = Master.run_step

    def held(self, *args, **kwargs):
        entered.set()
        assert release.wait(30)
        return original(self, *args, **kwargs)

    conn = MasterConnection(master.address)
    try:
        handle = conn.call(
            "CreateSession", master_pb2.CreateSessionRequest(graph_def=add_graph().graph_def)
        ).session_handle
        assert conn.is_local
        monkeypatch.setattr(Master, "run_step", held)
        answer: list = []
        caller = threading.Thread(
            target=lambda: answer.append(conn.call("RunStep", _run_request(handle)))
        )
        caller.start()
        assert entered.wait(30)
        stopper = threading.Thread(target=master.stop, args=(30.0,))
        stopper.start()
        local = master._local
        assert local is not None
        while not local._closed:  # the listener is closing before the step is let go
            threading.Event().wait(0.01)
        release.set()
        caller.join(30)
        stopper.join(60)
        assert _fetched(answer[0]) == [[11.0, 22.0]]
    finally:
        release.set()
        conn.close()
