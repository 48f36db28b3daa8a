"""master.monitor (pure): step records and their bounds, failed-step log lines, traces and
the cost model, task health transitions, the placement EXPLAIN, timelines and Chrome trace
JSON; common.cli's JSON log lines."""

from __future__ import annotations

import json
import logging

import pytest
from google.protobuf import text_format

from common import cli
from common.errors import InvalidArgumentError
from common.graph.constructor import convert_graph_def_to_graph
from common.placer import place
from master import monitor as mon
from protos import config_pb2, graph_pb2, step_stats_pb2

DEVICES = [
    "/job:ps/replica:0/task:0/device:CPU:0",
    "/job:worker/replica:0/task:0/device:CPU:0",
    "/job:worker/replica:0/task:1/device:CPU:0",
]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _metadata(*nodes: tuple[str, str, str, int, int, int]) -> config_pb2.RunMetadata:
    """(device, node, op, start us, duration us, output bytes) records as RunMetadata."""
    md = config_pb2.RunMetadata()
    devs: dict[str, step_stats_pb2.DeviceStepStats] = {}
    for device, node, op, start, dur, size in nodes:
        dev = devs.get(device)
        if dev is None:
            dev = devs[device] = md.step_stats.dev_stats.add(device=device)
        ns = dev.node_stats.add(
            node_name=node,
            timeline_label=f"{node} = {op}(x)",
            all_start_micros=start,
            op_end_rel_micros=dur,
            all_end_rel_micros=dur,
            thread_id=7,
        )
        out = ns.output.add(slot=0)
        out.tensor_description.allocation_description.requested_bytes = size
    return md


def test_steps_are_recorded_bounded_and_failures_logged(caplog) -> None:
    clock = Clock()
    m = mon.Monitor(clock=clock)
    m.session_created("s1", graph_pb2.GraphDef())
    ok = m.step_started("s1", "run", ["y:0"])
    clock.now += 0.5
    m.step_finished(ok, None)
    bad = m.step_started("s1", "run", ["z:0"])
    with caplog.at_level(logging.WARNING, logger="master.monitor"):
        m.step_finished(
            bad,
            InvalidArgumentError("Input to reshape is a tensor with 9 values\n\t [[{{node bad}}]]"),
        )
    snap = m.snapshot()
    assert [s["outcome"] for s in snap["steps"]] == ["INVALID_ARGUMENT", "ok"]
    assert snap["steps"][1]["duration_ms"] == pytest.approx(500.0)
    assert snap["steps"][0]["node"] == "bad"  # from the message's {{node}} form
    assert snap["sessions"][0]["steps_ok"] == 1 and snap["sessions"][0]["steps_failed"] == 1
    [line] = [r for r in caplog.records if r.name == "master.monitor"]
    assert line.event == "step_failed" and line.code == "INVALID_ARGUMENT"
    assert "session=s1" in line.getMessage() and "node=bad" in line.getMessage()
    for _ in range(mon.RECENT_STEPS + 10):
        m.step_finished(m.step_started("s1", "run", []), None)
    assert len(m.snapshot()["steps"]) == mon.RECENT_STEPS


def test_traces_feed_the_cost_model_and_are_bounded() -> None:
    m = mon.Monitor()
    m.session_created("s1", graph_pb2.GraphDef())
    for i in range(mon.RECENT_TRACES + 5):
        rec = m.step_started("s1", "run", ["y:0"])
        m.step_finished(
            rec,
            None,
            _metadata(
                (DEVICES[1], "y", "MatMul", 100, 40 + i, 36),
                (DEVICES[1], "y/_recv", "_Recv", 90, 10, 36),
            ),
        )
    assert m.trace(1) is None  # the oldest fell out
    newest = m.snapshot()["steps"][0]
    assert newest["traced"] and m.trace(newest["id"]) is not None
    [matmul, recv] = m.session_detail("s1")["costs"]
    assert matmul["node"] == "y" and matmul["op"] == "MatMul"
    assert matmul["runs"] == mon.RECENT_TRACES + 5
    assert matmul["mean_us"] == pytest.approx(40 + (mon.RECENT_TRACES + 4) / 2)
    assert recv["max_output_bytes"] == 36


def test_task_health_transitions_are_logged_once(caplog) -> None:
    m = mon.Monitor()
    with caplog.at_level(logging.INFO, logger="master.monitor"):
        m.task_seen("/job:worker/replica:0/task:1", "h:1", DEVICES[2:], {"rss_bytes": 1})
        m.task_lost("/job:worker/replica:0/task:1", "h:1", "UNAVAILABLE: refused")
        m.task_lost("/job:worker/replica:0/task:1", "h:1", "UNAVAILABLE: refused")
        m.task_seen("/job:worker/replica:0/task:1", "h:1", DEVICES[2:], {})
    events = [r.event for r in caplog.records if hasattr(r, "event")]
    assert events == ["task_lost", "task_regained"]
    [task] = m.snapshot()["tasks"]
    assert task["up"] and task["error"] == ""


def test_placement_explain_and_graph_view() -> None:
    gd = graph_pb2.GraphDef()
    text_format.Parse(
        """
        node { name: "w" op: "VarHandleOp" device: "/job:ps/task:0"
               attr { key: "dtype" value { type: DT_FLOAT } }
               attr { key: "shape" value { shape { } } } }
        node { name: "read" op: "ReadVariableOp" input: "w"
               attr { key: "dtype" value { type: DT_FLOAT } } }
        node { name: "y" op: "Mul" input: "read" input: "read" device: "/job:worker/task:1"
               attr { key: "T" value { type: DT_FLOAT } } }
        node { name: "s" op: "Shape" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
        node { name: "gpu" op: "Neg" input: "y" device: "/device:GPU:0"
               attr { key: "T" value { type: DT_FLOAT } } }
        node { name: "z" op: "Neg" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
        """,
        gd,
    )
    graph = convert_graph_def_to_graph(gd)
    explain: dict[str, tuple[str, str]] = {}
    place(
        graph,
        DEVICES,
        default_device="/job:worker/task:0",
        allow_soft_placement=True,
        explain=explain,
    )
    assert explain["w"] == ("explicit", "requested /job:ps/task:0")
    assert explain["read"][0] == "colocated" and "with w" in explain["read"][1]
    assert explain["s"] == ("heuristic", "follows its input y")
    assert explain["gpu"][0] == "soft-placed"
    assert explain["z"] == ("default", "default device /job:worker/task:0")

    view = mon.placed_graph("-> z:0", graph, explain, {})
    by_name = {n["name"]: n for n in view.nodes}
    assert by_name["w"]["x"] == 0 and by_name["read"]["x"] == 1 and by_name["y"]["x"] == 2
    names = [n["name"] for n in view.nodes]
    crossing = {(names[a], names[b]) for a, b, crosses in view.edges if crosses}
    assert ("read", "y") in crossing and ("y", "s") not in crossing


def test_timeline_and_chrome_trace() -> None:
    md = _metadata(
        (DEVICES[0], "w/_send", "_Send", 1000, 5, 36), (DEVICES[2], "y", "MatMul", 1010, 30, 36)
    )
    tl = mon.timeline(md.step_stats)
    [ps, w1] = tl["lanes"]
    assert ps["device"] == DEVICES[0] and ps["items"][0]["transfer"]
    assert ps["items"][0]["start_us"] == 0 and w1["items"][0]["start_us"] == 10
    assert w1["items"][0]["bytes"] == 36 and not w1["items"][0]["transfer"]
    trace = mon.chrome_trace(md.step_stats)
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert [(e["name"], e["dur"]) for e in complete] == [("_Send", 5), ("MatMul", 30)]
    assert json.loads(json.dumps(trace)) == trace


def test_sampling_rate_bounds() -> None:
    assert not mon.Monitor(0.0).want_trace()
    assert mon.Monitor(1.0).want_trace()
    with pytest.raises(ValueError):
        mon.Monitor(1.5)


def test_json_log_lines_carry_event_fields(capsys) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(cli.JsonFormatter())
    logger = logging.getLogger("test.json.lines")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("task lost: %s", "t1", extra={"event": "task_lost", "task": "t1"})
    finally:
        logger.removeHandler(handler)
    line = json.loads(capsys.readouterr().err.strip())
    assert line["msg"] == "task lost: t1" and line["event"] == "task_lost"
    assert line["task"] == "t1" and line["level"] == "WARNING"
