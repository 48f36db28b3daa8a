"""Metrics, operational counters of one process: what its master and worker are doing, in
Prometheus' text format, and the HTTP endpoint that serves them (`serve`).

Every metric lives in ONE process-wide registry, `REGISTRY`: a CollectorRegistry of our own
rather than prometheus_client's global default, so what an endpoint shows is exactly this
runtime's metrics (plus the standard `process_*` ones: CPU, memory, open files), whatever
else the process imports. A master and a worker task in one process (`python -m master
--colocate`, in-process test clusters) share it: their `flowrt_master_*` and
`flowrt_worker_*` series sit side by side and several workers of one process add up.
Tests that run many clusters in one process read differences, not absolute values.

Labels stay low-cardinality: a step's outcome ("ok" or TensorFlow's error code name, e.g.
"INVALID_ARGUMENT") and a transport, never step ids, graph handles or node names. The hot
path costs a handful of calls per step (`with master_step()`, `with worker_step()`) and
two per received tensor (`tensor_received`), each an uncontended lock; nothing is
recorded per node.

Thread-safe (prometheus_client's values are); `serve` starts a daemon thread per endpoint.
"""

from __future__ import annotations

import mmap
import time
from typing import Any
from wsgiref.simple_server import WSGIServer

import numpy as np
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    start_http_server,
)

from common.errors import UnavailableError, as_op_error

REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(registry=REGISTRY)

# Seconds: 0.1 ms (a trivial step on one host) to 60 s (a long training step).
STEP_BUCKETS = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)
OK = "ok"
# How a worker got a tensor from another task (worker.remote_rendezvous): gRPC (our
# RecvTensorStream/RecvTensorOne, or TensorFlow's unary RecvTensor), the same-host Unix
# socket, shared memory (whatever call carried its name), or a call to a worker task of
# this very process.
TRANSPORTS = ("grpc", "local", "shm", "in_process")

# -- master ---------------------------------------------------------------------------------
MASTER_SESSIONS = Gauge(
    "flowrt_master_sessions",
    "Open master sessions (CreateSession not yet closed).",
    registry=REGISTRY,
)
MASTER_STEPS = Counter(
    "flowrt_master_steps",
    "Steps run by the master (RunStep, partial-run calls included, and RunCallable), by "
    'outcome: "ok" or TensorFlow\'s error code name.',
    ["outcome"],
    registry=REGISTRY,
)
MASTER_STEP_SECONDS = Histogram(
    "flowrt_master_step_seconds",
    "Time of the master's successful steps, from the request to the fetched values.",
    buckets=STEP_BUCKETS,
    registry=REGISTRY,
)
MASTER_PLAN_SECONDS = Histogram(
    "flowrt_master_plan_seconds",
    "Time to plan a new (feeds, fetches, targets) signature: rewrite, optimize, place, "
    "partition (registration with the workers not included).",
    buckets=STEP_BUCKETS,
    registry=REGISTRY,
)
MASTER_PARTITIONS_REGISTERED = Counter(
    "flowrt_master_partitions_registered",
    "Partitions the master registered with workers (RegisterGraph, one per task of a "
    "planned signature).",
    registry=REGISTRY,
)

# -- worker ---------------------------------------------------------------------------------
WORKER_RUN_GRAPH = Counter(
    "flowrt_worker_run_graph",
    'RunGraph calls served (partial-run calls included), by outcome: "ok" or TensorFlow\'s '
    "error code name.",
    ["outcome"],
    registry=REGISTRY,
)
WORKER_RUN_GRAPH_SECONDS = Histogram(
    "flowrt_worker_run_graph_seconds",
    "Time of the worker's successful RunGraph calls.",
    buckets=STEP_BUCKETS,
    registry=REGISTRY,
)
WORKER_REGISTERED_GRAPHS = Gauge(
    "flowrt_worker_registered_graphs",
    "Graphs registered with the worker (RegisterGraph not yet deregistered or dropped with "
    "their worker session).",
    registry=REGISTRY,
)
WORKER_LIVE_STEPS = Gauge(
    "flowrt_worker_live_steps",
    "Steps in the worker's rendezvous table (RunGraph or RecvTensor made them; CleanupGraph, "
    "an expiry or shutdown removes them): 0 once every step has been cleaned up.",
    registry=REGISTRY,
)
WORKER_ACTIVE_STEPS = Gauge(
    "flowrt_worker_active_steps",
    "RunGraph calls in flight on the worker.",
    registry=REGISTRY,
)
WORKER_ABORTED_STEPS = Counter(
    "flowrt_worker_aborted_steps",
    "Steps aborted while running on the worker: a kernel failed, the deadline passed, or "
    "CleanupGraph, an idle partial-run timeout or shutdown came first.",
    registry=REGISTRY,
)
WORKER_RECV_BYTES = Counter(
    "flowrt_worker_recv_bytes",
    "Bytes of tensors the worker received from other tasks (RecvTensor), by transport; "
    "tensors of strings, resources and variants count 0 bytes.",
    ["transport"],
    registry=REGISTRY,
)
WORKER_SENT_BYTES = Counter(
    "flowrt_worker_sent_bytes",
    "Bytes of tensors the worker sent to other tasks (answering RecvTensor), by the call "
    "that carried them: grpc or local (a shared-memory tensor counts under its call); "
    "tensors of strings, resources and variants count 0 bytes.",
    ["transport"],
    registry=REGISTRY,
)
WORKER_RECV_TENSORS = Counter(
    "flowrt_worker_recv_tensors",
    "Tensors the worker received from other tasks (RecvTensor, dead ones included), by transport.",
    ["transport"],
    registry=REGISTRY,
)

# Children bound once: the hot path skips labels()' lookup. Every transport and the "ok"
# outcome are exported from the start, at 0.
_MASTER_OK = MASTER_STEPS.labels(outcome=OK)
_WORKER_OK = WORKER_RUN_GRAPH.labels(outcome=OK)
_RECV = {
    t: (WORKER_RECV_BYTES.labels(transport=t), WORKER_RECV_TENSORS.labels(transport=t))
    for t in TRANSPORTS
}
_SENT: dict[str, Any] = {}  # WORKER_SENT_BYTES's children by transport (tensor_sent)


def outcome(error: BaseException | None) -> str:
    """ "ok", or TensorFlow's code name of `error` (INTERNAL for a foreign exception)."""
    return OK if error is None else as_op_error(error).code.name


def master_step_done(start: float, error: BaseException | None) -> None:
    """A master step that began at `start` (time.perf_counter) ended with `error`."""
    if error is None:
        _MASTER_OK.inc()
        MASTER_STEP_SECONDS.observe(time.perf_counter() - start)
    else:
        MASTER_STEPS.labels(outcome=outcome(error)).inc()


def worker_step_started() -> float:
    """A RunGraph call begins: its start time (time.perf_counter) for worker_step_done."""
    WORKER_ACTIVE_STEPS.inc()
    return time.perf_counter()


def worker_step_done(start: float, error: BaseException | None) -> None:
    WORKER_ACTIVE_STEPS.dec()
    if error is None:
        _WORKER_OK.inc()
        WORKER_RUN_GRAPH_SECONDS.observe(time.perf_counter() - start)
    else:
        WORKER_RUN_GRAPH.labels(outcome=outcome(error)).inc()


class master_step:  # noqa: N801  (used like a function: `with metrics.master_step():`)
    """`with metrics.master_step(): ...`: one master step, counted by outcome and timed."""

    __slots__ = ("start",)

    def __enter__(self) -> None:
        self.start = time.perf_counter()

    def __exit__(self, kind: object, error: BaseException | None, tb: object) -> None:
        master_step_done(self.start, error)


class worker_step:  # noqa: N801
    """`with metrics.worker_step(): ...`: one RunGraph, active while inside, then counted
    by outcome and timed."""

    __slots__ = ("start",)

    def __enter__(self) -> None:
        self.start = worker_step_started()

    def __exit__(self, kind: object, error: BaseException | None, tb: object) -> None:
        worker_step_done(self.start, error)


def recv_transport(value: object, carrier: str) -> str:
    """The transport of a received value that came by `carrier` ("grpc", "local",
    "in_process"): "shm" when its memory is a shared-memory mapping (rpc.shm)."""
    base: object = value.base if isinstance(value, np.ndarray) else None
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap):
        return "shm"
    return carrier


def tensor_sent(value: object, is_dead: bool, transport: str) -> None:
    """A worker answered a RecvTensor from another task with `value` by `transport`."""
    if not is_dead and isinstance(value, np.ndarray) and value.dtype != object:
        child = _SENT.get(transport)
        if child is None:  # bound at first use: a transport never used is not exported
            child = _SENT.setdefault(transport, WORKER_SENT_BYTES.labels(transport=transport))
        child.inc(value.nbytes)


def tensor_received(value: object, transport: str) -> None:
    """A worker received `value` (None when dead) from another task by `transport`."""
    nbytes, tensors = _RECV[transport]
    tensors.inc()
    if isinstance(value, np.ndarray) and value.dtype != object:
        nbytes.inc(value.nbytes)


# -- the endpoint -----------------------------------------------------------------------------
def serve(port: int = 0, host: str = "127.0.0.1") -> tuple[WSGIServer, int]:
    """Serve REGISTRY on http://host:port/metrics (any path answers) from a daemon thread;
    port 0 picks a free port. (the server, the bound port); `stop(server)` ends it.
    UnavailableError if the address cannot be bound."""
    try:
        server, _ = start_http_server(port, addr=host, registry=REGISTRY)
    except OSError as e:
        raise UnavailableError(f"metrics: cannot listen on {host}:{port}: {e}") from None
    return server, server.server_port


def stop(server: WSGIServer) -> None:
    """Stop an endpoint `serve` started and close its socket."""
    server.shutdown()
    server.server_close()
