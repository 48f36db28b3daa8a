"""Executor stage, step statistics: a traced step (StepState.stats) records one
NodeExecStats per node run (TensorFlow's timeline label, times, thread, outputs); an
untraced step never touches the traced view. Graphs and test kernels from test_executor."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from common.errors import InvalidArgumentError
from common.executor import CallFrame, Executor, StepStatsCollector
from common.graph.graph import Graph
from common.rendezvous import LocalRendezvous
from protos import types_pb2
from tests.common.test_executor import (
    DEVICE,
    KEY,
    TIMEOUT,
    _recv_graph,
    add,
    const,
    new_step,
    retval,
)


def _sum_graph() -> Graph:
    g = Graph()
    a = const(g, "a", 1)
    b = const(g, "b", 2)
    c = add(g, "c", "_ExecTestAdd", [a, b], ctrl=[a])
    retval(g, "out", c, 0)
    return g


def _traced_run(executor: Executor, collector: StepStatsCollector) -> list:
    step = new_step(call_frame=CallFrame([], 1), stats=collector.for_device(DEVICE))
    executor.run(step, timeout=TIMEOUT)
    return step.call_frame.retvals


def test_traced_step_records_every_node_once() -> None:
    executor = Executor(_sum_graph(), DEVICE)
    collector = StepStatsCollector()
    start = time.time_ns() // 1000
    assert _traced_run(executor, collector) == [3]
    end = time.time_ns() // 1000 + 1
    (dev,) = collector.to_proto().dev_stats
    assert dev.device == DEVICE
    stats = {ns.node_name: ns for ns in dev.node_stats}
    assert len(dev.node_stats) == 4
    assert {n: ns.timeline_label for n, ns in stats.items()} == {
        "a": "a = _ExecTestConst()",
        "b": "b = _ExecTestConst()",
        "c": "c = _ExecTestAdd(a, b, ^a)",
        "out": "out = _Retval(c)",
    }
    for ns in stats.values():
        assert start <= ns.all_start_micros <= ns.all_start_micros + ns.all_end_rel_micros <= end
        assert 0 <= ns.op_start_rel_nanos <= ns.op_end_rel_nanos == ns.all_end_rel_nanos
        assert ns.thread_id == threading.get_native_id()
        assert dev.thread_names[ns.thread_id]
    (out,) = stats["c"].output
    assert out.tensor_description.dtype == types_pb2.DT_INT64
    assert list(out.tensor_description.shape.dim) == []  # a scalar
    assert out.tensor_description.allocation_description.allocated_bytes == 8
    assert list(stats["out"].output) == []  # _Retval has no outputs


def test_untraced_steps_never_build_the_traced_view() -> None:
    executor = Executor(_sum_graph(), DEVICE)
    step = new_step(call_frame=CallFrame([], 1))
    executor.run(step, timeout=TIMEOUT)
    assert step.call_frame.retvals == [3]
    assert executor._traced is None
    collector = StepStatsCollector()
    _traced_run(executor, collector)
    assert executor._traced is not None
    executor.run(new_step(call_frame=CallFrame([], 1)), timeout=TIMEOUT)  # untraced again
    assert len(collector.to_proto().dev_stats[0].node_stats) == 4  # nothing added


def test_async_recv_time_includes_the_wait() -> None:
    rendezvous = LocalRendezvous()
    collector = StepStatsCollector()
    step = new_step(
        1, rendezvous=rendezvous, call_frame=CallFrame([], 1), stats=collector.for_device(DEVICE)
    )
    finished = threading.Event()
    Executor(_recv_graph(), DEVICE).run_async(step, lambda e: finished.set())
    assert not finished.is_set()  # parked in the rendezvous
    sent_at = time.time_ns()
    rendezvous.send(KEY, np.int64(21), False)
    assert finished.wait(TIMEOUT)
    assert step.call_frame.retvals == [42]
    stats = {ns.node_name: ns for ns in collector.to_proto().dev_stats[0].node_stats}
    recv = stats["recv"]
    assert recv.all_start_nanos < sent_at <= recv.all_start_nanos + recv.op_end_rel_nanos
    assert recv.timeline_label == f"recv = _Recv(edge_1 @{DEVICE})"
    (out,) = recv.output
    assert out.tensor_description.dtype == types_pb2.DT_INT64


def test_failing_node_is_recorded_without_outputs() -> None:
    g = Graph()
    add(g, "bad", "_ExecTestFail", [const(g, "a", 1)], fail_at=1)
    collector = StepStatsCollector()
    step = new_step(stats=collector.for_device(DEVICE))
    with pytest.raises(InvalidArgumentError, match="boom at 1") as info:
        Executor(g, DEVICE).run(step, timeout=TIMEOUT)
    assert info.value.node_name == "bad"
    stats = {ns.node_name: ns for ns in collector.to_proto().dev_stats[0].node_stats}
    assert sorted(stats) == ["a", "bad"]
    assert list(stats["bad"].output) == [] and len(stats["a"].output) == 1
