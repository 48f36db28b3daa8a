"""Master, session lifecycle (TensorFlow's Master): the sessions table and every
MasterService operation, free of gRPC types on its API except the protos it passes through.

CreateSession discovers the cluster's devices (GetStatus on every task, in parallel) and
creates a worker session on every task; CloseSession deletes them. RunStep de-duplicates
retries by (session, request_id) (master.retry_cache; TensorFlow's client re-sends an
identical request on UNAVAILABLE): a retry of a step in flight waits for it, a retry of a
finished step gets its answer, a reused id with a different request is an InvalidArgument.
Reset clears containers on every worker (CleanupAll) and closes every session.

Thread-safe: one lock guards the tables; sessions serialize their own state.
"""

from __future__ import annotations

import copy
import functools
import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

from common import device_name, metrics, op_policy
from common.cluster import ClusterSpec
from common.device_name import parse as parse_device
from common.errors import (
    AbortedError,
    InvalidArgumentError,
    OpError,
    ResourceExhaustedError,
    as_op_error,
)
from common.subgraph import DeviceInfo
from master.lease_renewer import DEFAULT_LEASE_S, LeaseRenewer
from master.master_session import DeviceEntry, MasterSession, task_of
from master.monitor import Monitor
from master.partition_runner import PartitionRunner, new_id
from master.retry_cache import RetryCache, fingerprint
from protos import (
    config_pb2,
    device_attributes_pb2,
    graph_pb2,
    tensor_pb2,
    tensorflow_server_pb2,
    worker_pb2,
)
from rpc import wire
from rpc.worker_calls import WorkerCalls

log = logging.getLogger(__name__)

CLIENT_DEVICE = "/job:master/replica:0/task:0/device:CPU:0"
DEFAULT_DEVICE = "/job:worker/task:0"
DEFAULT_MAX_SESSIONS = 1000
DEFAULT_RPC_TIMEOUT = 30.0


class Master:
    """All sessions of one master process."""

    def __init__(
        self,
        cluster: ClusterSpec,
        *,
        worker_cache: Any = None,
        default_device: str = DEFAULT_DEVICE,
        rpc_timeout: float = DEFAULT_RPC_TIMEOUT,
        step_timeout: float | None = None,
        client_device: str = CLIENT_DEVICE,
        monitor: Monitor | None = None,
        session_lease: float = DEFAULT_LEASE_S,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        session_idle_timeout: float | None = None,
    ) -> None:
        # Open sessions are bounded; one unused for `session_idle_timeout` seconds is
        # closed at the next CreateSession (TensorFlow's session_gc_seconds).
        self.max_sessions = max_sessions
        self.session_idle_timeout = session_idle_timeout or None
        self._last_used: dict[str, float] = {}
        if worker_cache is None:
            from rpc.channels import GRPC_OPTIONS
            from rpc.worker_cache import WorkerCache

            worker_cache = WorkerCache(cluster, GRPC_OPTIONS)
        parse_device(default_device)  # InvalidArgument if malformed
        self.cluster = cluster
        self.worker_cache = worker_cache
        self.calls = WorkerCalls(worker_cache, rpc_timeout)
        self.default_device = default_device
        self.step_timeout = step_timeout or None
        self.client_device = DeviceInfo(client_device, new_id(64))
        # What the dashboard and the status command show; always kept (bounded, cheap).
        self.monitor = monitor if monitor is not None else Monitor()
        self._lock = threading.Lock()
        self._sessions: dict[str, MasterSession] = {}
        # Workers drop this master's sessions once it stops renewing them (it died).
        self._leases = (
            LeaseRenewer(session_lease, self._sessions_by_task, worker_cache.channel)
            if session_lease
            else None
        )
        self._retries = RetryCache()

    def set_cluster(self, cluster: ClusterSpec) -> None:
        """New task addresses (in-process clusters learn their ports after binding)."""
        self.cluster = cluster
        self.worker_cache.set_cluster(cluster)

    # -- devices ---------------------------------------------------------------------------
    def _discover(self, filters: Sequence[str] = ()) -> list[DeviceEntry]:
        """The devices of every task, or with `filters` (ConfigProto.device_filters) of
        the tasks a filter names, the devices matching one (GetStatus in parallel; waits
        for tasks still starting). As in TensorFlow, a task no filter names is not
        contacted: a session that does not need a dead or unreachable task starts at once."""
        specs = [parse_device(f) for f in filters]
        tasks = [t for t in self.cluster.task_names() if _task_wanted(t, specs)]
        if not tasks:
            raise InvalidArgumentError(
                f"No task of the cluster matches the device filters {list(filters)}"
            )
        responses = self.calls.call_all(
            {t: worker_pb2.GetStatusRequest() for t in tasks}, "GetStatus", wait_for_ready=True
        )
        return [
            DeviceEntry(d.name, d.device_type, d.incarnation, task_of(d.name))
            for t in tasks
            for d in responses[t].device_attributes
            if not specs or any(device_name.matches(spec, d.name) for spec in specs)
        ]

    # -- sessions --------------------------------------------------------------------------
    def create_session(
        self, graph_def: graph_pb2.GraphDef, config: config_pb2.ConfigProto
    ) -> tuple[str, int]:
        op_policy.check_graph_def(graph_def)
        self._close_idle_sessions()
        with self._lock:
            if len(self._sessions) >= self.max_sessions:
                raise ResourceExhaustedError(
                    f"The master has {len(self._sessions)} open sessions, its limit "
                    "(--max-sessions): close sessions first"
                )
        handle = f"{new_id(64):016x}"
        devices = self._discover(config.device_filters)
        session = MasterSession(
            handle,
            config,
            devices,
            self.client_device,
            PartitionRunner(self.calls, handle),
            self.default_device,
            self.step_timeout,
            on_placed=(
                functools.partial(self.monitor.graph_placed, handle)
                if self.monitor.keep_graphs
                else None
            ),
        )
        session.create(graph_def)
        self._create_worker_sessions(handle, session.tasks, config)
        with self._lock:
            self._sessions[handle] = session
            self._last_used[handle] = time.monotonic()
        metrics.MASTER_SESSIONS.inc()
        self.monitor.session_created(handle, graph_def)
        log.info(
            "created session %s (%d nodes, %d devices)", handle, len(graph_def.node), len(devices)
        )
        return handle, session.graph_version

    def _create_worker_sessions(
        self, handle: str, tasks: Sequence[str], config: config_pb2.ConfigProto
    ) -> None:
        requests = {}
        for task in tasks:
            parsed = parse_device(task)
            requests[task] = worker_pb2.CreateWorkerSessionRequest(
                session_handle=handle,
                server_def=tensorflow_server_pb2.ServerDef(
                    cluster=self.cluster.to_cluster_def(),
                    job_name=parsed.job,
                    task_index=parsed.task,
                    protocol="grpc",
                    default_session_config=config,
                ),
                isolate_session_state=config.isolate_session_state,
                master_task=task_of(self.client_device.name),
                master_incarnation=_signed(self.client_device.incarnation),
            )
        self.calls.call_all(requests, "CreateWorkerSession")

    def session(self, handle: str) -> MasterSession:
        with self._lock:
            session = self._sessions.get(handle)
            if session is not None:
                self._last_used[handle] = time.monotonic()
        if session is None:
            raise AbortedError(f"Session {handle} is not found.")
        return session

    def _close_idle_sessions(self) -> None:
        if self.session_idle_timeout is None:
            return
        cutoff = time.monotonic() - self.session_idle_timeout
        with self._lock:
            idle = [h for h, t in self._last_used.items() if t < cutoff and h in self._sessions]
            sessions = [self._sessions.pop(h) for h in idle]
        for session in sessions:
            log.info(
                "closing session %s: unused for %g s (--session-idle-timeout)",
                session.handle,
                self.session_idle_timeout,
            )
            self._close(session)

    def extend_session(
        self, handle: str, graph_def: graph_pb2.GraphDef, current_version: int
    ) -> int:
        op_policy.check_graph_def(graph_def)
        version = self.session(handle).extend(graph_def, current_version)
        self.monitor.session_extended(handle, graph_def)
        return version

    def close_session(self, handle: str) -> None:
        with self._lock:
            session = self._sessions.pop(handle, None)
        if session is None:
            raise AbortedError(
                f"Session {handle} is not found. Possibly, this master has restarted."
            )
        self._close(session)

    def _close(self, session: MasterSession) -> None:
        """Close a session just removed from the table."""
        metrics.MASTER_SESSIONS.dec()
        self._retries.forget_session(session.handle)
        with self._lock:
            self._last_used.pop(session.handle, None)
        self.monitor.session_closed(session.handle)
        session.close()
        requests = {
            t: worker_pb2.DeleteWorkerSessionRequest(session_handle=session.handle)
            for t in session.tasks
        }
        try:
            self.calls.call_all(requests, "DeleteWorkerSession")
        except OpError as e:  # a dead worker has no session state left
            log.warning("closing session %s: %s", session.handle, e.message)
        log.info("closed session %s", session.handle)

    def _sessions_by_task(self) -> dict[str, list[str]]:
        """task -> handles of the open sessions with a worker session there."""
        by_task: dict[str, list[str]] = {}
        with self._lock:
            for handle, session in self._sessions.items():
                for task in session.tasks:
                    by_task.setdefault(task, []).append(handle)
        return by_task

    def session_handles(self) -> list[str]:
        with self._lock:
            return sorted(self._sessions)

    # -- steps -----------------------------------------------------------------------------
    def run_step(
        self,
        handle: str,
        feeds: Sequence[tuple[str, wire.Tensor]],
        fetches: Sequence[str],
        targets: Sequence[str],
        options: Any = None,
        partial_run_handle: str = "",
        request_id: int = 0,
        metadata: config_pb2.RunMetadata | None = None,
    ) -> dict[str, wire.Tensor]:
        """One step; {fetch name as requested: value}. Retries (same request_id) share it
        (the step's trace, if asked for, goes to the first request's `metadata`). Feeds
        and fetches may be views of the bytes they came in (wire.SplitTensor)."""
        if not request_id:
            return self._run_step(
                handle, feeds, fetches, targets, options, partial_run_handle, metadata
            )
        digest = fingerprint(feeds, fetches, targets, options, partial_run_handle)
        future, owner = self._retries.claim((handle, request_id), digest)
        if not owner:
            try:
                return future.result()
            except OpError as e:
                raise copy.copy(e) from None  # the cached error stays without a traceback
        try:
            result = self._run_step(
                handle, feeds, fetches, targets, options, partial_run_handle, metadata
            )
        except Exception as e:  # noqa: BLE001  (retries must never wait forever)
            error = as_op_error(e)
            # A copy without the traceback: the cache must not keep the failed step's
            # frames (its RunGraph futures, errors and requests) alive.
            future.set_exception(copy.copy(error))
            raise error from None
        future.set_result(result)
        return result

    def _run_step(
        self,
        handle: str,
        feeds: Sequence[tuple[str, wire.Tensor]],
        fetches: Sequence[str],
        targets: Sequence[str],
        options: Any,
        partial_run_handle: str,
        metadata: config_pb2.RunMetadata | None,
    ) -> dict[str, wire.Tensor]:
        """One step (a retry never gets here): counted and timed (common.metrics), and
        recorded by the monitor (a sample of untraced steps is traced for it)."""
        kind = "partial" if partial_run_handle else "run"
        options, metadata, private = self._maybe_trace(options, metadata, partial_run_handle)
        recorded = list(fetches) or list(targets)
        with (
            self.monitor.step(handle, kind, recorded, private or metadata),
            metrics.master_step(),
        ):
            session = self.session(handle)
            feed_map: dict[str, wire.Tensor] = {}
            for name, value in feeds:
                if name in feed_map:
                    raise InvalidArgumentError(f'Endpoint "{name}" fed more than once.')
                feed_map[name] = value
            fetches = list(dict.fromkeys(fetches))  # a fetch listed twice runs once
            if partial_run_handle:
                whole = {name: wire.whole(value) for name, value in feed_map.items()}
                out = session.partial_run(partial_run_handle, whole, fetches, options, metadata)
                return dict[str, wire.Tensor](out)
            return session.run(feed_map, fetches, targets, options, metadata)

    def _maybe_trace(
        self, options: Any, metadata: config_pb2.RunMetadata | None, partial: str
    ) -> tuple[Any, config_pb2.RunMetadata | None, config_pb2.RunMetadata | None]:
        """(options, metadata, private metadata): for a step the monitor samples, options
        that trace it into a RunMetadata the client never sees."""
        asked = options is not None and options.trace_level > config_pb2.RunOptions.NO_TRACE
        if asked or partial or not self.monitor.want_trace():
            return options, metadata, None
        traced = config_pb2.RunOptions()
        if options is not None:
            traced.CopyFrom(options)
        traced.trace_level = config_pb2.RunOptions.SOFTWARE_TRACE
        private = config_pb2.RunMetadata()
        return traced, private, private

    def partial_run_setup(
        self, handle: str, feeds: Sequence[str], fetches: Sequence[str], targets: Sequence[str]
    ) -> str:
        return self.session(handle).partial_run_setup(feeds, fetches, targets)

    def make_callable(self, handle: str, options: config_pb2.CallableOptions) -> int:
        return self.session(handle).make_callable(options)

    def run_callable(
        self,
        handle: str,
        callable_handle: int,
        feeds: Sequence[tensor_pb2.TensorProto],
        metadata: config_pb2.RunMetadata | None = None,
    ) -> list[tensor_pb2.TensorProto]:
        recorded = [f"callable {callable_handle}"]
        with self.monitor.step(handle, "callable", recorded, metadata), metrics.master_step():
            return self.session(handle).run_callable(callable_handle, feeds, metadata)

    def release_callable(self, handle: str, callable_handle: int) -> None:
        self.session(handle).release_callable(callable_handle)

    # -- cluster-wide ----------------------------------------------------------------------
    def list_devices(
        self, handle: str = ""
    ) -> tuple[
        list[device_attributes_pb2.DeviceAttributes], list[device_attributes_pb2.DeviceAttributes]
    ]:
        """(local devices, remote devices): the devices of the task this master runs in
        (none for a master of its own: it runs no ops, so it lists no device), and every
        other task's devices."""
        if handle:
            entries = self.session(handle).devices
        else:
            entries = self._discover()
        own = task_of(self.client_device.name)
        local: list[device_attributes_pb2.DeviceAttributes] = []
        remote: list[device_attributes_pb2.DeviceAttributes] = []
        for d in entries:
            (local if d.task == own else remote).append(
                device_attributes_pb2.DeviceAttributes(
                    name=d.name,
                    device_type=d.device_type,
                    memory_limit=256 << 20,
                    incarnation=d.incarnation,
                )
            )
        return local, remote

    def reset(self, containers: Sequence[str]) -> None:
        """Close every session and clear `containers` (default: "") on every worker."""
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for session in sessions:
            self._close(session)
        requests = {
            t: worker_pb2.CleanupAllRequest(container=list(containers))
            for t in self.cluster.task_names()
        }
        self.calls.call_all(requests, "CleanupAll", wait_for_ready=True)

    def shutdown(self) -> None:
        """Close every session (best effort) and the channels to workers."""
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        if self._leases is not None:
            self._leases.close()
        for session in sessions:
            self._close(session)
        self.calls.close()  # pending background CleanupGraphs, then the channels
        self.worker_cache.close()


def _task_wanted(task: str, specs: Sequence[device_name.DeviceName]) -> bool:
    """Whether some device filter can match a device of `task` (no filters: all can)."""
    if not specs:
        return True
    t = parse_device(task)
    return any(
        (s.job is None or s.job == t.job)
        and (s.replica is None or s.replica == t.replica)
        and (s.task is None or s.task == t.task)
        for s in specs
    )


def _signed(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value
