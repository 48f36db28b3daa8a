"""Benchmark, CPU per step: microseconds of CPU each task process spends per step.

`python -m bench.cpu_per_step [--clients 1 32] [--seconds S] [--profile DIR]` starts our
cluster in TensorFlow's layout (deploy.launcher: `python -m server` tasks, the master in
worker 0's process, as bench.__main__.run_tf_client does), drives the small cross-worker
step (bench.workloads.trivial) with TensorFlow's client (bench.tf_models' `--drive`
child: N threads, one session each), and reads each task's utime + stime from
/proc/PID/stat before and after the timed steps. With `--profile DIR` every task is
sampled by py-spy during the timed steps (raw stacks of the thread holding the GIL, one
file per task and client count; "tf_" files for TensorFlow's). Prints one JSON object:
steps per second and CPU microseconds per step of worker0 (master + worker) and worker1
(of which in the kernel), and their threads' context switches per step, per client
count. With `--vs-tensorflow` the same on TensorFlow's own servers
(tf.distribute.Server per task, the master in worker 0's process), with ratios ours / TF.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence

from bench import tf_runtime
from bench.cluster import REPO
from bench.tf_runtime import _env

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(utime, stime) of process `pid` (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK  # fields 14, 15 of proc(5)


def context_switches(pid: int) -> int:
    """Voluntary + involuntary context switches of all the threads of process `pid`."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt")):
                        total += int(line.split()[1])
        except OSError:
            pass  # the thread ended meanwhile
    return total


def measure(
    target: str,
    pids: dict[str, int],
    clients: int,
    seconds: float,
    profile: str | None,
    runtime: str = "",
) -> dict[str, float]:
    """One `--drive` child of `clients` threads for `seconds`; CPU per step per task.
    `runtime` prefixes the profile files ("tf_": TensorFlow's servers)."""
    cmd = [sys.executable, "-m", "bench.tf_models", "--target", target]
    cmd += ["--drive", str(clients), "--seconds", str(seconds)]
    child = subprocess.Popen(
        cmd, cwd=REPO, env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    spies: list[subprocess.Popen] = []
    try:
        assert child.stdin is not None and child.stdout is not None
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("bench.tf_models --drive did not get ready")
        if profile:
            for name, pid in pids.items():
                out = os.path.join(profile, f"{runtime}{name}_{clients}clients.txt")
                spies.append(
                    subprocess.Popen(
                        ["py-spy", "record", "-p", str(pid), "-r", "200", "-f", "raw", "--gil"]
                        + ["-d", str(int(seconds) + 1), "-o", out, "--nonblocking"],
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
        before = {name: (*cpu_seconds(pid), context_switches(pid)) for name, pid in pids.items()}
        child.stdin.write("go\n")
        child.stdin.flush()
        out, _ = child.communicate(timeout=seconds + 120)
        after = {name: (*cpu_seconds(pid), context_switches(pid)) for name, pid in pids.items()}
        done, elapsed = json.loads(out.strip().splitlines()[-1])
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for spy in spies:
            spy.wait()
    # The CPU is read after the child exits, so it spans slightly more than the counted
    # steps (the last in-flight ones and the sessions' close): an upper bound.
    result = {f"steps_per_s_{clients}_clients": round(done / elapsed, 1)}
    for name in pids:
        user, system, switches = (a - b for a, b in zip(after[name], before[name]))
        suffix = f"{name}_{clients}_clients"
        result[f"cpu_us_per_step_{suffix}"] = round((user + system) / done * 1e6, 1)
        result[f"sys_cpu_us_per_step_{suffix}"] = round(system / done * 1e6, 1)
        result[f"context_switches_per_step_{suffix}"] = round(switches / done, 1)
    return result


def run_all(
    target: str, pids: dict[str, int], args: argparse.Namespace, runtime: str = ""
) -> dict[str, float]:
    result: dict[str, float] = {}
    for clients in args.clients:
        result.update(measure(target, pids, clients, args.seconds, args.profile, runtime))
    return result


def main(argv: Sequence[str] | None = None) -> None:
    from deploy.launcher import LocalCluster as TaskCluster

    p = argparse.ArgumentParser(prog="python -m bench.cpu_per_step")
    p.add_argument("--clients", type=int, nargs="+", default=[1, 32])
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--profile", default=None, help="a directory for py-spy's raw stacks")
    p.add_argument(
        "--vs-tensorflow",
        action="store_true",
        help="also measure TensorFlow's servers (bench.tf_runtime) and add ratios",
    )
    p.add_argument("--rounds", type=int, default=1, help="the last round's figures are kept")
    args = p.parse_args(argv)
    if args.profile:
        if shutil.which("py-spy") is None:
            p.error("--profile needs py-spy on PATH")
        os.makedirs(args.profile, exist_ok=True)
    result: dict[str, float] = {}
    # Both runtimes, alternating, so drifting load weighs on both: "tf_" keys for
    # TensorFlow's servers (whose master also lives in worker 0), and ratios ours / TF.
    for _ in range(args.rounds):
        with TaskCluster({"worker": 2}, layout="tensorflow") as cluster:
            pids = {name: task.proc.pid for name, task in cluster.tasks.items()}
            ours = run_all(cluster.target, pids, args)
        result.update(ours)
        if args.vs_tensorflow:
            with tf_runtime.servers(2) as (target, tf_pids):
                names = {f"worker{k}": pid for k, pid in enumerate(tf_pids)}
                tf = run_all(target, names, args, "tf_")  # its own profile files
            for key, value in tf.items():
                result[f"tf_{key}"] = value
                if value:
                    result[f"ratio_{key}"] = round(ours[key] / value, 3)
    result["load_average_1m"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
