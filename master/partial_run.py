"""Master, partial runs (TF's MasterSession::PartialRunSetup / DoPartialRun): one step,
fed and fetched piece by piece.

PartialRunSetup registers the client graph of (all feeds, all fetches, targets) and picks
ONE step_id. Every partial RunStep sends RunGraph(is_partial) to every partition with only
the feeds given now (RunGraphRequest.send) and the rendezvous keys of the fetches asked
now (recv_key). Workers start the step's executors at their first such call and keep them
running, so every node (a stateful assign too) runs once per partial run. The call that
completes every pending feed and fetch is marked is_last_partial_run: workers wait for
their executors to finish, and the master then cleans the step up on every task. A failed
call aborts the step everywhere and forgets the partial run.

Thread-safe: one lock guards the handle table; the calls of one partial run are
serialized by that run's own lock.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from collections.abc import Sequence
from typing import Any

from common import dtypes
from common.errors import (
    DeadlineExceededError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    as_op_error,
)
from common.graph.graph import Graph
from common.subgraph import parse_tensor_name
from master.partition_runner import NO_DEADLINE_S, PartitionRunner, RegisteredPartition, new_id
from protos import config_pb2, tensor_pb2, worker_pb2

# How long past the call deadline the master waits for the RunGraph calls themselves.
_GRACE_S = 2.0


@dataclasses.dataclass
class PartialRunState:
    """One partial run: its step, its registered partitions and what is still pending."""

    step_id: int
    parts: list[RegisteredPartition]
    feed_types: dict[str, dtypes.DataType]  # feeds the graph uses -> dtype
    graph: Graph  # the session's full graph, for the "can't be computed" check
    pending_inputs: dict[str, bool]  # feed -> already fed
    pending_outputs: dict[str, bool]  # fetch -> already fetched
    # Traced: the first partial RunStep asked for a trace (RunOptions.trace_level), so
    # every RunGraph records and the last call's answers carry the whole run's stats.
    trace: bool | None = None
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    def pending_done(self) -> bool:
        return all(self.pending_inputs.values()) and all(self.pending_outputs.values())


class PartialRuns:
    """The partial runs of one session."""

    def __init__(self, runner: PartitionRunner, tasks: Sequence[str]) -> None:
        self.runner = runner
        self.tasks = list(tasks)
        self._lock = threading.Lock()
        self._runs: dict[str, PartialRunState] = {}
        self._ids = itertools.count()

    def setup(
        self,
        parts: list[RegisteredPartition],
        feed_types: dict[str, dtypes.DataType],
        graph: Graph,
        feeds: Sequence[str],
        fetches: Sequence[str],
    ) -> str:
        """Start tracking a partial run; its handle ("0", "1", ... as TensorFlow's)."""
        state = PartialRunState(
            new_id(57),
            parts,
            feed_types,
            graph,
            dict.fromkeys(feeds, False),
            dict.fromkeys(fetches, False),
        )
        with self._lock:
            handle = str(next(self._ids))
            self._runs[handle] = state
        return handle

    def run(
        self,
        handle: str,
        feeds: dict[str, tensor_pb2.TensorProto],
        fetches: Sequence[str],
        timeout_s: float | None,
        trace: bool = False,
        metadata: config_pb2.RunMetadata | None = None,
    ) -> dict[str, tensor_pb2.TensorProto]:
        """One partial RunStep; {fetch: value}. The first call's `trace` decides whether
        the run is traced; the last call's `metadata` then gets the run's step stats."""
        with self._lock:
            state = self._runs.get(handle)
        if state is None:
            raise InvalidArgumentError("Must run PartialRunSetup before performing partial runs")
        with state.lock:
            _check_pending(state, feeds, fetches)
            _check_feed_types(state, feeds)
            _check_fetches(state, feeds, fetches)
            for name in feeds:
                state.pending_inputs[name] = True
            for name in fetches:
                state.pending_outputs[name] = True
            is_last = state.pending_done()
            if state.trace is None:
                state.trace = trace
            try:
                out = self._run_partitions(
                    state, feeds, fetches, is_last, timeout_s, metadata if is_last else None
                )
            except Exception as e:
                self._forget(handle)
                self._cleanup(state.step_id)
                raise as_op_error(e) from None
            if is_last:
                self._forget(handle)
                self._cleanup(state.step_id)
            return out

    def _forget(self, handle: str) -> None:
        with self._lock:
            self._runs.pop(handle, None)

    def _run_partitions(
        self,
        state: PartialRunState,
        feeds: dict[str, tensor_pb2.TensorProto],
        fetches: Sequence[str],
        is_last: bool,
        timeout_s: float | None,
        metadata: config_pb2.RunMetadata | None = None,
    ) -> dict[str, tensor_pb2.TensorProto]:
        budget = timeout_s if timeout_s else NO_DEADLINE_S
        calls = self.runner.calls
        futures = []
        for part in state.parts:
            request = self._request(state, part, feeds, fetches, is_last)
            futures.append(
                (part, calls.future(part.plan.task, "RunGraph", request, timeout=budget))
            )
        deadline = time.monotonic() + budget + _GRACE_S
        out: dict[str, tensor_pb2.TensorProto] = {}
        first: OpError | None = None
        for part, future in futures:
            try:
                future.result(timeout=max(0.0, deadline - time.monotonic()))
                response = calls.result(part.plan.task, "RunGraph", future)
            except OpError as e:
                if first is None:
                    self._cleanup(state.step_id)  # the other partitions stop waiting
                first = first or e
                continue
            except Exception:  # noqa: BLE001  (the future's own wait timed out)
                future.cancel()
                first = first or DeadlineExceededError(
                    f"Partial run step {state.step_id} did not finish within {budget:g}s"
                )
                continue
            if metadata is not None and state.trace:
                metadata.step_stats.dev_stats.extend(response.step_stats.dev_stats)
            received = {named.name: named.tensor for named in response.recv}
            for endpoint in fetches:
                key = part.plan.fetch_keys.get(endpoint)
                if key is not None:
                    out[endpoint] = received[key]
        if first is not None:
            raise first
        return out

    def _request(
        self,
        state: PartialRunState,
        part: RegisteredPartition,
        feeds: dict[str, tensor_pb2.TensorProto],
        fetches: Sequence[str],
        is_last: bool,
    ) -> worker_pb2.RunGraphRequest:
        request = worker_pb2.RunGraphRequest(
            session_handle=self.runner.session_handle,
            create_worker_session_called=True,
            graph_handle=part.graph_handle,
            step_id=state.step_id,
            is_partial=True,
            is_last_partial_run=is_last,
            store_errors_in_response_body=True,
            request_id=new_id(),
        )
        if state.trace:
            request.exec_opts.record_timeline = True
        for endpoint, value in feeds.items():
            key = part.plan.feed_keys.get(endpoint)
            if key is not None:
                request.send.add(name=key).tensor.CopyFrom(value)
        request.recv_key.extend(
            part.plan.fetch_keys[ep] for ep in fetches if ep in part.plan.fetch_keys
        )
        return request

    def close(self) -> None:
        """Abort every unfinished partial run (session close)."""
        with self._lock:
            states = list(self._runs.values())
            self._runs.clear()
        for state in states:
            self._cleanup(state.step_id)

    def _cleanup(self, step_id: int) -> None:
        """CleanupGraph(step_id) on every task, waited for (errors ignored: a dead task
        has no step state left to free)."""
        futures = []
        for task in self.tasks:
            try:
                futures.append(
                    self.runner.calls.future(
                        task, "CleanupGraph", worker_pb2.CleanupGraphRequest(step_id=step_id)
                    )
                )
            except Exception:  # noqa: BLE001
                continue
        for future in futures:
            try:
                future.result()
            except Exception:  # noqa: BLE001
                pass


def _check_pending(state: PartialRunState, feeds: dict[str, Any], fetches: Sequence[str]) -> None:
    """As TF's DoPartialRun: feeds and fetches must be declared and still pending."""
    for name in feeds:
        fed = state.pending_inputs.get(name)
        if fed is None:
            raise InvalidArgumentError(f"The feed {name} was not specified in partial_run_setup.")
        if fed:
            raise InvalidArgumentError(f"The feed {name} has already been fed.")
    for name in fetches:
        fetched = state.pending_outputs.get(name)
        if fetched is None:
            raise InvalidArgumentError(f"The fetch {name} was not specified in partial_run_setup.")
        if fetched:
            raise InvalidArgumentError(f"The fetch {name} has already been fetched.")


def _check_feed_types(state: PartialRunState, feeds: dict[str, tensor_pb2.TensorProto]) -> None:
    for endpoint, value in feeds.items():
        want = state.feed_types.get(endpoint)
        if want is not None and value.dtype != want:
            raise InvalidArgumentError(
                f"Cannot feed {endpoint}: the fed value has type "
                f"{dtypes.tf_name(dtypes.DataType(value.dtype))} but the tensor has type "
                f"{dtypes.tf_name(want)}",
                endpoint.split(":")[0],
            )


def _check_fetches(state: PartialRunState, feeds: dict[str, Any], fetches: Sequence[str]) -> None:
    """TF's ReffedClientGraph::CheckFetches: no fetch may depend on a feed still pending
    (not fed before and not fed now)."""
    pending = {
        parse_tensor_name(name)
        for name, fed in state.pending_inputs.items()
        if not fed and name not in feeds
    }
    graph = state.graph
    stack = []
    for fetch in fetches:
        node_name, _ = parse_tensor_name(fetch)
        node = graph.node(node_name)
        if node is None:
            raise NotFoundError(f"Fetch {fetch}: not found")
        stack.append(node)
    visited: set[int] = set()
    while stack:
        node = stack.pop()
        for edge in node.in_edges:
            src = edge.src
            if (src.name, edge.src_output) in pending:
                raise InvalidArgumentError(
                    f"Fetch {src.name}:{edge.src_output} can't be computed from the feeds "
                    "that have been fed so far."
                )
            if src.id not in visited:
                visited.add(src.id)
                stack.append(src)
