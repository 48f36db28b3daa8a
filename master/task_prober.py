"""Master, observation: `TaskProber` asks every task of the cluster, every `interval`
seconds, for its devices (GetStatus) and its figures (common.task_stats), and tells the
monitor which tasks are up; a task that stops answering shows as down within one interval
plus the call's deadline.

Owns one daemon thread; the calls are gRPC futures on the master's channels, so a task
that hangs costs no thread. Tasks that are not ours (TensorFlow's) answer TaskStats
UNIMPLEMENTED and are shown up without figures.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import grpc

from common.task_stats import TASK_STATS_PATH
from master.monitor import Monitor
from protos import worker_pb2

log = logging.getLogger(__name__)

DEFAULT_INTERVAL = 1.0


class TaskProber:
    """Polls the tasks of `calls.cache` into `monitor` until stopped."""

    def __init__(self, calls: Any, monitor: Monitor, interval: float = DEFAULT_INTERVAL):
        self.calls = calls
        self.monitor = monitor
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="flowrt-task-prober", daemon=True)

    def start(self) -> TaskProber:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.probe_once()
            except Exception:  # noqa: BLE001  (the prober must outlive any one failure)
                log.exception("task probe failed")
            self._stop.wait(self.interval)

    def probe_once(self) -> None:
        """One round: every task asked in parallel, answers awaited up to the deadline."""
        cache = self.calls.cache
        deadline = max(0.5, min(2.0, self.interval * 1.5))
        pending = []
        for task in cache.cluster.task_names():
            try:
                address = cache.address(task)
                status = self.calls.stub(task).GetStatus.future(
                    worker_pb2.GetStatusRequest(), timeout=deadline
                )
                stats = (
                    cache.channel(task).unary_unary(TASK_STATS_PATH).future(b"", timeout=deadline)
                )
            except Exception as e:  # noqa: BLE001  (a bad address is a down task)
                self.monitor.task_lost(task, "", str(e))
                continue
            pending.append((task, address, status, stats))
        for task, address, status, stats in pending:
            try:
                response = status.result()
            except grpc.RpcError as e:
                stats.cancel()
                self.monitor.task_lost(task, address, f"{e.code().name}: {e.details()}")
                continue
            devices = [d.name for d in response.device_attributes]
            try:
                figures = json.loads(stats.result())
            except grpc.RpcError:
                figures = {}  # not one of ours (TensorFlow's task) or too slow this round
            self.monitor.task_seen(task, address, devices, figures)
