"""Remote rendezvous, where a remote recv is awaited: `start_here` lets the thread that
starts a step's executors (RunGraph's thread, idle until the step ends) await the recvs
it issues on same-host sockets, polling them and running each answer's consumers as it
comes (recvs its consumers issue too), and, for recvs without a socket, the first one
only (the others on pooled threads); none inline when the step's deadline is tighter
than the recv calls' own. A fake RecvTensorClient: no calls without a socket, socket
pairs for those with one."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

from common.errors import AbortedError, CancelledError, DeadlineExceededError
from common.rendezvous import create_key
from rpc.recv_tensor import _SocketFinish
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


class _SocketCall:
    """A call whose answer (one byte, the value) arrives on a socket pair: `answer(v)`
    writes it; cancel() shuts the socket down, as rpc.local_rpc.LocalCall's does."""

    def __init__(self, deadline: float | None) -> None:
        self.sock, self.peer = socket.socketpair()
        self.deadline = deadline
        self.cancelled = threading.Event()

    def fileno(self) -> int:
        return self.sock.fileno()

    def answer(self, value: int) -> None:
        self.peer.send(bytes([value]))

    def cancel(self) -> None:
        self.cancelled.set()
        self.sock.shutdown(socket.SHUT_RDWR)

    def read(self) -> float:
        """What LocalCall.finish does: the answer, or the call's error."""
        try:
            if self.deadline is not None:
                left = self.deadline - time.monotonic()
                if left <= 0:
                    raise DeadlineExceededError("Call to worker 1 (RecvTensor) timed out")
                self.sock.settimeout(left)
            try:
                got = self.sock.recv(1)
            except TimeoutError:
                raise DeadlineExceededError("Call to worker 1 (RecvTensor) timed out") from None
            if not got:
                raise CancelledError("RecvTensor to worker 1 was cancelled")
            return float(got[0])
        finally:
            self.sock.close()
            self.peer.close()


class _SocketClient:
    """Starts every recv on a socket pair (`calls` by key); records the thread that
    awaited each answer and the order of the answers."""

    def __init__(self, call_timeout: float | None = RECV_TIMEOUT) -> None:
        self.timeout = RECV_TIMEOUT
        self.call_timeout = call_timeout
        self.calls: dict[str, _SocketCall] = {}
        self.started = threading.Condition()
        self.waited_on: dict[str, int] = {}
        self.order: list[str] = []

    def start(self, task: str, step_id: int, key: str, register: Any) -> Any:
        end = None if self.call_timeout is None else time.monotonic() + self.call_timeout
        call = _SocketCall(end)
        register(call)
        with self.started:
            self.calls[key] = call
            self.started.notify_all()

        def finish() -> tuple[Any, bool]:
            self.waited_on[key] = threading.get_ident()
            self.order.append(key)
            return call.read(), False

        return _SocketFinish(finish, call)  # type: ignore[arg-type]

    def call(self, key: str) -> _SocketCall:
        with self.started:
            assert self.started.wait_for(lambda: key in self.calls, 10.0)
            return self.calls[key]


def test_socket_recvs_are_awaited_on_the_starting_thread_as_they_arrive():
    """Three recvs on sockets; answers come c, a, b; a's consumer issues recv d, which
    is awaited there too: every answer's consumer runs on the starting thread, in the
    order the answers came."""
    client = _SocketClient()
    rendezvous = RemoteRendezvous(7, W0, client)  # type: ignore[arg-type]
    a, b, c, d = (_key(n) for n in "abcd")
    results: dict[str, tuple[Any, bool, Any]] = {}
    ran_on: dict[str, int] = {}

    def consumer(key: str) -> Any:
        def done(value: Any, is_dead: bool, error: Any) -> None:
            results[key] = (value, is_dead, error)
            ran_on[key] = threading.get_ident()
            if key == a:
                rendezvous.recv_async(d, consumer(d))

        return done

    def start() -> None:
        for key in (a, b, c):
            rendezvous.recv_async(key, consumer(key))

    def answer() -> None:
        client.call(c).answer(3)
        time.sleep(0.05)
        client.call(a).answer(1)
        time.sleep(0.05)
        client.call(b).answer(2)
        client.call(d).answer(4)

    answering = threading.Thread(target=answer)
    answering.start()
    rendezvous.start_here(start, time.monotonic() + 2 * RECV_TIMEOUT)
    answering.join()

    assert results == {
        a: (1.0, False, None),
        b: (2.0, False, None),
        c: (3.0, False, None),
        d: (4.0, False, None),
    }
    me = threading.get_ident()
    assert ran_on == {a: me, b: me, c: me, d: me}
    assert client.waited_on == ran_on
    assert client.order[:2] == [c, a]
    assert rendezvous.num_calls_in_flight() == 0


def test_abort_ends_the_polled_waits_on_the_starting_thread():
    client = _SocketClient()
    rendezvous = RemoteRendezvous(7, W0, client)  # type: ignore[arg-type]
    keys = [_key("a"), _key("b")]
    (start, results), all_done = _recv_all(rendezvous, keys)
    error = AbortedError("Step 7 aborted by a test")

    def abort_when_started() -> None:
        for key in keys:
            client.call(key)
        rendezvous.start_abort(error)

    aborter = threading.Thread(target=abort_when_started)
    aborter.start()
    rendezvous.start_here(start, time.monotonic() + 2 * RECV_TIMEOUT)
    aborter.join()

    assert all_done.is_set()
    assert results == {k: (None, False, error) for k in keys}
    assert all(client.calls[k].cancelled.is_set() for k in keys)
    assert client.waited_on == {k: threading.get_ident() for k in keys}


def test_polled_calls_fail_at_their_deadline_while_another_is_answered():
    """a is answered; b and c never are: the poll ends at their deadline and both
    fail there, on the starting thread."""
    client = _SocketClient(call_timeout=0.2)
    rendezvous = RemoteRendezvous(7, W0, client)  # type: ignore[arg-type]
    a, b, c = _key("a"), _key("b"), _key("c")
    (start, results), all_done = _recv_all(rendezvous, [a, b, c])
    answering = threading.Thread(target=lambda: client.call(a).answer(1))
    answering.start()

    t0 = time.monotonic()
    rendezvous.start_here(start, time.monotonic() + 2 * RECV_TIMEOUT)
    answering.join()

    assert 0.15 < time.monotonic() - t0 < 5.0
    assert all_done.is_set()
    assert results[a] == (1.0, False, None)
    for key in (b, c):
        value, is_dead, error = results[key]
        assert (value, is_dead, type(error)) == (None, False, DeadlineExceededError)
    assert client.waited_on == {k: threading.get_ident() for k in (a, b, c)}
