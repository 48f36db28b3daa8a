"""Task server, command line: `python -m server` (tf.distribute.Server's contract).

Starts one task that serves WorkerService and MasterService on its one port
(master.task_server), so `tf.compat.v1.Session("grpc://<any task>")` works. Which task:
`--cluster FILE --job J --task N`, or with no --cluster the TF_CONFIG environment variable
as TensorFlow and Kubeflow's TFJob write it (common.tf_config); then it listens on every
interface (0.0.0.0: its own DNS name may resolve only once it is running) at its port.
Peers whose names do not resolve yet are retried until the RPC deadline, not fatal.
Logs "server <task> listening on HOST:PORT", serves until SIGTERM or SIGINT, exits 0.
"""

from __future__ import annotations

from common import blas_env

blas_env.configure(single_thread=True)  # before anything imports numpy

import argparse  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402

from common import cli, tf_config  # noqa: E402
from common.cluster import ClusterSpec  # noqa: E402
from master.lease_renewer import DEFAULT_LEASE_S  # noqa: E402
from master.master import DEFAULT_RPC_TIMEOUT  # noqa: E402
from master.server import DEFAULT_GRACE_SECONDS  # noqa: E402
from master.task_server import TaskServer  # noqa: E402
from worker import flags  # noqa: E402

log = logging.getLogger("server")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m server",
        description="Run one task of a flowrt cluster in TensorFlow's layout: WorkerService "
        "and MasterService on the task's port (as tf.distribute.Server). The task comes from "
        "--cluster/--job/--task, or from the TF_CONFIG environment variable.",
    )
    p.add_argument("--cluster", default=None, help="cluster YAML file (default: read TF_CONFIG)")
    p.add_argument(
        "--job",
        default=None,
        help="job name of this task (with --cluster; with TF_CONFIG it replaces "
        "TF_CONFIG's task, e.g. a StatefulSet pod passing its own index)",
    )
    p.add_argument("--task", type=int, default=None, help="task index (goes with --job)")
    flags.add_task_flags(
        p,
        bind_host_default="the host from --cluster; 0.0.0.0 with TF_CONFIG",
        rpc_timeout=DEFAULT_RPC_TIMEOUT,
        rpc_peers="other tasks; a peer whose name does not resolve yet is retried until then",
    )
    p.add_argument(
        "--default-device",
        default=None,
        help="where nodes without a device request run (default: this task)",
    )
    cli.add_session_lease_flag(p, DEFAULT_LEASE_S)
    flags.add_service_flags(p, DEFAULT_GRACE_SECONDS)
    args = p.parse_args(argv)
    flags.check_flags(p, args)
    if args.cluster is not None and (args.job is None or args.task is None):
        p.error("--cluster needs --job and --task")
    if (args.job is None) != (args.task is None):
        p.error("--job and --task go together (with TF_CONFIG they replace its task)")
    return args


def task_of_args(args: argparse.Namespace) -> tuple[tf_config.TaskConfig, str | None]:
    """(the task, the bind host) from --cluster/--job/--task or TF_CONFIG."""
    if args.cluster is not None:
        spec = ClusterSpec.load(args.cluster)
        spec.task_address(args.job, args.task)  # NotFoundError naming a task not in it
        return tf_config.TaskConfig(spec, args.job, args.task), args.bind_host
    return tf_config.from_env(job=args.job, task=args.task), args.bind_host or "0.0.0.0"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)

    def build() -> TaskServer:
        task, bind_host = task_of_args(args)
        return TaskServer(
            task.cluster,
            task.job,
            task.task,
            num_cpus=args.cpus,
            intra_op_threads=args.intra_op_threads,
            bind_host=bind_host,
            default_device=args.default_device,
            rpc_timeout=args.rpc_timeout,
            session_lease=args.session_lease,
            step_timeout=args.step_timeout,
        )

    return flags.run("server", args, log, build)


if __name__ == "__main__":
    sys.exit(main())
