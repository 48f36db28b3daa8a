"""Worker, abandoned partial runs: a partial run no call comes for within the idle timeout
is aborted and freed (executors, rendezvous, GraphMgr entry) and a late call for it gets
Aborted saying why; a call in flight, CleanupGraph and each call's own deadline behave as
before. Over gRPC against one in-process worker with two CPU devices."""

from __future__ import annotations

import threading
import time

import grpc
import numpy as np
import pytest

from common.errors import AbortedError, DeadlineExceededError
from protos import worker_pb2
from rpc.channels import GRPC_OPTIONS
from rpc.deadlines import DEADLINES
from rpc.service_paths import worker_stub
from tests.worker.test_partial_run import (
    ABORTED,
    _counter_graph,
    _init_graph,
    _mgr,
    _pinned_feed,
    _prun,
    _value,
)
from tests.worker.test_step_abort import _endless_loop_graph
from tests.worker.test_worker_rpc import CPU1, TIMEOUT, _cleanup, _fetch_key, _register, _session
from worker.__main__ import parse_args
from worker.partial_run import PartialRuns

IDLE = 0.5


@pytest.fixture
def start_worker(local_cluster):
    """start_worker(idle) -> (server, stub) of a worker whose partial runs idle out."""
    channels = []

    def start(idle: float | None = IDLE):
        _, (server,) = local_cluster(
            {"worker": 1}, num_cpus=2, step_timeout=TIMEOUT, partial_idle_timeout=idle
        )
        channel = grpc.insecure_channel(server.address, options=GRPC_OPTIONS)
        channels.append(channel)
        return server, worker_stub(channel)

    yield start
    for channel in channels:
        channel.close()


def _counter(server, stub) -> str:
    """Session sess1 with the counter at 0; the handle of the counter graph."""
    _session(stub)
    _prun(stub, _register(stub, _init_graph(0.0)), 1, last=True)
    _cleanup(stub, 1)
    return _register(stub, _counter_graph(server))


def _after(seconds: float) -> threading.Event:
    """Set `seconds` from now by the deadline watcher, which runs what is due one callback
    at a time in deadline order: once set, every idle deadline armed before this call
    with at most `seconds` to go has been handled."""
    done = threading.Event()
    DEADLINES.watch(time.monotonic() + seconds, done.set)
    return done


def _abandoned(step_id: int, idle: float = IDLE) -> str:
    return (
        f"Partial run step {step_id} was abandoned: no partial RunGraph call for it within "
        f"{idle:g}s, so it was aborted and its state freed"
    )


def test_idle_timeout_defaults_to_the_step_timeout(start_worker):
    server, stub = start_worker(None)
    assert _mgr(server, "").partial_idle_timeout == TIMEOUT
    _session(stub)
    assert _mgr(server).partial_idle_timeout == TIMEOUT


def test_an_abandoned_partial_run_expires_and_is_freed(start_worker):
    server, stub = start_worker()
    handle = _counter(server, stub)
    s1, s2 = _fetch_key(server, "s1:0", CPU1), _fetch_key(server, "s2:0")
    # A peer's RecvTensor for a tensor the step never sends, parked before the step starts.
    peer: list = []
    peer_done = threading.Event()
    server.worker.recv_tensor_async(
        5, _fetch_key(server, "never:0"), lambda v, d, e: (peer.append(e), peer_done.set())
    )
    one = _prun(
        stub, handle, 5, send=[(_pinned_feed(server, "x:0", CPU1), np.float32(3))], recv_key=[s1]
    )
    expired = _after(IDLE)
    assert _value(one) == 4.0
    step = _mgr(server)._partial_runs._partials[5].step
    assert not step.finished.is_set()  # CPU0's executor waits for y
    assert expired.wait(TIMEOUT)
    assert peer_done.is_set()
    assert isinstance(peer[0], AbortedError) and peer[0].message == _abandoned(5)
    assert step.finished.wait(TIMEOUT)
    assert _mgr(server).partial_step_ids() == []
    assert server.worker.rendezvous_mgr.step_ids() == []
    assert server.worker.rendezvous_mgr.was_cleaned(5)
    # The master's late last call fails and does not start the step again.
    late = _prun(
        stub,
        handle,
        5,
        send=[(_pinned_feed(server, "y:0"), np.float32(5))],
        recv_key=[s2],
        last=True,
    )
    assert (late.status_code, late.status_error_message) == (ABORTED, _abandoned(5))
    assert _mgr(server).partial_step_ids() == []
    assert server.worker.rendezvous_mgr.step_ids() == []


def test_every_call_rearms_the_idle_deadline(start_worker):
    # Idle 3 s; the second call comes 1.5 s after the first and the check 2 s after the
    # second: past the first call's deadline, well inside the second's, with a second or more
    # of slack either way for a loaded machine.
    server, stub = start_worker(3.0)
    handle = _counter(server, stub)
    s1, s2 = _fetch_key(server, "s1:0", CPU1), _fetch_key(server, "s2:0")
    one = _prun(
        stub, handle, 6, send=[(_pinned_feed(server, "x:0", CPU1), np.float32(3))], recv_key=[s1]
    )
    assert _value(one) == 4.0
    assert _after(1.5).wait(TIMEOUT)
    two = _prun(stub, handle, 6, send=[(_pinned_feed(server, "y:0"), np.float32(5))])
    assert two.status_code == 0, two.status_error_message
    assert _after(2.0).wait(TIMEOUT)  # over 3.5 s since the first call, 2 s since the last
    assert _mgr(server).partial_step_ids() == [6]
    last = _prun(stub, handle, 6, recv_key=[s2], last=True)
    assert _value(last) == 20.0
    assert _mgr(server).partial_step_ids() == []
    _cleanup(stub, 6)


def test_a_call_in_flight_longer_than_the_idle_timeout_is_not_cut_off(start_worker):
    server, stub = start_worker(1.0)
    handle = _counter(server, stub)
    s1, s2 = _fetch_key(server, "s1:0", CPU1), _fetch_key(server, "s2:0")
    one = _prun(
        stub, handle, 8, send=[(_pinned_feed(server, "x:0", CPU1), np.float32(3))], recv_key=[s1]
    )
    assert _value(one) == 4.0  # the idle deadline is armed
    partial = _mgr(server)._partial_runs._partials[8]
    outcome: list = []
    waiting = threading.Thread(target=lambda: outcome.append(_prun(stub, handle, 8, recv_key=[s2])))
    waiting.start()  # waits for s2, which needs y
    joined = threading.Event()
    for _ in range(1000):  # bounded poll (5 s) of the call count, not a synchronization sleep
        if partial.calls == 1:
            break
        joined.wait(0.005)
    assert partial.calls == 1
    assert _after(2.0).wait(TIMEOUT)
    assert _mgr(server).partial_step_ids() == [8]
    feed = _prun(stub, handle, 8, send=[(_pinned_feed(server, "y:0"), np.float32(5))])
    assert feed.status_code == 0, feed.status_error_message
    waiting.join(TIMEOUT)
    assert _value(outcome[0]) == 20.0
    last = _prun(stub, handle, 8, last=True)
    assert last.status_code == 0, last.status_error_message
    assert _mgr(server).partial_step_ids() == []
    _cleanup(stub, 8)


def test_cleanup_graph_ends_the_run_and_disarms_its_idle_deadline(start_worker):
    server, stub = start_worker()
    handle = _counter(server, stub)
    s1, s2 = _fetch_key(server, "s1:0", CPU1), _fetch_key(server, "s2:0")
    armed = DEADLINES.pending()
    one = _prun(
        stub, handle, 7, send=[(_pinned_feed(server, "x:0", CPU1), np.float32(1))], recv_key=[s1]
    )
    assert _value(one) == 2.0
    assert DEADLINES.pending() == armed + 1  # the idle deadline
    _cleanup(stub, 7)
    assert DEADLINES.pending() == armed
    assert _mgr(server).partial_step_ids() == []
    assert _after(IDLE).wait(TIMEOUT)
    late = _prun(
        stub,
        handle,
        7,
        send=[(_pinned_feed(server, "y:0"), np.float32(1))],
        recv_key=[s2],
        last=True,
    )
    assert (late.status_code, late.status_error_message) == (ABORTED, "Step 7 was cleaned up")
    assert len(server.worker.rendezvous_mgr) == 0


def test_a_partial_call_past_its_deadline_ends_a_step_that_never_waits(start_worker):
    """The first call runs an endless loop of local kernels on its own thread; the worker
    ends the step at that call's deadline (it used to run on forever)."""
    server, stub = start_worker()
    _session(stub)
    handle = _register(stub, _endless_loop_graph())
    req = worker_pb2.RunGraphRequest(
        session_handle="sess1",
        create_worker_session_called=True,
        graph_handle=handle,
        step_id=9,
        is_partial=True,
        store_errors_in_response_body=True,
    )
    try:
        resp = stub.RunGraph(req, timeout=1.0)
        assert resp.status_code == grpc.StatusCode.DEADLINE_EXCEEDED.value[0]
    except grpc.RpcError as e:  # the client may give up before the worker answers
        assert e.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    ended = threading.Event()
    for _ in range(1000):  # bounded poll (5 s) of the partial table, not a synchronization sleep
        if not _mgr(server).partial_step_ids():
            break
        ended.wait(0.005)
    assert _mgr(server).partial_step_ids() == []
    status = server.worker.rendezvous_mgr.find(9).status
    assert isinstance(status, DeadlineExceededError)
    assert status.message == "Step 9 timed out on partial RunGraph"
    _cleanup(stub, 9)


def test_cli_flag():
    base = ["--cluster", "c.yaml", "--job", "worker", "--task", "0"]
    assert parse_args(base).partial_run_idle_timeout is None
    assert parse_args([*base, "--partial-run-idle-timeout", "2.5"]).partial_run_idle_timeout == 2.5


def test_worker_shutdown_frees_partial_runs_and_their_idle_deadlines(start_worker):
    server, stub = start_worker(idle=TIMEOUT)  # would not idle out during the test
    handle = _counter(server, stub)
    s1 = _fetch_key(server, "s1:0", CPU1)
    one = _prun(
        stub, handle, 6, send=[(_pinned_feed(server, "x:0", CPU1), np.float32(3))], recv_key=[s1]
    )
    assert _value(one) == 4.0
    mgr = _mgr(server)
    step = mgr._partial_runs._partials[6].step
    watching = DEADLINES.pending()
    server.stop(grace=0)
    assert mgr.partial_step_ids() == []
    assert step.finished.wait(TIMEOUT)
    assert DEADLINES.pending() < watching  # its idle deadline was cancelled


def test_cleanup_of_a_step_that_is_no_partial_run_takes_no_lock():
    """CleanupGraph of every step asks every session's table (32 clients: 32 tables per
    step): one that has no partial run for the step answers without its lock."""

    class Refusing:
        def __enter__(self) -> None:
            raise AssertionError("the table's lock was taken")

        def __exit__(self, *exc: object) -> None:
            pass

    runs = PartialRuns(IDLE, lambda step_id: None)
    runs._lock = Refusing()  # type: ignore[assignment]
    runs.abort(5)  # no partial run 5 here: nothing to do
