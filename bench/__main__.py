"""Benchmark, command line: `python -m bench [--quick] [--repeat N] [--rounds N]
[--vs-tensorflow] [--only KEY...]`.

Starts its own loopback cluster (`python -m worker` x N and `python -m master` as
subprocesses), runs the workloads of bench.workloads through raw MasterService RPCs,
adds the planning (bench.bench_plan) and executor-only (bench.bench_executor) figures, and
prints ONE JSON object. With --vs-tensorflow (and TensorFlow installed) the same
GraphDefs also run on TensorFlow's runtime (bench.tf_runtime: tf.distribute.Server tasks
as subprocesses) and the JSON gains "tf_<key>" and "ratio_<key>" (ours / TF) entries.
The machine is noisy: every figure is a median over its timed steps, and the cluster
figures are then the median over `--rounds` rounds (fresh clusters each round, ours and
TensorFlow's alternating; a ratio is the median of the per-round ratios).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from bench import bench_security, suite
from bench.cluster import REPO, LocalCluster, MasterClient
from bench.workloads import config_proto
from common import blas_env

PLAN_SIZES = (1000, 10000, 100000)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer steps and smaller sizes")
    p.add_argument("--repeat", type=int, default=1, help="multiply the timed steps by N")
    p.add_argument(
        "--vs-tensorflow",
        action="store_true",
        help="also run the workloads on TensorFlow's runtime and add ratios",
    )
    p.add_argument(
        "--only",
        nargs="+",
        default=None,
        metavar="KEY",
        help="only the figures whose key starts with one of these prefixes",
    )
    p.add_argument(
        "--transfer-sizes",
        default=None,
        help="comma-separated MB sizes (default 1,16,64,256; --quick: 1,16)",
    )
    p.add_argument(
        "--plan-sizes", default=None, help="comma-separated node counts (default 1000,10000,100000)"
    )
    p.add_argument(
        "--colocate",
        action="store_true",
        help="run our worker task 0 inside the master's process (python -m master "
        "--colocate), the layout of TensorFlow's servers, whose master lives in "
        "worker 0",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="run the cluster workloads this many times, alternating our runtime "
        "and TensorFlow's, and report medians across rounds (default 3; --quick: 1)",
    )
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be >= 1")
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    if args.rounds < 1:
        p.error("--rounds must be >= 1")
    if args.only and _wanted(args.only, "mlp_overhead_pct"):
        args.only = [*args.only, "mlp_step_ms", "mlp_kernels_ms"]  # what the overhead needs
    return args


def _sizes(text: str | None, default: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(s) for s in text.split(",")) if text else tuple(default)


def _wanted(only: Sequence[str] | None, key: str) -> bool:
    return not only or any(key.startswith(k) for k in only)


def _model_keys(args: argparse.Namespace) -> list[str]:
    """bench.tf_models' figures to run: they need TensorFlow's client."""
    from bench import tf_models, tf_runtime

    return tf_models.keys(args.only) if tf_runtime.available() else []


def run_ours(args: argparse.Namespace, sizes_mb: Sequence[int]) -> dict[str, float]:
    num_workers = max(suite.FANOUT_WORKERS) if _wanted(args.only, "fanout") else 2
    config = config_proto()
    with LocalCluster(num_workers, colocate=args.colocate) as cluster:

        def open_session(graph_def: Any, session_config: Any = None) -> Any:
            return _Adapter(
                MasterClient(cluster.master_address, graph_def, session_config or config)
            )

        def open_grpc_session(graph_def: Any) -> Any:  # the client's calls all over gRPC
            return _Adapter(MasterClient(cluster.master_address, graph_def, config, local=False))

        out = suite.run_workloads(
            open_session,
            receiver_pid=cluster.worker_pids[0],
            num_workers=num_workers,
            only=args.only,
            quick=args.quick,
            repeat=args.repeat,
            sizes_mb=sizes_mb,
            open_grpc_session=open_grpc_session,
        )
        out.update(mlp_kernels(args, cluster.master_address))
    out.update(run_tf_client(args, num_workers))
    return out


def run_tf_client(args: argparse.Namespace, num_workers: int) -> dict[str, float]:
    """The figures an unmodified TensorFlow client measures on our runtime (over gRPC, as
    it must): trivial_step_ms_tf_client and bench.tf_models' (models, many clients).
    They run in TensorFlow's layout, as TensorFlow's side of the comparison does
    (bench.tf_runtime: one tf.distribute.Server per task, the client dialing worker 0,
    whose process hosts the master): one `python -m server` per task (deploy.launcher,
    TF_CONFIG), the layout TF_CONFIG deployments (Kubernetes, TFJob) run."""
    from bench import tf_runtime
    from deploy.launcher import LocalCluster as TaskCluster

    model_keys = _model_keys(args)
    trivial = (
        args.vs_tensorflow
        and tf_runtime.available()
        and _wanted(args.only, "trivial_step_ms_tf_client")
    )
    if not (model_keys or trivial):
        return {}
    jobs = {"worker": num_workers, "ps": 1} if model_keys else {"worker": num_workers}
    out: dict[str, float] = {}
    with TaskCluster(jobs, layout="tensorflow") as tasks:
        if trivial:
            tf_client = tf_runtime.run_client(
                tasks.target,
                tasks.tasks["worker0"].proc.pid,
                num_workers,
                ["trivial"],
                args.quick,
                args.repeat,
                (),
            )
            out["trivial_step_ms_tf_client"] = tf_client["trivial_step_ms"]
        if model_keys:
            out.update(
                tf_runtime.tf_models_client(tasks.target, model_keys, args.quick, args.repeat)
            )
    return out


class _Adapter:
    def __init__(self, client: MasterClient) -> None:
        self.client = client

    def run(self, fetches: list[str], feeds: dict, targets: list[str]) -> list:
        return self.client.run(fetches, feeds, targets)

    def close(self) -> None:
        self.client.close()


def run_local(args: argparse.Namespace, plan_sizes: Sequence[int]) -> dict[str, float]:
    """Single-process figures: planning and the executor alone."""
    out: dict[str, float] = {}
    runs = 1 if args.quick else 3
    if any(_wanted(args.only, f"plan_ms_{s // 1000}k_nodes") for s in plan_sizes):
        from bench import bench_plan

        for size in plan_sizes:
            label = f"{size // 1000}k" if size % 1000 == 0 else str(size)
            key = f"plan_ms_{label}_nodes"
            if _wanted(args.only, key):
                out[key] = round(bench_plan.time_plan(size, runs * args.repeat), 1)
    if _wanted(args.only, "chain1000_executor_step_ms"):
        from bench import bench_executor

        bench_executor._register_trivial_add()
        steps = (40 if args.quick else 200) * args.repeat
        out["chain1000_executor_step_ms"] = bench_executor.median_step_ms(steps, 1000, "AddV2")
    return out


def mlp_kernels(args: argparse.Namespace, master_address: str) -> dict[str, float]:
    """The MLP's kernels alone, in a process whose BLAS is set up as our workers' is, which
    also drives the MLP step on our cluster: the two alternate, step and kernels, so one
    clock times both at the same moments of a drifting load (bench.bench_kernels)."""
    if not _wanted(args.only, "mlp_kernels_ms"):
        return {}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.bench_kernels",
            "--target",
            master_address,
            "--pairs",
            str((10 if args.quick else 40) * args.repeat),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def mlp_overhead(result: dict[str, Any]) -> None:
    """mlp_overhead_pct: the MLP step over the sum of its kernels' times, in percent (unless
    bench.bench_kernels measured it from alternating pairs)."""
    if "mlp_overhead_pct" in result:
        return
    if "mlp_step_ms" in result and "mlp_kernels_ms" in result:
        result["mlp_overhead_pct"] = round(
            (result["mlp_step_ms"] / result["mlp_kernels_ms"] - 1.0) * 100.0, 1
        )


def add_ratios(ours: dict[str, float], tf: dict[str, float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in tf.items():
        out[f"tf_{key}"] = value
        if key in ours and value:
            out[f"ratio_{_short(key)}"] = round(ours[key] / value, 3)
    return out


def median_of_rounds(rounds: Sequence[dict[str, float]]) -> dict[str, float]:
    """Per key, the median across rounds (keys missing from a round are skipped)."""
    keys = sorted({k for r in rounds for k in r})
    return {k: round(statistics.median([r[k] for r in rounds if k in r]), 3) for k in keys}


def _short(key: str) -> str:
    """ratio key: "trivial_step_ms" -> "trivial_step", "transfer_GBps_64MB" -> same."""
    return key.removesuffix("_ms") if key.endswith("_step_ms") else key


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sizes_mb = _sizes(args.transfer_sizes, (1, 16) if args.quick else suite.TRANSFER_SIZES_MB)
    plan_sizes = _sizes(args.plan_sizes, (1000, 10000) if args.quick else PLAN_SIZES)
    vs_tf = args.vs_tensorflow
    if vs_tf:
        from bench import tf_runtime

        if not tf_runtime.available():
            print("bench: TensorFlow is not installed; --vs-tensorflow skipped", file=sys.stderr)
            vs_tf = False
    # Rounds alternate the two runtimes, so load that drifts during the run weighs on both;
    # each ratio is the median of the per-round ratios.
    ours_rounds: list[dict[str, float]] = []
    ratio_rounds: list[dict[str, float]] = []
    for _ in range(args.rounds):
        ours = run_ours(args, sizes_mb)
        mlp_overhead(ours)
        ours_rounds.append(ours)
        if vs_tf:
            num_workers = max(suite.FANOUT_WORKERS) if _wanted(args.only, "fanout") else 2
            tf = tf_runtime.run(num_workers, args.only, args.quick, args.repeat, sizes_mb)
            ratio_rounds.append(add_ratios(ours, tf))
    result: dict[str, Any] = median_of_rounds(ours_rounds)
    result.update(run_local(args, plan_sizes))
    if any(_wanted(args.only, k) for k in bench_security.KEYS):
        result.update(bench_security.run(args.only, repeat=1 if args.quick else 3))
    if vs_tf:
        result.update(median_of_rounds(ratio_rounds))
    result["rounds"] = args.rounds
    if any(k in result for k in ("trivial_step_ms_tf_client", *_model_keys(args))):
        result["tf_client_layout"] = "tensorflow"  # run_tf_client: python -m server tasks
    if args.colocate:
        result["colocated"] = 1
    result["load_average_1m"] = round(os.getloadavg()[0], 2)
    # The OpenBLAS kernels our workers run MatMul with (common.blas_env; an environment
    # that pins OPENBLAS_CORETYPE wins).
    result["worker_openblas_coretype"] = os.environ.get("OPENBLAS_CORETYPE") or (
        blas_env.coretype_for(blas_env.cpu_flags()) or "auto"
    )
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
