"""Which of a failed step's partition errors the client sees (master.partition_runner):
the cause, not its echoes (aborts, cancellations, and errors at _Recvs that waited on the
failing peer), as TensorFlow's StatusGroup skips derived statuses. Pure logic."""

from __future__ import annotations

from common.errors import (
    AbortedError,
    CancelledError,
    InvalidArgumentError,
    OutOfRangeError,
    from_code,
    naming_node,
)
from common.executor.barrier import ExecutorBarrier


def _root(*errors, recv_nodes=()):
    waiter = ExecutorBarrier(len(errors))  # as the partition runner collects RunGraph errors
    for e in errors:
        waiter.when_done(e)
    return waiter.root_error(frozenset(recv_nodes))


def test_an_error_at_a_recv_yields_to_the_peer_error_it_echoes():
    echo = OutOfRangeError("End of sequence", "ps_recv")
    cause = OutOfRangeError("End of sequence", "IteratorGetNext")
    assert _root(echo, cause, recv_nodes={"ps_recv"}) is cause
    assert _root(cause, echo, recv_nodes={"ps_recv"}) is cause


def test_aborts_and_cancellations_yield_to_any_other_code():
    cause = InvalidArgumentError("bad shape", "recv_of_x")
    assert (
        _root(
            AbortedError("Step 1 was cleaned up", "a"),
            CancelledError("cancelled"),
            cause,
            recv_nodes={"recv_of_x"},
        )
        is cause
    )


def test_among_equals_the_first_to_arrive_wins():
    first, second = InvalidArgumentError("one", "a"), InvalidArgumentError("two", "b")
    assert _root(first, second) is first
    assert _root() is None


def test_the_node_crosses_the_wire_in_the_message():
    sent = naming_node(OutOfRangeError("End of sequence", "IteratorGetNext"))
    assert sent.message == "End of sequence\n\t [[{{node IteratorGetNext}}]]"
    got = from_code(int(sent.code), sent.message)
    assert type(got) is OutOfRangeError and got.node_name == "IteratorGetNext"
    assert naming_node(got).message == sent.message  # named once
    assert from_code(3, "no node here").node_name is None
