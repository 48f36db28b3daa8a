"""TensorFlow's own runtime as the oracle cluster: `python tests/integration/tf_runtime_cluster.py`
starts ps:0, worker:0 and worker:1 as tf.distribute.Server tasks on free loopback ports in
this one process, prints worker 0's grpc:// target on one line, and serves until its
stdin closes."""

from __future__ import annotations

import socket
import sys


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    import tensorflow as tf

    ports = {name: _free_port() for name in ("ps0", "worker0", "worker1")}
    spec = {
        "ps": [f"localhost:{ports['ps0']}"],
        "worker": [f"localhost:{ports['worker0']}", f"localhost:{ports['worker1']}"],
    }
    cluster = tf.train.ClusterSpec(spec)
    servers = [
        tf.distribute.Server(cluster, job_name=job, task_index=task)
        for job, task in (("ps", 0), ("worker", 0), ("worker", 1))
    ]
    target = servers[1].target
    print(target.decode() if isinstance(target, bytes) else target, flush=True)
    sys.stdin.read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
