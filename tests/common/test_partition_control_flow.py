"""Partition, cross-device loops: TF AddControlFlow's scaffolding (exact structure) and
split loops run through the in-process session, against TensorFlow where installed."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from google.protobuf import text_format

from common.errors import Code, InvalidArgumentError, OpError
from common.graph.constructor import convert_graph_def_to_graph
from common.partition import build_control_flow_info, partition
from common.partition_control_flow import add_control_flow, has_control_loops
from common.session import Session
from protos import graph_pb2

D0 = "/job:localhost/replica:0/task:0/device:CPU:0"
D1 = "/job:localhost/replica:0/task:0/device:CPU:1"


def _const(name: str, value: int, device: str, control: str = "") -> str:
    ctrl = f'input: "^{control}" ' if control else ""
    return (
        f'node {{ name: "{name}" op: "Const" device: "{device}" {ctrl}'
        'attr { key: "dtype" value { type: DT_INT32 } } '
        f'attr {{ key: "value" value {{ tensor {{ dtype: DT_INT32 tensor_shape {{ }} '
        f"int_val: {value} }} }} }} }}\n"
    )


def _node(name: str, op: str, inputs: list[str], device: str, extra: str = "") -> str:
    ins = " ".join(f'input: "{i}"' for i in inputs)
    return (
        f'node {{ name: "{name}" op: "{op}" {ins} device: "{device}" '
        f'attr {{ key: "T" value {{ type: DT_INT32 }} }} {extra}}}\n'
    )


def _enter(name: str, src: str, device: str, constant: bool = False) -> str:
    extra = 'attr { key: "frame_name" value { s: "L" } } '
    if constant:
        extra += 'attr { key: "is_constant" value { b: true } } '
    return _node(name, "Enter", [src], device, extra)


def counting_loop(body_device: str, limit: int = 3) -> graph_pb2.GraphDef:
    """i = 0; while i < limit: i = i + 1 -- the cond on D0, the add on `body_device`."""
    text = (
        _const("i0", 0, D0)
        + _const("limit", limit, D0)
        + _enter("enter", "i0", D0)
        + _enter("lim", "limit", D0, constant=True)
        + _node("merge", "Merge", ["enter", "next"], D0, 'attr { key: "N" value { i: 2 } } ')
        + _node("less", "Less", ["merge", "lim"], D0)
        + f'node {{ name: "cond" op: "LoopCond" input: "less" device: "{D0}" }}\n'
        + _node("switch", "Switch", ["merge", "cond"], D0)
        + _node("exit", "Exit", ["switch"], D0)
        + _node("ident", "Identity", ["switch:1"], D0)
        + _const("one", 1, body_device, control="ident")
        + _node("add", "AddV2", ["ident", "one"], body_device)
        + _node("next", "NextIteration", ["add"], D0)
    )
    return text_format.Parse(text, graph_pb2.GraphDef())


def placed(gd: graph_pb2.GraphDef):
    g = convert_graph_def_to_graph(gd)
    for n in g.op_nodes():
        n.assigned_device = n.requested_device
    return g


def run_partition(g) -> dict:
    names = itertools.count()
    return partition(g, get_incarnation=lambda d: 7, new_name=lambda p: f"{p}/_{next(names)}")


def summary(gd) -> list[tuple]:
    return [(n.name, n.op, list(n.input)) for n in gd.node]


@pytest.mark.timeout(30)
def test_skeleton_loop_on_the_body_device():
    parts = run_partition(placed(counting_loop(D1)))
    assert summary(parts[D1]) == [
        ("one", "Const", ["^ident/_13"]),
        ("add", "AddV2", ["ident/_15", "one"]),
        ("_cloopone/_0", "Enter", ["one/_4"]),
        ("_cloopone/_1", "Merge", ["_cloopone/_0", "_cloopone/_3"]),
        ("_cloopone/_2", "Switch", ["_cloopone/_1", "cond/_19"]),
        ("_cloopone/_3", "NextIteration", ["_cloopone/_2:1"]),
        ("one/_4", "Const", []),  # the dummy that starts the skeleton (root frame)
        ("ident/_12", "_Recv", ["^_cloopone/_1"]),  # control edge ident -> one
        ("ident/_13", "Identity", ["ident/_12"]),
        ("ident/_15", "_Recv", ["^_cloopone/_1"]),
        ("add/_16", "_Send", ["add"]),
        ("cond/_19", "_Recv", ["^_cloopone/_1"]),  # the leader's LoopCond, per iteration
    ]
    # D0 (the frame leader) sends its LoopCond every iteration and has a skeleton too,
    # because `add` crosses back into the frame there.
    d0 = summary(parts[D0])
    assert d0[10:] == [
        ("next", "NextIteration", ["add/_17"]),
        ("_cloopnext/_5", "Enter", ["next/_9"]),
        ("_cloopnext/_6", "Merge", ["_cloopnext/_5", "_cloopnext/_8"]),
        ("_cloopnext/_7", "Switch", ["_cloopnext/_6", "cond"]),
        ("_cloopnext/_8", "NextIteration", ["_cloopnext/_7:1"]),
        ("next/_9", "Const", []),
        ("ident/_10", "Const", ["^ident"]),
        ("ident/_11", "_Send", ["ident/_10"]),
        ("ident/_14", "_Send", ["ident"]),
        ("add/_17", "_Recv", ["^_cloopnext/_6"]),
        ("cond/_18", "_Send", ["cond"]),
    ]
    send, recv = parts[D0].node[-1], parts[D1].node[-1]
    assert send.attr["tensor_name"].s == recv.attr["tensor_name"].s


@pytest.mark.timeout(30)
def test_loop_on_one_device_gets_no_skeleton():
    g = placed(counting_loop(D0))
    assert add_control_flow(g, build_control_flow_info(g), lambda p: p + "/_x") == 0
    assert not has_control_loops(g)


@pytest.mark.timeout(30)
def test_partitioning_twice_adds_the_skeleton_once():
    g = placed(counting_loop(D1))
    run_partition(g)
    count = sum(1 for n in g.op_nodes() if n.name.startswith("_cloop"))
    assert count == 8  # one Enter/Merge/Switch/NextIteration per (frame, device): D0 and D1
    run_partition(g)
    assert sum(1 for n in g.op_nodes() if n.name.startswith("_cloop")) == count


@pytest.mark.timeout(30)
@pytest.mark.parametrize("limit", [0, 1, 5])
def test_split_loop_runs_in_lockstep(limit: int):
    sess = Session(counting_loop(D1, limit), num_devices=2)
    assert sess.run(["exit:0"], timeout_s=20)[0] == limit


# -- TensorFlow-built loops (tf.device inside the body) ------------------------------------
def _tf():
    tf = pytest.importorskip("tensorflow.compat.v1")
    return tf


def _build_v1(tf, build):
    g = tf.Graph()
    tf.disable_control_flow_v2()
    try:
        with g.as_default():
            fetches = build(tf)
    finally:
        tf.enable_control_flow_v2()
    return g, fetches


def _compare(tf, g, fetches, feeds, num_devices=2):
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": 2})) as s:
        want = s.run(fetches, feeds)
    sess = Session(g.as_graph_def().SerializeToString(), num_devices=num_devices)
    got = sess.run([f.name for f in fetches], {k.name: v for k, v in feeds.items()}, timeout_s=30)
    for w, r in zip(want, got):
        np.testing.assert_allclose(r, w, rtol=1e-6)


def _two_device_body(tf, x):
    def body(i, acc):
        with tf.device("/device:CPU:1"):
            a = acc * 0.5 + x
        with tf.device("/device:CPU:0"):
            b = a + tf.cast(i, tf.float32)
        return i + 1, b

    return body


@pytest.mark.timeout(60)
def test_tf_while_with_two_device_body_matches_tensorflow():
    tf = _tf()
    holders = {}

    def build(tf):
        n = holders["n"] = tf.placeholder(tf.int32, [], name="n")
        x = holders["x"] = tf.placeholder(tf.float32, [3], name="x")
        i, acc = tf.while_loop(
            lambda i, acc: i < n, _two_device_body(tf, x), [tf.constant(0), tf.zeros([3])]
        )
        return [i, acc]

    g, fetches = _build_v1(tf, build)
    feeds = {holders["n"]: np.int32(6), holders["x"]: np.array([1, 2, 3], np.float32)}
    _compare(tf, g, fetches, feeds)


@pytest.mark.timeout(60)
def test_tf_nested_loops_split_across_devices_match_tensorflow():
    tf = _tf()
    holders = {}

    def build(tf):
        n = holders["n"] = tf.placeholder(tf.int32, [], name="n")
        x = holders["x"] = tf.placeholder(tf.float32, [3], name="x")

        def outer(j, tot):
            with tf.device("/device:CPU:1"):
                _, t = tf.while_loop(
                    lambda i, acc: i < j, _two_device_body(tf, x), [tf.constant(0), tot]
                )
            return j + 1, t

        j, tot = tf.while_loop(lambda j, t: j < n, outer, [tf.constant(0), tf.zeros([3])])
        return [j, tot]

    g, fetches = _build_v1(tf, build)
    feeds = {holders["n"]: np.int32(4), holders["x"]: np.array([1, 2, 3], np.float32)}
    _compare(tf, g, fetches, feeds)


@pytest.mark.timeout(60)
def test_split_loop_failing_mid_iteration_fails_cleanly():
    tf = _tf()

    def build(tf):
        def body(i, acc):
            with tf.device("/device:CPU:1"):
                # Valid while i < 2; at i == 2 the shape [4] does not fit 3 elements.
                shape = tf.reshape(3 + tf.cast(i >= 2, tf.int32), [1])
                acc = tf.reshape(acc, shape) + 1.0
            return i + 1, acc

        return list(tf.while_loop(lambda i, acc: i < 5, body, [tf.constant(0), tf.zeros([3])]))

    g, fetches = _build_v1(tf, build)
    sess = Session(g.as_graph_def().SerializeToString(), num_devices=2)
    with pytest.raises(OpError) as info:
        sess.run([f.name for f in fetches], timeout_s=30)
    assert info.value.code == Code.INVALID_ARGUMENT
    assert "Reshape" in info.value.node_name
    # The session is still usable: a step after the failure fails the same way, no hang.
    with pytest.raises(InvalidArgumentError):
        sess.run([f.name for f in fetches], timeout_s=30)


def invariant_on_other_device(limit: int) -> graph_pb2.GraphDef:
    """counting_loop(D0) whose loop-invariant `lim` is entered on D1 (with its source),
    while its only consumer, the loop's Less, is on D0."""
    text = counting_loop(D0, limit)
    for node in text.node:
        if node.name in ("limit", "lim"):
            node.device = D1
    return text


@pytest.mark.timeout(30)
def test_invariant_enter_moves_to_its_consumer_as_tensorflow():
    """TF OptimizeControlFlowColocation: the Enter goes to its first data consumer's
    device, so the value crosses devices in the root frame, once, and no skeleton loop is
    needed; Switch and Exit stay with their data, NextIteration with its Merge."""
    g = placed(invariant_on_other_device(3))
    parts = run_partition(g)
    assert {n.name: n.assigned_device for n in g.op_nodes() if n.name in ("lim", "limit")} == {
        "lim": D0,
        "limit": D1,
    }
    assert not has_control_loops(g)
    assert [(n.name, n.op) for n in parts[D1].node] == [("limit", "Const"), ("limit/_0", "_Send")]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("limit", [0, 1, 3])
def test_loop_whose_invariant_is_entered_on_another_device_returns(limit: int):
    """Left on D1, the Enter was its frame's only node there: it ran in iteration 0 only,
    and the Less's _Recv of iteration 1 waited until the step timed out."""
    sess = Session(invariant_on_other_device(limit), num_devices=2)
    assert sess.run(["exit:0"], timeout_s=10)[0] == limit
