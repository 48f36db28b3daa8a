"""Master, partition runner: register / run / clean up one step's partitions on all workers.

Every call goes through `rpc.worker_calls.WorkerCalls`, the master's only path to workers
(a deadline on every call; a failure becomes the OpError with the worker's code, naming the
task). `PartitionRunner.run_step` fans RunGraph out to every partition IN
PARALLEL (the answers of tasks on this host read on the calling thread, see
_launch_and_wait); the first failure sends CleanupGraph(step_id)
to every task at once, which aborts the step's rendezvous there so the other partitions stop
waiting; every RunGraph is then awaited within the step deadline (a blocking call cannot be
cancelled: its own deadline ends it). After every step, success or failure, the tasks with a
partition get CleanupGraph(step_id) WITHOUT the step waiting for it (as TensorFlow's
master), batched per task by rpc.step_cleaner; `WorkerCalls.wait_for_cleanups()` sends
the pending ones and waits for them. A traced step (ExecutorOpts on every RunGraph) gets
the workers' step_stats and partition graphs merged into the caller's RunMetadata.

Thread-safe: runners hold no per-step state; concurrent steps use distinct step_ids.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import dataclasses
import functools
import os
import struct
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from common.errors import (
    AbortedError,
    DeadlineExceededError,
    OpError,
    as_op_error,
)
from common.executor.barrier import ExecutorBarrier
from protos import config_pb2, graph_pb2, worker_pb2
from rpc import wire
from rpc.deadlines import DEADLINES
from rpc.worker_calls import DeferredCall, WorkerCalls

# A step without any deadline still needs one on its RPCs ("every wait has an exit").
NO_DEADLINE_S = 7 * 24 * 3600.0
# How long past the step deadline the master waits for the RunGraph calls' own
# DEADLINE_EXCEEDED (gRPC enforces the deadline) before it gives up on them itself.
_RUN_GRACE_S = 2.0
# How long aborted partitions get to report after the step failed.
_ABORT_GRACE_S = 5.0
_ABORT_RESEND_S = 0.25
# How long the RPC thread may stay busy (running its partition, reading an answer) before
# the answers it has not read yet are read on pooled threads instead (see _launch_and_wait).
_HAND_OFF_S = 0.25
_RECV_OPS = frozenset({"_Recv", "_HostRecv"})
RUN_GRAPH_SEND_FIELD = worker_pb2.RunGraphRequest.SEND_FIELD_NUMBER


# Set by master.service around a RunStep: registers a step's cancel function with the RPC,
# whose end (client cancel, gRPC deadline) before the step's aborts it on every worker.
STEP_CALL: contextvars.ContextVar[Callable[[Callable[[OpError], None]], None] | None] = (
    contextvars.ContextVar("flowrt_step_call", default=None)
)


def new_id(bits: int = 63) -> int:
    """A random non-zero id below 2**bits (step ids: < 2**57, as TensorFlow). From the
    OS's generator, never the global `random` a user's program may seed: ids and session
    handles must differ between processes and not be guessable. Read from the OS 4 KB at
    a time (_IDS): a step takes three ids, and each getrandom() releases the GIL, which
    under load can hand it to another thread."""
    assert 0 < bits <= 64
    return _IDS.take() >> (64 - bits) or 1


class _RandomWords:
    """64-bit words of os.urandom, read a buffer at a time. Thread-safe; a forked child
    starts from a fresh buffer (it must not repeat its parent's ids)."""

    _BUFFER_BYTES = 4096

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._words: list[int] = []
        os.register_at_fork(after_in_child=self._forget)

    def take(self) -> int:
        with self._lock:
            if not self._words:
                self._words = list(
                    struct.unpack(f"<{self._BUFFER_BYTES // 8}Q", os.urandom(self._BUFFER_BYTES))
                )
            return self._words.pop()

    def _forget(self) -> None:
        self._lock = threading.Lock()
        self._words = []


_IDS = _RandomWords()


@dataclasses.dataclass(frozen=True)
class PartitionPlan:
    """One task's partition of a client graph, with its client feed and fetch keys
    (endpoint as the client names it -> full rendezvous key)."""

    task: str
    graph_def: graph_pb2.GraphDef
    feed_keys: dict[str, str]
    fetch_keys: dict[str, str]

    @functools.cached_property
    def recv_nodes(self) -> frozenset[str]:
        """Names of the partition's _Recv nodes (an error there usually echoes a peer's)."""
        return frozenset(n.name for n in self.graph_def.node if n.op in _RECV_OPS)


@dataclasses.dataclass(frozen=True)
class RegisteredPartition:
    plan: PartitionPlan
    graph_handle: str


class PartitionRunner:
    """Runs the registered partitions of one worker session."""

    def __init__(self, calls: WorkerCalls, session_handle: str) -> None:
        self.calls = calls
        self.session_handle = session_handle
        # Steps running now: step_id -> cancel(error). Guarded by _lock.
        self._lock = threading.Lock()
        self._running: dict[int, Callable[[OpError], None]] = {}

    def cancel_all(self, error: OpError) -> None:
        """Make every step running now fail with `error` (CloseSession: TF's
        cancellation manager), aborting it on the tasks still running it."""
        with self._lock:
            running = list(self._running.values())
        for cancel in running:
            cancel(error)

    # -- registration ----------------------------------------------------------------------
    def register(self, plans: Sequence[PartitionPlan], config: Any) -> list[RegisteredPartition]:
        requests = {
            p.task: worker_pb2.RegisterGraphRequest(
                session_handle=self.session_handle,
                create_worker_session_called=True,
                graph_def=p.graph_def,
                graph_options=config.graph_options,
                config_proto=config,
            )
            for p in plans
        }
        responses = self.calls.call_all(requests, "RegisterGraph")
        return [RegisteredPartition(p, responses[p.task].graph_handle) for p in plans]

    def deregister(self, parts: Iterable[RegisteredPartition]) -> None:
        """Best effort (the worker session's deletion drops them anyway)."""
        requests = {
            p.plan.task: worker_pb2.DeregisterGraphRequest(
                graph_handle=p.graph_handle,
                session_handle=self.session_handle,
                create_worker_session_called=True,
            )
            for p in parts
        }
        try:
            self.calls.call_all(requests, "DeregisterGraph")
        except OpError:
            pass

    # -- one step --------------------------------------------------------------------------
    def run_step(
        self,
        parts: Sequence[RegisteredPartition],
        step_id: int,
        feeds: dict[str, wire.Tensor],
        timeout_s: float | None,
        cleanup_tasks: Sequence[str],
        exec_opts: worker_pb2.ExecutorOpts | None = None,
        metadata: config_pb2.RunMetadata | None = None,
    ) -> dict[str, wire.Tensor]:
        """RunGraph on every partition; {fetch endpoint: value}. Always cleans up (in the
        background: see WorkerCalls.cleanup_async). `exec_opts` goes on every RunGraph;
        the workers' step_stats and partition graphs are then appended to `metadata`."""
        # The RunGraph futures' callbacks reach this list through the step's barrier:
        # emptied when the step ends, the step's calls and answers are freed at once
        # rather than left to the garbage collector as a reference cycle.
        futures: list[tuple[RegisteredPartition, Any]] = []
        try:
            self._run(parts, step_id, feeds, timeout_s, cleanup_tasks, exec_opts, futures)
            if metadata is not None and exec_opts is not None:
                _merge_metadata(futures, metadata, exec_opts)
            return self._fetches(futures)
        finally:
            futures.clear()
            self.calls.cleanup_async(step_id, cleanup_tasks)

    def _run(
        self,
        parts: Sequence[RegisteredPartition],
        step_id: int,
        feeds: dict[str, wire.Tensor],
        timeout_s: float | None,
        cleanup_tasks: Sequence[str],
        exec_opts: worker_pb2.ExecutorOpts | None,
        futures: list[tuple[RegisteredPartition, Any]],
    ) -> None:
        """Fill `futures` with the step's finished RunGraph futures (in `parts` order);
        raises its error."""
        budget = timeout_s if timeout_s else NO_DEADLINE_S
        deadline = time.monotonic() + budget
        aborts: list[Any] = []  # the CleanupGraph calls that abort the step
        # The first failure aborts the step on every task that has not answered yet.
        waiter = ExecutorBarrier(
            len(parts),
            on_error=lambda error: aborts.extend(
                self._abort(step_id, _unanswered(cleanup_tasks, futures))
            ),
        )
        cancelled: list[OpError] = []

        def cancel(error: OpError) -> None:
            cancelled.append(error)
            aborts.extend(self._abort(step_id, _unanswered(cleanup_tasks, futures)))
            waiter.wake.set()

        with self._lock:
            self._running[step_id] = cancel
        register = STEP_CALL.get()
        if register is not None:  # the client's call ending first cancels the step
            register(cancel)
        try:
            self._launch_and_wait(
                parts, step_id, feeds, budget, deadline, cleanup_tasks, exec_opts, futures,
                aborts, waiter, cancelled,
            )  # fmt: skip
        finally:
            with self._lock:
                self._running.pop(step_id, None)

    def _launch_and_wait(
        self,
        parts: Sequence[RegisteredPartition],
        step_id: int,
        feeds: dict[str, wire.Tensor],
        budget: float,
        deadline: float,
        cleanup_tasks: Sequence[str],
        exec_opts: worker_pb2.ExecutorOpts | None,
        futures: list[tuple[RegisteredPartition, Any]],
        aborts: list[Any],
        waiter: ExecutorBarrier,
        cancelled: list[OpError],
    ) -> None:
        # Every RunGraph leaves at once. Those to tasks of this host (a socket, or this
        # process's own task) are answered on this thread: the one to this process's task
        # runs here first, then the others' answers are read here, without a pooled
        # thread woken per call; should this thread stay busy past _HAND_OFF_S, the
        # watcher hands the answers not read yet to pooled threads, so an early failure
        # still aborts the step at once. Calls over gRPC wait on pooled threads, but for
        # the last one when none is answered here: it runs on this thread.
        deferred: list[DeferredCall] = []
        try:
            for k, part in enumerate(parts):
                future = self.calls.future(
                    part.plan.task,
                    "RunGraph",
                    self._run_request(part, step_id, feeds, exec_opts),
                    timeout=budget,
                    split=True,
                    defer=True,
                    inline=k == len(parts) - 1 and not deferred,
                )
                self._track(part, future, futures, waiter)
                if isinstance(future, DeferredCall):
                    deferred.append(future)
        except BaseException:
            _hand_off(deferred)  # the calls already sent are still answered and read
            raise
        if deferred:
            # The task of this process first: its RunGraph runs on the thread that waits.
            deferred.sort(key=lambda d: not d.in_process)
            for extra in deferred[1:]:
                if extra.in_process:  # never: a process hosts one task
                    extra.hand_off()
            watch = DEADLINES.watch(
                time.monotonic() + _HAND_OFF_S, functools.partial(_hand_off, deferred)
            )
            try:
                for d in deferred:
                    d.run_here()
            finally:
                DEADLINES.cancel(watch)
        woke = waiter.wake.wait(max(0.0, deadline - time.monotonic()) + _RUN_GRACE_S)
        if not woke:
            aborts.extend(self._abort(step_id, _unanswered(cleanup_tasks, futures)))
            self._wind_down(step_id, cleanup_tasks, waiter, futures, aborts)
            raise DeadlineExceededError(
                f"Step {step_id} did not finish within {budget:g}s (timeout)"
            )
        if not waiter.done.is_set():  # a partition failed: make the others stop
            self._wind_down(step_id, cleanup_tasks, waiter, futures, aborts)
        if cancelled:
            raise cancelled[0]
        error = waiter.root_error(frozenset().union(*(part.plan.recv_nodes for part in parts)))
        if error is not None:
            raise error

    def _track(
        self,
        part: RegisteredPartition,
        future: Any,
        futures: list[tuple[RegisteredPartition, Any]],
        waiter: ExecutorBarrier,
    ) -> None:
        futures.append((part, future))
        future.add_done_callback(
            lambda f, task=part.plan.task: waiter.when_done(self._error_of(task, f))
        )

    def _wind_down(
        self,
        step_id: int,
        tasks: Sequence[str],
        waiter: ExecutorBarrier,
        futures: list[tuple[RegisteredPartition, Any]],
        aborts: list[Any],
    ) -> None:
        """After the first abort (already sent to the tasks still running the step),
        abort again the tasks still running it until every RunGraph has answered (a
        CleanupGraph may reach a worker before that step's RunGraph does), cancel the calls
        still pending, and wait for the aborts themselves: the step's calls never outlive
        it, so a burst of failing steps cannot pile up calls (and pool threads) without
        bound."""
        end = time.monotonic() + _ABORT_GRACE_S
        while not waiter.done.wait(_ABORT_RESEND_S) and time.monotonic() < end:
            aborts.extend(self._abort(step_id, _unanswered(tasks, futures)))
        for _, f in futures:
            f.cancel()
        concurrent.futures.wait(aborts, timeout=max(0.0, end - time.monotonic()))

    def _run_request(
        self,
        part: RegisteredPartition,
        step_id: int,
        feeds: dict[str, wire.Tensor],
        exec_opts: worker_pb2.ExecutorOpts | None = None,
    ) -> worker_pb2.RunGraphRequest | wire.PartsMessage:
        """The partition's RunGraphRequest; feeds kept as views of the client's request
        (wire.SplitTensor) are not copied into it but ride along as parts."""
        request = worker_pb2.RunGraphRequest(
            session_handle=self.session_handle,
            create_worker_session_called=True,
            graph_handle=part.graph_handle,
            step_id=step_id,
            store_errors_in_response_body=True,
            request_id=new_id(),
        )
        split: list[tuple[str, wire.SplitTensor]] = []
        for endpoint, key in part.plan.feed_keys.items():
            value = feeds[endpoint]
            if isinstance(value, wire.SplitTensor):
                split.append((key, value))
            else:
                request.send.add(name=key).tensor.CopyFrom(value)
        request.recv_key.extend(part.plan.fetch_keys.values())
        if exec_opts is not None:
            request.exec_opts.CopyFrom(exec_opts)
        if split:
            return wire.PartsMessage(request, RUN_GRAPH_SEND_FIELD, split)
        return request

    def _error_of(self, task: str, future: Any) -> OpError | None:
        """The RunGraph's error, kept without the frames it was raised through."""
        try:
            self.calls.result(task, "RunGraph", future)
        except OpError as e:
            return e.with_traceback(None)
        except Exception as e:  # noqa: BLE001  (a callback must never raise)
            return as_op_error(e).with_traceback(None)
        return None

    @staticmethod
    def _fetches(futures: list[tuple[RegisteredPartition, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for part, future in futures:
            received = wire.named_tensors(future.result())
            for endpoint, key in part.plan.fetch_keys.items():
                if key not in received:
                    raise AbortedError(
                        f"{part.plan.task} did not return {endpoint} (rendezvous key {key})"
                    )
                out[endpoint] = received[key]
        return out

    def _abort(self, step_id: int, tasks: Sequence[str]) -> list[Any]:
        """CleanupGraph on `tasks`, which aborts the step's rendezvous there; the calls'
        futures (errors are ignored: the final cleanup retries)."""
        futures = []
        for task in tasks:
            try:
                futures.append(
                    self.calls.future(
                        task, "CleanupGraph", worker_pb2.CleanupGraphRequest(step_id=step_id)
                    )
                )
            except Exception:  # noqa: BLE001  (best effort: the final cleanup retries)
                pass
        return futures


def _hand_off(calls: Sequence[DeferredCall]) -> None:
    for call in calls:
        call.hand_off()


def _unanswered(tasks: Sequence[str], futures: list[tuple[RegisteredPartition, Any]]) -> list[str]:
    """The tasks whose RunGraph has not answered yet (or not been sent): the only ones a
    failed step needs to abort; the final cleanup frees the others."""
    answered = {part.plan.task for part, future in list(futures) if future.done()}
    return [task for task in tasks if task not in answered]


def _merge_metadata(
    futures: list[tuple[RegisteredPartition, Any]],
    metadata: config_pb2.RunMetadata,
    exec_opts: worker_pb2.ExecutorOpts,
) -> None:
    """As TF's ReffedClientGraph::ProcessStats: every partition's DeviceStepStats,
    cost graph nodes and partition graphs, concatenated in partition order."""
    for _, future in futures:
        response = future.result()
        if exec_opts.record_timeline:
            metadata.step_stats.dev_stats.extend(response.step_stats.dev_stats)
        metadata.cost_graph.node.extend(response.cost_graph.node)
        metadata.partition_graphs.extend(response.partition_graph)
