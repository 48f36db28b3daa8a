"""Worker, command line: `python -m worker --cluster FILE --job NAME --task N`.

Starts one worker task of the cluster file, logs "worker <task> listening on HOST:PORT",
serves until SIGTERM or SIGINT, then shuts down gracefully (aborts the steps in flight,
stops the server with a grace period, closes channels to peers) and exits 0.
With --metrics-port it also serves Prometheus metrics over HTTP (common.metrics), logged
first as "metrics on http://HOST:PORT/metrics".

BLAS runs single-threaded in a worker, with the CPU's best OpenBLAS kernels, unless the
environment says otherwise (common.blas_env).
"""

from __future__ import annotations

from common import blas_env

blas_env.configure(single_thread=True)  # before anything imports numpy

import argparse  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402

from common import cli  # noqa: E402
from common.cluster import ClusterSpec  # noqa: E402
from worker import flags  # noqa: E402
from worker.server import DEFAULT_GRACE_SECONDS, WorkerServer  # noqa: E402

log = logging.getLogger("worker")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m worker",
        description="Run one worker task of a flowrt cluster (TensorFlow's WorkerService).",
    )
    cli.add_cluster_flag(p)
    p.add_argument("--job", required=True, help="job name of this task, e.g. worker")
    p.add_argument("--task", required=True, type=int, help="task index within the job")
    flags.add_task_flags(
        p,
        bind_host_default="the host from the cluster file; 0.0.0.0 listens on every interface",
        rpc_timeout=10.0,
        rpc_peers="peers",
    )
    p.add_argument(
        "--partial-run-idle-timeout",
        type=float,
        default=None,
        help="abort and free a partial run no call has come for in this many seconds "
        "(its master died or never finished it; default: --step-timeout)",
    )
    flags.add_service_flags(p, DEFAULT_GRACE_SECONDS)
    args = p.parse_args(argv)
    flags.check_flags(p, args)
    if args.task < 0:
        p.error("--task must be >= 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    return flags.run(
        "worker",
        args,
        log,
        lambda: WorkerServer(
            ClusterSpec.load(args.cluster),
            args.job,
            args.task,
            num_cpus=args.cpus,
            intra_op_threads=args.intra_op_threads,
            bind_host=args.bind_host,
            rpc_timeout=args.rpc_timeout,
            step_timeout=args.step_timeout,
            partial_idle_timeout=args.partial_run_idle_timeout,
        ),
    )


if __name__ == "__main__":
    sys.exit(main())
