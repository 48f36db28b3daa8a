"""common.metrics: the process registry's families (names, types, labels, buckets), the
hot-path helpers' exact counts, transport detection of shared-memory values, and the HTTP
endpoint on port 0 parsed back from Prometheus' text format. The registry is
process-wide, so counts are read as differences."""

from __future__ import annotations

import mmap
import socket
import urllib.error
import urllib.request

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from common import metrics
from common.errors import DeadlineExceededError, InvalidArgumentError, UnavailableError

FAMILIES = {
    "flowrt_master_sessions": ("gauge", ()),
    "flowrt_master_steps": ("counter", ("outcome",)),
    "flowrt_master_step_seconds": ("histogram", ()),
    "flowrt_master_plan_seconds": ("histogram", ()),
    "flowrt_master_partitions_registered": ("counter", ()),
    "flowrt_worker_run_graph": ("counter", ("outcome",)),
    "flowrt_worker_run_graph_seconds": ("histogram", ()),
    "flowrt_worker_registered_graphs": ("gauge", ()),
    "flowrt_worker_active_steps": ("gauge", ()),
    "flowrt_worker_live_steps": ("gauge", ()),
    "flowrt_worker_aborted_steps": ("counter", ()),
    "flowrt_worker_recv_bytes": ("counter", ("transport",)),
    "flowrt_worker_sent_bytes": ("counter", ("transport",)),
    "flowrt_worker_recv_tensors": ("counter", ("transport",)),
}


def value(name: str, **labels: str) -> float:
    got = metrics.REGISTRY.get_sample_value(name, labels)
    return 0.0 if got is None else got


def test_registry_holds_our_families_and_the_process_ones():
    families = {f.name: f for f in metrics.REGISTRY.collect()}
    ours = {name: (f.type, f) for name, f in families.items() if name.startswith("flowrt_")}
    assert set(ours) == set(FAMILIES)
    for name, (kind, labels) in FAMILIES.items():
        assert ours[name][0] == kind, name
        assert ours[name][1].documentation, name
        for sample in ours[name][1].samples:
            assert set(sample.labels) - {"le"} == set(labels), sample
    assert "process_resident_memory_bytes" in {s.name for f in families.values() for s in f.samples}
    # Not prometheus_client's default registry: nothing of ours leaks into it, or back.
    from prometheus_client import REGISTRY as DEFAULT

    assert not any(f.name.startswith("flowrt_") for f in DEFAULT.collect())


def test_every_transport_and_the_ok_outcomes_are_exported_from_the_start():
    names = {
        (s.name, tuple(sorted(s.labels.items())))
        for f in metrics.REGISTRY.collect()
        for s in f.samples
    }
    for t in ("grpc", "local", "shm", "in_process"):
        assert ("flowrt_worker_recv_bytes_total", (("transport", t),)) in names
        assert ("flowrt_worker_recv_tensors_total", (("transport", t),)) in names
    assert ("flowrt_master_steps_total", (("outcome", "ok"),)) in names
    assert ("flowrt_worker_run_graph_total", (("outcome", "ok"),)) in names


def test_step_buckets_span_a_tenth_of_a_millisecond_to_a_minute():
    assert metrics.STEP_BUCKETS[0] == 0.0001 and metrics.STEP_BUCKETS[-1] == 60.0
    assert list(metrics.STEP_BUCKETS) == sorted(set(metrics.STEP_BUCKETS))
    bounds = [
        s.labels["le"]
        for s in next(
            f for f in metrics.REGISTRY.collect() if f.name == "flowrt_master_step_seconds"
        ).samples
        if s.name.endswith("_bucket")
    ]
    assert bounds == [*(repr(float(b)) for b in metrics.STEP_BUCKETS), "+Inf"]


def test_outcome_is_ok_or_the_tensorflow_code_name():
    assert metrics.outcome(None) == "ok"
    assert metrics.outcome(InvalidArgumentError("bad")) == "INVALID_ARGUMENT"
    assert metrics.outcome(DeadlineExceededError("late")) == "DEADLINE_EXCEEDED"
    assert metrics.outcome(ValueError("foreign")) == "INTERNAL"


def test_master_step_done_counts_by_outcome_and_times_successes_only():
    ok, bad = (
        value("flowrt_master_steps_total", outcome="ok"),
        value("flowrt_master_steps_total", outcome="INVALID_ARGUMENT"),
    )
    timed = value("flowrt_master_step_seconds_count")
    start = 0.0  # perf_counter's origin: a step of (uptime) seconds, in the +Inf bucket
    metrics.master_step_done(start, None)
    metrics.master_step_done(start, None)
    metrics.master_step_done(start, InvalidArgumentError("missing feed"))
    assert value("flowrt_master_steps_total", outcome="ok") == ok + 2
    assert value("flowrt_master_steps_total", outcome="INVALID_ARGUMENT") == bad + 1
    assert value("flowrt_master_step_seconds_count") == timed + 2


def test_worker_steps_are_active_until_done():
    active = value("flowrt_worker_active_steps")
    ok = value("flowrt_worker_run_graph_total", outcome="ok")
    aborted = value("flowrt_worker_run_graph_total", outcome="ABORTED")
    timed = value("flowrt_worker_run_graph_seconds_count")
    first, second = metrics.worker_step_started(), metrics.worker_step_started()
    assert value("flowrt_worker_active_steps") == active + 2
    metrics.worker_step_done(first, None)
    from common.errors import AbortedError

    metrics.worker_step_done(second, AbortedError("cleaned up"))
    assert value("flowrt_worker_active_steps") == active
    assert value("flowrt_worker_run_graph_total", outcome="ok") == ok + 1
    assert value("flowrt_worker_run_graph_total", outcome="ABORTED") == aborted + 1
    assert value("flowrt_worker_run_graph_seconds_count") == timed + 1


def test_shared_memory_values_are_told_apart_from_their_carrier():
    mapping = mmap.mmap(-1, 4096)
    in_shm = np.frombuffer(mapping, np.float32).reshape(32, 32)
    assert metrics.recv_transport(in_shm, "local") == "shm"
    assert metrics.recv_transport(in_shm[1:], "grpc") == "shm"  # a view of it, too
    raw = np.frombuffer(memoryview(bytearray(4096))[16:], np.uint8)  # a socket answer
    assert metrics.recv_transport(raw, "local") == "local"
    assert metrics.recv_transport(np.ones(3), "in_process") == "in_process"
    assert metrics.recv_transport(None, "grpc") == "grpc"  # a dead tensor


def test_tensor_received_counts_bytes_of_fixed_size_types():
    def got(t: str) -> tuple[float, float]:
        return (
            value("flowrt_worker_recv_tensors_total", transport=t),
            value("flowrt_worker_recv_bytes_total", transport=t),
        )

    before = {t: got(t) for t in metrics.TRANSPORTS}
    metrics.tensor_received(np.ones((10, 10), np.float64), "local")
    metrics.tensor_received(np.array([b"abc", b"de"], dtype=object), "grpc")
    metrics.tensor_received(None, "grpc")  # dead
    metrics.tensor_received(np.zeros(3, np.int8), "shm")
    after = {t: got(t) for t in metrics.TRANSPORTS}
    delta = {
        t: (after[t][0] - before[t][0], after[t][1] - before[t][1]) for t in metrics.TRANSPORTS
    }
    assert delta == {"local": (1, 800), "grpc": (2, 0), "shm": (1, 3), "in_process": (0, 0)}


def _fetch(port: int) -> tuple[int, str, str]:
    url = f"http://127.0.0.1:{port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.headers["Content-Type"], response.read().decode()


def test_serve_on_port_zero_exposes_the_registry_in_text_format():
    server, port = metrics.serve(0, "127.0.0.1")
    try:
        assert port > 0 and server.server_port == port
        metrics.MASTER_PARTITIONS_REGISTERED.inc(3)
        expected = value("flowrt_master_partitions_registered_total")
        status, content_type, text = _fetch(port)
        assert status == 200
        assert content_type.startswith("text/plain; version=0.0.4")
        families = {f.name: f for f in text_string_to_metric_families(text)}
        assert set(FAMILIES) <= set(families)
        registered = families["flowrt_master_partitions_registered"]
        assert registered.type == "counter"
        assert [
            s.value
            for s in registered.samples
            if s.name == "flowrt_master_partitions_registered_total"
        ] == [expected]
        assert families["flowrt_master_step_seconds"].type == "histogram"
    finally:
        metrics.stop(server)
    with pytest.raises(urllib.error.URLError):
        _fetch(port)


def test_two_endpoints_get_two_ports_and_a_taken_port_is_unavailable():
    first, port1 = metrics.serve(0)
    try:
        second, port2 = metrics.serve(0)
        metrics.stop(second)
        assert port1 != port2
        with pytest.raises(UnavailableError, match=f"metrics: cannot listen on 127.0.0.1:{port1}"):
            metrics.serve(port1, "127.0.0.1")
    finally:
        metrics.stop(first)
    with socket.socket() as s:  # the port is free again once stopped
        s.bind(("127.0.0.1", port1))
