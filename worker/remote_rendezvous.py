"""Remote rendezvous: a step's rendezvous on a worker, which can receive from other tasks
(TF's RpcRemoteRendezvous / BaseRemoteRendezvous).

Sends are always local (a _Send runs on this task's device, or RunGraph injects a value
the master fed) and land in the step's LocalRendezvous, where local _Recvs and incoming
RecvTensor calls pick them up. A recv
whose key names a source device of ANOTHER task pulls the value from that task through
the worker's RecvTensorClient (rpc.recv_tensor: local socket, RecvTensorOne/Stream, or
TensorFlow's unary RecvTensor). Each remote recv starts its call on the thread
that asked (the request leaves at once) and waits for the answer on a thread of the shared
cached pool (rpc.call_pool: no thread start per recv), with a deadline, except those
a RunGraph thread issues while it runs the step (`start_here`): that thread has nothing
else to do until the step ends, so it waits for them itself, polling the same-host
sockets their answers come on (rpc.recv_tensor.socket_call) and running each answer's
consumers as it arrives (no hand-off to a pooled thread per hop, and the step's last
value arrives on the thread that answers RunGraph); a recv without a socket (gRPC) it
awaits only if it is the first it issues, as it then cannot poll the others;
the worker's channels carry CHANNEL_OPTIONS, whose SingleThreadedUnaryStream makes the
stream call run on that thread alone (no grpcio channel spin thread per step) while it
stays cancellable; `start_abort` fails local waiters and cancels the calls in flight,
so every waiter of a failed step fails fast. `prefetch(keys)` starts the calls for the
step's input-less remote _Recvs as soon as RunGraph arrives (GraphMgr), before the
executors are set up; the _Recv then takes the call in flight, and `drop_prefetched`
cancels any no _Recv took. Thread-safe.
"""

from __future__ import annotations

import math
import select
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from common.errors import AbortedError, OpError, as_op_error
from common.rendezvous import LocalRendezvous, RecvCallback, parse_key
from rpc import call_pool
from rpc.recv_tensor import Finish, RecvTensorClient, socket_call
from rpc.worker_cache import canonical_task

# A remote wait start_here defers: finish(), the calls to cancel on abort, the waiter, and
# the socket call to poll (rpc.local_rpc.LocalCall; None: awaited alone).
_Wait = tuple[Finish, list[Any], RecvCallback, Any]

# start_here: how much tighter than the recv calls' own deadline a step's may be and still
# count as no tighter (the step's budget was taken a moment before the calls start).
DEADLINE_SLACK_S = 1.0


class RemoteRendezvous:
    """One step's rendezvous on the worker `local_task`."""

    def __init__(self, step_id: int, local_task: str, client: RecvTensorClient | None) -> None:
        self.step_id = step_id
        self.local_task = canonical_task(local_task)
        self.local = LocalRendezvous()
        self._client = client
        self._lock = threading.Lock()
        self._calls: set[Any] = set()
        # Keys sent here although their source is another task: RunGraph's `send` values
        # (fed by the master for client-terminated _Recvs); they are received locally.
        self._fed: set[str] = set()
        # While `start_here` runs the step: that thread's id, the remote waits it issued
        # on sockets (it polls them) and the first without one it issued while starting
        # the executors (it awaits that one alone). Only that thread touches `_deferred`
        # and `_blocking`; others compare `_here` with their own id, so no lock is needed.
        self._here: int | None = None
        self._deferred: list[_Wait] = []
        self._blocking: _Wait | None = None
        self._polling = False  # start_here polls `_deferred` (no more blocking waits)
        # Remote calls started by prefetch() that no _Recv has taken yet.
        self._prefetched: dict[str, tuple[Finish, list[Any]]] = {}

    # -- the kernel-facing Rendezvous interface ----------------------------------------
    def send(self, key: str, value: Any, is_dead: bool = False) -> None:
        if self._src_task(key) != self.local_task:
            with self._lock:
                self._fed.add(key)
        self.local.send(key, value, is_dead)

    @staticmethod
    def _src_task(key: str) -> str:
        return canonical_task(parse_key(key).src_device)

    def recv_async(self, key: str, done: RecvCallback) -> None:
        try:
            src_task = self._src_task(key)
        except OpError as e:
            done(None, False, e)
            return
        with self._lock:
            fed = key in self._fed
        if src_task == self.local_task or fed or self._client is None:
            self.local.recv_async(key, done)
            return
        self._recv_remote(src_task, key, done)

    def recv(self, key: str, timeout: float | None = None) -> tuple[Any, bool]:
        """Blocking local receive (RunGraph's recv_key values)."""
        return self.local.recv(key, timeout)

    def recv_local_async(self, key: str, done: RecvCallback) -> None:
        """A value sent on this task (what an incoming RecvTensor asks for)."""
        self.local.recv_async(key, done)

    def start_here(self, start: Callable[[], None], deadline: float) -> None:
        """Run `start` (the step's executors) on this thread, which has nothing else to do
        until the step ends: the remote recvs issued on it (by `start`, then by the
        consumers it runs) are then awaited on it too, instead of on pooled threads: it
        polls the sockets of those that have one and runs each answer's consumers as it
        comes, until none is left. A recv without a socket is awaited here only if it is
        the first `start` issues (the others then go to pooled threads), later ones on
        pooled threads. Only when the step's `deadline` (time.monotonic) is no tighter
        than the recv calls' own deadline, which then ends each wait; an abort cancels the
        calls (their sockets turn readable), as always. A step with the worker's default
        budget (--step-timeout, the recv calls' timeout too) started a moment before its
        calls: within DEADLINE_SLACK_S counts as no tighter."""
        remaining = deadline - time.monotonic()
        if self._client is None or remaining < self._client.timeout - DEADLINE_SLACK_S:
            start()
            return
        self._here = threading.get_ident()
        try:
            start()
        finally:
            blocking, self._blocking = self._blocking, None
            try:
                if blocking is not None:
                    self._here = None
                    deferred, self._deferred = self._deferred, []
                    for wait in deferred:
                        call_pool.shared().submit(self._wait_remote, *wait[:3])
                    self._wait_remote(*blocking[:3])
                else:
                    self._polling = True
                    self._poll_deferred()
            finally:
                self._here = None
                self._polling = False
                deferred, self._deferred = self._deferred, []
                for wait in deferred:  # left by a failure here: still awaited
                    call_pool.shared().submit(self._wait_remote, *wait[:3])

    def _poll_deferred(self) -> None:
        """Await the deferred waits on this thread: each as its socket turns readable (or
        its call's deadline passes: its finish() then fails at once), including those the
        consumers run here issue meanwhile, until none is left. The last one left is read
        without polling (its read waits until its deadline)."""
        poller = select.poll()
        waiting: dict[int, _Wait] = {}
        try:
            while True:
                for wait in self._deferred:
                    fd = wait[3].fileno()
                    waiting[fd] = wait
                    poller.register(fd, select.POLLIN)
                self._deferred.clear()
                if len(waiting) <= 1:  # one left: its blocking read needs no poll first
                    for fd, wait in list(waiting.items()):
                        del waiting[fd]
                        poller.unregister(fd)
                        self._wait_remote(wait[0], wait[1], wait[2])
                    if not self._deferred:
                        return
                    continue
                ends = [w[3].deadline for w in waiting.values() if w[3].deadline is not None]
                timeout_ms = None
                if ends:
                    timeout_ms = max(0, math.ceil((min(ends) - time.monotonic()) * 1e3))
                ready = [fd for fd, _ in poller.poll(timeout_ms)]
                if not ready:  # a deadline passed: those calls fail now
                    now = time.monotonic()
                    ready = [fd for fd, w in waiting.items() if (w[3].deadline or now) <= now]
                for fd in ready:
                    wait = waiting.pop(fd)
                    poller.unregister(fd)
                    self._wait_remote(wait[0], wait[1], wait[2])
        finally:
            # After a failure here, start_here hands those still waiting to pooled threads.
            self._deferred.extend(waiting.values())

    def start_abort(self, error: OpError) -> None:
        with self._lock:
            calls = list(self._calls)
            self._calls.clear()
        self.local.start_abort(error)
        for call in calls:
            call.cancel()

    @property
    def status(self) -> OpError | None:
        return self.local.status

    def is_aborted(self) -> bool:
        return self.local.is_aborted()

    def num_calls_in_flight(self) -> int:
        with self._lock:
            return len(self._calls)

    def prefetch(self, keys: Iterable[str]) -> None:
        """Ask the peers for `keys` now, before the executors reach their _Recvs (whose
        recv_async then takes the call in flight): the requests leave while this task
        still sets its step up. Keys of this task or fed by RunGraph are skipped, and so
        is a key whose call cannot start (its _Recv then tries again)."""
        if self._client is None:
            return
        for key in keys:
            try:
                task = self._src_task(key)
            except OpError:
                continue
            with self._lock:
                if task == self.local_task or key in self._fed or key in self._prefetched:
                    continue
            mine: list[Any] = []
            try:
                finish = self._start_remote(task, key, mine)
            except BaseException:  # noqa: BLE001 - the _Recv will report it
                self._forget_calls(mine)
                continue
            with self._lock:
                self._prefetched[key] = (finish, mine)

    def drop_prefetched(self) -> None:
        """Cancel the prefetched calls no _Recv took (the step ended without them)."""
        with self._lock:
            dropped = list(self._prefetched.values())
            self._prefetched.clear()
        for _, mine in dropped:
            for call in mine:
                call.cancel()
            self._forget_calls(mine)

    # -- remote part ---------------------------------------------------------------------
    def _forget_calls(self, mine: list[Any]) -> None:
        with self._lock:
            self._calls.difference_update(mine)

    def _start_remote(self, task: str, key: str, mine: list[Any]) -> Finish:
        """Start the call for `key` on this thread (registered for abort in `mine`)."""
        assert self._client is not None

        def register(call: Any) -> bool:
            with self._lock:
                if self.local.is_aborted():
                    return False
                self._calls.add(call)
                mine.append(call)
                return True

        if self.local.is_aborted():
            raise self.local.status or AbortedError(f"Step {self.step_id} aborted")
        return self._client.start(task, self.step_id, key, register)

    def _recv_remote(self, task: str, key: str, done: RecvCallback) -> None:
        """Start the call on this thread (or take the prefetched one), wait for its
        answer on a pooled thread (or the starting one: see start_here)."""
        with self._lock:
            prefetched = self._prefetched.pop(key, None)
        if prefetched is not None:
            self._await_remote(prefetched[0], prefetched[1], done)
            return
        mine: list[Any] = []
        try:
            finish = self._start_remote(task, key, mine)
        except BaseException as exc:  # noqa: BLE001 - every failure goes to the waiter
            self._finished(mine, done, None, exc)
            return
        self._await_remote(finish, mine, done)

    def _await_remote(self, finish: Finish, mine: list[Any], done: RecvCallback) -> None:
        if self._here == threading.get_ident():  # see start_here
            call = socket_call(finish)
            if call is not None:
                self._deferred.append((finish, mine, done, call))
                return
            if not self._polling and self._blocking is None:
                self._blocking = (finish, mine, done, None)
                return
        call_pool.shared().submit(self._wait_remote, finish, mine, done)

    def _wait_remote(self, finish: Finish, mine: list[Any], done: RecvCallback) -> None:
        try:
            value = finish()
        except BaseException as exc:  # noqa: BLE001 - every failure goes to the waiter
            self._finished(mine, done, None, exc)
            return
        self._finished(mine, done, value, None)

    def _finished(
        self,
        mine: list[Any],
        done: RecvCallback,
        value: tuple[Any, bool] | None,
        exc: BaseException | None,
    ) -> None:
        with self._lock:
            self._calls.difference_update(mine)
        if exc is not None:
            # A call we cancelled on abort fails with CANCELLED: report the abort instead.
            done(None, False, self.local.status or as_op_error(exc))
            return
        assert value is not None
        done(value[0], value[1], None)
