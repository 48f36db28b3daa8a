"""Benchmark, cross-host figures: the trivial step and a 64 MB transfer between two hosts,
on our runtime and on TensorFlow's, over the same kind of network.

Each runtime gets a fresh multi-host test bed (deploy.netns: every task in a network
namespace of its own on a bridge; the client is this process's namespace, a third host)
and TensorFlow's layout on both sides: two worker tasks, the master in worker 0 (ours:
`python -m server` given TF_CONFIG; TensorFlow's: tf.distribute.Server). Nothing crosses
a same-host fast path: every byte goes through TCP over veth pairs and a bridge. Our
runtime is driven by our client with every call over gRPC, TensorFlow's by an unmodified
TensorFlow client (bench.tf_runtime); both run the same GraphDefs (bench.workloads).
Rounds alternate the runtimes; each figure is the median over rounds, the ratio the median
of per-round ratios. `python -m bench.cross_host [--rounds N] [--quick]` prints JSON.
Needs root and iproute2 (deploy.netns.available says why not).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence

from bench import suite, tf_runtime, workloads
from bench.cluster import REPO, MasterClient, wait_for_line
from deploy import netns
from deploy.launcher import LocalCluster

KEYS = ["trivial_step_ms", "transfer_GBps_64MB"]
SUFFIX = "_cross_host"


def ours(quick: bool, repeat: int) -> dict[str, float]:
    with netns.NetnsBed(2) as bed:
        cluster = LocalCluster({"worker": 2}, layout="tensorflow", netns=bed).start()
        try:
            target = cluster.master_address
            return suite.run_workloads(
                lambda gd: MasterClient(target, gd, workloads.config_proto(), local=False),
                receiver_pid=None,
                num_workers=2,
                only=KEYS,
                quick=quick,
                repeat=repeat,
                sizes_mb=[64],
            )
        finally:
            cluster.stop()


def tensorflow(quick: bool, repeat: int) -> dict[str, float]:
    with netns.NetnsBed(2) as bed, tempfile.TemporaryDirectory(prefix="flowrt-xh-") as tmp:
        addresses = [f"{a}:{netns.PORT}" for a in bed.addresses]
        procs = []
        try:
            for task in range(2):
                log = os.path.join(tmp, f"tf{task}.log")
                with open(log, "w") as f:
                    procs.append(
                        subprocess.Popen(
                            [
                                *bed.prefix(task),
                                sys.executable,
                                "-m",
                                "bench.tf_runtime",
                                "server",
                                "--task",
                                str(task),
                                "--addresses",
                                ",".join(addresses),
                            ],
                            cwd=REPO,
                            env=dict(os.environ, PYTHONPATH=REPO, TF_CPP_MIN_LOG_LEVEL="2"),
                            stdout=f,
                            stderr=subprocess.STDOUT,
                        )
                    )
                wait_for_line(procs[-1], log, "TF_SERVER_READY", f"TensorFlow task {task}")
            return tf_runtime.run_client(
                f"grpc://{addresses[0]}", procs[0].pid, 2, KEYS, quick, repeat, [64]
            )
        finally:
            for proc in procs:
                proc.kill()  # tf Server.join() has no clean stop
                proc.wait()


def run(rounds: int, quick: bool, repeat: int = 1) -> dict[str, float]:
    per_round: list[tuple[dict[str, float], dict[str, float]]] = []
    with_tf = tf_runtime.available()
    for _ in range(rounds):
        mine = ours(quick, repeat)
        theirs = tensorflow(quick, repeat) if with_tf else {}
        per_round.append((mine, theirs))
    out: dict[str, float] = {}
    for key in KEYS:
        out[key + SUFFIX] = round(statistics.median(m[key] for m, _ in per_round), 3)
        if with_tf:
            out[key + SUFFIX + "_tf"] = round(statistics.median(t[key] for _, t in per_round), 3)
            out[key + SUFFIX + "_ratio"] = round(
                statistics.median(m[key] / t[key] for m, t in per_round), 3
            )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.cross_host", description=__doc__)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="fewer steps (a smoke run)")
    args = p.parse_args(argv)
    reason = netns.available()
    if reason is not None:
        print(f"cross-host bench unavailable: {reason}", file=sys.stderr)
        return 2
    print(json.dumps(run(args.rounds, args.quick)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
