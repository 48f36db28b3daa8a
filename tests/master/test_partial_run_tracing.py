"""Master, tracing partial runs: a partial run whose first RunStep asks for a trace
records every node of its one step, across both workers, and its last RunStep answers
the whole run's step stats (TensorFlow leaves partial runs untraced); an untraced
partial run and the calls before the last answer none. The monitor keeps the trace."""

from __future__ import annotations

import numpy as np

from protos import config_pb2, master_pb2
from tests.master.test_master import T, add_graph, create, run, values
from tests.master.test_tracing import DEV0, DEV1, FULL, by_device, op_of


def setup(cluster, handle) -> str:
    request = master_pb2.PartialRunSetupRequest(
        session_handle=handle, feed=["x:0"], fetch=["c:0", "d:0"]
    )
    return cluster.stub.PartialRunSetup(request, timeout=T).partial_run_handle


def test_traced_partial_run_answers_its_step_stats_on_the_last_call(cluster):
    handle = create(cluster, add_graph())
    partial = setup(cluster, handle)
    first = run(
        cluster,
        handle,
        ["c:0"],
        {"x:0": np.array([1.0, 2.0], np.float32)},
        partial_run_handle=partial,
        options=config_pb2.RunOptions(trace_level=FULL),
    )
    np.testing.assert_array_equal(values(first)["c:0"], [11.0, 22.0])
    assert len(first.metadata.step_stats.dev_stats) == 0  # not finished yet
    last = run(cluster, handle, ["d:0"], partial_run_handle=partial)
    np.testing.assert_array_equal(values(last)["d:0"], [121.0, 484.0])
    stats = by_device(last.metadata.step_stats)
    assert sorted(stats) == [DEV0, DEV1]
    compute = {
        dev: {n for n, ns in nodes.items() if op_of(ns) not in ("_Send", "_Recv")}
        for dev, nodes in stats.items()
    }
    assert compute == {DEV0: {"d"}, DEV1: {"a", "c"}}
    monitor = cluster.master.master.monitor
    [step] = [s for s in monitor.snapshot()["steps"] if s["fetches"] == ["d:0"]]
    assert step["kind"] == "partial" and step["traced"]
    assert monitor.trace(step["id"]) is not None


def test_untraced_partial_run_answers_no_step_stats(cluster):
    handle = create(cluster, add_graph())
    partial = setup(cluster, handle)
    run(
        cluster,
        handle,
        ["c:0"],
        {"x:0": np.array([1.0, 2.0], np.float32)},
        partial_run_handle=partial,
    )
    last = run(cluster, handle, ["d:0"], partial_run_handle=partial)
    assert values(last)["d:0"].tolist() == [121.0, 484.0]
    assert len(last.metadata.step_stats.dev_stats) == 0
