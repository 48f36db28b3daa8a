"""What a task reports of itself to the master's monitor (the dashboard's cluster table and
`python -m master status`): uptime, memory, CPU and the worker metrics it keeps.

Served by every worker task as the unary extension method TASK_STATS_PATH (request and
answer are JSON bytes, so TensorFlow's tasks, which lack it, answer UNIMPLEMENTED and are
shown without these figures). Reads process counters and the metrics registry only: cheap
and safe from any thread.
"""

from __future__ import annotations

import json
import os
import resource
import time
from typing import Any

from common import metrics

TASK_STATS_PATH = "/dataflow.WorkerService/TaskStats"
CLUSTER_STATUS_PATH = "/dataflow.MasterService/ClusterStatus"

_STARTED = time.time()
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes() -> int:
    """Resident set size now (Linux /proc), or the peak where /proc is missing."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _value(name: str, labels: dict[str, str] | None = None) -> float:
    got = metrics.REGISTRY.get_sample_value(name, labels or {})
    return float(got) if got is not None else 0.0


def task_stats() -> dict[str, Any]:
    times = os.times()
    return {
        "pid": os.getpid(),
        "uptime_s": time.time() - _STARTED,
        "rss_bytes": rss_bytes(),
        "cpu_s": times.user + times.system,
        "threads": _threads(),
        "registered_graphs": int(_value("flowrt_worker_registered_graphs")),
        "steps_in_flight": int(_value("flowrt_worker_active_steps")),
        "live_steps": int(_value("flowrt_worker_live_steps")),
        "run_graph_ok": int(_value("flowrt_worker_run_graph_total", {"outcome": metrics.OK})),
        "recv_bytes": {
            t: int(_value("flowrt_worker_recv_bytes_total", {"transport": t}))
            for t in metrics.TRANSPORTS
        },
        "sent_bytes": {
            t: int(_value("flowrt_worker_sent_bytes_total", {"transport": t}))
            for t in ("grpc", "local")
        },
        "recv_tensors": {
            t: int(_value("flowrt_worker_recv_tensors_total", {"transport": t}))
            for t in metrics.TRANSPORTS
        },
    }


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


def encode(stats: dict[str, Any]) -> bytes:
    return json.dumps(stats, separators=(",", ":")).encode()


def task_stats_handler(request: bytes, context: Any) -> bytes:
    """The gRPC unary behaviour of TASK_STATS_PATH (the request is ignored)."""
    return encode(task_stats())
