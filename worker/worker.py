"""Worker: what a worker task does for the master and its peers (TF's Worker / WorkerSession).

The logic behind every WorkerService RPC, free of gRPC: GetStatus (the task's devices
with their incarnations), Create/DeleteWorkerSession (one GraphMgr per session; requests
without create_worker_session_called use the legacy session ""), Register/Deregister
Graph, RunGraph (traced when asked: step stats and partition graphs), CleanupGraph (drop
a step's rendezvous), CleanupAll (clear resource containers on every device), and
RecvTensor (a peer pulls a tensor this task sent).
Devices, their ResourceMgrs (variables) and the step table are shared by all sessions.
Thread-safe: one lock guards the session table; the rest guard themselves.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from common import device_name, metrics, op_policy
from common.cluster import ClusterSpec, task_name
from common.device import Device, make_local_devices
from common.errors import (
    AbortedError,
    CancelledError,
    DeadlineExceededError,
    InvalidArgumentError,
    OpError,
)
from common.executor import StepStatsCollector
from common.rendezvous import RecvCallback, parse_key
from common.resource_mgr import DEFAULT_CONTAINER
from rpc.channels import CHANNEL_OPTIONS
from rpc.recv_tensor import RecvTensorClient
from rpc.worker_cache import WorkerCache, canonical_task
from worker.graph_mgr import DEFAULT_STEP_TIMEOUT, GraphMgr
from worker.remote_rendezvous import RemoteRendezvous
from worker.rendezvous_mgr import RendezvousMgr
from worker.session_leases import SessionLeases

log = logging.getLogger(__name__)

LEGACY_SESSION = ""
SWEEP_SECONDS = 0.5  # how often expired session leases are looked for


class Worker:
    """One task of the cluster: /job:J/replica:0/task:T with `num_cpus` CPU devices."""

    def __init__(
        self,
        cluster: ClusterSpec,
        job: str,
        task: int,
        *,
        num_cpus: int = 1,
        devices: Sequence[Device] | None = None,
        rpc_timeout: float = 10.0,
        step_timeout: float = DEFAULT_STEP_TIMEOUT,
        partial_idle_timeout: float | None = None,
        intra_op_threads: int = 0,
    ) -> None:
        cluster.task_address(job, task)  # NotFound if this task is not in the cluster
        self.job = job
        self.task = task
        self.task_name = task_name(job, task)
        self.devices = (
            list(devices) if devices is not None else make_local_devices(job, 0, task, num_cpus)
        )
        self.rpc_timeout = rpc_timeout
        self.step_timeout = step_timeout
        self.partial_idle_timeout = partial_idle_timeout  # None: step_timeout (GraphMgr)
        # The task's own intra-op pool size, fixed at start-up as TF's server takes it from
        # ServerDef.default_session_config (0: one per CPU). Every session's kernels shard
        # for this pool, whatever the client's ConfigProto says (common.ops.random.shard).
        self.intra_op_threads = max(0, intra_op_threads)
        self.worker_cache = WorkerCache(cluster, CHANNEL_OPTIONS)
        self.recv_client = RecvTensorClient(self.worker_cache, timeout=step_timeout)
        self.rendezvous_mgr = RendezvousMgr(self._new_rendezvous, expiry_seconds=2 * step_timeout)
        self._lock = threading.Lock()
        self._sessions: dict[str, GraphMgr] = {LEGACY_SESSION: self._new_graph_mgr()}
        self._shutdown = False
        self.leases = SessionLeases()
        self._sweeper: threading.Thread | None = None
        self._stop_sweeper = threading.Event()

    def _new_rendezvous(self, step_id: int) -> RemoteRendezvous:
        return RemoteRendezvous(step_id, self.task_name, self.recv_client)

    def _new_graph_mgr(self, isolate_session_state: bool = False) -> GraphMgr:
        devices = self.devices
        if isolate_session_state:  # same devices, but the session's own ResourceMgrs
            devices = [
                Device(d.name, d.device_type, d.incarnation, d.memory_limit) for d in devices
            ]
        return GraphMgr(
            devices,
            self.rendezvous_mgr,
            self.step_timeout,
            self.partial_idle_timeout,
            intra_op_threads=self.intra_op_threads,
        )

    def set_cluster(self, cluster: ClusterSpec) -> None:
        """New peer addresses (in-process clusters bound on port 0)."""
        self.worker_cache.set_cluster(cluster)

    # -- status and sessions ---------------------------------------------------------------
    def get_status(self) -> list[Any]:
        """DeviceAttributes of every local device."""
        return [d.attributes() for d in self.devices]

    def create_worker_session(
        self,
        session_handle: str,
        isolate_session_state: bool = False,
        master_task: str = "",
        master_incarnation: int = 0,
    ) -> None:
        """A session's GraphMgr. With `isolate_session_state` its variables live in
        resource managers of its own (sessions do not see each other's state, and they
        are gone with the session); otherwise they are the devices' shared ones. The
        sessions of an older incarnation of `master_task` are dropped (it restarted:
        worker.session_leases)."""
        if not session_handle:
            raise InvalidArgumentError("CreateWorkerSession: empty session_handle")
        with self._lock:
            self._check_running()
            if session_handle not in self._sessions:
                self._sessions[session_handle] = self._new_graph_mgr(isolate_session_state)
        for stale in self.leases.created(session_handle, master_task, master_incarnation):
            log.warning("%s restarted: dropping its old session %s", master_task, stale)
            self.delete_worker_session(stale)

    def keepalive_sessions(self, lease_s: float, handles: Sequence[str]) -> None:
        """Our master renews its sessions' leases (worker.session_leases); sessions it
        stops renewing are dropped once their lease ends."""
        self.leases.renew(lease_s, handles)
        with self._lock:
            if self._sweeper is None and not self._shutdown:
                self._sweeper = threading.Thread(
                    target=self._sweep, name=f"flowrt-leases-{self.job}{self.task}", daemon=True
                )
                self._sweeper.start()

    def _sweep(self) -> None:
        while not self._stop_sweeper.wait(SWEEP_SECONDS):
            for handle in self.leases.expired():
                log.warning("session %s: its master stopped renewing it; dropping it", handle)
                self.delete_worker_session(handle)

    def delete_worker_session(self, session_handle: str) -> None:
        """Drops the session's graphs (no error for an unknown handle, as TF)."""
        if session_handle == LEGACY_SESSION:
            return
        self.leases.deleted(session_handle)
        with self._lock:
            mgr = self._sessions.pop(session_handle, None)
        if mgr is not None:  # partial runs the master never finished
            for step_id in mgr.partial_step_ids():
                mgr.abort_partial(step_id)
            mgr.drop_graphs()

    def session_handles(self) -> list[str]:
        with self._lock:
            return sorted(h for h in self._sessions if h != LEGACY_SESSION)

    def graph_mgr(self, session_handle: str, create_worker_session_called: bool) -> GraphMgr:
        """The GraphMgr a request addresses (AbortedError for an unknown session)."""
        handle = session_handle if create_worker_session_called else LEGACY_SESSION
        with self._lock:
            self._check_running()
            mgr = self._sessions.get(handle)
        if mgr is None:
            raise AbortedError(
                f"Session handle is not found: {session_handle}. Possibly, this worker "
                f"({self.task_name}) just restarted."
            )
        return mgr

    def _check_running(self) -> None:
        if self._shutdown:
            raise AbortedError(f"Worker {self.task_name} is shutting down")

    # -- graphs and steps ------------------------------------------------------------------
    def register_graph(
        self, session_handle: str, create_worker_session_called: bool, graph_def: Any
    ) -> str:
        op_policy.check_graph_def(graph_def)
        return self.graph_mgr(session_handle, create_worker_session_called).register(graph_def)

    def deregister_graph(
        self, session_handle: str, create_worker_session_called: bool, graph_handle: str
    ) -> None:
        self.graph_mgr(session_handle, create_worker_session_called).deregister(graph_handle)

    def run_graph(
        self,
        session_handle: str,
        create_worker_session_called: bool,
        graph_handle: str,
        step_id: int,
        sends: Sequence[tuple[str, Any]] = (),
        recv_keys: Sequence[str] = (),
        timeout: float | None = None,
        *,
        is_partial: bool = False,
        is_last_partial_run: bool = False,
        collector: StepStatsCollector | None = None,
    ) -> dict[str, tuple[Any, bool]]:
        """{recv key: (value, is_dead)}; a `collector` traces the step (GraphMgr.run).
        Counted and timed (common.metrics), whichever transport brought the call."""
        with metrics.worker_step():
            mgr = self.graph_mgr(session_handle, create_worker_session_called)
            return mgr.run(
                graph_handle,
                step_id,
                sends,
                recv_keys,
                timeout,
                is_partial=is_partial,
                is_last_partial_run=is_last_partial_run,
                collector=collector,
            )

    def partition_graphs(
        self, session_handle: str, create_worker_session_called: bool, graph_handle: str
    ) -> list[Any]:
        """The GraphDefs a registered graph runs, one per local device."""
        mgr = self.graph_mgr(session_handle, create_worker_session_called)
        return mgr.partition_graphs(graph_handle)

    def cost_graph(
        self,
        session_handle: str,
        create_worker_session_called: bool,
        graph_handle: str,
        collector: StepStatsCollector,
    ) -> Any:
        """The CostGraphDef of a step the collector recorded (ExecutorOpts.record_costs)."""
        mgr = self.graph_mgr(session_handle, create_worker_session_called)
        return mgr.cost_graph(graph_handle, collector)

    def cleanup_graph(self, step_id: int) -> None:
        """Abort and forget the step (tombstoned: late RecvTensor/RunGraph get Aborted)."""
        self.rendezvous_mgr.cleanup(step_id)
        with self._lock:
            mgrs = list(self._sessions.values())
        for mgr in mgrs:
            mgr.abort_partial(step_id)

    def cleanup_all(self, containers: Sequence[str]) -> None:
        """Clear resource containers (empty = the default one) on every device, the
        isolated sessions' too."""
        with self._lock:
            mgrs = list(self._sessions.values())
        resource_mgrs = {id(d.resource_mgr): d.resource_mgr for d in self.devices}
        for mgr in mgrs:
            resource_mgrs.update((id(d.resource_mgr), d.resource_mgr) for d in mgr.devices.values())
        for resource_mgr in resource_mgrs.values():
            for container in containers or [DEFAULT_CONTAINER]:
                resource_mgr.cleanup(container)

    # -- tensors for peers -----------------------------------------------------------------
    def recv_tensor_async(self, step_id: int, key: str, done: RecvCallback) -> None:
        """Deliver a tensor sent on this task under `key` in step `step_id`: now if it
        was sent, else when it is (the request is parked, possibly before RunGraph)."""
        parsed = parse_key(key)
        if canonical_task(parsed.src_device) != self.task_name:
            raise InvalidArgumentError(
                f"RecvTensor for {key}: source device {parsed.src_device} is not on "
                f"{self.task_name}"
            )
        self._check_incarnation(parsed.src_device, parsed.src_incarnation, key)
        self.rendezvous_mgr.find_or_create(step_id).recv_local_async(key, done)

    def recv_tensor(
        self,
        step_id: int,
        key: str,
        timeout: float | None = None,
        on_cancel: Callable[[Callable[[], None]], Any] | None = None,
    ) -> tuple[Any, bool]:
        """Blocking recv_tensor_async with a deadline; `on_cancel(fn)` registers a hook
        that ends the wait early (the RPC was cancelled)."""
        event = threading.Event()
        box: list[tuple[Any, bool, OpError | None]] = []

        def done(value: Any, is_dead: bool, error: OpError | None) -> None:
            box.append((value, is_dead, error))
            event.set()

        self.recv_tensor_async(step_id, key, done)
        if on_cancel is not None:
            on_cancel(event.set)
        wait = self.step_timeout if timeout is None else min(timeout, self.step_timeout)
        if not event.wait(wait):
            raise DeadlineExceededError(
                f"RecvTensor {key} (step {step_id}) on {self.task_name} timed out"
            )
        if not box:
            raise CancelledError(f"RecvTensor {key} (step {step_id}) cancelled")
        value, is_dead, error = box[0]
        if error is not None:
            raise error
        return value, is_dead

    def _check_incarnation(self, device: str, incarnation: int, key: str) -> None:
        for d in self.devices:
            if d.name == device_name.canonical(device):
                if d.incarnation & ((1 << 64) - 1) != incarnation:
                    raise AbortedError(
                        f"RecvTensor expects a different device incarnation: {incarnation:016x}"
                        f" vs. {d.incarnation:016x}. Your worker job ({self.task_name}) was "
                        f"probably restarted. Check your worker job for the reason why it "
                        f"was restarted. Key: {key}"
                    )
                return
        raise InvalidArgumentError(f"RecvTensor for {key}: no device {device} on this worker")

    # -- shutdown --------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Abort every step in flight and close the channels to peers."""
        with self._lock:
            self._shutdown = True
            sweeper = self._sweeper
        self._stop_sweeper.set()
        if sweeper is not None:
            sweeper.join()
        self.rendezvous_mgr.abort_all(AbortedError(f"Worker {self.task_name} is shutting down"))
        with self._lock:
            mgrs = list(self._sessions.values())
        for mgr in mgrs:  # partial runs: executors stopped above; free them and their timers
            for step_id in mgr.partial_step_ids():
                mgr.abort_partial(step_id)
        self.recv_client.close()
        self.worker_cache.close()
