"""Master in a task, process edge: one task serving WorkerService AND MasterService on its
one port, as tf.distribute.Server (TensorFlow's GrpcServer) does.

`TaskServer(cluster, job, task)` runs the task's Worker and a Master on one gRPC server
bound to the task's port: a client dials any task (by convention the chief or worker 0)
with `tf.compat.v1.Session("grpc://HOST:PORT")`. The master calls its own task directly
(rpc.local_rpc.share_in_process), places nodes without a device on its own task, as
TensorFlow's master places them on its local device, and lists its task's devices as the
local ones. This is the layout TF_CONFIG deployments (Kubernetes, Kubeflow's TFJob) use;
`python -m server` starts it; `Colocated` is `python -m master --colocate TASK` (a master
on its own port, a worker task in its process). This is the one module of master/ that
imports worker/. start/stop are not reentrant; the running server is safe from any thread.
"""

from __future__ import annotations

import logging
from typing import Any

from common.cluster import ClusterSpec
from master.lease_renewer import DEFAULT_LEASE_S
from master.master import DEFAULT_RPC_TIMEOUT
from master.server import DEFAULT_GRACE_SECONDS, MasterServer
from rpc import local_rpc
from worker.graph_mgr import DEFAULT_STEP_TIMEOUT
from worker.server import WorkerServer

log = logging.getLogger(__name__)


class TaskServer:
    """A worker task and a master on one port."""

    def __init__(
        self,
        cluster: ClusterSpec,
        job: str,
        task: int,
        *,
        num_cpus: int = 1,
        intra_op_threads: int = 0,
        bind_host: str | None = None,
        port: int | None = None,
        default_device: str | None = None,
        rpc_timeout: float = DEFAULT_RPC_TIMEOUT,
        worker_rpc_timeout: float = 10.0,
        step_timeout: float = DEFAULT_STEP_TIMEOUT,
        master_step_timeout: float | None = None,
        partial_idle_timeout: float | None = None,
        worker_cache: Any = None,
        session_lease: float = DEFAULT_LEASE_S,
    ) -> None:
        local_rpc.share_in_process()  # the master calls its own task directly
        self.worker = WorkerServer(
            cluster,
            job,
            task,
            num_cpus,
            bind_host,
            port,
            rpc_timeout=worker_rpc_timeout,
            step_timeout=step_timeout,
            partial_idle_timeout=partial_idle_timeout,
            intra_op_threads=intra_op_threads,
        )
        self.master = MasterServer(
            cluster,
            default_device=default_device or self.worker.task_name,
            rpc_timeout=rpc_timeout,
            step_timeout=master_step_timeout,
            worker_cache=worker_cache,
            in_task=self.worker,
            session_lease=session_lease,
        )

    @property
    def address(self) -> str:
        return self.worker.address

    @property
    def target(self) -> str:
        return f"grpc://{self.address}"

    @property
    def task_name(self) -> str:
        return self.worker.task_name

    @property
    def bind_host(self) -> str:
        return self.worker.bind_host

    def set_cluster(self, cluster: ClusterSpec) -> None:
        """New addresses (in-process clusters on port 0) for the worker and the master."""
        self.worker.set_cluster(cluster)
        self.master.master.set_cluster(cluster)

    def start(self) -> TaskServer:
        self.master.start()  # its socket; the shared gRPC server starts with the worker
        self.worker.start()
        return self

    def stop(self, grace: float = DEFAULT_GRACE_SECONDS) -> None:
        """Close the master's sessions (their worker sessions too), then stop the task."""
        self.master.stop(grace)
        self.worker.stop(grace)

    def __enter__(self) -> TaskServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_local_cluster(
    jobs: dict[str, int], host: str = "127.0.0.1", **kwargs: Any
) -> tuple[ClusterSpec, list[TaskServer]]:
    """`jobs[job]` TaskServers per job in this process on free ports of `host` (tests);
    the cluster with the bound addresses and the servers, in task order."""
    spec = ClusterSpec.from_dict({"jobs": {job: [f"{host}:0"] * n for job, n in jobs.items()}})
    servers = [TaskServer(spec, job, i, **kwargs) for job, n in jobs.items() for i in range(n)]
    for s in servers:
        spec = spec.with_address(s.worker.worker.job, s.worker.worker.task, s.address)
    for s in servers:
        s.set_cluster(spec)
        s.start()
    return spec, servers


class Colocated:
    """`python -m master --colocate TASK`: a master on its own port and one worker task in
    the same process, which the master calls directly; started worker first, stopped
    master first."""

    def __init__(
        self,
        master: MasterServer,
        cluster: ClusterSpec,
        job: str,
        task: int,
        rpc_timeout: float = DEFAULT_RPC_TIMEOUT,
    ) -> None:
        local_rpc.share_in_process()  # the master calls this worker directly
        self.master = master
        self.worker = WorkerServer(cluster, job, task, rpc_timeout=rpc_timeout)

    def start(self) -> None:
        self.worker.start()
        log.info(
            "worker %s listening on %s (in the master's process)",
            self.worker.task_name,
            self.worker.address,
        )
        self.master.start()

    def stop(self, grace: float) -> None:
        self.master.stop(grace)
        self.worker.stop(grace)
