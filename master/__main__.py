"""Master, command line: `python -m master --cluster FILE`.

Starts the master of the cluster file on its `master:` address, logs
"master listening on HOST:PORT", serves until SIGTERM or SIGINT, then shuts down
gracefully (stops accepting RPCs, closes sessions and their worker sessions) and exits 0.
With --metrics-port it also serves Prometheus metrics over HTTP (common.metrics), logged
first as "metrics on http://HOST:PORT/metrics".
"""

from __future__ import annotations

from common import blas_env

# Before anything imports numpy. Single-threaded BLAS as in workers: a worker task may run
# in this process (--colocate), and the master's own constant folding needs no BLAS threads.
blas_env.configure(single_thread=True)

import argparse  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402

from common import cli  # noqa: E402
from common.cluster import ClusterSpec  # noqa: E402
from common.errors import OpError  # noqa: E402
from master.master import DEFAULT_DEVICE, DEFAULT_RPC_TIMEOUT  # noqa: E402
from master.server import DEFAULT_GRACE_SECONDS, MasterServer  # noqa: E402
from worker import local_rpc  # noqa: E402
from worker.server import WorkerServer  # noqa: E402
from worker.worker_cache import parse_task  # noqa: E402

log = logging.getLogger("master")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m master",
        description="Run the master of a flowrt cluster (TensorFlow's MasterService): "
        "clients connect with tf.compat.v1.Session('grpc://HOST:PORT').",
    )
    cli.add_cluster_flag(p)
    p.add_argument(
        "--bind-host",
        default=None,
        help="address to listen on (default: the master host from the cluster file; "
        "0.0.0.0 listens on every interface)",
    )
    p.add_argument(
        "--default-device",
        default=DEFAULT_DEVICE,
        help=f"where nodes without a device request run (default {DEFAULT_DEVICE})",
    )
    p.add_argument(
        "--rpc-timeout",
        type=float,
        default=DEFAULT_RPC_TIMEOUT,
        help=f"deadline in seconds of the master's short RPCs to workers (default "
        f"{DEFAULT_RPC_TIMEOUT:g})",
    )
    p.add_argument(
        "--step-timeout",
        type=float,
        default=0.0,
        help="step deadline in seconds when the client sets none (RunOptions.timeout_in_ms, "
        "ConfigProto.operation_timeout_in_ms); 0 = none (default 0)",
    )
    p.add_argument(
        "--colocate",
        default=None,
        metavar="TASK",
        help="also run this worker task of the cluster file (e.g. /job:worker/task:0) in "
        "the master's process, as TensorFlow's servers do; the master then calls it "
        "directly, without RPCs (default: none)",
    )
    cli.add_metrics_flags(p)
    cli.add_limit_flags(p)
    cli.add_shutdown_flags(p, DEFAULT_GRACE_SECONDS)
    args = p.parse_args(argv)
    if args.step_timeout < 0 or args.rpc_timeout <= 0:
        p.error("--step-timeout must be >= 0 and --rpc-timeout > 0")
    cli.check_metrics_flags(p, args)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    cli.configure_logging(args.log_level)
    cli.apply_limit_flags(args, log)
    try:
        cluster = ClusterSpec.load(args.cluster)
        master = MasterServer(
            cluster,
            bind_host=args.bind_host,
            default_device=args.default_device,
            rpc_timeout=args.rpc_timeout,
            step_timeout=args.step_timeout or None,
        )
        server: cli.Server = master
        if args.colocate:
            job, task = parse_task(args.colocate)
            local_rpc.share_in_process()  # the master calls this worker directly
            worker = WorkerServer(cluster, job, task, rpc_timeout=args.rpc_timeout)
            server = _Colocated(master, worker)
        # One endpoint for the process: a colocated worker's metrics are there too.
        metrics_server = cli.start_metrics(
            args.metrics_port, args.metrics_host or master.bind_host, log
        )
    except OpError as e:
        log.error("cannot start master: %s", e.message)
        return 2
    try:
        return cli.serve(server, "master", lambda: master.address, args.grace, log)
    finally:
        cli.stop_metrics(metrics_server)


class _Colocated:
    """A master and one worker task in one process: started worker first, stopped
    master first."""

    def __init__(self, master: MasterServer, worker: WorkerServer) -> None:
        self.master = master
        self.worker = worker

    def start(self) -> None:
        self.worker.start()
        log.info("worker %s listening on %s (in the master's process)",
                 self.worker.task_name, self.worker.address)
        self.master.start()

    def stop(self, grace: float) -> None:
        self.master.stop(grace)
        self.worker.stop(grace)


if __name__ == "__main__":
    sys.exit(main())
