"""The step barrier (common.executor.barrier) and the one root-error rule
(common.errors.root_error) that the session, function calls, the worker's GraphMgr and the
master's partition runner share. Pure tests: no sockets, no executors."""

from __future__ import annotations

import threading

from common.errors import (
    AbortedError,
    CancelledError,
    InvalidArgumentError,
    OpError,
    OutOfRangeError,
    root_error,
)
from common.executor.barrier import ExecutorBarrier


def test_root_error_skips_aborts_and_cancellations() -> None:
    cause = InvalidArgumentError("bad shape", "reshape")
    echoes = [AbortedError("Step 1 aborted"), CancelledError("cancelled")]
    assert root_error([*echoes, cause]) is cause
    assert root_error([cause, *echoes]) is cause


def test_root_error_is_the_first_error_when_all_are_echoes() -> None:
    first, second = AbortedError("a"), CancelledError("b")
    assert root_error([first, second]) is first


def test_root_error_ranks_errors_at_recv_nodes_as_echoes() -> None:
    # A peer's OutOfRange reaches the partitions waiting on it through their _Recvs.
    at_recv = OutOfRangeError("End of sequence", "recv_x")
    cause = OutOfRangeError("End of sequence", "IteratorGetNext")
    assert root_error([at_recv, cause], recv_nodes={"recv_x"}) is cause
    assert root_error([at_recv, cause]) is at_recv  # without the hint: the first one
    # ... but a real error at a _Recv still beats an abort elsewhere.
    assert root_error([AbortedError("a"), at_recv], recv_nodes={"recv_x"}) is at_recv


def test_barrier_aborts_once_and_reports_in_arrival_order() -> None:
    aborted: list[OpError] = []
    finished: list[list[OpError]] = []
    barrier = ExecutorBarrier(3, on_error=aborted.append, on_done=finished.append)
    echo, cause = AbortedError("echo"), InvalidArgumentError("cause")
    barrier.when_done(None)
    assert not barrier.wake.is_set()
    barrier.when_done(echo)
    assert aborted == [echo] and barrier.wake.is_set() and not barrier.done.is_set()
    barrier.when_done(cause)
    assert aborted == [echo]  # the first error only
    assert finished == [[echo, cause]] and barrier.done.is_set()
    assert barrier.root_error() is cause


def test_barrier_without_errors_reports_none() -> None:
    finished: list[list[OpError]] = []
    barrier = ExecutorBarrier(2, on_done=finished.append)
    barrier.when_done(None)
    barrier.when_done(None)
    assert finished == [[]] and barrier.root_error() is None


def test_barrier_of_no_parts_is_done_at_once() -> None:
    finished: list[list[OpError]] = []
    barrier = ExecutorBarrier(0, on_done=finished.append)
    assert barrier.done.is_set() and barrier.wake.is_set() and finished == [[]]


def test_barrier_counts_parts_reporting_from_many_threads() -> None:
    aborted: list[OpError] = []
    barrier = ExecutorBarrier(64, on_error=aborted.append)
    threads = [
        threading.Thread(
            target=barrier.when_done, args=(InvalidArgumentError(str(i)) if i % 2 else None,)
        )
        for i in range(64)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert barrier.done.is_set() and len(aborted) == 1 and len(barrier.errors) == 32


def test_barrier_events_asked_for_late_are_born_set() -> None:
    # The events are made only when somebody asks (a served step never does): one asked
    # for after the fact must not miss it.
    barrier = ExecutorBarrier(2)
    barrier.when_done(InvalidArgumentError("cause"))
    assert barrier.wake.is_set() and not barrier.done.is_set()
    barrier.when_done(None)
    assert barrier.done.is_set()
    late = ExecutorBarrier(1)
    late.when_done(None)
    assert late.done.is_set() and late.wake.is_set()


def test_barrier_wakes_a_waiter_on_another_thread() -> None:
    barrier = ExecutorBarrier(1)
    done = barrier.done  # asked for before the part reports
    reporter = threading.Timer(0.05, barrier.when_done, args=(None,))
    reporter.start()
    assert done.wait(10.0) and barrier.wake.is_set()
    reporter.join()
