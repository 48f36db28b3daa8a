"""Transport, the master's calls to workers: `WorkerCalls` is the master's only path to the
tasks of a cluster. Every call takes a deadline and every failure becomes the OpError with
the worker's code, naming the task (rpc.status). Calls are BLOCKING calls run on the shared
cached pool (rpc.call_pool), returned as futures (RunGraph to a worker on this host over its
Unix socket, rpc.local_rpc; everything else over gRPC): grpcio's own `.future()` starts a
channel spin thread per idle channel, i.e. per step. CleanupGraph after a step goes through
rpc.step_cleaner, batched per task, in the background. Thread-safe.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import grpc
from google.protobuf.message import Message

from common.errors import AbortedError, OpError, as_op_error, from_code
from protos import worker_pb2
from rpc import call_pool, local_rpc, wire
from rpc import status as rpc_status
from rpc.service_paths import WORKER_METHODS, WorkerStub, method_path
from rpc.step_cleaner import StepCleaner
from rpc.worker_cache import WorkerCache

_RECV_FIELD = worker_pb2.RunGraphResponse.RECV_FIELD_NUMBER
log = logging.getLogger(__name__)


class DeferredCall(concurrent.futures.Future):
    """A call already started on a same-host task (its request sent on the socket, or,
    for a task of this process, to be run by whoever waits for it) whose answer nobody
    waits for yet: `run_here()` waits on the calling thread, `hand_off()` on a pooled
    one; whichever comes first runs it, the other does nothing. Cancelling it before
    then drops the call. Why: a master's RPC thread that runs one partition of a step
    itself then reads the others' answers without waking a pooled thread per call."""

    def __init__(
        self,
        call: Callable[[], Any],
        local: local_rpc.LocalCall | local_rpc.InProcessCall | None,
        pool: call_pool.CallPool,
    ) -> None:
        """`local`: the started call, or None for a call to a task of this process run
        on messages (local_rpc.MessageHandler), which nothing has started yet."""
        super().__init__()
        self._call = call
        self._local = local
        self._pool = pool
        self._claim = threading.Lock()
        self._claimed = False

    @property
    def in_process(self) -> bool:
        """Whether the call runs where it is awaited (a task of this process)."""
        return self._local is None or isinstance(self._local, local_rpc.InProcessCall)

    def run_here(self) -> None:
        """Wait for the answer (run the call, in process) on this thread."""
        if self._take():
            self._run()

    def hand_off(self) -> None:
        """Have a pooled thread wait for the answer."""
        if self._take():
            self._pool.submit(self._run)

    def cancel(self) -> bool:
        if not super().cancel():
            return False
        if self._local is not None:
            self._local.cancel()
        return True

    def _take(self) -> bool:
        with self._claim:
            taken, self._claimed = self._claimed, True
        return not taken

    def _run(self) -> None:
        if not self.set_running_or_notify_cancel():
            return
        try:
            result = self._call()
        except BaseException as exc:  # noqa: BLE001  (the future carries every failure)
            self.set_exception(exc)
        else:
            self.set_result(result)
        finally:
            del self._call  # the finished call (and its request) is not kept


class WorkerCalls:
    """Deadline-carrying calls to the tasks of a cluster through a WorkerCache."""

    def __init__(self, cache: WorkerCache, rpc_timeout: float) -> None:
        self.cache = cache
        self.rpc_timeout = rpc_timeout
        self._pool = call_pool.shared()
        self._stubs: dict[str, tuple[grpc.Channel, WorkerStub]] = {}  # task -> (channel, stub)
        self._local = local_rpc.LocalPeers(cache.channel)  # same-host workers: a socket
        self._cleaner = StepCleaner(cache.channel, self.stub, rpc_timeout, self._local)

    def stub(self, task: str) -> WorkerStub:
        """The task's stub, reused while the cache keeps the same channel."""
        channel = self.cache.channel(task)
        entry = self._stubs.get(task)
        if entry is None or entry[0] is not channel:
            entry = (channel, self.cache.stub(task))
            self._stubs[task] = entry
        return entry[1]

    def future(
        self,
        task: str,
        method: str,
        request: Message | wire.PartsMessage,
        timeout: float | None = None,
        wait_for_ready: bool = False,
        inline: bool = False,
        split: bool = False,
        defer: bool = False,
    ) -> concurrent.futures.Future:
        """The call as a future: a blocking call on a pooled thread (see the docstring),
        or with `inline` on this thread (the future is done when this returns). RunGraph
        to a worker on this host goes over its local socket (rpc.local_rpc); with `defer`
        such a call (already sent) comes back as a DeferredCall, whose answer the caller
        reads itself (`run_here`) or hands to the pool. A RunGraph request may be a
        wire.PartsMessage; with `split`, its response's large fetched tensors stay views of
        the bytes received (a wire.SplitResponse)."""
        local = None
        direct = None
        if method == "RunGraph" and not wait_for_ready:
            if isinstance(request, Message):
                direct = self._local.message_handler(task, local_rpc.RUN_GRAPH)
            if direct is None:
                payload = (
                    request.parts()
                    if isinstance(request, wire.PartsMessage)
                    else request.SerializeToString()
                )
                local = self._local.start(
                    task, local_rpc.RUN_GRAPH, payload, timeout or self.rpc_timeout
                )
        if direct is not None:  # a task of this process: no bytes either way
            run, budget = direct, timeout or self.rpc_timeout

            def call() -> Any:
                return _in_process(run, request, budget)
        elif local is not None:

            def call() -> Any:
                body = local.finish()
                if not split:
                    return local_rpc.parse(worker_pb2.RunGraphResponse, body)
                return wire.SplitResponse(
                    *wire.split_named_tensors(worker_pb2.RunGraphResponse, body, _RECV_FIELD)
                )
        else:
            sent: Message | bytes
            if isinstance(request, wire.PartsMessage):  # gRPC takes it joined, once
                multicallable = self._raw(task, method)
                sent = request.join()
            else:
                multicallable = getattr(self.stub(task), method)
                sent = request

            def call() -> Any:
                return multicallable(
                    sent, timeout=timeout or self.rpc_timeout, wait_for_ready=wait_for_ready
                )

        if defer and (local is not None or direct is not None):
            return DeferredCall(call, local, self._pool)
        if not inline:
            return self._pool.submit(call)
        future: concurrent.futures.Future = concurrent.futures.Future()
        future.set_running_or_notify_cancel()
        try:
            future.set_result(call())
        except Exception as exc:  # noqa: BLE001  (the future carries every failure)
            future.set_exception(exc)
        return future

    def _raw(self, task: str, method: str) -> Any:
        """`method` on the task's channel taking the serialized request."""
        stub = self.stub(task)
        _, response_cls = WORKER_METHODS[method]
        return self.cache.channel(task).unary_unary(
            method_path(stub.service_name, method),
            response_deserializer=response_cls.FromString,
        )

    @staticmethod
    def result(task: str, method: str, future: Any) -> Any:
        """The response of a finished future, or the OpError naming `task`."""
        try:
            response = future.result()
        except (grpc.FutureCancelledError, concurrent.futures.CancelledError):
            raise AbortedError(f"{method} on {task} was cancelled") from None
        except grpc.RpcError as err:
            raise rpc_status.from_rpc_error(err, task, method) from None
        code = getattr(response, "status_code", 0)
        if code:
            raise from_code(code, response.status_error_message)
        return response

    def call(
        self,
        task: str,
        method: str,
        request: Message,
        timeout: float | None = None,
        wait_for_ready: bool = False,
    ) -> Any:
        return self.result(
            task, method, self.future(task, method, request, timeout, wait_for_ready)
        )

    def call_all(
        self,
        requests: Mapping[str, Message],
        method: str,
        timeout: float | None = None,
        wait_for_ready: bool = False,
    ) -> dict[str, Any]:
        """The same RPC to several tasks in parallel; raises the first task's error."""
        futures = {
            task: self.future(task, method, req, timeout, wait_for_ready)
            for task, req in requests.items()
        }
        results: dict[str, Any] = {}
        first: OpError | None = None
        for task, fut in futures.items():
            try:
                results[task] = self.result(task, method, fut)
            except OpError as e:
                first = first or e
        if first is not None:
            raise first
        return results

    # -- CleanupGraph ----------------------------------------------------------------------
    def cleanup_async(self, step_id: int, tasks: Sequence[str]) -> None:
        """CleanupGraph(step_id) on every task, in the background, batched
        (rpc.step_cleaner)."""
        self._cleaner.add(step_id, tasks)

    def wait_for_cleanups(self, timeout: float | None = None) -> bool:
        """Send the pending cleanups now and wait for them; False if `timeout` passed."""
        return self._cleaner.flush(timeout)

    def close(self, timeout: float | None = 10.0) -> None:
        """Send the pending cleanups and stop their thread, close the local connections
        (before the channels close)."""
        self._cleaner.close(timeout)
        self._local.close()


def _in_process(run: local_rpc.MessageHandler, request: Any, timeout: float) -> Any:
    """A call to a task of this process on messages; a failure is the OpError the same
    call over the socket would raise (local_rpc.LocalServer.invoke)."""
    try:
        return run(request, timeout)
    except OpError:
        raise
    except Exception as exc:  # noqa: BLE001  (a handler's bug: Internal, as over a socket)
        log.exception("internal error in a local RPC")
        raise as_op_error(exc) from None
