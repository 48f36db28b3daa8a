"""Devices: what a worker computes on (TensorFlow's Device / DeviceAttributes).

A Device has a full name, a type, an incarnation (a random uint64 chosen at start-up so a
restarted task is told apart from its former self; it is part of every rendezvous key),
a memory limit and the ResourceMgr holding its state across steps. CPU devices share one
thread pool (`thread_pool()`), which the executor uses for kernels registered expensive.
Devices are immutable after construction; safe from any thread.
"""

from __future__ import annotations

import concurrent.futures
import os
import secrets
import threading
from typing import Any

from common import device_name
from common.errors import InvalidArgumentError
from common.resource_mgr import ResourceMgr

DEFAULT_MEMORY_LIMIT = 256 << 20  # what TensorFlow's CPU device reports

_pool_lock = threading.Lock()
_pool: concurrent.futures.ThreadPoolExecutor | None = None


def thread_pool() -> concurrent.futures.ThreadPoolExecutor:
    """The process-wide pool expensive kernels run on, sized to the CPU count."""
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=os.cpu_count() or 1, thread_name_prefix="flowrt-compute"
                )
    return _pool


def new_incarnation() -> int:
    """A random non-zero uint64 (TensorFlow's random::New64)."""
    return secrets.randbits(64) or 1


class Device:
    """One compute device of a task."""

    def __init__(
        self,
        name: str,
        device_type: str = "CPU",
        incarnation: int | None = None,
        memory_limit: int = DEFAULT_MEMORY_LIMIT,
        resource_mgr: ResourceMgr | None = None,
    ) -> None:
        parsed = device_name.parse(name)
        if not parsed.is_full:
            raise InvalidArgumentError(f"Device name must be fully specified: {name}")
        self.name = device_name.to_string(parsed)
        self.parsed_name = parsed
        self.device_type = device_type
        self.incarnation = new_incarnation() if incarnation is None else incarnation
        self.memory_limit = memory_limit
        self.resource_mgr = resource_mgr if resource_mgr is not None else ResourceMgr()
        # Largest allocation one kernel on this device may make (0: the process budget
        # alone; common.memory). Constant folding's scratch device caps it.
        self.allocation_limit = 0

    def attributes(self) -> Any:
        """This device as a DeviceAttributes proto."""
        from protos import device_attributes_pb2

        attrs = device_attributes_pb2.DeviceAttributes()
        attrs.name = self.name
        attrs.device_type = self.device_type
        attrs.memory_limit = self.memory_limit
        attrs.incarnation = self.incarnation & ((1 << 64) - 1)
        return attrs

    @property
    def thread_pool(self) -> concurrent.futures.ThreadPoolExecutor:
        return thread_pool()

    def __repr__(self) -> str:
        return f"Device({self.name}, incarnation={self.incarnation:016x})"


def make_local_devices(
    job: str = "localhost", replica: int = 0, task: int = 0, num_cpus: int = 1
) -> list[Device]:
    """The CPU devices of one task: /job:J/replica:R/task:T/device:CPU:0..num_cpus-1."""
    return [Device(device_name.full_name(job, replica, task, "CPU", i)) for i in range(num_cpus)]
