"""Remote rendezvous, where a remote recv is awaited: `start_here` lets the thread that
starts a step's executors await the first remote recv it issues (RunGraph's thread, idle
until the step ends), the other recvs on pooled threads, and none inline when the step's
deadline is tighter than the recv calls' own. No sockets: a fake RecvTensorClient."""

from __future__ import annotations

import threading
import time
from typing import Any

from common.errors import AbortedError, CancelledError
from common.rendezvous import create_key
from worker.remote_rendezvous import RemoteRendezvous

W0 = "/job:worker/replica:0/task:0/device:CPU:0"
W1 = "/job:worker/replica:0/task:1/device:CPU:0"
RECV_TIMEOUT = 600.0


class _Call:
    def __init__(self) -> None:
        self.cancelled = threading.Event()

    def cancel(self) -> None:
        self.cancelled.set()


class _FakeClient:
    """Answers every recv with 1.0 (or, with `block`, only once the call is cancelled),
    recording the thread that awaited each answer."""

    def __init__(self, block: bool = False) -> None:
        self.timeout = RECV_TIMEOUT
        self.block = block
        self.waited_on: dict[str, int] = {}
        self.calls: list[_Call] = []
        self.waiting = threading.Event()  # a finish() has started waiting

    def start(self, task: str, step_id: int, key: str, register: Any) -> Any:
        call = _Call()
        self.calls.append(call)
        register(call)

        def finish() -> tuple[Any, bool]:
            self.waited_on[key] = threading.get_ident()
            self.waiting.set()
            if self.block:
                call.cancelled.wait(RECV_TIMEOUT)
                raise CancelledError("call cancelled")
            return 1.0, False

        return finish


def _key(name: str) -> str:
    return create_key(W1, 1, W0, name, (0, 0))


def _recv_all(rendezvous: RemoteRendezvous, keys: list[str]) -> tuple[Any, threading.Event]:
    """A `start` that issues a recv per key; returns it with {key: result} and an event
    set once every recv is done."""
    results: dict[str, tuple[Any, bool, Any]] = {}
    all_done = threading.Event()

    def start() -> None:
        for key in keys:

            def done(value: Any, is_dead: bool, error: Any, key: str = key) -> None:
                results[key] = (value, is_dead, error)
                if len(results) == len(keys):
                    all_done.set()

            rendezvous.recv_async(key, done)

    return (start, results), all_done


def test_first_remote_recv_is_awaited_on_the_starting_thread_the_rest_pooled():
    client = _FakeClient()
    rendezvous = RemoteRendezvous(7, W0, client)  # type: ignore[arg-type]
    keys = [_key("a"), _key("b"), _key("c")]
    (start, results), all_done = _recv_all(rendezvous, keys)

    rendezvous.start_here(start, time.monotonic() + 2 * RECV_TIMEOUT)

    assert all_done.wait(10.0)
    assert results == {k: (1.0, False, None) for k in keys}
    me = threading.get_ident()
    assert client.waited_on[keys[0]] == me
    assert client.waited_on[keys[1]] != me
    assert client.waited_on[keys[2]] != me
    assert rendezvous.num_calls_in_flight() == 0


def test_a_step_with_the_workers_default_budget_awaits_on_the_starting_thread():
    """GraphMgr gives a step without a deadline of its own --step-timeout, the length of
    the recv calls' timeout, from a moment before they start: the step is no tighter."""
    client = _FakeClient()
    rendezvous = RemoteRendezvous(7, W0, client)  # type: ignore[arg-type]
    (start, results), all_done = _recv_all(rendezvous, [_key("a")])

    rendezvous.start_here(start, time.monotonic() + RECV_TIMEOUT)

    assert all_done.wait(10.0)
    assert results == {_key("a"): (1.0, False, None)}
    assert client.waited_on[_key("a")] == threading.get_ident()


def test_tighter_step_deadline_keeps_every_wait_off_the_starting_thread():
    client = _FakeClient()
    rendezvous = RemoteRendezvous(7, W0, client)  # type: ignore[arg-type]
    (start, results), all_done = _recv_all(rendezvous, [_key("a")])

    rendezvous.start_here(start, time.monotonic() + 1.0)

    assert all_done.wait(10.0)
    assert results == {_key("a"): (1.0, False, None)}
    assert client.waited_on[_key("a")] != threading.get_ident()


def test_recv_from_another_thread_during_start_here_is_pooled():
    client = _FakeClient()
    rendezvous = RemoteRendezvous(7, W0, client)  # type: ignore[arg-type]
    (other_start, results), all_done = _recv_all(rendezvous, [_key("x")])

    def start() -> None:
        other = threading.Thread(target=other_start)
        other.start()
        other.join()

    rendezvous.start_here(start, time.monotonic() + 2 * RECV_TIMEOUT)

    assert all_done.wait(10.0)
    assert results == {_key("x"): (1.0, False, None)}
    assert client.waited_on[_key("x")] != threading.get_ident()


def test_abort_ends_the_wait_on_the_starting_thread():
    client = _FakeClient(block=True)
    rendezvous = RemoteRendezvous(7, W0, client)  # type: ignore[arg-type]
    (start, results), all_done = _recv_all(rendezvous, [_key("a")])
    error = AbortedError("Step 7 aborted by a test")

    def abort_when_called() -> None:
        assert client.waiting.wait(10.0)
        rendezvous.start_abort(error)

    aborter = threading.Thread(target=abort_when_called)
    aborter.start()
    rendezvous.start_here(start, time.monotonic() + 2 * RECV_TIMEOUT)
    aborter.join()

    assert all_done.is_set()
    assert results == {_key("a"): (None, False, error)}
    assert client.calls[0].cancelled.is_set()
    assert client.waited_on[_key("a")] == threading.get_ident()
