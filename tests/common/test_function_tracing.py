"""A traced step records the nodes of the function bodies the runtime runs (a functional
While left unlowered, run by common.function_runtime), each under its device, beside the
caller's own nodes; an untraced step records nothing."""

from __future__ import annotations

import pytest

from common.session import Session
from protos import config_pb2, graph_pb2

tf = pytest.importorskip("tensorflow")


def _unlowered_while() -> graph_pb2.GraphDef:
    """i = 0; while i < 5: i = i * 2 + 1, built by TensorFlow as a functional While, with
    the attribute that lowers it to Switch/Merge removed (the runtime runs its body)."""

    @tf.function
    def loop(x):
        i = tf.constant(0.0)
        _, out = tf.while_loop(
            lambda i, acc: i < 5.0, lambda i, acc: (i + 1.0, acc * 2.0 + 1.0), (i, x)
        )
        return out

    graph = loop.get_concrete_function(tf.TensorSpec([], tf.float32)).graph
    gd = graph_pb2.GraphDef.FromString(graph.as_graph_def().SerializeToString())
    whiles = [n for n in gd.node if n.op in ("While", "StatelessWhile")]
    assert whiles
    for node in whiles:
        node.attr.pop("_lower_using_switch_merge", None)
    return gd


def test_traced_step_records_function_body_nodes() -> None:
    gd = _unlowered_while()
    fetch = next(n.name for n in gd.node if n.op == "Identity" and "while" in n.input[0])
    feed = next(n.name for n in gd.node if n.op == "Placeholder")
    body = next(f for f in gd.library.function if "body" in f.signature.name)
    body_nodes = {n.name for n in body.node_def}
    with Session(gd) as sess:
        md = config_pb2.RunMetadata()
        (out,) = sess.run(
            [f"{fetch}:0"],
            {f"{feed}:0": 1.0},
            run_options=config_pb2.RunOptions(trace_level=3),
            run_metadata=md,
        )
        assert out == 63.0  # 1 -> 3 -> 7 -> 15 -> 31 -> 63
        recorded = {ns.node_name for d in md.step_stats.dev_stats for ns in d.node_stats}
        assert any(n.startswith("while") for n in recorded)  # the caller's While
        ran = body_nodes & recorded
        assert ran, (sorted(recorded), sorted(body_nodes))  # ... and its body's nodes
        devices = {d.device for d in md.step_stats.dev_stats}
        assert len(devices) == 1 and next(iter(devices)).endswith("/device:CPU:0")
        untraced = config_pb2.RunMetadata()
        sess.run([f"{fetch}:0"], {f"{feed}:0": 1.0}, run_metadata=untraced)
        assert len(untraced.step_stats.dev_stats) == 0
