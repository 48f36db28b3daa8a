"""Worker, process edge: a gRPC server hosting one Worker (TF's GrpcServer, worker half).

`WorkerServer(cluster, job, task)` binds the task's address from the cluster file (or
`bind_host`/`port` overrides; port 0 picks a free port, reported by `.address`), `start()`
serves, `stop()` aborts the steps in flight, stops the server with a grace period and
closes the channels to peers. `start_local_cluster` starts several workers in this
process on free loopback ports (tests, benchmarks). start/stop are not reentrant; the
running server is safe from any thread.
"""

from __future__ import annotations

import logging
from concurrent import futures
from typing import Any

import grpc

from common import task_stats
from common.cluster import ClusterSpec, split_address
from rpc import auth, local_rpc, peer_pings
from rpc.channels import GRPC_OPTIONS
from worker.graph_mgr import DEFAULT_STEP_TIMEOUT
from worker.service import WorkerServicer, add_to_server
from worker.worker import Worker

log = logging.getLogger(__name__)

MAX_RPC_THREADS = 64  # worker.service: MAX_RUN_GRAPHS + MAX_RECVS, 8 for the rest
DEFAULT_GRACE_SECONDS = 5.0


class WorkerServer:
    """One worker task listening on gRPC."""

    def __init__(
        self,
        cluster: ClusterSpec,
        job: str,
        task: int,
        num_cpus: int = 1,
        bind_host: str | None = None,
        port: int | None = None,
        *,
        rpc_timeout: float = 10.0,
        step_timeout: float = DEFAULT_STEP_TIMEOUT,
        partial_idle_timeout: float | None = None,
        intra_op_threads: int = 0,
    ) -> None:
        host, file_port = split_address(cluster.task_address(job, task), f"/job:{job}/task:{task}")
        self.host = host
        self.bind_host = bind_host or host
        self.worker = Worker(
            cluster,
            job,
            task,
            num_cpus=num_cpus,
            rpc_timeout=rpc_timeout,
            step_timeout=step_timeout,
            partial_idle_timeout=partial_idle_timeout,
            intra_op_threads=intra_op_threads,
        )
        self._pool = futures.ThreadPoolExecutor(
            max_workers=MAX_RPC_THREADS, thread_name_prefix=f"flowrt-{job}{task}-rpc"
        )
        self._server = auth.new_server(self._pool, GRPC_OPTIONS)
        peer_pings.advertise(auth.add_health(self._server))
        self._servicer = WorkerServicer(self.worker)
        add_to_server(self._server, self._servicer)
        # The master's monitor asks every task for its figures (common.task_stats).
        service, method = task_stats.TASK_STATS_PATH[1:].split("/")
        self._server.add_generic_rpc_handlers(
            (
                grpc.method_handlers_generic_handler(
                    service,
                    {method: grpc.unary_unary_rpc_method_handler(task_stats.task_stats_handler)},
                ),
            )
        )
        self._local: local_rpc.LocalServer | None = None
        want = file_port if port is None else port
        target = (
            f"[{self.bind_host}]:{want}" if ":" in self.bind_host else f"{self.bind_host}:{want}"
        )
        self.port = auth.add_port(self._server, target, self.worker.task_name)
        self._started = False
        self._stopped = False

    @property
    def address(self) -> str:
        """host:port peers dial (the cluster file's host, the port actually bound)."""
        host = self.host if self.bind_host in ("0.0.0.0", "::") else self.bind_host
        return f"{host}:{self.port}"

    @property
    def task_name(self) -> str:
        return self.worker.task_name

    @property
    def grpc_server(self) -> grpc.Server:
        """The gRPC server; a master in this task adds its services before `start`."""
        return self._server

    def start(self) -> WorkerServer:
        if local_rpc.enabled():  # same-host peers: RunGraph / RecvTensor over a socket
            self._local = local_rpc.LocalServer(
                self._servicer.local_handlers(),
                f"{self.worker.job}{self.worker.task}",
                self._servicer.local_message_handlers(),
            )
            self._servicer.local_endpoint = self._local.endpoint()
        self._server.start()
        self._started = True
        log.debug("worker %s listening on %s", self.task_name, self.address)
        return self

    def set_cluster(self, cluster: ClusterSpec) -> None:
        self.worker.set_cluster(cluster)

    def stop(self, grace: float = DEFAULT_GRACE_SECONDS) -> None:
        """Abort steps in flight, stop serving (grace period), close channels. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        self.worker.shutdown()
        if self._local is not None:
            self._local.close()
        self._server.stop(grace).wait()
        self._pool.shutdown(wait=True)
        log.info("worker %s stopped", self.task_name)

    def wait_for_termination(self, timeout: float | None = None) -> bool:
        return self._server.wait_for_termination(timeout)

    def __enter__(self) -> WorkerServer:  # noqa: PYI034 - py3.10 has no typing.Self
        return self if self._started else self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_local_cluster(
    jobs: dict[str, int], num_cpus: int = 1, host: str = "127.0.0.1", **kwargs: Any
) -> tuple[ClusterSpec, list[WorkerServer]]:
    """Start `jobs[job]` worker tasks per job in this process on free ports of `host`;
    returns the cluster (with the bound addresses) and the servers, in task order."""
    spec = ClusterSpec.from_dict({"jobs": {job: [f"{host}:0"] * n for job, n in jobs.items()}})
    servers = [
        WorkerServer(spec, job, i, num_cpus, **kwargs) for job, n in jobs.items() for i in range(n)
    ]
    for s in servers:
        spec = spec.with_address(s.worker.job, s.worker.task, s.address)
    for s in servers:
        s.set_cluster(spec)
        s.start()
    return spec, servers
