"""Master, process edge: a gRPC server hosting one Master (TF's GrpcServer, master half).

`MasterServer(cluster, ...)` binds the cluster file's master address (or `bind_host` /
`port` overrides; port 0 picks a free port, reported by `.address`), `start()` serves
MasterService under /tensorflow.MasterService and /dataflow.MasterService (and, for our
clients on this host, on a Unix socket found through /dataflow.MasterService/LocalEndpoint:
rpc.local_rpc), `stop()`
closes the sessions (deleting their worker sessions), stops the server with a grace
period and closes the channels to workers. With `in_task` (a WorkerServer) it serves on that
task's gRPC server and port instead of its own (master.task_server: TensorFlow's layout).
start/stop are not reentrant; the running server is safe from any thread.
"""

from __future__ import annotations

import json
import logging
from concurrent import futures
from typing import Any, Protocol

import grpc

from common.cluster import ClusterSpec, split_address
from common.errors import InvalidArgumentError
from common.task_stats import CLUSTER_STATUS_PATH
from master.lease_renewer import DEFAULT_LEASE_S
from master.master import (
    CLIENT_DEVICE,
    DEFAULT_DEVICE,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_RPC_TIMEOUT,
    Master,
)
from master.monitor import Monitor
from master.service import MasterServicer
from master.task_prober import DEFAULT_INTERVAL as DEFAULT_PROBE_INTERVAL
from master.task_prober import TaskProber
from rpc import auth, local_rpc, peer_pings
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import MASTER_METHODS, add_master_servicer

log = logging.getLogger(__name__)

MAX_RPC_THREADS = 96  # master.service.DEFAULT_MAX_STEPS for steps, the rest for control
DEFAULT_GRACE_SECONDS = 5.0


class TaskEndpoint(Protocol):
    """The task whose gRPC server and port a master in that task shares (a
    worker.server.WorkerServer; master.task_server builds the pair)."""

    host: str
    port: int
    bind_host: str

    @property
    def task_name(self) -> str: ...

    @property
    def grpc_server(self) -> grpc.Server: ...


class MasterServer:
    """The master listening on gRPC."""

    def __init__(
        self,
        cluster: ClusterSpec,
        *,
        bind_host: str | None = None,
        port: int | None = None,
        default_device: str = DEFAULT_DEVICE,
        rpc_timeout: float = DEFAULT_RPC_TIMEOUT,
        step_timeout: float | None = None,
        worker_cache: Any = None,
        in_task: TaskEndpoint | None = None,
        monitor: Monitor | None = None,
        session_lease: float = DEFAULT_LEASE_S,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        session_idle_timeout: float | None = None,
    ) -> None:
        self._in_task = in_task
        if in_task is not None:  # TensorFlow's layout: the task's server, its port
            host, file_port = in_task.host, in_task.port
            bind_host = in_task.bind_host
            client_device = f"{in_task.task_name}/device:CPU:0"
        elif cluster.master is None and port is None:
            raise InvalidArgumentError("The cluster has no master address (master: HOST:PORT)")
        else:
            host, file_port = split_address(cluster.master or "127.0.0.1:0", "master")
            client_device = CLIENT_DEVICE
        self.host = host
        self.bind_host = bind_host or host
        self.master = Master(
            cluster,
            worker_cache=worker_cache,
            default_device=default_device,
            rpc_timeout=rpc_timeout,
            step_timeout=step_timeout,
            client_device=client_device,
            monitor=monitor,
            session_lease=session_lease,
            max_sessions=max_sessions,
            session_idle_timeout=session_idle_timeout,
        )
        self.prober: TaskProber | None = None  # start_prober(): the dashboard's task health
        self._pool: futures.ThreadPoolExecutor | None = None
        if in_task is not None:
            self._server = in_task.grpc_server
        else:
            self._pool = futures.ThreadPoolExecutor(
                max_workers=MAX_RPC_THREADS, thread_name_prefix="flowrt-master-rpc"
            )
            self._server = auth.new_server(self._pool, GRPC_OPTIONS)
            peer_pings.advertise(auth.add_health(self._server))
        self._servicer = MasterServicer(self.master)
        add_master_servicer(self._server, self._servicer)
        self._local: local_rpc.LocalServer | None = None
        self._local_endpoint: bytes | None = None
        self._server.add_generic_rpc_handlers(
            (
                grpc.method_handlers_generic_handler(
                    local_rpc.MASTER_ENDPOINT_SERVICE,
                    {
                        local_rpc.ENDPOINT_METHOD: grpc.unary_unary_rpc_method_handler(
                            self._endpoint
                        )
                    },
                ),
            )
        )
        service, method = CLUSTER_STATUS_PATH[1:].split("/")
        self._server.add_generic_rpc_handlers(
            (
                grpc.method_handlers_generic_handler(
                    service,
                    {method: grpc.unary_unary_rpc_method_handler(self._cluster_status)},
                ),
            )
        )
        self._stopped = False
        if in_task is not None:
            self.port = file_port
            return
        want = file_port if port is None else port
        host = f"[{self.bind_host}]" if ":" in self.bind_host else self.bind_host
        target = f"{host}:{want}"
        self.port = auth.add_port(self._server, target, "master")

    @property
    def address(self) -> str:
        """host:port clients dial."""
        host = self.host if self.bind_host in ("0.0.0.0", "::") else self.bind_host
        return f"{host}:{self.port}"

    @property
    def target(self) -> str:
        return f"grpc://{self.address}"

    def start(self) -> MasterServer:
        if local_rpc.enabled():  # our clients on this host: MasterService over a socket
            handlers = local_rpc.unary_handlers(
                self._servicer, MASTER_METHODS, local_rpc.MASTER_BASE
            )
            # Reset is an admin action: only over gRPC, where the admin token is checked.
            handlers.pop(local_rpc.MASTER_METHOD_IDS["Reset"], None)
            # Large feeds and fetches pass through as views, not copies (rpc.wire).
            handlers[local_rpc.MASTER_METHOD_IDS["RunStep"]] = local_rpc.parts_handler(
                self._servicer.RunStepSplit
            )
            self._local = local_rpc.LocalServer(handlers, "master")
            self._local_endpoint = self._local.endpoint()
        if self._in_task is None:
            self._server.start()
        return self

    def _endpoint(self, request: bytes, context: grpc.ServicerContext) -> bytes:
        """Host id NUL socket path of the LocalServer (rpc.local_rpc)."""
        if self._local_endpoint is None:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "no local endpoint")
        return self._local_endpoint

    def start_prober(self, interval: float = DEFAULT_PROBE_INTERVAL) -> TaskProber:
        """Keep the monitor's task health current (the dashboard): every `interval` s."""
        if self.prober is None:
            self.prober = TaskProber(self.master.calls, self.master.monitor, interval).start()
        return self.prober

    def _cluster_status(self, request: bytes, context: grpc.ServicerContext) -> bytes:
        """The monitor's snapshot as JSON (`python -m master status`); tasks probed now
        when no prober keeps them current."""
        if self.prober is None:
            TaskProber(self.master.calls, self.master.monitor).probe_once()
        snapshot = self.master.monitor.snapshot()
        snapshot["master"] = self.address
        return json.dumps(snapshot, separators=(",", ":")).encode()

    def stop(self, grace: float = DEFAULT_GRACE_SECONDS) -> None:
        """Stop serving (grace period), close sessions and channels. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        if self.prober is not None:
            self.prober.stop()
        # In a task the server is the task's: it stops with the task (after this).
        stopped = self._server.stop(grace) if self._in_task is None else None
        if self._local is not None:
            self._local.close(grace, drain=True)
        if stopped is not None:
            stopped.wait()
        self.master.shutdown()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        log.info("master stopped")

    def wait_for_termination(self, timeout: float | None = None) -> bool:
        return self._server.wait_for_termination(timeout)

    def __enter__(self) -> MasterServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
