"""Deploy, local launcher: a whole cluster on loopback, started the way a user starts it.

`LocalCluster` writes a cluster file with free loopback ports (a master, 2 workers, 1 ps
by default; `ports` fixes them), starts every task with the user-facing commands
(`python -m worker --cluster FILE --job J --task N`, `python -m master --cluster FILE`),
waits for each process's "listening on" log line, and stops them all (SIGTERM, then
SIGKILL after a grace period), also when start-up fails. With `layout="tensorflow"` there
is no master process: every task is `python -m server` given only its TF_CONFIG (as a
Kubernetes pod gets it), and clients dial the chief or worker 0. Tasks die with the
launcher, however it dies: a watchdog child (deploy.reaper) stops them and removes the
temporary directory when the launcher's pipe closes. `main` (= `python -m deploy`) runs
examples/demo.py against the master, or with --stay-up serves until interrupted. Not
thread-safe; one owner.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import yaml

from common import cli
from deploy.netns import PORT, NetnsBed
from deploy.netns import available as netns_available
from deploy.reaper import Reaper

REPO_ROOT = Path(__file__).resolve().parent.parent
DEMO = REPO_ROOT / "examples" / "demo.py"
START_TIMEOUT_S = 60.0
STOP_GRACE_S = 10.0


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on right now (bind port 0, read it, release it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def cluster_dict(
    jobs: dict[str, int],
    host: str = "127.0.0.1",
    ports: Sequence[int] | None = None,
    layout: str = "master",
    hosts: Sequence[str] | None = None,
) -> dict:
    """A cluster file's content: a master (layout "master") and `jobs[job]` tasks per job
    on `host` (or one host each from `hosts`), at `ports` in that order (the master
    first), else on free ports (netns.PORT on hosts of their own)."""
    count = sum(jobs.values()) + (layout == "master")
    if ports is not None and len(ports) != count:
        raise ValueError(
            f"{count} ports needed (master first, then each job's tasks), got {len(ports)}"
        )
    if hosts is not None and len(hosts) != count:
        raise ValueError(f"{count} hosts needed, got {len(hosts)}")
    if ports is None:
        ports = [PORT] * count if hosts else [free_port(host) for _ in range(count)]
    chosen = iter(f"{h}:{p}" for h, p in zip(hosts or [host] * count, ports))
    data: dict = {"master": next(chosen)} if layout == "master" else {"layout": layout}
    data["jobs"] = {job: [next(chosen) for _ in range(n)] for job, n in jobs.items()}
    return data


def write_cluster_file(
    path: str | Path,
    jobs: dict[str, int],
    host: str = "127.0.0.1",
    ports: Sequence[int] | None = None,
) -> dict:
    """A cluster file with a master and `jobs[job]` tasks per job on free ports of `host`."""
    data = cluster_dict(jobs, host, ports)
    Path(path).write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return data


def tf_config_env(data: dict, job: str, task: int) -> dict[str, str]:
    """The TF_CONFIG a task of a cluster dict gets, as an environment entry."""
    return {
        "TF_CONFIG": json.dumps({"cluster": data["jobs"], "task": {"type": job, "index": task}})
    }


def child_env() -> dict[str, str]:
    """The environment for a task: this checkout importable even when not installed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


class Task:
    """One child process; its stderr is echoed (prefixed) and scanned for "listening on"."""

    def __init__(
        self, name: str, argv: Sequence[str], log: IO[str] | None, env: dict[str, str] | None = None
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.listening = threading.Event()
        self.address = ""
        self.lines: list[str] = []
        self._log = log
        self.proc = subprocess.Popen(
            self.argv,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO_ROOT,
            env={**child_env(), **(env or {})},
        )
        self._reader = threading.Thread(target=self._read, name=f"log-{name}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            line = line.rstrip("\n")
            self.lines.append(line)
            if self._log is not None:
                print(f"[{self.name}] {line}", file=self._log, flush=True)
            if " listening on " in line and not self.listening.is_set():
                self.address = line.rsplit(" ", 1)[-1]
                self.listening.set()
        self.listening.set()  # EOF: the process ended; wait_listening reports it

    def wait_listening(self, timeout: float) -> None:
        if not self.listening.wait(timeout) or not self.address:
            tail = "\n".join(self.lines[-20:])
            raise RuntimeError(f"{self.name} did not start (exit code {self.proc.poll()}):\n{tail}")

    def stop(self, grace: float = STOP_GRACE_S) -> int:
        """SIGTERM, wait up to `grace`, then SIGKILL; the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(5.0)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def worker_argv(cluster_file: str | Path, job: str, task: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "worker",
        "--cluster",
        str(cluster_file),
        "--job",
        job,
        "--task",
        str(task),
    ]


def master_argv(cluster_file: str | Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "master", "--cluster", str(cluster_file), *extra]


def server_argv(*extra: str) -> list[str]:
    """A task in TensorFlow's layout; which task comes from its TF_CONFIG."""
    return [sys.executable, "-m", "server", *extra]


class LocalCluster:
    """Master + worker tasks as child processes on loopback (or, in TensorFlow's layout,
    `python -m server` tasks given only TF_CONFIG)."""

    def __init__(
        self,
        jobs: dict[str, int] | None = None,
        workdir: str | Path | None = None,
        log: IO[str] | None = None,
        master_args: Sequence[str] = (),
        worker_args: Sequence[str] = (),
        *,
        layout: str = "master",
        ports: Sequence[int] | None = None,
        netns: NetnsBed | None = None,
    ) -> None:
        self.jobs = jobs or {"worker": 2, "ps": 1}
        self.layout = layout
        self.ports = list(ports) if ports is not None else None
        self._tmp = None if workdir else tempfile.TemporaryDirectory(prefix="flowrt-")
        self.workdir = Path(workdir or self._tmp.name)  # type: ignore[union-attr]
        self.cluster_file = self.workdir / "cluster.yaml"
        self.log = log
        self.master_args = list(master_args)
        self.worker_args = list(worker_args)  # appended to every worker task's command
        self.tasks: dict[str, Task] = {}
        self.retired: list[Task] = []  # tasks replaced by restart_task
        self.spec: dict = {}
        self._reaper: Reaper | None = None
        # A host per task (the master first), from a started NetnsBed of that many hosts.
        self.netns = netns
        self.hosts: dict[str, int] = {}  # task name -> host index in `netns`

    @property
    def master_address(self) -> str:
        """Where clients dial: the master, or the chief (else worker 0) in TF's layout."""
        if self.layout == "tensorflow":
            job = "chief" if "chief" in self.spec["jobs"] else "worker"
            return self.spec["jobs"][job][0]
        return self.spec["master"]

    def dashboard_url(self) -> str | None:
        """The URL the master logged for its dashboard (--dashboard-port), if any."""
        for line in self.tasks["master"].lines:
            _, found, url = line.partition(" dashboard on ")
            if found:
                return url.strip()
        return None

    @property
    def target(self) -> str:
        return f"grpc://{self.master_address}"

    def start(self, timeout: float = START_TIMEOUT_S) -> LocalCluster:
        names = ["master"] * (self.layout == "master") + [
            f"{job}{i}" for job, n in self.jobs.items() for i in range(n)
        ]
        self.hosts = {name: k for k, name in enumerate(names)}
        self.spec = cluster_dict(
            self.jobs,
            ports=self.ports,
            layout=self.layout,
            hosts=self.netns.addresses[: len(names)] if self.netns else None,
        )
        if self.layout == "master":  # TF's layout gets TF_CONFIG only: no file
            self.cluster_file.write_text(
                yaml.safe_dump(self.spec, sort_keys=False), encoding="utf-8"
            )
        self._reaper = Reaper([str(self.workdir)] if self._tmp else [], child_env(), str(REPO_ROOT))
        if self.netns is not None and self.netns.owner is self:
            self._reaper.watch_netns(self.netns.created, self.netns.links)
        try:
            for job, n in self.jobs.items():
                for i in range(n):
                    self.start_task(job, i)
            if self.layout == "master":
                self._spawn("master", master_argv(self.cluster_file, *self.master_args))
            for task in self.tasks.values():
                task.wait_listening(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _spawn(self, name: str, argv: Sequence[str], env: dict[str, str] | None = None) -> Task:
        if self.netns is not None:
            argv = [*self.netns.prefix(self.hosts[name]), *argv]
        task = self.tasks[name] = Task(name, argv, self.log, env)
        self.watch(task.proc.pid)
        return task

    def watch(self, pid: int) -> None:
        """Have the watchdog stop process `pid` too if the launcher dies."""
        if self._reaper is not None:
            self._reaper.watch(pid)

    def start_task(self, job: str, index: int, timeout: float | None = None) -> Task:
        """(Re)start a worker task on its cluster-file address (with `worker_args`)."""
        name = f"{job}{index}"
        if self.layout == "tensorflow":
            task = self._spawn(
                name, server_argv(*self.worker_args), tf_config_env(self.spec, job, index)
            )
        else:
            argv = [*worker_argv(self.cluster_file, job, index), *self.worker_args]
            task = self._spawn(name, argv)
        if timeout is not None:
            task.wait_listening(timeout)
        return task

    def restart_task(self, job: str, index: int, timeout: float = START_TIMEOUT_S) -> Task:
        """Start a worker task again with the same command on the same address (after it
        died or was killed; a live one is stopped first), once it listens; the old Task
        (its log lines) stays in `retired`."""
        old = self.tasks[f"{job}{index}"]
        old.stop()
        self.retired.append(old)
        return self.start_task(job, index, timeout)

    def stop(self) -> dict[str, int]:
        """Stop every task (master first); their exit codes."""
        codes = {}
        for name in sorted(self.tasks, key=lambda n: n != "master"):
            codes[name] = self.tasks[name].stop()
        if self.netns is not None and self.netns.owner is self:
            self.netns.stop()
        if self._reaper is not None:
            self._reaper.close()
            self._reaper = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        return codes

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m deploy",
        description="Start a local cluster (master, 2 workers, 1 ps) on loopback with the "
        "same commands a user runs, run examples/demo.py against it, and stop it.",
    )
    p.add_argument(
        "--stay-up",
        action="store_true",
        help="after the demo keep the cluster running until Ctrl-C; prints the "
        "grpc:// target for clients",
    )
    p.add_argument("--no-demo", action="store_true", help="skip the demo")
    p.add_argument("--steps", type=int, default=3, help="demo steps (default 3)")
    p.add_argument("--quiet", action="store_true", help="do not echo the tasks' logs")
    p.add_argument(
        "--layout",
        choices=["master", "tensorflow"],
        default="master",
        help="master: a master process and worker tasks (default); tensorflow: "
        "every task is `python -m server` given only TF_CONFIG, clients dial "
        "worker 0",
    )
    p.add_argument(
        "--netns",
        action="store_true",
        help="each task on a host of its own: a Linux network namespace with its "
        "own address on a private bridge (needs root and iproute2)",
    )
    p.add_argument(
        "--dashboard-port",
        type=int,
        default=0,
        metavar="PORT",
        help="the master's web dashboard on this port (default 0: a free one; "
        "its URL is printed); -1 turns it off (layout master only)",
    )
    p.add_argument(
        "--ports",
        default=None,
        metavar="P,P,...",
        help="fixed ports instead of free ones: the master's first (layout "
        "master), then worker 0, worker 1, ps 0",
    )
    args = p.parse_args(argv)
    if args.ports is not None:
        try:
            args.ports = [int(x) for x in args.ports.split(",")]
        except ValueError:
            p.error(f"--ports: expected comma-separated port numbers, got {args.ports!r}")
        need = 3 + (args.layout == "master")
        if len(args.ports) != need or not all(0 < x < 65536 for x in args.ports):
            p.error(f"--ports: {need} ports in 1..65535 needed with --layout {args.layout}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    log = None if args.quiet else sys.stderr
    stop, restore_signals = cli.stop_on_signals()
    bed = None
    if args.netns:
        reason = netns_available()
        if reason is not None:
            print(f"--netns: {reason}", file=sys.stderr)
            return 2
        bed = NetnsBed(4).start()
    dashboard = args.layout == "master" and args.dashboard_port >= 0
    master_args = ["--dashboard-port", str(args.dashboard_port)] if dashboard else []
    if dashboard and bed is not None:
        master_args += ["--dashboard-host", "0.0.0.0"]  # reachable from the host's side
    cluster = LocalCluster(
        log=log, layout=args.layout, ports=args.ports, netns=bed, master_args=master_args
    )
    if bed is not None:
        bed.owner = cluster  # the cluster's stop (or its watchdog) deletes the namespaces
    t0 = time.monotonic()
    cluster.start()
    code = 0
    try:
        where = (
            f"cluster file {cluster.cluster_file}"
            if args.layout == "master"
            else "tasks given TF_CONFIG"
        )
        print(
            f"cluster up in {time.monotonic() - t0:.1f}s: master at {cluster.target}; {where}",
            flush=True,
        )
        if dashboard:
            print(f"dashboard: {cluster.dashboard_url()}", flush=True)
        if not args.no_demo:
            demo = subprocess.Popen(
                [sys.executable, str(DEMO), "--target", cluster.target, "--steps", str(args.steps)],
                cwd=REPO_ROOT,
                env=child_env(),
            )
            cluster.watch(demo.pid)
            code = demo.wait()
        if args.stay_up:
            print(
                f"cluster is up; connect with tf.compat.v1.Session({cluster.target!r}). "
                "Ctrl-C stops it.",
                flush=True,
            )
            while not stop.wait(1.0):
                if any(t.proc.poll() is not None for t in cluster.tasks.values()):
                    print("a task exited; stopping the cluster", flush=True)
                    code = 1
                    break
    finally:
        codes = cluster.stop()
        restore_signals()
        print("stopped: " + ", ".join(f"{n} exit {c}" for n, c in codes.items()), flush=True)
    return code
