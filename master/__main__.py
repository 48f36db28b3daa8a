"""Master, command line: `python -m master --cluster FILE`.

Starts the master of the cluster file on its `master:` address, logs
"master listening on HOST:PORT", serves until SIGTERM or SIGINT, then shuts down
gracefully (stops accepting RPCs, closes sessions and their worker sessions) and exits 0.
"""

from __future__ import annotations

from common import blas_env

blas_env.configure()  # before anything imports numpy (constant folding runs kernels)

import argparse  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402

from common import cli  # noqa: E402
from common.cluster import ClusterSpec  # noqa: E402
from common.errors import OpError  # noqa: E402
from master.master import DEFAULT_DEVICE, DEFAULT_RPC_TIMEOUT  # noqa: E402
from master.server import DEFAULT_GRACE_SECONDS, MasterServer  # noqa: E402

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
    cli.add_shutdown_flags(p, DEFAULT_GRACE_SECONDS)
    args = p.parse_args(argv)
    if args.step_timeout < 0 or args.rpc_timeout <= 0:
        p.error("--step-timeout must be >= 0 and --rpc-timeout > 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    cli.configure_logging(args.log_level)
    try:
        cluster = ClusterSpec.load(args.cluster)
        server = MasterServer(
            cluster,
            bind_host=args.bind_host,
            default_device=args.default_device,
            rpc_timeout=args.rpc_timeout,
            step_timeout=args.step_timeout or None,
        )
    except OpError as e:
        log.error("cannot start master: %s", e.message)
        return 2
    return cli.serve(server, "master", lambda: server.address, args.grace, log)


if __name__ == "__main__":
    sys.exit(main())
