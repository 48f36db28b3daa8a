"""Client, training: tf.train.replica_device_setter — a device function placing variables
(STANDARD_PS_OPS) round-robin on the ps tasks and every other op on the worker device,
as between-graph replication does in TF1 programs."""

from __future__ import annotations

import dataclasses
from typing import Any

from client.training.server_lib import ClusterSpec
from common import device_name as _device_name

STANDARD_PS_OPS = (
    "Variable",
    "VariableV2",
    "AutoReloadVariable",
    "MutableHashTable",
    "MutableHashTableV2",
    "MutableHashTableOfTensors",
    "MutableHashTableOfTensorsV2",
    "MutableDenseHashTable",
    "MutableDenseHashTableV2",
    "VarHandleOp",
    "BoostedTreesEnsembleResourceHandleOp",
    "BoostedTreesQuantileStreamResourceHandleOp",
    "ResourceConditionalAccumulator",
    "DecisionTree",
    "TreeEnsembleVariable",
)


class _RoundRobinStrategy:
    def __init__(self, num_tasks: int) -> None:
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op: Any) -> int:
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


def _merged(spec: Any, current: Any) -> str:
    """TF's DeviceSpec.make_merged_spec: `current`'s set parts win over `spec`'s."""
    return _device_name.to_string(_device_name.merge_unset(current, spec))


class _ReplicaDeviceChooser:
    def __init__(
        self,
        ps_tasks: int,
        ps_device: str,
        worker_device: str,
        merge_devices: bool,
        ps_ops: list[str],
        ps_strategy: Any,
    ) -> None:
        self._ps_tasks, self._ps_device, self._worker_device = ps_tasks, ps_device, worker_device
        self._merge_devices, self._ps_ops, self._ps_strategy = merge_devices, ps_ops, ps_strategy

    def device_function(self, op: Any) -> str:
        if not self._merge_devices and op.device:
            return op.device
        current = _device_name.parse(op.device or "")
        if self._ps_tasks and self._ps_device and op.type in self._ps_ops:
            ps = _device_name.parse(self._ps_device)
            if ps.job and (not current.job or current.job == ps.job):
                ps = dataclasses.replace(ps, task=self._ps_strategy(op))
            return _merged(ps, current)
        return _merged(_device_name.parse(self._worker_device or ""), current)


def replica_device_setter(
    ps_tasks: int = 0,
    ps_device: str = "/job:ps",
    worker_device: str = "/job:worker",
    merge_devices: bool = True,
    cluster: Any = None,
    ps_ops: Any = None,
    ps_strategy: Any = None,
) -> Any:
    """A device function for `tf.device`, or None when there are no ps tasks."""
    if cluster is not None:
        spec = (
            cluster.as_dict()
            if isinstance(cluster, ClusterSpec)
            else ClusterSpec(cluster).as_dict()
        )
        ps_job_name = _device_name.parse(ps_device).job
        if ps_job_name not in spec or spec[ps_job_name] is None:
            return None
        ps_tasks = len(spec[ps_job_name])
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    chooser = _ReplicaDeviceChooser(
        ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy
    )
    return chooser.device_function
