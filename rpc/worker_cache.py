"""Worker cache: one gRPC channel per task of the cluster (TF's WorkerCache / GrpcChannelCache).

`WorkerCache(cluster).channel(task)` / `.stub(task)` give the channel / WorkerService stub
for a task named "/job:J/replica:0/task:T" (a full device name of the task works too).
Channels are created on first use (rpc.auth: TLS and tokens when configured), with
TensorFlow's 2^31-1 message limits, and keepalives that suit the peer (rpc.peer_pings: 2 s
pings to our tasks, gentle ones to TensorFlow's); callers pass a deadline on every call.
The workers use it for RecvTensor between each other; the master for all its worker RPCs.
`close()` closes every channel. Thread-safe: one lock guards the table.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import grpc

from common import device_name
from common.cluster import ClusterSpec, task_name
from common.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from rpc import auth
from rpc.channels import GRPC_OPTIONS, for_peer
from rpc.peer_pings import PeerChannel
from rpc.service_paths import WORKER_SERVICE_NAMES, WorkerStub, worker_stub


def parse_task(name: str) -> tuple[str, int]:
    """(job, task) of a task or device name; InvalidArgumentError if either is missing."""
    parsed = device_name.parse(name)
    if parsed.job is None or parsed.task is None:
        raise InvalidArgumentError(f"Not a task or device name: {name}")
    return parsed.job, parsed.task


@functools.lru_cache(maxsize=1 << 12)
def canonical_task(name: str) -> str:
    """ "/job:J/replica:R/task:T" for a task or device name (cached: a pure function of a
    name that repeats every step)."""
    job, task = parse_task(name)
    replica = device_name.parse(name).replica or 0
    return task_name(job, task, replica)


class WorkerCache:
    """Channels and stubs to the tasks of a cluster."""

    def __init__(self, cluster: ClusterSpec, options: Any = GRPC_OPTIONS) -> None:
        self._lock = threading.Lock()
        self._cluster = cluster
        self._options = list(options)
        self._channels: dict[str, tuple[str, grpc.Channel]] = {}  # task -> (address, channel)
        # task name as callers spell it -> (the cluster it was looked up in, its address,
        # its canonical name): a channel is asked for several times a step.
        self._names: dict[str, tuple[ClusterSpec, str, str]] = {}
        self._closed = False

    @property
    def cluster(self) -> ClusterSpec:
        return self._cluster

    def set_cluster(self, cluster: ClusterSpec) -> None:
        """Use new addresses; channels to tasks whose address changed are reopened."""
        with self._lock:
            self._cluster = cluster

    def address(self, task: str) -> str:
        return self._address(self._cluster, task)

    @staticmethod
    def _address(cluster: ClusterSpec, task: str) -> str:
        job, index = parse_task(task)
        try:
            return cluster.task_address(job, index)
        except NotFoundError as e:
            raise InvalidArgumentError(f"Unknown remote task {task}: {e.message}") from None

    def channel(self, task: str) -> grpc.Channel:
        cluster = self._cluster
        named = self._names.get(task)
        if named is None or named[0] is not cluster:
            named = (cluster, self._address(cluster, task), canonical_task(task))
            self._names[task] = named
        _, address, key = named
        stale = None
        with self._lock:
            if self._closed:
                raise FailedPreconditionError("The worker cache is closed")
            entry = self._channels.get(key)
            if entry is None or entry[0] != address:
                stale = entry[1] if entry else None
                entry = (address, self._open(address))
                self._channels[key] = entry
        if stale is not None:
            stale.close()
        return entry[1]

    def _open(self, address: str) -> grpc.Channel:
        options = self._options
        return PeerChannel(
            address, lambda permissive: auth.channel(address, for_peer(options, permissive))
        )

    def stub(self, task: str, service_name: str = WORKER_SERVICE_NAMES[0]) -> WorkerStub:
        return worker_stub(self.channel(task), service_name)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            channels = [c for _, c in self._channels.values()]
            self._channels.clear()
        for ch in channels:
            ch.close()

    def num_channels(self) -> int:
        with self._lock:
            return len(self._channels)
