"""Integration, soak: a cluster under sustained mixed use loses nothing and leaves nothing
hanging.

Real processes (master, 2 workers, ps) started through the CLIs with `--metrics-port 0`
(endpoints read from their logs) and a short `--partial-run-idle-timeout` on the workers.
THREADS client threads run the same plan of step kinds, in two equal halves, on a session
two threads share and on sessions of their own (one thread uses an unmodified TensorFlow
client when TensorFlow is installed): successful steps across worker 0, worker 1 and ps
(a variable update on ps), InvalidArgument (a missing feed), a kernel error on worker 1
(Reshape to a bad size), DeadlineExceeded (RunOptions.timeout_in_ms on a step blocked
in a queue dequeue), partial runs set up and abandoned, and tf.data one-shot iterators run
to OutOfRange in sessions opened for it and then closed or just dropped.

After each half, once the cluster is at rest: the master's step counts by outcome equal
what the clients saw, the ps variable counts every successful update, the master's
sessions gauge equals the sessions open, no RunGraph is in flight and every worker's
rendezvous table is empty (`flowrt_worker_live_steps`), the registered graphs are those of
the open sessions; between the halves no process grows in threads or open fds, and its
RSS grows less than RSS_GROWTH_BOUND. Once every session is closed no graph is registered.
No process logs an error or a traceback.

The chaos test (a cluster of its own): worker 1 is killed (SIGKILL) under a steady loop;
the loop's client gets Unavailable naming the task within UNAVAILABLE_BOUND_S, a session
not using worker 1 keeps working, the task restarts with the same command on the same
port, a new session uses it, and the old session's next step is Aborted naming the
restart, as with TensorFlow.
"""

from __future__ import annotations

import dataclasses
import gc
import re
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

import client as ours
from client.framework.op_builder import apply_op
from deploy.launcher import LocalCluster, Task

try:  # the TensorFlow client thread runs only where TensorFlow is installed
    import tensorflow as _tf

    tf1: Any = _tf.compat.v1
    tf1.disable_eager_execution()
except ImportError:
    tf1 = None
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

PS, W0, W1 = "/job:ps/task:0", "/job:worker/task:0", "/job:worker/task:1"
W1_FULL = "/job:worker/replica:0/task:1"
THREADS = 4
PLAN = ("ok", "missing_feed", "ok", "kernel_error", "ok", "partial", "ok", "deadline", "ok",
        "dataset")  # fmt: skip
CYCLES = 3  # PLAN cycles per thread per half
DATASET_SIZE = 5
DEADLINE_MS = 150
IDLE_TIMEOUT_S = 1.0  # the workers' --partial-run-idle-timeout
REST_TIMEOUT_S = 15.0
# Between two equal halves, a process's RSS may grow by allocator noise (pymalloc arenas,
# grpc buffers) but not by what a half leaks if every session it opened kept its graphs:
# each half opens THREADS * CYCLES dataset sessions and runs ~THREADS * CYCLES * 10 steps.
# Measured here: growth of 0-2 MiB per process; a session's registered graph and kernels
# on a worker cost ~0.3 MiB, its executors' step state more.
RSS_GROWTH_BOUND = 4 << 20
# Pools sized by peak concurrency (gRPC server threads, the RPC call pool, same-host socket
# connections with a thread and an fd each) may reach a new peak in the second half: at
# most about one per client thread. A leak per failed step, per partial run or per session
# would add at least THREADS * CYCLES (one per thread per cycle) per half.
POOL_SLACK = THREADS
UNAVAILABLE_BOUND_S = 5.0
METRICS_LINE = re.compile(r"INFO (master|worker): metrics on (http://127\.0\.0\.1:\d+/metrics)$")
ERROR_LINE = re.compile(r"Traceback|internal error| ERROR | CRITICAL ")


# -- cluster, metrics, processes --------------------------------------------------------------
@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    started = LocalCluster(
        master_args=["--rpc-timeout", "10", "--metrics-port", "0"],
        worker_args=["--metrics-port", "0", "--partial-run-idle-timeout", str(IDLE_TIMEOUT_S)],
    ).start()
    try:
        yield started
    finally:
        codes = started.stop()
        assert codes == {name: 0 for name in codes}


def _url(task: Task) -> str:
    found = [m.group(2) for m in map(METRICS_LINE.search, task.lines) if m]
    assert len(found) == 1, task.lines
    return found[0]


def _scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _get(samples: dict, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def _outcomes(samples: dict, name: str) -> Counter:
    return Counter({dict(labels)["outcome"]: int(v) for (n, labels), v in samples.items()
                    if n == name and v})  # fmt: skip


@dataclasses.dataclass(frozen=True)
class ProcStats:
    threads: int
    rss: int  # bytes
    fds: int


def _proc_stats(pid: int) -> ProcStats:
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return ProcStats(
        threads=int(status["Threads"]),
        rss=int(status["VmRSS"].split()[0]) * 1024,
        fds=len(list(Path(f"/proc/{pid}/fd").iterdir())),
    )


def _wait_until(
    what: str, condition: Callable[[], tuple[bool, Any]], timeout: float = REST_TIMEOUT_S
) -> Any:
    """Poll `condition` (metrics over HTTP: there is no event to wait on) until it returns
    (True, value), within `timeout`; the value."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while True:
        done, value = condition()
        if done:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not at rest after {timeout:g}s: {what}: {value}")
        pause.wait(0.05)  # a bounded poll of an external state, not a synchronization


def _check_logs(cluster: LocalCluster) -> None:
    bad = {name: [line for line in task.lines if ERROR_LINE.search(line)]
           for name, task in cluster.tasks.items()}  # fmt: skip
    assert {name: lines for name, lines in bad.items() if lines} == {}


# -- the workload -------------------------------------------------------------------------------
def _our_dequeue(api: Any) -> Any:
    queue = apply_op("FIFOQueueV2", [], {"component_types": [api.float32]}).outputs[0]
    return apply_op("QueueDequeueV2", [queue], {"component_types": [api.float32]}).outputs[0]


def _tf_dequeue(api: Any) -> Any:
    return api.FIFOQueue(10, [api.float32], shapes=[[]]).dequeue()


def _our_iterator(api: Any, dataset: Any) -> Any:
    return dataset.make_one_shot_iterator()


def _tf_iterator(api: Any, dataset: Any) -> Any:
    return api.data.make_one_shot_iterator(dataset)


class Workload:
    """One client library's graph and step kinds: ours (`client`) or TensorFlow's
    tf.compat.v1; both speak tf.compat.v1."""

    def __init__(self, api: Any, name: str, target: str) -> None:
        self.api, self.target = api, target
        ours_ = api is ours
        self.graph = api.Graph()
        with self.graph.as_default():
            with api.device(PS):
                self.counter = api.Variable(0.0, name=f"{name}_counter")
                self.inc = self.counter.assign_add(1.0)
            with api.device(W0):
                self.x = api.placeholder(api.float32, [None], name="x")
                y = self.x + 1.0
                self.a = api.placeholder(api.float32, [], name="a")
                self.s1 = self.a + 1.0
                self.blocked = (_our_dequeue if ours_ else _tf_dequeue)(api)
            with api.device(W1):
                self.total = api.reduce_sum(y * 2.0)
                self.bad = api.reshape(y, [3], name="bad_reshape")
                self.b = api.placeholder(api.float32, [], name="b")
                self.s2 = self.s1 * self.b
                dataset = api.data.Dataset.range(DATASET_SIZE)
                self.next = (_our_iterator if ours_ else _tf_iterator)(api, dataset).get_next()
            self.init = api.global_variables_initializer()
        self.errors = api.errors

    def session(self) -> Any:
        return self.api.Session(self.target, graph=self.graph)

    def run(self, kind: str, sess: Any, i: int, tally: Counter) -> None:
        """One step of `kind`; counts the master's step outcomes it causes in `tally`."""
        getattr(self, f"_{kind}")(sess, i, tally)

    def _ok(self, sess: Any, i: int, tally: Counter) -> None:
        total, _ = sess.run([self.total, self.inc], {self.x: np.full(4, i, np.float32)})
        assert total == 8.0 * (i + 1)
        tally["ok"] += 1
        tally["increments"] += 1

    def _missing_feed(self, sess: Any, i: int, tally: Counter) -> None:
        with pytest.raises(self.errors.InvalidArgumentError, match="x"):
            sess.run(self.total)
        tally["INVALID_ARGUMENT"] += 1

    def _kernel_error(self, sess: Any, i: int, tally: Counter) -> None:
        with pytest.raises(self.errors.InvalidArgumentError, match="bad_reshape") as e:
            sess.run(self.bad, {self.x: np.zeros(4, np.float32)})
        assert "reshape" in str(e.value).lower()
        tally["INVALID_ARGUMENT"] += 1

    def _deadline(self, sess: Any, i: int, tally: Counter) -> None:
        options = self.api.RunOptions(timeout_in_ms=DEADLINE_MS)
        with pytest.raises(self.errors.DeadlineExceededError):
            sess.run(self.blocked, options=options)
        tally["DEADLINE_EXCEEDED"] += 1

    def _partial(self, sess: Any, i: int, tally: Counter) -> None:
        handle = sess.partial_run_setup([self.s1, self.s2], [self.a, self.b])
        assert sess.partial_run(handle, self.s1, feed_dict={self.a: float(i)}) == i + 1.0
        tally["ok"] += 1  # then abandoned: the workers free it after IDLE_TIMEOUT_S

    def _dataset(self, sess: Any, i: int, tally: Counter) -> None:
        """A session of its own, closed (even i) or dropped (odd i)."""
        own = self.session()
        got = [int(own.run(self.next)) for _ in range(DATASET_SIZE)]
        assert got == list(range(DATASET_SIZE))
        with pytest.raises(self.errors.OutOfRangeError):
            own.run(self.next)
        tally["ok"] += DATASET_SIZE
        tally["OUT_OF_RANGE"] += 1
        if i % 2 == 0:
            own.close()
        del own  # dropped: its __del__ closes it, as TensorFlow's


def _workloads(target: str) -> list[tuple[Workload, Any]]:
    """(workload, session) per thread: threads 0 and 1 share a session, 2 and 3 have their
    own; thread 3 uses TensorFlow's client if installed."""
    mine = Workload(ours, "ours", target)
    theirs = Workload(tf1, "tf", target) if tf1 is not None else mine
    shared, own, last = mine.session(), mine.session(), theirs.session()
    shared.run(mine.init)
    if theirs is not mine:
        last.run(theirs.init)
    for workload, sess in ((mine, own), (theirs, last)):
        sess.run(workload.counter)  # the session exists on the master from here
    return [(mine, shared), (mine, shared), (mine, own), (theirs, last)]


def _run_half(plan: list[tuple[Workload, Any]]) -> Counter:
    """Every thread runs CYCLES cycles of PLAN (shifted by its index); the merged tally."""
    tallies = [Counter() for _ in plan]
    failures: list[BaseException] = []

    def loop(t: int) -> None:
        workload, sess = plan[t]
        try:
            for i in range(CYCLES * len(PLAN)):
                workload.run(PLAN[(i + t) % len(PLAN)], sess, i, tallies[t])
        except BaseException as e:  # noqa: BLE001  (re-raised on the test's thread)
            failures.append(e)

    threads = [threading.Thread(target=loop, args=(t,), name=f"soak-{t}") for t in range(len(plan))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(thread.is_alive() for thread in threads), "a client thread hung"
    if failures:
        raise failures[0]
    return sum(tallies, Counter())


@dataclasses.dataclass
class Rest:
    """The cluster at rest: every process's metrics and /proc figures."""

    metrics: dict[str, dict]
    procs: dict[str, ProcStats]


def _at_rest(cluster: LocalCluster, urls: dict[str, str], open_sessions: int) -> Rest:
    def settled() -> tuple[bool, Any]:
        scraped = {name: _scrape(url) for name, url in urls.items()}
        gauges = {"sessions": _get(scraped["master"], "flowrt_master_sessions")}
        for name in _worker_names(cluster):
            for gauge in ("active_steps", "live_steps"):
                gauges[f"{name} {gauge}"] = _get(scraped[name], f"flowrt_worker_{gauge}")
        want = {k: open_sessions if k == "sessions" else 0 for k in gauges}
        return gauges == want, (scraped if gauges == want else gauges)

    scraped = _wait_until(f"{open_sessions} sessions, no step in flight or live", settled)
    procs = {name: _proc_stats(task.proc.pid) for name, task in cluster.tasks.items()}
    return Rest(scraped, procs)


def _worker_names(cluster: LocalCluster) -> list[str]:
    return [name for name in cluster.tasks if name != "master"]


@pytest.fixture
def plan(cluster) -> Iterator[list[tuple[Workload, Any]]]:
    """The threads' (workload, session); every session closed before the cluster stops."""
    made = _workloads(cluster.target)
    try:
        yield made
    finally:
        for _, sess in made:
            sess.close()


def test_cluster_comes_back_to_rest_under_mixed_load(cluster, plan):
    urls = {name: _url(task) for name, task in cluster.tasks.items()}
    long_sessions = {id(sess): sess for _, sess in plan}
    _run_half(plan)  # warm-up: pools, caches and registrations reach their size
    before = _at_rest(cluster, urls, len(long_sessions))
    rests, tallies = [], []
    for _ in range(2):
        tallies.append(_run_half(plan))
        gc.collect()  # sessions in reference cycles are dropped too
        rests.append(_at_rest(cluster, urls, len(long_sessions)))
    first, second = rests

    # Nothing lost: every step the clients saw is counted once, every update applied.
    for start, tally, end in ((before, tallies[0], first), (first, tallies[1], second)):
        steps = _outcomes(end.metrics["master"], "flowrt_master_steps_total") - _outcomes(
            start.metrics["master"], "flowrt_master_steps_total"
        )
        assert steps == Counter({k: v for k, v in tally.items() if k != "increments"})
    increments = sum(t["increments"] for t in tallies)
    values = {w.counter.name: (w, sess) for w, sess in plan}
    total = sum(float(sess.run(w.counter)) for w, sess in values.values())
    assert total == increments + THREADS * CYCLES * PLAN.count("ok")  # + the warm-up's

    # Nothing hanging, nothing growing.
    for name in _worker_names(cluster):
        graphs = [_get(r.metrics[name], "flowrt_worker_registered_graphs") for r in rests]
        assert graphs[0] == graphs[1], (name, graphs)
    for name in cluster.tasks:
        a, b = first.procs[name], second.procs[name]
        assert b.threads <= a.threads + POOL_SLACK, (name, a, b)
        assert b.fds <= a.fds + POOL_SLACK, (name, a, b)
        assert b.rss - a.rss < RSS_GROWTH_BOUND, (name, a, b)
        assert b.threads < 64, (name, b)

    for sess in long_sessions.values():
        sess.close()
    end = _at_rest(cluster, urls, 0)
    for name in _worker_names(cluster):
        assert _get(end.metrics[name], "flowrt_worker_registered_graphs") == 0, name
    _check_logs(cluster)


def test_private_queues_are_per_session_and_go_with_it(cluster):
    """A queue without a shared_name belongs to its session, as TensorFlow's kernel-owned
    resource: another session over the same graph has its own, and a new session after
    the first closed starts empty (it used to be one queue per node name on the device,
    kept forever with its elements)."""
    g = ours.Graph()
    with g.as_default(), ours.device(W0):
        queue = apply_op("FIFOQueueV2", [], {"component_types": [ours.float32]}).outputs[0]
        value = ours.placeholder(ours.float32, [], name="value")
        enqueue = apply_op("QueueEnqueueV2", [queue, [value]], {"Tcomponents": [ours.float32]})
        size = apply_op("QueueSizeV2", [queue], {}).outputs[0]
    first, second = ours.Session(cluster.target, graph=g), ours.Session(cluster.target, graph=g)
    try:
        for i in range(3):
            first.run(enqueue, {value: float(i)})
        assert (first.run(size), second.run(size)) == (3, 0)
        second.run(enqueue, {value: 9.0})
        assert (first.run(size), second.run(size)) == (3, 1)
    finally:
        first.close()
    with ours.Session(cluster.target, graph=g) as third:
        assert (second.run(size), third.run(size)) == (1, 0)
    second.close()


# -- chaos ------------------------------------------------------------------------------------
@pytest.fixture
def chaos_cluster() -> Iterator[LocalCluster]:
    started = LocalCluster(master_args=["--rpc-timeout", "10"]).start()
    try:
        yield started
    finally:
        tasks = [*started.tasks.values(), *started.retired]
        started.stop()
        assert [t.name for t in tasks if t.proc.poll() is None] == []


def _chaos_graph() -> tuple[Any, Any, Any, Any]:
    """x on worker 0; `on_w1` needs worker 1, `w0_only` does not."""
    g = ours.Graph()
    with g.as_default():
        with ours.device(W0):
            x = ours.placeholder(ours.float32, [4], name="x")
            w0_only = x * 3.0
        with ours.device(W1):
            on_w1 = (x + 1.0) * 2.0
    return g, x, on_w1, w0_only


def test_killed_worker_is_unavailable_then_restarts(chaos_cluster):
    g, x, on_w1, w0_only = _chaos_graph()
    feed = {x: np.ones(4, np.float32)}
    steady = ours.Session(chaos_cluster.target, graph=g)
    other = ours.Session(chaos_cluster.target, graph=g)
    warmed, outcome = threading.Event(), []

    def loop() -> None:
        done = 0
        while True:
            try:
                assert list(steady.run(on_w1, feed)) == [4.0] * 4
            except ours.errors.OpError as e:
                outcome.append((time.monotonic(), e))
                return
            done += 1
            if done == 20:
                warmed.set()

    try:
        assert list(other.run(w0_only, feed)) == [3.0] * 4
        thread = threading.Thread(target=loop, name="steady")
        thread.start()
        assert warmed.wait(30)
        killed_at = time.monotonic()
        chaos_cluster.tasks["worker1"].kill()
        thread.join(UNAVAILABLE_BOUND_S + 30)
        assert not thread.is_alive(), "the steady loop never failed"
        failed_at, error = outcome[0]
        assert isinstance(error, ours.errors.UnavailableError), error
        assert W1_FULL in str(error)
        assert failed_at - killed_at < UNAVAILABLE_BOUND_S
        for _ in range(20):  # a session not using worker 1 keeps working
            assert list(other.run(w0_only, feed)) == [3.0] * 4

        chaos_cluster.restart_task("worker", 1, timeout=60)
        with ours.Session(chaos_cluster.target, graph=g) as fresh:
            assert list(fresh.run(on_w1, feed)) == [4.0] * 4
        with pytest.raises(ours.errors.AbortedError, match="restarted") as e:
            steady.run(on_w1, feed)
        assert "/job:worker/replica:0/task:1" in str(e.value)
        assert list(other.run(w0_only, feed)) == [3.0] * 4
    finally:
        steady.close()
        other.close()
