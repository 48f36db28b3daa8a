"""Cluster: which tasks exist and where they listen (the YAML form of TF's ClusterSpec).

Read once at start-up by the worker and master CLIs, the launcher and tests. The file:

    master: HOST:PORT
    jobs:
      worker: [HOST:PORT, HOST:PORT]
      ps: [HOST:PORT]

`layout: tensorflow` (instead of a `master:` address) is TensorFlow's layout: every task is
started with `python -m server` and serves MasterService on its own port too, so clients
dial any task (the chief or worker 0); TF_CONFIG deployments are read into this form
(common.tf_config). TF's dict form ({"worker": [...], "ps": [...]}, no "jobs" key) is
accepted too, and a job's
tasks may be a mapping {task_index: HOST:PORT} (sparse, as TF's JobDef). Port 0 means
"pick a free port" (in-process clusters; the bound address is filled in later with
`with_address`). Validation errors are InvalidArgumentError naming the bad entry.
`ClusterSpec` is a frozen value; safe from any thread.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from typing import Any

from common.errors import InvalidArgumentError, NotFoundError
from protos import cluster_pb2

LAYOUTS = ("master", "tensorflow")
_JOB_NAME = re.compile(r"[A-Za-z]\w*")
_HOST = re.compile(r"[A-Za-z0-9_.\-]+|\[[0-9A-Fa-f:.]+\]")


def split_address(address: str, where: str = "address") -> tuple[str, int]:
    """ "host:port" -> (host, port); InvalidArgumentError naming `where` if malformed."""
    if not isinstance(address, str):
        raise InvalidArgumentError(f"{where}: expected HOST:PORT, got {address!r}")
    host, sep, port = address.rpartition(":")
    if not sep or not _HOST.fullmatch(host) or not port.isdigit() or int(port) > 65535:
        raise InvalidArgumentError(f"{where}: expected HOST:PORT, got {address!r}")
    return host, int(port)


def task_name(job: str, task: int, replica: int = 0) -> str:
    """TF's task name, e.g. "/job:worker/replica:0/task:1"."""
    return f"/job:{job}/replica:{replica}/task:{task}"


@dataclasses.dataclass(frozen=True)
class ClusterSpec:
    """Jobs -> task index -> "host:port", plus the master's address (optional)."""

    # ((job, ((task index, address), ...)), ...) in file order; tasks sorted by index.
    job_tasks: tuple[tuple[str, tuple[tuple[int, str], ...]], ...]
    master: str | None = None
    layout: str = "master"  # LAYOUTS: a master process, or a master in every task

    # -- construction ---------------------------------------------------------------------
    @staticmethod
    def load(path: str) -> ClusterSpec:
        """Parse a cluster YAML file."""
        import yaml

        try:
            with open(path, encoding="utf-8") as f:
                data = yaml.load(f, Loader=_unique_keys_loader())
        except OSError as e:
            raise NotFoundError(f"Cannot read cluster file {path}: {e}") from None
        except yaml.constructor.ConstructorError as e:
            raise InvalidArgumentError(f"Cluster file {path}: {e.problem}") from None
        except yaml.YAMLError as e:
            what = " ".join(str(e).split())  # one line
            raise InvalidArgumentError(f"Cluster file {path} is not valid YAML: {what}") from None
        try:
            return ClusterSpec.from_dict(data)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(f"Cluster file {path}: {e.message}") from None

    @staticmethod
    def from_dict(data: Any) -> ClusterSpec:
        """From {"master": ..., "jobs": {job: [addr, ...]}} or TF's {job: [addr, ...]}."""
        if not isinstance(data, Mapping):
            raise InvalidArgumentError(f"cluster: expected a mapping, got {type(data).__name__}")
        if "jobs" in data:
            unknown = sorted(set(map(str, data)) - {"jobs", "master", "layout"})
            if unknown:
                raise InvalidArgumentError(f"cluster: unknown keys {unknown}")
            jobs = data["jobs"]
            if not isinstance(jobs, Mapping):
                raise InvalidArgumentError("jobs: expected a mapping of job name -> tasks")
        else:
            jobs = {k: v for k, v in data.items() if k not in ("master", "layout")}
        master = data.get("master")
        layout = data.get("layout") or "master"
        if layout not in LAYOUTS:
            raise InvalidArgumentError(f"layout: expected one of {list(LAYOUTS)}, got {layout!r}")
        if master is not None:
            if layout == "tensorflow":
                raise InvalidArgumentError(
                    "master: not used with layout: tensorflow (every task serves the master)"
                )
            split_address(master, "master")
        if not jobs:
            raise InvalidArgumentError("cluster: no jobs")
        spec = ClusterSpec(
            tuple(_parse_job(job, tasks) for job, tasks in jobs.items()), master, layout
        )
        _check_unique_addresses(spec)
        return spec

    @staticmethod
    def from_cluster_def(cluster_def: Any, master: str | None = None) -> ClusterSpec:
        return ClusterSpec.from_dict(
            {"jobs": {j.name: dict(j.tasks) for j in cluster_def.job}, "master": master}
        )

    def to_cluster_def(self) -> cluster_pb2.ClusterDef:
        cd = cluster_pb2.ClusterDef()
        for job, tasks in self.job_tasks:
            jd = cd.job.add(name=job)
            for index, address in tasks:
                jd.tasks[index] = address
        return cd

    def to_dict(self) -> dict[str, Any]:
        """The YAML form (dense lists where task indices are 0..n-1)."""
        jobs: dict[str, Any] = {}
        for job, tasks in self.job_tasks:
            dense = [i for i, _ in tasks] == list(range(len(tasks)))
            jobs[job] = [a for _, a in tasks] if dense else dict(tasks)
        out: dict[str, Any] = {"jobs": jobs}
        if self.master is not None:
            out["master"] = self.master
        if self.layout != "master":
            out["layout"] = self.layout
        return out

    # -- queries --------------------------------------------------------------------------
    @property
    def jobs(self) -> tuple[str, ...]:
        return tuple(job for job, _ in self.job_tasks)

    def tasks(self, job: str) -> dict[int, str]:
        """Task index -> address for `job` (NotFoundError if there is no such job)."""
        for name, tasks in self.job_tasks:
            if name == job:
                return dict(tasks)
        raise NotFoundError(f"Job {job} is not in the cluster (jobs: {list(self.jobs)})")

    def task_address(self, job: str, task: int) -> str:
        tasks = self.tasks(job)
        if task not in tasks:
            raise NotFoundError(
                f"Task {task_name(job, task)} is not in the cluster "
                f"(job {job} has tasks {sorted(tasks)})"
            )
        return tasks[task]

    def task_names(self) -> list[str]:
        """Every task as "/job:J/replica:0/task:T", in file order."""
        return [task_name(job, i) for job, tasks in self.job_tasks for i, _ in tasks]

    def with_address(self, job: str, task: int, address: str) -> ClusterSpec:
        """A copy with one task's address replaced (e.g. after binding port 0)."""
        self.task_address(job, task)
        split_address(address, f"{task_name(job, task)}")
        return dataclasses.replace(
            self,
            job_tasks=tuple(
                (j, tuple((i, address if (j, i) == (job, task) else a) for i, a in tasks))
                for j, tasks in self.job_tasks
            ),
        )


def _parse_job(job: Any, tasks: Any) -> tuple[str, tuple[tuple[int, str], ...]]:
    if not isinstance(job, str) or not _JOB_NAME.fullmatch(job):
        raise InvalidArgumentError(f"jobs: invalid job name {job!r}")
    if isinstance(tasks, str):
        tasks = [tasks]
    if isinstance(tasks, Mapping):
        items: Iterable[tuple[Any, Any]] = tasks.items()
    elif isinstance(tasks, list | tuple):
        items = enumerate(tasks)
    else:
        raise InvalidArgumentError(
            f"jobs.{job}: expected a list of HOST:PORT, got {type(tasks).__name__}"
        )
    parsed = []
    for index, address in items:
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise InvalidArgumentError(f"jobs.{job}: invalid task index {index!r}")
        split_address(address, f"jobs.{job}[{index}]")
        parsed.append((index, address))
    if not parsed:
        raise InvalidArgumentError(f"jobs.{job}: no tasks")
    return job, tuple(sorted(parsed))


def _unique_keys_loader() -> Any:
    """A safe YAML loader that refuses a key twice in one mapping (PyYAML keeps the last
    silently: a job or a task listed twice would vanish)."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def mapping(loader: Any, node: Any, deep: bool = False) -> Any:
        keys: set[Any] = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if key in keys:
                line = key_node.start_mark.line + 1
                raise yaml.constructor.ConstructorError(
                    None, None, f"line {line}: {key!r} is listed twice", key_node.start_mark
                )
            keys.add(key)
        return loader.construct_mapping(node, deep)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return Loader


def _check_unique_addresses(spec: ClusterSpec) -> None:
    seen: dict[str, str] = {}
    if spec.master is not None and split_address(spec.master)[1] != 0:
        seen[spec.master] = "the master"
    for job, tasks in spec.job_tasks:
        for index, address in tasks:
            if split_address(address)[1] == 0:
                continue  # port 0: each task picks its own
            name = task_name(job, index)
            if address in seen:
                raise InvalidArgumentError(
                    f"{name} and {seen[address]} have the same address {address}"
                )
            seen[address] = name
