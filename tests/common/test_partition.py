"""Tests for the partition stage: the exact _Send/_Recv pairs TF's Partition() produces."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import common.ops  # noqa: F401  (registers the ops used below)
from common.dtypes import DataType
from common.errors import Code, OpError
from common.graph import algorithm
from common.graph.graph import Graph
from common.partition import build_control_flow_info, partition
from common.subgraph import attr_s, attr_type, parse_tensor_name
from protos import versions_pb2

F = DataType.DT_FLOAT
D0 = "/job:worker/replica:0/task:0/device:CPU:0"
D1 = "/job:worker/replica:0/task:1/device:CPU:0"
D2 = "/job:worker/replica:0/task:1/device:CPU:1"
GPU = "/job:worker/replica:0/task:0/device:GPU:0"
INCARNATIONS = {D0: 11, D1: 0xFFFFFFFFFFFFFFFE, D2: 33, GPU: 44}
_ATTRS = {
    "Const": {"dtype": attr_type(F)},
    "AddV2": {"T": attr_type(F)},
    "Identity": {"T": attr_type(F)},
    "VariableV2": {"dtype": attr_type(F)},
    "NoOp": {},
    "Enter": {"T": attr_type(F), "frame_name": attr_s("loop")},
    "Exit": {"T": attr_type(F)},
}


def build(spec: list[tuple]) -> Graph:
    """Nodes (name, op, inputs, assigned device[, attr overrides])."""
    g = Graph()
    g.versions = versions_pb2.VersionDef(producer=1234, min_consumer=12)
    for name, op, _, device, *extra in spec:
        attrs = dict(_ATTRS[op])
        if extra:
            attrs.update(extra[0])
        g.add_node(name, op, attrs).assigned_device = device
    for name, _, inputs, *_ in spec:
        dst, slot = g.node(name), 0
        for inp in inputs:
            src, idx = parse_tensor_name(inp)
            if idx < 0:
                g.add_control_edge(g.node(src), dst)
            else:
                g.add_edge(g.node(src), idx, dst, slot)
                slot += 1
    algorithm.fixup_source_and_sink_edges(g)
    return g


def run_partition(g: Graph, **kw) -> dict:
    counter = itertools.count()
    return partition(
        g,
        get_incarnation=INCARNATIONS.__getitem__,
        new_name=lambda prefix: f"{prefix}/_{next(counter)}",
        **kw,
    )


def _attr(v):
    kind = v.WhichOneof("value")
    if kind == "s":
        return v.s.decode()
    if kind == "type":
        return DataType(v.type).name
    if kind == "tensor":
        return (
            "tensor",
            DataType(v.tensor.dtype).name,
            [d.size for d in v.tensor.tensor_shape.dim],
        )
    return getattr(v, kind)


def summary(gd) -> list[tuple]:
    return [
        (n.name, n.op, n.device, list(n.input), {k: _attr(v) for k, v in sorted(n.attr.items())})
        for n in gd.node
    ]


def pair(tensor_name, src, dst, *, client=False):
    return {
        "client_terminated": client,
        "recv_device": dst,
        "send_device": src,
        "send_device_incarnation": (
            INCARNATIONS[src] - (1 << 64) if INCARNATIONS[src] >= 1 << 63 else INCARNATIONS[src]
        ),
        "tensor_name": tensor_name,
    }


def send(tensor_name, src, dst, dtype="DT_FLOAT"):
    return {"T": dtype, **pair(tensor_name, src, dst)}


def recv(tensor_name, src, dst, dtype="DT_FLOAT"):
    return {"tensor_type": dtype, **pair(tensor_name, src, dst)}


CONST = {"dtype": "DT_FLOAT"}


def test_two_device_chain():
    g = build([("a", "Const", [], D0), ("b", "Identity", ["a"], D1)])
    parts = run_partition(g)
    assert list(parts) == [D0, D1]
    assert summary(parts[D0]) == [
        ("a", "Const", D0, [], CONST),
        ("a/_0", "_Send", D0, ["a"], send("edge_0_a", D0, D1)),
    ]
    assert summary(parts[D1]) == [
        ("b", "Identity", D1, ["a/_1"], {"T": "DT_FLOAT"}),
        ("a/_1", "_Recv", D1, [], recv("edge_0_a", D0, D1)),
    ]
    assert parts[D1].versions.producer == 1234 and parts[D0].versions.min_consumer == 12


def test_fan_out_to_one_device_shares_one_recv():
    g = build(
        [("a", "Const", [], D0), ("b", "Identity", ["a"], D1), ("c", "AddV2", ["a", "a"], D1)]
    )
    parts = run_partition(g)
    assert summary(parts[D0]) == [
        ("a", "Const", D0, [], CONST),
        ("a/_0", "_Send", D0, ["a"], send("edge_0_a", D0, D1)),
    ]
    assert summary(parts[D1]) == [
        ("b", "Identity", D1, ["a/_1"], {"T": "DT_FLOAT"}),
        ("c", "AddV2", D1, ["a/_1", "a/_1"], {"T": "DT_FLOAT"}),
        ("a/_1", "_Recv", D1, [], recv("edge_0_a", D0, D1)),
    ]


def test_control_edge_carried_by_dummy_tensor():
    g = build([("a", "Const", [], D0), ("b", "NoOp", ["^a"], D1)])
    parts = run_partition(g)
    assert summary(parts[D0]) == [
        ("a", "Const", D0, [], CONST),
        ("a/_0", "Const", D0, ["^a"], {"dtype": "DT_FLOAT", "value": ("tensor", "DT_FLOAT", [0])}),
        ("a/_1", "_Send", D0, ["a/_0"], send("edge_0_a", D0, D1)),
    ]
    assert summary(parts[D1]) == [
        ("b", "NoOp", D1, ["^a/_3"], {}),
        ("a/_2", "_Recv", D1, [], recv("edge_0_a", D0, D1)),
        ("a/_3", "Identity", D1, ["a/_2"], {"T": "DT_FLOAT"}),
    ]


def test_ref_edge_sends_base_type_and_recv_waits_on_other_inputs():
    g = build(
        [
            ("var", "VariableV2", [], D0),
            ("c", "Const", [], D1),
            ("x", "AddV2", ["var", "c"], D1),
            ("y", "Identity", ["var"], D1),
        ]
    )
    parts = run_partition(g)
    assert summary(parts[D0]) == [
        ("var", "VariableV2", D0, [], {"dtype": "DT_FLOAT"}),
        ("var/_0", "_Send", D0, ["var"], send("edge_0_var", D0, D1)),
        ("var/_2", "_Send", D0, ["var"], send("edge_2_var", D0, D1)),  # ref edges: no sharing
    ]
    assert summary(parts[D1]) == [
        ("c", "Const", D1, [], CONST),
        ("x", "AddV2", D1, ["var/_1", "c"], {"T": "DT_FLOAT"}),
        ("y", "Identity", D1, ["var/_3"], {"T": "DT_FLOAT"}),
        ("var/_1", "_Recv", D1, ["^c"], recv("edge_0_var", D0, D1)),
        ("var/_3", "_Recv", D1, [], recv("edge_2_var", D0, D1)),
    ]


def test_three_device_diamond():
    g = build(
        [
            ("a", "Const", [], D0),
            ("b", "Identity", ["a"], D1),
            ("c", "Identity", ["a"], D2),
            ("d", "AddV2", ["b", "c"], D0),
        ]
    )
    parts = run_partition(g)
    assert list(parts) == [D0, D1, D2]
    assert summary(parts[D0]) == [
        ("a", "Const", D0, [], CONST),
        ("d", "AddV2", D0, ["b/_5", "c/_7"], {"T": "DT_FLOAT"}),
        ("a/_0", "_Send", D0, ["a"], send("edge_0_a", D0, D1)),
        ("a/_2", "_Send", D0, ["a"], send("edge_1_a", D0, D2)),
        ("b/_5", "_Recv", D0, [], recv("edge_2_b", D1, D0)),
        ("c/_7", "_Recv", D0, [], recv("edge_3_c", D2, D0)),
    ]
    assert summary(parts[D1]) == [
        ("b", "Identity", D1, ["a/_1"], {"T": "DT_FLOAT"}),
        ("a/_1", "_Recv", D1, [], recv("edge_0_a", D0, D1)),
        ("b/_4", "_Send", D1, ["b"], send("edge_2_b", D1, D0)),
    ]
    assert summary(parts[D2]) == [
        ("c", "Identity", D2, ["a/_3"], {"T": "DT_FLOAT"}),
        ("a/_3", "_Recv", D2, [], recv("edge_1_a", D0, D2)),
        ("c/_6", "_Send", D2, ["c"], send("edge_3_c", D2, D0)),
    ]


def test_partition_by_task_keeps_same_task_edges_direct():
    g = build([("a", "Const", [], D1), ("b", "Identity", ["a"], D2), ("c", "Identity", ["b"], D0)])

    def task(n):
        return n.assigned_device.rsplit("/device:", 1)[0]

    parts = run_partition(g, node_to_loc=task)
    assert list(parts) == ["/job:worker/replica:0/task:0", "/job:worker/replica:0/task:1"]
    assert [(n.name, list(n.input)) for n in parts["/job:worker/replica:0/task:1"].node] == [
        ("a", []),
        ("b", ["a"]),
        ("b/_0", ["b"]),
    ]
    assert [(n.name, n.op, list(n.input)) for n in parts["/job:worker/replica:0/task:0"].node] == [
        ("c", "Identity", ["b/_1"]),
        ("b/_1", "_Recv", []),
    ]


def test_int32_on_gpu_uses_host_send():
    i32 = {"dtype": attr_type(DataType.DT_INT32)}
    g = build(
        [
            ("n", "Const", [], GPU, i32),
            ("m", "Identity", ["n"], GPU, {"T": attr_type(DataType.DT_INT32)}),
            ("k", "Identity", ["n"], D0, {"T": attr_type(DataType.DT_INT32)}),
        ]
    )
    parts = run_partition(g)
    ops = {n.name: (n.op, list(n.input)) for n in parts[GPU].node}
    # int32 is host memory on both GPU ends: no same-device pair, direct input.
    assert ops["m"] == ("Identity", ["n"])
    assert ops["n/_0"] == ("_HostSend", ["n"])
    assert [(n.name, n.op) for n in parts[D0].node] == [("k", "Identity"), ("n/_1", "_Recv")]


def test_incomplete_graph_is_invalid():
    g = build([("a", "Const", [], D0), ("b", "AddV2", ["a"], D0)])
    with pytest.raises(OpError) as info:
        run_partition(g)
    assert info.value.code == Code.INVALID_ARGUMENT
    assert info.value.message == "Incomplete graph, missing 1 inputs for b"


def test_loop_split_across_devices_needs_a_loop_cond():
    # Split loops get TF's control-loop scaffolding (tests/common/test_partition_control_flow.py);
    # one without a LoopCond has no pivot to broadcast, as in TF.
    g = build(
        [
            ("a", "Const", [], D0),
            ("e", "Enter", ["a"], D1),
            ("i", "Identity", ["e"], D1),
            ("j", "Identity", ["i"], D0),
            ("x", "Exit", ["j"], D0),
        ]
    )
    cf = build_control_flow_info(g)
    assert [cf[g.node(n).id].frame_name for n in "aeijx"] == ["", "loop", "loop", "loop", "loop"]
    with pytest.raises(OpError) as info:
        run_partition(g)
    assert info.value.code == Code.INVALID_ARGUMENT
    assert info.value.message == "A cross-device loop must have a pivot predicate: loop"


def test_loop_entered_from_another_device_is_fine():
    g = build(
        [
            ("a", "Const", [], D0),
            ("e", "Enter", ["a"], D1),
            ("i", "Identity", ["e"], D1),
            ("x", "Exit", ["i"], D1),
            ("o", "Identity", ["x"], D0),
        ]
    )
    parts = run_partition(g)
    assert [n.op for n in parts[D1].node] == ["Enter", "Identity", "Exit", "_Recv", "_Send"]


def test_mixed_frames_are_invalid():
    g = build([("a", "Const", [], D0), ("e", "Enter", ["a"], D0), ("m", "AddV2", ["e", "a"], D0)])
    with pytest.raises(OpError) as info:
        build_control_flow_info(g)
    assert info.value.code == Code.INVALID_ARGUMENT
    assert info.value.message.startswith("The node 'm' has inputs from different frames.")


# -- property: partition, then remove the send/recv pairs: the original edges return ------
def remerge(parts: dict) -> tuple[set, set]:
    nodes = {n.name: n for gd in parts.values() for n in gd.node}
    sends = {n.attr["tensor_name"].s: n for n in nodes.values() if n.op in ("_Send", "_HostSend")}

    def origin(name: str, slot: int) -> tuple[str, int]:
        n = nodes[name]
        if n.op == "Identity" and n.input and nodes[n.input[0]].op == "_Recv" and "/_" in name:
            return origin(n.input[0], 0)
        if n.op in ("_Recv", "_HostRecv"):
            src = sends[n.attr["tensor_name"].s].input[0]
            return origin(*parse_tensor_name(src))
        if n.op == "Const" and "/_" in name and n.input:
            return parse_tensor_name(n.input[0])  # the dummy: "^src"
        return name, slot

    data, control = set(), set()
    for n in nodes.values():
        if "/_" in n.name:
            continue
        slot = 0
        for inp in n.input:
            src, idx = origin(*parse_tensor_name(inp))
            if inp.startswith("^") or idx < 0:
                control.add((src, n.name))
            else:
                data.add((src, idx, n.name, slot))
                slot += 1
    return data, control


@st.composite
def random_graphs(draw):
    n = draw(st.integers(2, 8))
    spec = []
    for i in range(n):
        arity = 0 if i == 0 else draw(st.integers(0, 2))
        op = ["Const", "Identity", "AddV2"][arity]
        inputs = [f"n{draw(st.integers(0, i - 1))}" for _ in range(arity)]
        if i and draw(st.booleans()):
            inputs.append(f"^n{draw(st.integers(0, i - 1))}")
        spec.append((f"n{i}", op, inputs, draw(st.sampled_from([D0, D1, D2]))))
    return spec


@settings(max_examples=60, deadline=None)
@given(random_graphs())
def test_partition_then_remerge_gives_back_the_edges(spec):
    g = build(spec)
    want_data = {
        (e.src.name, e.src_output, e.dst.name, e.dst_input)
        for e in g.edges()
        if e.src.is_op and e.dst.is_op and not e.is_control
    }
    want_control = {
        (e.src.name, e.dst.name) for e in g.edges() if e.src.is_op and e.dst.is_op and e.is_control
    }
    parts = run_partition(g)
    assert {n.name for gd in parts.values() for n in gd.node if "/_" not in n.name} == {
        s[0] for s in spec
    }
    for loc, gd in parts.items():
        assert all(n.device == loc for n in gd.node)
    assert remerge(parts) == (want_data, want_control)


# -- many control inputs: one pair per (node, other location), built in linear time -------
def test_many_control_inputs_from_another_task_share_one_send_recv_pair():
    n = 100_000
    spec = [(f"c{i}", "NoOp", [], D1 if i % 2 else D0) for i in range(n)]
    spec.append(("target", "NoOp", [f"^c{i}" for i in range(n)], D0))
    parts = run_partition(build(spec))
    d0, d1 = parts[D0], parts[D1]
    assert [nd.op for nd in d1.node if "/_" in nd.name] == ["NoOp", "Const", "_Send"]
    joined = next(nd for nd in d1.node if nd.op == "NoOp" and "/_" in nd.name)
    assert sorted(joined.input) == sorted(f"^c{i}" for i in range(1, n, 2))
    assert [nd.op for nd in d0.node if "/_" in nd.name] == ["_Recv", "Identity"]
    target = next(nd for nd in d0.node if nd.name == "target")
    recv_ident = next(nd for nd in d0.node if nd.op == "Identity")
    assert sorted(target.input) == sorted(
        [f"^c{i}" for i in range(0, n, 2)] + ["^" + recv_ident.name]
    )


def test_a_single_control_input_from_another_location_is_not_joined():
    g = build([("a", "NoOp", [], D1), ("b", "NoOp", [], D0), ("t", "NoOp", ["^a", "^b"], D0)])
    parts = run_partition(g)
    assert [nd.op for nd in parts[D1].node] == ["NoOp", "Const", "_Send"]


def test_control_inputs_are_not_joined_in_graphs_with_control_flow():
    g = build(
        [
            ("a", "NoOp", [], D1),
            ("b", "NoOp", [], D1),
            ("x", "Const", [], D0),
            ("e", "Enter", ["x"], D0),
            ("t", "NoOp", ["^a", "^b"], D0),
        ]
    )
    parts = run_partition(g, control_flow_info=build_control_flow_info(g))
    assert [nd.op for nd in parts[D1].node].count("_Send") == 2


def test_remove_edges_removes_many_inputs_at_once():
    spec = [(f"c{i}", "NoOp", [], D0) for i in range(5)]
    spec.append(("t", "NoOp", [f"^c{i}" for i in range(5)], D0))
    g = build(spec)
    t = g.node("t")
    before = g.num_edges
    g.remove_edges([e for e in t.in_edges if e.src.name in ("c1", "c3")])
    assert [e.src.name for e in t.in_edges] == ["c0", "c2", "c4"]
    assert g.node("c1").out_edges == [] and g.num_edges == before - 2
    assert all(e.id != -1 for e in g.edges()) and len(list(g.edges())) == g.num_edges
