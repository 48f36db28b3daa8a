"""Master, command line: `python -m master --cluster FILE`.

Starts the master of the cluster file on its `master:` address, logs
"master listening on HOST:PORT", serves until SIGTERM or SIGINT, then shuts down
gracefully (stops accepting RPCs, closes sessions and their worker sessions) and exits 0.
With --metrics-port it also serves Prometheus metrics over HTTP (common.metrics), logged
first as "metrics on http://HOST:PORT/metrics"; with --dashboard-port the web dashboard
(master.dashboard), logged as "dashboard on http://HOST:PORT/".

`python -m master status --target grpc://HOST:PORT [--json]` prints a running master's
cluster, sessions and recent failed steps (master.status).
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
from master.dashboard.server import DashboardServer  # noqa: E402
from master.lease_renewer import DEFAULT_LEASE_S  # noqa: E402
from master.master import (  # noqa: E402
    DEFAULT_DEVICE,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_RPC_TIMEOUT,
)
from master.monitor import Monitor  # noqa: E402
from master.server import DEFAULT_GRACE_SECONDS, MasterServer  # noqa: E402
from master.task_server import Colocated  # noqa: E402
from rpc import auth  # noqa: E402
from rpc.worker_cache import parse_task  # noqa: E402

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
    cli.add_session_lease_flag(p, DEFAULT_LEASE_S)
    cli.add_metrics_flags(p)
    cli.add_limit_flags(p)
    p.add_argument(
        "--max-sessions",
        type=int,
        default=DEFAULT_MAX_SESSIONS,
        help="open sessions a master keeps; more CreateSessions are "
        f"ResourceExhausted (default {DEFAULT_MAX_SESSIONS})",
    )
    p.add_argument(
        "--session-idle-timeout",
        type=float,
        default=0.0,
        help="close a session no call has used for this many seconds "
        "(TensorFlow's session_gc_seconds; default 0 = never)",
    )
    cli.add_security_flags(p)
    p.add_argument(
        "--dashboard-port",
        type=int,
        default=None,
        help="serve the web dashboard on this port (0 picks a free one; its URL is logged "
        "at start-up; default: off)",
    )
    p.add_argument(
        "--dashboard-host",
        default="127.0.0.1",
        help="address the dashboard listens on (default 127.0.0.1; 0.0.0.0 for every "
        "interface: it is read-only but shows graphs, node names and errors)",
    )
    p.add_argument(
        "--trace-sample-rate",
        type=float,
        default=None,
        help="fraction of untraced steps the master traces for the dashboard's timelines "
        "(default 0.05 with the dashboard on, else 0)",
    )
    cli.add_shutdown_flags(p, DEFAULT_GRACE_SECONDS)
    args = p.parse_args(argv)
    if args.step_timeout < 0 or args.rpc_timeout <= 0:
        p.error("--step-timeout must be >= 0 and --rpc-timeout > 0")
    if args.trace_sample_rate is None:
        args.trace_sample_rate = 0.05 if args.dashboard_port is not None else 0.0
    if not 0.0 <= args.trace_sample_rate <= 1.0:
        p.error("--trace-sample-rate must be within [0, 1]")
    if args.dashboard_port is not None and not 0 <= args.dashboard_port < 65536:
        p.error("--dashboard-port must be within [0, 65535]")
    cli.check_metrics_flags(p, args)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["status"]:
        from master.status import main as status_main

        return status_main(argv[1:])
    args = parse_args(argv)
    cli.configure_logging(args.log_level, args.log_format)
    cli.apply_limit_flags(args, log)
    try:
        auth.configure(cli.credentials_from(args))
        cluster = ClusterSpec.load(args.cluster)
        master = MasterServer(
            cluster,
            bind_host=args.bind_host,
            default_device=args.default_device,
            rpc_timeout=args.rpc_timeout,
            session_lease=args.session_lease,
            step_timeout=args.step_timeout or None,
            monitor=Monitor(args.trace_sample_rate, keep_graphs=args.dashboard_port is not None),
            max_sessions=args.max_sessions,
            session_idle_timeout=args.session_idle_timeout or None,
        )
        server: cli.Server = master
        if args.colocate:
            job, task = parse_task(args.colocate)
            server = Colocated(master, cluster, job, task, rpc_timeout=args.rpc_timeout)
        # One endpoint for the process: a colocated worker's metrics are there too.
        metrics_server = cli.start_metrics(
            args.metrics_port, args.metrics_host or master.bind_host, log
        )
        dashboard = None
        if args.dashboard_port is not None:
            master.start_prober()
            dashboard = DashboardServer(
                master.master.monitor,
                args.dashboard_host,
                args.dashboard_port,
                title=f"master {master.address}",
            )
            dashboard.start()
            log.info("dashboard on %s", dashboard.url)
    except OpError as e:
        log.error("cannot start master: %s", e.message)
        return 2
    except OSError as e:
        log.error(
            "cannot start the dashboard on %s:%s: %s",
            args.dashboard_host,
            args.dashboard_port,
            e.strerror or e,
        )
        return 2
    try:
        return cli.serve(server, "master", lambda: master.address, args.grace, log)
    finally:
        if dashboard is not None:
            dashboard.stop()
        cli.stop_metrics(metrics_server)


if __name__ == "__main__":
    sys.exit(main())
