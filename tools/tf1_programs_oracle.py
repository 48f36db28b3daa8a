"""The oracle's cluster: in-process TensorFlow servers shaped like LocalCluster's.

TensorFlow's servers cannot be stopped from Python, so one cluster serves the whole
process; programs clear its variables with Session.reset after each run.
"""

from __future__ import annotations

import socket
from typing import Any

_TARGET: list[str] = []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return int(s.getsockname()[1])


def start_tf_cluster(tf_real: Any) -> str:
    """The grpc target of worker 0 on a TensorFlow cluster of 1 ps and 2 workers."""
    if not _TARGET:
        spec = tf_real.train.ClusterSpec(
            {
                "ps": [f"localhost:{_free_port()}"],
                "worker": [f"localhost:{_free_port()}", f"localhost:{_free_port()}"],
            }
        )
        servers = [
            tf_real.distribute.Server(spec, job_name=job, task_index=i, start=True)
            for job, n in (("ps", 1), ("worker", 2))
            for i in range(n)
        ]
        _TARGET.append(servers[1].target)
        _SERVERS.extend(servers)  # kept alive for the process's lifetime
    return _TARGET[0]


_SERVERS: list[Any] = []
