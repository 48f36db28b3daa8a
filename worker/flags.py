"""Worker, command line: the flags and the `main` body of every process that hosts a worker
task: `python -m worker` and `python -m server` (which also hosts the task's master)."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable

from common import cli
from rpc import auth
from worker.graph_mgr import DEFAULT_STEP_TIMEOUT


def add_task_flags(
    p: argparse.ArgumentParser, *, bind_host_default: str, rpc_timeout: float, rpc_peers: str
) -> None:
    """--bind-host, --cpus, --intra-op-threads, --rpc-timeout and --step-timeout.
    `bind_host_default` says what an unset --bind-host means, `rpc_peers` whom the short
    RPCs go to."""
    p.add_argument(
        "--bind-host", default=None, help=f"address to listen on (default: {bind_host_default})"
    )
    p.add_argument("--cpus", type=int, default=1, help="number of CPU devices (default 1)")
    p.add_argument(
        "--intra-op-threads",
        type=int,
        default=0,
        help="the intra-op pool size kernels on this task shard their work for, as "
        "TensorFlow's ServerDef.default_session_config.intra_op_parallelism_threads "
        "(default 0: one per CPU)",
    )
    p.add_argument(
        "--rpc-timeout",
        type=float,
        default=rpc_timeout,
        help=f"deadline in seconds of short RPCs to {rpc_peers} (default {rpc_timeout:g})",
    )
    p.add_argument(
        "--step-timeout",
        type=float,
        default=DEFAULT_STEP_TIMEOUT,
        help=f"longest a step (RunGraph, RecvTensor) may take on this task, seconds (default "
        f"{DEFAULT_STEP_TIMEOUT:g})",
    )


def add_service_flags(p: argparse.ArgumentParser, grace_seconds: float) -> None:
    """Metrics, limits, security and shutdown (common.cli): checked by `check_flags`."""
    cli.add_metrics_flags(p)
    cli.add_limit_flags(p)
    cli.add_security_flags(p)
    cli.add_shutdown_flags(p, grace_seconds)


def check_flags(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """What the flags of `add_task_flags` and `add_service_flags` need (p.error if not)."""
    cli.check_metrics_flags(p, args)
    if args.cpus < 1:
        p.error("--cpus must be at least 1")
    if args.intra_op_threads < 0:
        p.error("--intra-op-threads must be >= 0")
    if args.rpc_timeout <= 0:
        p.error("--rpc-timeout must be > 0")


def run(
    kind: str, args: argparse.Namespace, log: logging.Logger, make: Callable[[], cli.ServesTask]
) -> int:
    """A task's `main` after parsing: logging and limits as the flags say, the credentials
    configured, then the server `make()` builds served until signalled (cli.run_task_server);
    the exit code."""
    cli.configure_logging(args.log_level, args.log_format)
    cli.apply_limit_flags(args, log)

    def build() -> cli.ServesTask:
        auth.configure(cli.credentials_from(args))
        return make()

    return cli.run_task_server(kind, build, args, log)
