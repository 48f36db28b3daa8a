"""Executor stage, step statistics: what a traced step records per node (TensorFlow's
StepStatsCollector and NodeExecStatsWrapper).

A step is traced when its `StepState.stats` is a `DeviceStats` (one per device of the
step, from a `StepStatsCollector`). The executor then runs that step over a traced copy of
its GraphView (`traced_view`), built once per executor, whose compute functions time the
kernel and record one NodeExecStats entry; an untraced step runs the plain view and pays
nothing. Recording appends one tuple (thread-safe: list.append under the GIL); protos are
built once, by `StepStatsCollector.fill`, after the step.

What is recorded: node name, wall-clock start (all_start_micros / _nanos), kernel start
and end relative to it (an async kernel such as _Recv ends when it calls `done`, so its
time includes the wait), all_end = op_end (propagating outputs is not timed), the
executing thread's id, TensorFlow's timeline label ("name = Op(input, ...)"; _Send/_Recv:
"name = _Send(tensor @peer_device)") and, per output, dtype, shape and bytes.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from typing import Any

from common.dtypes import base
from common.executor.graph_view import GraphView
from common.graph.graph import Node
from protos import step_stats_pb2

# One recorded node: (name, label, start ns since epoch, kernel ns, thread id, outputs).
# outputs: tuple of (slot, dtype, shape, nbytes) or () when failed or dead.
_Record = tuple[str, str, int, int, int, tuple]

_ALLOCATOR = "cpu"
_THREAD_MASK = 0xFFFFFFFF  # NodeExecStats.thread_id is a uint32


class DeviceStats:
    """The node records of one device in one step (DeviceStepStats)."""

    __slots__ = ("collector", "device", "records")

    def __init__(self, device: str, collector: StepStatsCollector | None = None) -> None:
        self.device = device
        self.records: list[_Record] = []
        self.collector = collector  # the step's, for function bodies on other devices

    def for_device(self, device: str) -> DeviceStats:
        """The same step's recorder for `device` (a function body's device)."""
        if device == self.device or self.collector is None:
            return self
        return self.collector.for_device(device)


class StepStatsCollector:
    """The DeviceStats of every device of one traced step. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._devices: dict[str, DeviceStats] = {}

    def for_device(self, device: str) -> DeviceStats:
        """The device's recorder (the same one for every executor on that device)."""
        with self._lock:
            stats = self._devices.get(device)
            if stats is None:
                stats = self._devices[device] = DeviceStats(device, self)
            return stats

    def devices(self) -> list[str]:
        with self._lock:
            return list(self._devices)

    def absorb(self, other: StepStatsCollector) -> None:
        """Take `other`'s records (a partial run's, recorded over several calls)."""
        if other is self:
            return
        for device in other.devices():
            self.for_device(device).records.extend(other.records(device))

    def records(self, device: str) -> list[_Record]:
        """What the device's executors recorded so far (a copy)."""
        with self._lock:
            stats = self._devices.get(device)
        return list(stats.records) if stats is not None else []

    def fill(self, step_stats: step_stats_pb2.StepStats) -> None:
        """Append one DeviceStepStats per device (in the order they were first asked for)."""
        with self._lock:
            devices = list(self._devices.values())
        for stats in devices:
            dev = step_stats.dev_stats.add(device=stats.device)
            for record in list(stats.records):
                _fill_node(dev.node_stats.add(), record, dev.thread_names)

    def to_proto(self) -> step_stats_pb2.StepStats:
        out = step_stats_pb2.StepStats()
        self.fill(out)
        return out


def _fill_node(ns: Any, record: _Record, thread_names: Any) -> None:
    name, label, start_ns, kernel_ns, thread_id, outputs = record
    ns.node_name = name
    ns.timeline_label = label
    ns.all_start_nanos = start_ns
    ns.all_start_micros = start_ns // 1000
    ns.op_start_rel_nanos = 0
    ns.op_start_rel_micros = 0
    ns.op_end_rel_nanos = ns.all_end_rel_nanos = kernel_ns
    ns.op_end_rel_micros = ns.all_end_rel_micros = kernel_ns // 1000
    ns.thread_id = thread_id
    if thread_id not in thread_names:
        thread_names[thread_id] = f"thread {thread_id}"
    for slot, dtype, shape, nbytes in outputs:
        out = ns.output.add(slot=slot)
        desc = out.tensor_description
        desc.dtype = dtype
        if shape is None:
            desc.shape.unknown_rank = True
        else:
            for size in shape:
                desc.shape.dim.add(size=size)
        alloc = desc.allocation_description
        alloc.requested_bytes = alloc.allocated_bytes = nbytes
        alloc.allocator_name = _ALLOCATOR


# -- the traced view ---------------------------------------------------------------------


def traced_view(view: GraphView) -> GraphView:
    """A shallow copy of `view` whose computes record into `ctx.step.stats`."""
    traced = copy.copy(view)
    traced.computes = [
        (_traced_async if view.is_async[i] else _traced_sync)(
            view.computes[i], view.names[i], timeline_label(node), _dtypes(node)
        )
        for i, node in enumerate(view.nodes)
    ]
    traced.trivial = [0] * len(view.nodes)  # every kernel runs, and is recorded
    traced.build_plans()
    return traced


def timeline_label(node: Node) -> str:
    """TensorFlow's label: "name = Op(in0, in1, ^ctrl)"; a transfer names its key and peer."""
    if node.op in ("_Send", "_HostSend", "_Recv", "_HostRecv"):
        peer = "recv_device" if "Send" in node.op else "send_device"
        return f"{node.name} = {node.op}({node.attr('tensor_name', '')} @{node.attr(peer, '')})"
    data = sorted((e for e in node.in_edges if not e.is_control), key=lambda e: e.dst_input)
    inputs = [e.src.name if e.src_output == 0 else f"{e.src.name}:{e.src_output}" for e in data]
    inputs += ["^" + e.src.name for e in node.in_edges if e.is_control and e.src.is_op]
    return f"{node.name} = {node.op}({', '.join(inputs)})"


def _dtypes(node: Node) -> tuple[int, ...]:
    return tuple(int(base(t)) for t in node.output_types)


def _describe(outputs: Any, dtypes: tuple[int, ...]) -> tuple:
    """(slot, dtype, shape, nbytes) per live array-like output."""
    out = []
    for slot, value in enumerate(outputs):
        shape = getattr(value, "shape", None)
        if shape is None or slot >= len(dtypes):
            continue  # DEAD, a ref (variable object), a Python value
        out.append((slot, dtypes[slot], tuple(shape), int(getattr(value, "nbytes", 0))))
    return tuple(out)


def _traced_sync(
    compute: Callable[..., Any], name: str, label: str, dtypes: tuple[int, ...]
) -> Callable[..., Any]:
    def traced(ctx: Any, inputs: list) -> Any:
        stats = ctx.step.stats
        start = time.time_ns()
        t0 = time.perf_counter_ns()
        try:
            outputs = compute(ctx, inputs)
        except BaseException:
            stats.records.append(
                (
                    name,
                    label,
                    start,
                    time.perf_counter_ns() - t0,
                    threading.get_native_id() & _THREAD_MASK,
                    (),
                )
            )
            raise
        took = time.perf_counter_ns() - t0
        stats.records.append(
            (
                name,
                label,
                start,
                took,
                threading.get_native_id() & _THREAD_MASK,
                _describe(outputs, dtypes),
            )
        )
        return outputs

    return traced


def _traced_async(
    compute: Callable[..., Any], name: str, label: str, dtypes: tuple[int, ...]
) -> Callable[..., Any]:
    def traced(ctx: Any, inputs: list, done: Callable[..., None]) -> None:
        stats = ctx.step.stats
        start = time.time_ns()
        t0 = time.perf_counter_ns()
        thread_id = threading.get_native_id() & _THREAD_MASK

        def traced_done(outputs: Any, error: BaseException | None = None) -> None:
            took = time.perf_counter_ns() - t0
            described = _describe(outputs, dtypes) if error is None and outputs else ()
            stats.records.append((name, label, start, took, thread_id, described))
            done(outputs, error)

        compute(ctx, inputs, traced_done)

    return traced
