"""Benchmark, hardening figures on a cluster started by the CLIs (deploy.launcher):

  starvation_control_call_ms    median ListDevices answer while 64 steps are blocked (two
                                sessions of 32 dequeues on an empty queue); target < 100
  cancel_to_idle_ms             client cancels a RunStep spinning in a loop on a worker ->
                                that worker's CPU idle (no 50 ms window above 10% of a core);
                                target < 1,000
  master_peak_rss_mb_1GB_feed   the master's peak RSS (VmHWM, reset first) over one step
                                feeding a 1 GB float32 tensor to a worker; target < 2,100

Medians of `repeat` measurements; JSON-ready floats.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Iterable
from typing import Any

import grpc
import numpy as np

from bench.suite import peak_rss_mb, reset_peak_rss

KEYS = ("starvation_control_call_ms", "cancel_to_idle_ms", "master_peak_rss_mb_1GB_feed")
_TICKS = os.sysconf("SC_CLK_TCK")


def _wanted(only: Iterable[str] | None, key: str) -> bool:
    return not only or any(key.startswith(k) for k in only)


def run(only: Iterable[str] | None = None, repeat: int = 3) -> dict[str, float]:
    from deploy.launcher import LocalCluster

    out: dict[str, float] = {}
    only = list(only) if only else None
    with LocalCluster(
        jobs={"worker": 1},
        master_args=["--log-level", "WARNING"],
        worker_args=["--log-level", "WARNING"],
    ) as cluster:
        if _wanted(only, "starvation_control_call_ms"):
            out["starvation_control_call_ms"] = _starvation(cluster)
        if _wanted(only, "cancel_to_idle_ms"):
            out["cancel_to_idle_ms"] = statistics.median(
                _cancel_to_idle(cluster) for _ in range(repeat)
            )
        if _wanted(only, "master_peak_rss_mb_1GB_feed"):
            out["master_peak_rss_mb_1GB_feed"] = _feed_rss(cluster)
    return out


def _stub(cluster: Any) -> tuple[grpc.Channel, Any]:
    from rpc.channels import GRPC_OPTIONS
    from rpc.service_paths import master_stub

    channel = grpc.insecure_channel(cluster.master_address, options=GRPC_OPTIONS)
    return channel, master_stub(channel)


def _session(stub: Any, graph_def: Any) -> str:
    from protos import master_pb2

    request = master_pb2.CreateSessionRequest()
    request.graph_def.CopyFrom(graph_def)
    return str(stub.CreateSession(request, timeout=60).session_handle)


def _starvation(cluster: Any, blocked: int = 64, calls: int = 20) -> float:
    import client as tf
    from protos import master_pb2

    with tf.Graph().as_default() as g:
        with tf.device("/job:worker/task:0"):
            tf.FIFOQueue(1, tf.float32, shapes=[[]], shared_name="bench_never_fed").dequeue(
                name="wait"
            )
        graph_def = g.as_graph_def()
    channel, stub = _stub(cluster)
    handles = [_session(stub, graph_def) for _ in range(2)]
    futures = [
        stub.RunStep.future(
            master_pb2.RunStepRequest(session_handle=h, fetch=["wait:0"]), timeout=300
        )
        for h in handles
        for _ in range(blocked // 2)
    ]
    try:
        time.sleep(2.0)  # every step reaches the worker and blocks there
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            stub.ListDevices(master_pb2.ListDevicesRequest(), timeout=30)
            times.append((time.perf_counter() - start) * 1000.0)
        return round(statistics.median(times), 2)
    finally:
        for h in handles:
            stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=h), timeout=60)
        for f in futures:
            f.cancel()
        channel.close()


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _cancel_to_idle(cluster: Any) -> float:
    import client as tf
    from protos import master_pb2

    with tf.Graph().as_default() as g:
        with tf.device("/job:worker/task:0"):
            tf.while_loop(
                lambda i: i < 10**12, lambda i: i + 1, [tf.constant(0, tf.int64)], name="spin"
            )
        graph_def = g.as_graph_def()
    channel, stub = _stub(cluster)
    handle = _session(stub, graph_def)
    pid = cluster.tasks["worker0"].proc.pid
    try:
        future = stub.RunStep.future(
            master_pb2.RunStepRequest(session_handle=handle, fetch=["spin/Exit:0"]), timeout=300
        )
        spin_start = _cpu_s(pid)
        time.sleep(1.5)  # spinning
        if future.done() or _cpu_s(pid) - spin_start < 0.2:
            raise RuntimeError(
                f"the loop step is not running on the worker: {future.done()} "
                f"{_cpu_s(pid) - spin_start:.2f} s CPU"
            )
        cancelled = time.perf_counter()
        future.cancel()
        window = 0.05
        while time.perf_counter() - cancelled < 30:
            before = _cpu_s(pid)
            time.sleep(window)
            if _cpu_s(pid) - before < 0.1 * window:
                return round((time.perf_counter() - cancelled - window) * 1000.0, 1)
        return 30000.0
    finally:
        stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=handle), timeout=60)
        channel.close()


def _feed_rss(cluster: Any) -> float:
    import client as tf

    pid = cluster.tasks["master"].proc.pid
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        with tf.device("/job:worker/task:0"):
            y = tf.reduce_sum(x)
        with tf.Session(cluster.target) as sess:
            sess.run(y, {x: np.ones(4, np.float32)})
            big = np.ones(1 << 28, np.float32)  # 1 GiB
            reset_peak_rss(pid)
            sess.run(y, {x: big})
            return round(peak_rss_mb(pid), 1)
