"""Benchmark, measurement: run the workloads on a runtime and reduce them to figures.

Runtime-neutral: a runtime is a `open_session(graph_def, session_config=None) -> session`
callable (a ConfigProto other than the default one of bench.workloads.config_proto) whose
sessions have `run(fetches, feeds, targets) -> list[value]` and `close()` (our raw
MasterService client, or a tf.compat.v1.Session). Every figure is the median of the timed
steps; every step's value is checked. Peak RSS of a process is its VmHWM, reset through
/proc/PID/clear_refs ("5") before the measured steps.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from typing import Any

from bench import workloads
from bench.workloads import MB, Workload

TRANSFER_SIZES_MB = (1, 16, 64, 256)
FANOUT_WORKERS = (1, 2, 4, 8)

OpenSession = Callable[..., Any]  # (graph_def, session_config=None) -> session


def _steps(base: int, quick: bool, repeat: int) -> int:
    return max(3, (base // 4 if quick else base) * repeat)


def reset_peak_rss(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    raise OSError(f"no VmHWM for pid {pid}")


def time_steps(
    open_session: OpenSession,
    w: Workload,
    steps: int,
    warmup: int = 3,
    before_timed: Callable[[], None] | None = None,
) -> float:
    """Median wall time in ms of `steps` checked steps of `w` (after init and warmup)."""
    sess = open_session(w.graph_def)
    try:
        if w.init_targets:
            sess.run([], {}, w.init_targets)
        for _ in range(warmup):
            w.check(sess.run([w.fetch], w.feeds, [])[0])
        if before_timed is not None:
            before_timed()
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            value = sess.run([w.fetch], w.feeds, [])[0]
            times.append(time.perf_counter() - t0)
            w.check(value)
        return statistics.median(times) * 1e3
    finally:
        sess.close()


def run_workloads(
    open_session: OpenSession,
    *,
    receiver_pid: int | None,
    num_workers: int,
    only: Iterable[str] | None = None,
    quick: bool = False,
    repeat: int = 1,
    sizes_mb: Iterable[int] = TRANSFER_SIZES_MB,
    open_grpc_session: OpenSession | None = None,
) -> dict[str, float]:
    """The cluster figures: trivial, transfer, chain, MLP, fan-out, receiver peak RSS.
    With `open_grpc_session` (a client whose calls to the master all go over gRPC, as an
    unmodified TensorFlow client's do), also trivial_step_ms_grpc_client."""
    want = set(only) if only else None

    def wanted(key: str) -> bool:
        return want is None or any(key.startswith(k) for k in want)

    out: dict[str, float] = {}
    if wanted("trivial_step_ms"):
        out["trivial_step_ms"] = time_steps(
            open_session, workloads.trivial(), _steps(200, quick, repeat), warmup=10
        )
    if open_grpc_session is not None and wanted("trivial_step_ms_grpc_client"):
        out["trivial_step_ms_grpc_client"] = time_steps(
            open_grpc_session, workloads.trivial(), _steps(200, quick, repeat), warmup=10
        )
    for size in sizes_mb:
        key = f"transfer_GBps_{size}MB"
        rss_key = f"worker_peak_rss_mb_{size}MB"
        if not (wanted(key) or (size == 256 and wanted(rss_key))):
            continue
        w = workloads.transfer(size * MB)
        steps = _steps(max(5, 160 // size), quick, repeat)
        measure_rss = receiver_pid is not None and size == max(sizes_mb)
        hook = (lambda: reset_peak_rss(receiver_pid)) if measure_rss else None
        ms = time_steps(open_session, w, steps, warmup=2, before_timed=hook)
        out[key] = w.num_bytes / (ms / 1e3) / 1e9
        if measure_rss:
            out[f"worker_peak_rss_mb_{size}MB"] = peak_rss_mb(receiver_pid)
    if wanted("chain1000_step_ms"):
        out["chain1000_step_ms"] = time_steps(
            open_session, workloads.chain(1000), _steps(40, quick, repeat)
        )
    if wanted("chain1000_step_ms_optimized"):
        # Graph optimizations on (both runtimes' defaults, and explicit remapping: our
        # elementwise fusion, TensorFlow's Grappler remapper).
        out["chain1000_step_ms_optimized"] = time_steps(
            lambda gd: open_session(gd, workloads.optimized_config_proto()),
            workloads.chain(1000),
            _steps(40, quick, repeat),
        )
    if wanted("mlp_step_ms"):
        out["mlp_step_ms"] = time_steps(open_session, workloads.mlp(), _steps(20, quick, repeat))
    for n in FANOUT_WORKERS:
        key = f"fanout_step_ms_{n}_workers"
        if n <= num_workers and wanted(key):
            out[key] = time_steps(
                open_session, workloads.fanout(n), _steps(60, quick, repeat), warmup=5
            )
    return {k: round(v, 3) for k, v in out.items()}
