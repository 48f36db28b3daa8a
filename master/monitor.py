"""Master, observation: what an operator sees of the cluster (the dashboard and
`python -m master status` read it; nothing in the step path waits on it).

`Monitor` keeps, bounded:
  * the open sessions (graph size, ops histogram, the placed graphs of their recent client
    graphs with each node's placement decision);
  * the recent steps of every session (outcome, duration, the error and its node), and the
    step stats of recent traced steps (kept serialized, turned into a timeline on request);
  * a running cost model per session (TensorFlow's CostModel: per node, how often it ran,
    its mean and last compute time and its largest output), fed by traced steps;
  * every task's health, as `TaskProber` last saw it.
It logs one line per failed step and per task lost or regained.

Thread-safe: one lock guards the tables; callers never hold it while doing I/O.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import itertools
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from common.errors import as_op_error
from common.graph.graph import Graph
from protos import config_pb2, graph_pb2, step_stats_pb2

log = logging.getLogger("master.monitor")

RECENT_STEPS = 200  # per master, newest first in snapshots
RECENT_TRACES = 50
PLACEMENTS_PER_SESSION = 4
CLOSED_SESSIONS_KEPT = 20


@dataclasses.dataclass
class StepRecord:
    """One step as the master ran it (a RunStep, RunCallable or partial-run call)."""

    id: int  # this master's step counter (the workers' step ids are random 57-bit ids)
    session: str
    kind: str  # "run" | "callable" | "partial"
    fetches: list[str]
    started: float  # wall clock, seconds
    duration_ms: float | None = None
    outcome: str = "running"  # then "ok" or TensorFlow's code name
    error: str = ""
    node: str = ""
    traced: bool = False

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class PlacedGraph:
    """A client graph as placed and partitioned: what the graph view draws."""

    key: str  # feeds -> fetches, targets
    nodes: list[dict[str, Any]]  # name, op, device, reason, detail, x, y
    edges: list[tuple[int, int, bool]]  # (src index, dst index, crosses devices)
    transfers: list[dict[str, str]]  # one per _Send/_Recv pair: tensor, from, to
    created: float


@dataclasses.dataclass
class _NodeCost:
    runs: int = 0
    total_us: float = 0.0
    last_us: float = 0.0
    max_bytes: int = 0
    device: str = ""
    op: str = ""


@dataclasses.dataclass
class _Session:
    handle: str
    created: float
    nodes: int
    ops: dict[str, int]
    placements: collections.OrderedDict[str, PlacedGraph] = dataclasses.field(
        default_factory=collections.OrderedDict
    )
    costs: dict[str, _NodeCost] = dataclasses.field(default_factory=dict)
    steps_ok: int = 0
    steps_failed: int = 0
    closed: float | None = None


@dataclasses.dataclass
class TaskHealth:
    """A task as the prober last saw it."""

    name: str
    address: str
    up: bool = False
    since: float = 0.0  # when it last changed state
    last_seen: float = 0.0
    devices: list[str] = dataclasses.field(default_factory=list)
    stats: dict[str, Any] = dataclasses.field(default_factory=dict)
    error: str = ""


class Monitor:
    """The master's bounded record of sessions, steps, traces, costs and task health."""

    def __init__(
        self,
        trace_sample_rate: float = 0.0,
        keep_graphs: bool = False,
        clock: Callable[[], float] = time.time,
    ):
        if not 0.0 <= trace_sample_rate <= 1.0:
            raise ValueError("trace_sample_rate must be within [0, 1]")
        self.trace_sample_rate = trace_sample_rate
        # Placed graphs cost O(nodes) per new client graph: kept when a dashboard shows them.
        self.keep_graphs = keep_graphs
        self.started = clock()
        self._clock = clock
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._sessions: dict[str, _Session] = {}
        self._closed: collections.deque[_Session] = collections.deque(maxlen=CLOSED_SESSIONS_KEPT)
        self._steps: collections.deque[StepRecord] = collections.deque(maxlen=RECENT_STEPS)
        self._traces: collections.OrderedDict[int, bytes] = collections.OrderedDict()
        self._tasks: dict[str, TaskHealth] = {}
        self._listeners: list[Callable[[], None]] = []
        self._rng = random.Random()

    # -- listeners (the dashboard's live updates) ------------------------------------------
    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` (from the changing thread; it must not block) after each change;
        returns the unsubscribe function."""
        with self._lock:
            self._listeners.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._listeners:
                    self._listeners.remove(callback)

        return unsubscribe

    def _changed(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for callback in listeners:
            callback()

    # -- sessions --------------------------------------------------------------------------
    def session_created(self, handle: str, graph_def: graph_pb2.GraphDef) -> None:
        ops = collections.Counter(n.op for n in graph_def.node)
        with self._lock:
            self._sessions[handle] = _Session(handle, self._clock(), len(graph_def.node), dict(ops))
        self._changed()

    def session_extended(self, handle: str, graph_def: graph_pb2.GraphDef) -> None:
        with self._lock:
            session = self._sessions.get(handle)
            if session is not None:
                session.nodes += len(graph_def.node)
                for node in graph_def.node:
                    session.ops[node.op] = session.ops.get(node.op, 0) + 1
        self._changed()

    def session_closed(self, handle: str) -> None:
        with self._lock:
            session = self._sessions.pop(handle, None)
            if session is not None:
                session.closed = self._clock()
                session.placements.clear()  # the graphs go with the session
                self._closed.appendleft(session)
        self._changed()

    def graph_placed(self, handle: str, placed: PlacedGraph) -> None:
        with self._lock:
            session = self._sessions.get(handle)
            if session is None:
                return
            session.placements[placed.key] = placed
            session.placements.move_to_end(placed.key)
            while len(session.placements) > PLACEMENTS_PER_SESSION:
                session.placements.popitem(last=False)
        self._changed()

    # -- steps -----------------------------------------------------------------------------
    def want_trace(self) -> bool:
        """Whether to trace an untraced step (the operator's sample rate)."""
        rate = self.trace_sample_rate
        return rate > 0.0 and (rate >= 1.0 or self._rng.random() < rate)

    def step_started(self, handle: str, kind: str, fetches: Iterable[str]) -> StepRecord:
        record = StepRecord(next(self._ids), handle, kind, list(fetches)[:8], self._clock())
        with self._lock:
            self._steps.appendleft(record)
        self._changed()
        return record

    @contextlib.contextmanager
    def step(
        self,
        handle: str,
        kind: str,
        fetches: Iterable[str],
        metadata: config_pb2.RunMetadata | None = None,
    ) -> Iterator[StepRecord]:
        """Record the step run inside the block: its outcome, and its trace from
        `metadata` (read when the block ends)."""
        record = self.step_started(handle, kind, fetches)
        try:
            yield record
        except BaseException as e:
            self.step_finished(record, e, metadata)
            raise
        self.step_finished(record, None, metadata)

    def step_finished(
        self,
        record: StepRecord,
        error: BaseException | None,
        metadata: config_pb2.RunMetadata | None = None,
    ) -> None:
        record.duration_ms = (self._clock() - record.started) * 1000.0
        if error is None:
            record.outcome = "ok"
        else:
            op_error = as_op_error(error)
            record.outcome = op_error.code.name
            record.error = op_error.message.splitlines()[0][:500] if op_error.message else ""
            record.node = op_error.node_name or _node_in(op_error.message)
            log.warning(
                "step failed: session=%s step=%d code=%s node=%s: %s",
                record.session,
                record.id,
                record.outcome,
                record.node or "-",
                record.error,
                extra={
                    "event": "step_failed",
                    "session": record.session,
                    "step": record.id,
                    "code": record.outcome,
                    "node": record.node,
                },
            )
        traced = metadata is not None and len(metadata.step_stats.dev_stats) > 0
        with self._lock:
            session = self._sessions.get(record.session)
            if session is not None:
                if error is None:
                    session.steps_ok += 1
                else:
                    session.steps_failed += 1
            if traced:
                assert metadata is not None
                record.traced = True
                self._traces[record.id] = metadata.step_stats.SerializeToString()
                while len(self._traces) > RECENT_TRACES:
                    self._traces.popitem(last=False)
                if session is not None:
                    _update_costs(session.costs, metadata.step_stats)
        self._changed()

    def trace(self, step: int) -> step_stats_pb2.StepStats | None:
        with self._lock:
            data = self._traces.get(step)
        if data is None:
            return None
        return step_stats_pb2.StepStats.FromString(data)

    def placed_graph(self, handle: str, key: str | None = None) -> PlacedGraph | None:
        with self._lock:
            session = self._sessions.get(handle)
            if session is None or not session.placements:
                return None
            if key is None:
                return next(reversed(session.placements.values()))
            return session.placements.get(key)

    # -- tasks -----------------------------------------------------------------------------
    def task_seen(self, name: str, address: str, devices: list[str], stats: dict[str, Any]) -> None:
        now = self._clock()
        with self._lock:
            task = self._tasks.setdefault(name, TaskHealth(name, address))
            was_up, known = task.up, task.since > 0
            task.up, task.last_seen, task.devices, task.stats, task.error = (
                True,
                now,
                devices,
                stats,
                "",
            )
            if not was_up:
                task.since = now
        if known and not was_up:
            log.info(
                "task regained: %s at %s",
                name,
                address,
                extra={"event": "task_regained", "task": name},
            )
        self._changed()

    def task_lost(self, name: str, address: str, error: str) -> None:
        now = self._clock()
        with self._lock:
            task = self._tasks.setdefault(name, TaskHealth(name, address))
            was_up, known = task.up, task.since > 0
            task.up, task.error = False, error
            if was_up or not known:
                task.since = now
        if was_up:
            log.warning(
                "task lost: %s at %s: %s",
                name,
                address,
                error,
                extra={"event": "task_lost", "task": name},
            )
        self._changed()

    # -- views -----------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """Everything the dashboard's overview and the status command show (JSON-able)."""
        now = self._clock()
        with self._lock:
            tasks = [
                dataclasses.asdict(t) for t in sorted(self._tasks.values(), key=lambda t: t.name)
            ]
            sessions = [_session_json(s, open_=True) for s in self._sessions.values()]
            closed = [_session_json(s, open_=False) for s in self._closed]
            steps = [s.to_json() for s in self._steps]
        return {
            "time": now,
            "uptime_s": now - self.started,
            "trace_sample_rate": self.trace_sample_rate,
            "tasks": tasks,
            "sessions": sorted(sessions, key=lambda s: s["created"]),
            "closed_sessions": closed,
            "steps": steps,
        }

    def session_detail(self, handle: str) -> dict[str, Any] | None:
        with self._lock:
            session = self._sessions.get(handle)
            if session is None:
                session = next((s for s in self._closed if s.handle == handle), None)
            if session is None:
                return None
            detail = _session_json(session, open_=session.closed is None)
            detail["ops"] = dict(sorted(session.ops.items(), key=lambda kv: -kv[1]))
            detail["graphs"] = [
                {"key": p.key, "nodes": len(p.nodes), "transfers": len(p.transfers)}
                for p in session.placements.values()
            ]
            detail["costs"] = cost_table(session.costs)
            detail["steps"] = [s.to_json() for s in self._steps if s.session == handle]
        return detail


def _session_json(s: _Session, open_: bool) -> dict[str, Any]:
    return {
        "handle": s.handle,
        "open": open_,
        "created": s.created,
        "closed": s.closed,
        "nodes": s.nodes,
        "top_ops": sorted(s.ops.items(), key=lambda kv: -kv[1])[:8],
        "steps_ok": s.steps_ok,
        "steps_failed": s.steps_failed,
    }


# -- the cost model (TensorFlow's CostModel, fed by traced steps) ----------------------------


def _update_costs(costs: dict[str, _NodeCost], step_stats: step_stats_pb2.StepStats) -> None:
    for dev in step_stats.dev_stats:
        for ns in dev.node_stats:
            cost = costs.get(ns.node_name)
            if cost is None:
                cost = costs[ns.node_name] = _NodeCost(
                    device=dev.device, op=_label_op(ns.timeline_label)
                )
            elapsed = ns.op_end_rel_micros - ns.op_start_rel_micros
            cost.runs += 1
            cost.total_us += elapsed
            cost.last_us = elapsed
            size = sum(
                o.tensor_description.allocation_description.requested_bytes for o in ns.output
            )
            cost.max_bytes = max(cost.max_bytes, size)


def _label_op(label: str) -> str:
    """The op of a timeline label "name = Op(inputs)"."""
    _, _, rest = label.partition(" = ")
    return rest.split("(", 1)[0]


def cost_table(costs: dict[str, _NodeCost], limit: int = 50) -> list[dict[str, Any]]:
    """The most expensive nodes by mean compute time."""
    rows: list[dict[str, Any]] = [
        {
            "node": name,
            "op": c.op,
            "device": c.device,
            "runs": c.runs,
            "mean_us": c.total_us / c.runs if c.runs else 0.0,
            "last_us": c.last_us,
            "max_output_bytes": c.max_bytes,
        }
        for name, c in costs.items()
    ]
    rows.sort(key=lambda r: -float(r["mean_us"]))
    return rows[:limit]


# -- the placed graph ------------------------------------------------------------------------


def placed_graph(
    key: str,
    graph: Graph,
    explain: dict[str, tuple[str, str]],
    partitions: dict[str, graph_pb2.GraphDef],
    clock: Callable[[], float] = time.time,
) -> PlacedGraph:
    """The graph view of a placed graph: nodes in layers (longest path from a source, back
    edges of loops left out), edges marked where they cross devices, and the transfers the
    partitioner added."""
    nodes = [n for n in graph.op_nodes()]
    index = {n.id: i for i, n in enumerate(nodes)}
    edges: list[tuple[int, int, bool]] = []
    succ: list[list[int]] = [[] for _ in nodes]
    indeg = [0] * len(nodes)
    for i, n in enumerate(nodes):
        for e in n.out_edges:
            j = index.get(e.dst.id)
            if j is None:
                continue
            edges.append((i, j, n.assigned_device != e.dst.assigned_device))
            if n.op != "NextIteration":  # a loop's back edge: layers follow forward edges
                succ[i].append(j)
                indeg[j] += 1
    layer = [0] * len(nodes)
    ready = collections.deque(i for i, d in enumerate(indeg) if d == 0)
    while ready:
        i = ready.popleft()
        for j in succ[i]:
            layer[j] = max(layer[j], layer[i] + 1)
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(j)
    for i in range(len(nodes)):  # a source (a Const, a feed) sits just before its consumers
        if not any(e.src.id in index for e in nodes[i].in_edges) and succ[i]:
            layer[i] = max(0, min(layer[j] for j in succ[i]) - 1)
    rows: dict[int, int] = collections.defaultdict(int)
    out_nodes = []
    for i, n in enumerate(nodes):
        reason, detail = explain.get(n.name, ("", ""))
        y = rows[layer[i]]
        rows[layer[i]] += 1
        out_nodes.append(
            {
                "name": n.name,
                "op": n.op,
                "device": n.assigned_device,
                "reason": reason,
                "detail": detail,
                "x": layer[i],
                "y": y,
            }
        )
    transfers = []
    for task in sorted(partitions):
        for nd in partitions[task].node:
            if nd.op in ("_Send", "_HostSend"):
                transfers.append(
                    {
                        "tensor": nd.attr["tensor_name"].s.decode(),
                        "node": nd.name,
                        "from": nd.attr["send_device"].s.decode(),
                        "to": nd.attr["recv_device"].s.decode(),
                    }
                )
    return PlacedGraph(key, out_nodes, edges, transfers, clock())


# -- timelines -------------------------------------------------------------------------------


def timeline(step_stats: step_stats_pb2.StepStats) -> dict[str, Any]:
    """Per-device lanes of kernels; transfers (_Send/_Recv) with their bytes. Times are
    microseconds from the step's first kernel."""
    starts = [ns.all_start_micros for d in step_stats.dev_stats for ns in d.node_stats]
    origin = min(starts) if starts else 0
    lanes = []
    for dev in step_stats.dev_stats:
        items = []
        for ns in dev.node_stats:
            op = _label_op(ns.timeline_label) or ns.node_name
            size = sum(
                o.tensor_description.allocation_description.requested_bytes for o in ns.output
            )
            items.append(
                {
                    "node": ns.node_name,
                    "op": op,
                    "start_us": ns.all_start_micros - origin,
                    "duration_us": max(ns.all_end_rel_micros, 1),
                    "bytes": size,
                    "transfer": op in ("_Send", "_Recv", "_HostSend", "_HostRecv"),
                    "label": ns.timeline_label,
                }
            )
        lanes.append({"device": dev.device, "items": items})
    return {"lanes": lanes}


def chrome_trace(step_stats: step_stats_pb2.StepStats) -> dict[str, Any]:
    """The step as Chrome trace JSON (Perfetto and chrome://tracing open it): one process
    per device, complete events ("X") per kernel."""
    events: list[dict[str, Any]] = []
    for pid, dev in enumerate(step_stats.dev_stats):
        events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": dev.device}})
        for ns in dev.node_stats:
            op = _label_op(ns.timeline_label) or ns.node_name
            events.append(
                {
                    "name": op,
                    "cat": "Op",
                    "ph": "X",
                    "pid": pid,
                    "tid": ns.thread_id,
                    "ts": ns.all_start_micros,
                    "dur": max(ns.all_end_rel_micros, 1),
                    "args": {"name": ns.node_name, "op": op, "label": ns.timeline_label},
                }
            )
    return {"traceEvents": events, "displayTimeUnit": "ms"}


_NODE_IN_MESSAGE = re.compile(r"\{\{node ([^}]+)\}\}")


def _node_in(message: str) -> str:
    """The node an error names in TensorFlow's "[[{{node X}}]]" form, or ""."""
    found = _NODE_IN_MESSAGE.search(message or "")
    return found.group(1) if found else ""
