"""Cluster, TensorFlow's deployment contract: the `TF_CONFIG` environment variable.

TensorFlow (tf.distribute, Estimator) and Kubeflow's TFJob operator start every task of a
cluster with the same JSON in `TF_CONFIG`, plus the task's own place in it:

    {"cluster": {"chief": ["chief-0.svc:2222"], "worker": ["worker-0.svc:2222", ...],
                 "ps": ["ps-0.svc:2222"], "evaluator": ["evaluator-0.svc:2222"]},
     "task": {"type": "worker", "index": 0}}

`parse` turns it into a `TaskConfig`: the training cluster (a ClusterSpec without a
`master:` address: in this layout every task serves MasterService on its own port, as
tf.distribute.Server does) and the task this process is. As in TensorFlow, the evaluator
is not part of the training cluster: an evaluator task is a cluster of its own. Errors are
InvalidArgumentError naming the bad field. Pure functions of the text; thread-safe.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from typing import Any

from common.cluster import ClusterSpec, task_name
from common.errors import InvalidArgumentError, NotFoundError

ENV = "TF_CONFIG"
# Jobs of the training cluster, in TensorFlow's order (the chief first); other job names
# (a custom one) follow in the file's order. "master" is Estimator's old name for chief.
_ORDER = ("chief", "master", "worker", "ps")
EVALUATOR = "evaluator"


@dataclasses.dataclass(frozen=True)
class TaskConfig:
    """The cluster a task belongs to and which task it is."""

    cluster: ClusterSpec
    job: str
    task: int

    @property
    def task_name(self) -> str:
        return task_name(self.job, self.task)

    @property
    def address(self) -> str:
        return self.cluster.task_address(self.job, self.task)


def from_env(
    environ: Mapping[str, str] | None = None, job: str | None = None, task: int | None = None
) -> TaskConfig:
    """The TaskConfig of `TF_CONFIG` in `environ` (default os.environ); NotFoundError if
    the variable is unset or empty. `job`/`task` override its "task" (see `parse`)."""
    text = (os.environ if environ is None else environ).get(ENV, "")
    if not text.strip():
        raise NotFoundError(f"{ENV} is not set (and no --cluster file was given)")
    return parse(text, job, task)


def parse(text: str, job: str | None = None, task: int | None = None) -> TaskConfig:
    """TF_CONFIG's JSON -> TaskConfig. `job` and `task` (both or neither) name the task
    instead of TF_CONFIG's "task", which may then be absent: every pod of a Kubernetes
    StatefulSet gets the same TF_CONFIG and passes its own index (deploy/k8s)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InvalidArgumentError(f"{ENV} is not valid JSON: {e}") from None
    if not isinstance(data, Mapping):
        raise InvalidArgumentError(f"{ENV}: expected a JSON object, got {type(data).__name__}")
    cluster = data.get("cluster")
    if not isinstance(cluster, Mapping) or not cluster:
        raise InvalidArgumentError(f"{ENV}: 'cluster' must map job names to address lists")
    if job is not None and task is not None:
        job, index = _task({"type": job, "index": task})
    else:
        job, index = _task(data.get("task"))
    jobs = _ordered(cluster)
    if job == EVALUATOR:
        # TensorFlow keeps the evaluator out of the training cluster.
        jobs = {EVALUATOR: cluster.get(EVALUATOR)}
    else:
        jobs.pop(EVALUATOR, None)
    if job not in jobs:
        raise InvalidArgumentError(
            f"{ENV}: task type {job!r} is not a job of the cluster ({sorted(cluster)})"
        )
    try:
        spec = ClusterSpec.from_dict({"jobs": jobs, "layout": "tensorflow"})
    except InvalidArgumentError as e:
        raise InvalidArgumentError(f"{ENV}: {e.message}") from None
    try:
        spec.task_address(job, index)
    except NotFoundError as e:
        raise InvalidArgumentError(f"{ENV}: {e.message}") from None
    return TaskConfig(spec, job, index)


def _task(task: Any) -> tuple[str, int]:
    if not isinstance(task, Mapping):
        raise InvalidArgumentError(f'{ENV}: \'task\' must be {{"type": JOB, "index": N}}')
    job = task.get("type")
    index = task.get("index", 0)
    if not isinstance(job, str) or not job:
        raise InvalidArgumentError(f"{ENV}: task.type must be a job name, got {job!r}")
    if isinstance(index, str) and index.isdigit():
        index = int(index)
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise InvalidArgumentError(f"{ENV}: task.index must be an integer >= 0, got {index!r}")
    return job, index


def _ordered(cluster: Mapping[str, Any]) -> dict[str, Any]:
    known = [j for j in _ORDER if j in cluster]
    return {j: cluster[j] for j in known + [j for j in cluster if j not in _ORDER]}


def to_json(spec: ClusterSpec, job: str, task: int) -> str:
    """The TF_CONFIG a task of `spec` gets (what the launcher and the Kubernetes
    manifests give each task)."""
    cluster = {j: [a for _, a in tasks] for j, tasks in spec.job_tasks}
    return json.dumps({"cluster": cluster, "task": {"type": job, "index": task}})
