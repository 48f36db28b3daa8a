"""Client, training: tf.train.ClusterSpec and tf.train.Server.

ClusterSpec is TensorFlow's description of a cluster (jobs -> task index -> address),
convertible to a dict and a ClusterDef. Server starts one task of such a cluster in this
process (its WorkerService and a MasterService on one port, as TF's GrpcServer does):
`tf.Session(server.target)` then runs steps through it, and between-graph replication
runs one such server plus one client per task. Server is thread-safe once started."""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any

from protos import cluster_pb2, tensorflow_server_pb2


def _is_cluster_def(value: Any) -> bool:
    descriptor = getattr(value, "DESCRIPTOR", None)
    return getattr(descriptor, "full_name", None) == "tensorflow.ClusterDef"


class ClusterSpec:
    """Jobs of a cluster: {job: [address, ...]} or {job: {task index: address}}."""

    def __init__(self, cluster: Any) -> None:
        self._cluster_spec: dict[str, dict[int, str]] = {}
        if _is_cluster_def(cluster) and not isinstance(cluster, cluster_pb2.ClusterDef):
            # TensorFlow's own ClusterDef class: the same message, another module.
            cluster = cluster_pb2.ClusterDef.FromString(cluster.SerializeToString())
        if isinstance(cluster, ClusterSpec):
            self._cluster_spec = {j: dict(t) for j, t in cluster._cluster_spec.items()}
        elif isinstance(cluster, cluster_pb2.ClusterDef):
            for job in cluster.job:
                if job.name in self._cluster_spec:
                    raise ValueError(f"Duplicate job name in cluster_def: {job.name}")
                self._cluster_spec[job.name] = dict(job.tasks)
        elif isinstance(cluster, Mapping):
            for job, tasks in cluster.items():
                if isinstance(tasks, (list, tuple)):
                    self._cluster_spec[job] = dict(enumerate(tasks))
                elif isinstance(tasks, Mapping):
                    self._cluster_spec[job] = {int(i): a for i, a in tasks.items()}
                else:
                    raise TypeError(
                        f"The tasks for job {job!r} must be a list or a dictionary from "
                        "integers to strings."
                    )
        else:
            raise TypeError(
                "`cluster` must be a dictionary mapping one or more job names to lists of "
                "network addresses, or a `ClusterDef` protocol buffer"
            )

    def __bool__(self) -> bool:
        return bool(self._cluster_spec)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClusterSpec) and self._cluster_spec == other._cluster_spec

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __repr__(self) -> str:
        return f"ClusterSpec({self.as_dict()!r})"

    def as_dict(self) -> dict[str, Any]:
        """Per job a list of addresses when its task indices are 0..n-1, else a dict."""
        out: dict[str, Any] = {}
        for job, tasks in self._cluster_spec.items():
            if sorted(tasks) == list(range(len(tasks))):
                out[job] = [tasks[i] for i in range(len(tasks))]
            else:
                out[job] = dict(tasks)
        return out

    def as_cluster_def(self) -> cluster_pb2.ClusterDef:
        cd = cluster_pb2.ClusterDef()
        for job in sorted(self._cluster_spec):
            jd = cd.job.add(name=job)
            for i, addr in sorted(self._cluster_spec[job].items()):
                jd.tasks[i] = addr
        return cd

    @property
    def jobs(self) -> list[str]:
        return list(self._cluster_spec)

    def _job(self, job_name: str) -> dict[int, str]:
        try:
            return self._cluster_spec[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def num_tasks(self, job_name: str) -> int:
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        return sorted(self._job(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        tasks = self._job(job_name)
        if task_index not in tasks:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}")
        return tasks[task_index]

    def job_tasks(self, job_name: str) -> list[str | None]:
        tasks = self._job(job_name)
        out: list[str | None] = [None] * (max(tasks) + 1 if tasks else 0)
        for i, addr in tasks.items():
            out[i] = addr
        return out


def _server_def(
    server_or_cluster_def: Any, job_name: str | None, task_index: int | None, protocol: Any
) -> tensorflow_server_pb2.ServerDef:
    if isinstance(server_or_cluster_def, tensorflow_server_pb2.ServerDef):
        return server_or_cluster_def
    cluster = ClusterSpec(server_or_cluster_def)
    if job_name is None:
        if len(cluster.jobs) != 1:
            raise ValueError("Must specify an explicit `job_name`.")
        job_name = cluster.jobs[0]
    if task_index is None:
        indices = cluster.task_indices(job_name)
        if len(indices) != 1:
            raise ValueError("Must specify an explicit `task_index`.")
        task_index = indices[0]
    return tensorflow_server_pb2.ServerDef(
        cluster=cluster.as_cluster_def(),
        job_name=job_name,
        task_index=task_index,
        protocol=protocol or "grpc",
    )


class Server:
    """An in-process server: one task of a cluster (tf.train.Server)."""

    def __init__(
        self,
        server_or_cluster_def: Any,
        job_name: str | None = None,
        task_index: int | None = None,
        protocol: str | None = None,
        config: Any = None,
        start: bool = True,
    ) -> None:
        self._server_def = _server_def(server_or_cluster_def, job_name, task_index, protocol)
        if self._server_def.protocol not in ("grpc", ""):
            raise ValueError(f"Unsupported protocol: {self._server_def.protocol!r}")
        # The one place the client hosts a runtime task (as TF's Python Server hosts its
        # GrpcServer): imported here so that building graphs never loads the runtime.
        from common.cluster import ClusterSpec as RuntimeClusterSpec
        from master.task_server import TaskServer

        d = self._server_def
        runtime = RuntimeClusterSpec.from_cluster_def(d.cluster)
        address = ClusterSpec(d.cluster).task_address(d.job_name, d.task_index)
        port = int(address.rsplit(":", 1)[1])
        self._task = TaskServer(runtime, d.job_name, d.task_index, port=port)
        self._started = False
        self._stopped = False
        if start:
            self.start()

    def start(self) -> None:
        if not self._started:
            self._task.start()
            self._started = True

    def join(self) -> None:
        """Block until the server stops (TF's join: forever, for a ps task)."""
        self._task.worker.wait_for_termination()

    def stop(self) -> None:
        """Stop serving (our addition: TF's servers live until their process ends)."""
        if self._started and not self._stopped:
            self._stopped = True
            self._task.stop()

    @property
    def server_def(self) -> tensorflow_server_pb2.ServerDef:
        return self._server_def

    @property
    def target(self) -> str:
        return f"grpc://{self._task.address}"

    @staticmethod
    def create_local_server(config: Any = None, start: bool = True) -> Server:
        """A single-task server on a free localhost port."""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        return Server({"localhost": [f"127.0.0.1:{port}"]}, config=config, start=start)
