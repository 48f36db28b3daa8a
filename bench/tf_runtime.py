"""Benchmark, TensorFlow side: the same workloads on TensorFlow's own distributed runtime.

`run(...)` spawns one `tf.distribute.Server` per task of a "worker" job on loopback
(`python -m bench.tf_runtime server ...`, one process per task), then a client process
(`python -m bench.tf_runtime client ...`) that opens tf.compat.v1.Sessions on
grpc://<worker 0> (TensorFlow's master lives in worker 0), imports the very same
GraphDef bytes as our runtime runs, and measures with bench.suite; it prints the figures
as JSON, which `run` returns. TensorFlow is imported only in those subprocesses.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from bench.cluster import REPO, free_ports, wait_for_line


def available() -> bool:
    return importlib.util.find_spec("tensorflow") is not None


def _env() -> dict[str, str]:
    return dict(
        os.environ,
        PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""),
        TF_CPP_MIN_LOG_LEVEL="2",
    )


@contextlib.contextmanager
def servers(num_workers: int, num_ps: int = 0) -> Iterator[tuple[str, list[int]]]:
    """One tf.distribute.Server process per task of jobs "worker" (and "ps") on loopback,
    killed on exit; yields (the target of worker 0, the worker tasks' pids)."""
    tmp = tempfile.mkdtemp(prefix="flowrt-bench-tf-")
    ports = free_ports(num_workers + num_ps)
    addresses = [f"127.0.0.1:{p}" for p in ports[:num_workers]]
    ps_addresses = [f"127.0.0.1:{p}" for p in ports[num_workers:]]
    tasks = [("worker", t) for t in range(num_workers)] + [("ps", t) for t in range(num_ps)]
    procs: list[subprocess.Popen] = []
    try:
        for job, task in tasks:
            log = os.path.join(tmp, f"tf_{job}{task}.log")
            with open(log, "w") as f:
                procs.append(
                    subprocess.Popen(
                        [
                            sys.executable,
                            "-m",
                            "bench.tf_runtime",
                            "server",
                            "--job",
                            job,
                            "--task",
                            str(task),
                            "--addresses",
                            ",".join(addresses),
                            "--ps-addresses",
                            ",".join(ps_addresses),
                        ],
                        cwd=REPO,
                        env=_env(),
                        stdout=f,
                        stderr=subprocess.STDOUT,
                    )
                )
        for (job, task), proc in zip(tasks, procs):
            wait_for_line(
                proc,
                os.path.join(tmp, f"tf_{job}{task}.log"),
                "TF_SERVER_READY",
                f"TensorFlow task {job}:{task}",
            )
        yield f"grpc://{addresses[0]}", [p.pid for p in procs[:num_workers]]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)  # tf Server.join() has no clean stop
            proc.wait()


def run(
    num_workers: int, only: Iterable[str] | None, quick: bool, repeat: int, sizes_mb: Sequence[int]
) -> dict[str, float]:
    from bench import tf_models

    only = list(only) if only else None
    model_keys = tf_models.keys(only)
    with servers(num_workers, 1 if model_keys else 0) as (target, pids):
        out = run_client(target, pids[0], num_workers, only, quick, repeat, sizes_mb)
        if model_keys:
            out.update(tf_models_client(target, model_keys, quick, repeat))
        return out


def run_client(
    target: str,
    receiver_pid: int,
    num_workers: int,
    only: Iterable[str] | None,
    quick: bool,
    repeat: int,
    sizes_mb: Sequence[int],
) -> dict[str, float]:
    """The workloads driven by an unmodified TensorFlow client (a subprocess) through the
    master at `target`: TensorFlow's own, or ours."""
    cmd = [
        sys.executable,
        "-m",
        "bench.tf_runtime",
        "client",
        "--target",
        target,
        "--receiver-pid",
        str(receiver_pid),
        "--num-workers",
        str(num_workers),
        "--repeat",
        str(repeat),
        "--sizes",
        ",".join(str(s) for s in sizes_mb),
    ]
    if quick:
        cmd.append("--quick")
    if only:
        cmd += ["--only", *only]
    out = subprocess.run(cmd, cwd=REPO, env=_env(), capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"TensorFlow client failed:\n{out.stderr[-4000:]}")
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def tf_models_client(
    target: str, keys: Sequence[str], quick: bool, repeat: int
) -> dict[str, float]:
    """bench.tf_models' figures (TensorFlow-built models, many clients) from a TensorFlow
    client subprocess driving the master at `target`."""
    cmd = [
        sys.executable,
        "-m",
        "bench.tf_models",
        "--target",
        target,
        "--repeat",
        str(repeat),
        "--only",
        *keys,
    ]
    if quick:
        cmd.append("--quick")
    out = subprocess.run(cmd, cwd=REPO, env=_env(), capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"TensorFlow model client failed:\n{out.stderr[-4000:]}")
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


# -- subprocess entry points ---------------------------------------------------------------
def _server(job: str, task: int, addresses: list[str], ps_addresses: list[str]) -> None:
    import tensorflow as tf

    jobs = {"worker": addresses}
    if ps_addresses:
        jobs["ps"] = ps_addresses
    cluster = tf.train.ClusterSpec(jobs)
    server = tf.distribute.Server(cluster, job_name=job, task_index=task, start=True)
    print("TF_SERVER_READY", flush=True)
    server.join()


class _TFSession:
    def __init__(self, tf: Any, target: str, graph_def: Any, config: Any) -> None:
        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.compat.v1.import_graph_def(
                tf.compat.v1.GraphDef.FromString(graph_def.SerializeToString()), name=""
            )
        tf_config = tf.compat.v1.ConfigProto.FromString(config.SerializeToString())
        self.sess = tf.compat.v1.Session(target, graph=self.graph, config=tf_config)

    def run(self, fetches: list[str], feeds: dict, targets: list[str]) -> list:
        return self.sess.run(list(fetches) + list(targets), feed_dict=feeds)[: len(fetches)]

    def close(self) -> None:
        self.sess.close()


def _client(args: argparse.Namespace) -> None:
    import tensorflow as tf

    from bench import suite
    from bench.workloads import config_proto

    config = config_proto()
    result = suite.run_workloads(
        lambda gd, session_config=None: _TFSession(tf, args.target, gd, session_config or config),
        receiver_pid=args.receiver_pid,
        num_workers=args.num_workers,
        only=args.only,
        quick=args.quick,
        repeat=args.repeat,
        sizes_mb=[int(s) for s in args.sizes.split(",") if s],
    )
    print(json.dumps(result))


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.tf_runtime")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("server")
    s.add_argument("--job", default="worker")
    s.add_argument("--task", type=int, required=True)
    s.add_argument("--addresses", required=True)
    s.add_argument("--ps-addresses", default="")
    c = sub.add_parser("client")
    c.add_argument("--target", required=True)
    c.add_argument("--receiver-pid", type=int, required=True)
    c.add_argument("--num-workers", type=int, required=True)
    c.add_argument("--repeat", type=int, default=1)
    c.add_argument("--sizes", default="")
    c.add_argument("--quick", action="store_true")
    c.add_argument("--only", nargs="+", default=None)
    args = p.parse_args(argv)
    if args.cmd == "server":
        _server(
            args.job,
            args.task,
            args.addresses.split(","),
            [a for a in args.ps_addresses.split(",") if a],
        )
    else:
        _client(args)


if __name__ == "__main__":
    main()
