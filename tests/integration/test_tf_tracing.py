"""Integration, tracing with TensorFlow's client: an unmodified tf.compat.v1.Session on OUR
master (real processes, tests/integration/conftest.py) asks for FULL_TRACE and partition
graphs; TensorFlow's own Timeline renders our step_stats, and their structure (devices,
node names) matches what TensorFlow's distributed runtime reports for the same graph,
modulo bookkeeping nodes (_Send/_Recv/_Arg/_Retval, _SOURCE, RPC entries)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

from tensorflow.core.protobuf import config_pb2 as tf_config_pb2  # noqa: E402
from tensorflow.python.client import timeline  # noqa: E402

W0, W1 = "/job:worker/task:0", "/job:worker/task:1"
DEV0 = "/job:worker/replica:0/task:0/device:CPU:0"
DEV1 = "/job:worker/replica:0/task:1/device:CPU:0"
BOOKKEEPING_OPS = {"_Send", "_Recv", "_HostSend", "_HostRecv", "_Arg", "_Retval"}
START_TIMEOUT_S = 120.0

# One TensorFlow server task of a "worker" job (TensorFlow's master lives in task 0).
_TF_SERVER = """
import sys
import tensorflow as tf
addresses = sys.argv[2].split(",")
cluster = tf.train.ClusterSpec({"worker": addresses})
server = tf.distribute.Server(cluster, job_name="worker", task_index=int(sys.argv[1]))
print("TF_SERVER_READY", flush=True)
server.join()
"""


def build():
    """x (fed) + a on worker 1, squared on worker 0; the fetch is d."""
    g = tf.Graph()
    with g.as_default():
        with tf.device(W1):
            x = tf1.placeholder(tf.float32, [2], name="x")
            a = tf.constant([10.0, 20.0], name="a")
            c = tf.add(x, a, name="c")
        with tf.device(W0):
            d = tf.multiply(c, c, name="d")
    return g, x, d


def full_trace() -> tf1.RunOptions:
    return tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE, output_partition_graphs=True)


def traced_step(target: str) -> tf1.RunMetadata:
    g, x, d = build()
    md = tf1.RunMetadata()
    with tf1.Session(target, graph=g) as sess:
        got = sess.run(d, {x: [1.0, 2.0]}, options=full_trace(), run_metadata=md)
    assert got.tolist() == [121.0, 484.0]
    return md


def op_of(label: str) -> str:
    return label.split(" = ", 1)[1].split("(", 1)[0] if " = " in label else ""


def structure(md: tf1.RunMetadata) -> dict[str, set[str]]:
    """device -> the names of the graph's own nodes that ran there."""
    out: dict[str, set[str]] = {}
    for dev in md.step_stats.dev_stats:
        names = out.setdefault(dev.device, set())
        for ns in dev.node_stats:
            if ns.node_name == "RecvTensor" or ns.node_name.startswith("_"):
                continue  # TensorFlow's RPC entries, _SOURCE, feed/fetch transfers
            if op_of(ns.timeline_label) not in BOOKKEEPING_OPS:
                names.add(ns.node_name)
    return out


@pytest.fixture(scope="module")
def tf_cluster() -> Iterator[str]:
    """TensorFlow's own distributed runtime: two server processes on loopback."""
    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    addresses = ",".join(f"127.0.0.1:{p}" for p in ports)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _TF_SERVER, str(task), addresses],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for task in range(2)
    ]
    try:
        for proc in procs:
            timer = threading.Timer(START_TIMEOUT_S, proc.kill)  # readline's exit
            timer.start()
            try:
                assert proc.stdout is not None
                line = proc.stdout.readline()
            finally:
                timer.cancel()
            assert line.strip() == "TF_SERVER_READY", "a TensorFlow server did not start"
        yield f"grpc://127.0.0.1:{ports[0]}"
    finally:
        for proc in procs:
            proc.kill()  # tf.distribute.Server has no clean stop
            proc.wait()
        assert all(p.poll() is not None for p in procs)


def test_tf_client_full_trace_renders_as_chrome_trace(shared_cluster):
    md = traced_step(shared_cluster.target)
    devices = [d.device for d in md.step_stats.dev_stats]
    assert sorted(devices) == [DEV0, DEV1]
    trace = json.loads(
        timeline.Timeline(md.step_stats).generate_chrome_trace_format(
            show_dataflow=True, show_memory=True
        )
    )
    events = trace["traceEvents"]
    ops = {(e["args"]["name"], e["args"]["op"]) for e in events if e.get("ph") == "X"}
    assert {("a", "Const"), ("c", "AddV2"), ("d", "Mul")} <= ops
    recorded = {ns.node_name for d in md.step_stats.dev_stats for ns in d.node_stats}
    assert {name for name, _ in ops} == recorded
    processes = {
        e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
    }
    assert {f"{DEV0} Compute", f"{DEV1} Compute"} <= processes
    assert len(md.partition_graphs) == 2
    for gd in md.partition_graphs:
        ops_in = {n.op for n in gd.node}
        assert {"_Send", "_Recv"} <= ops_in


def test_untraced_tf_client_step_has_empty_metadata(shared_cluster):
    g, x, d = build()
    md = tf1.RunMetadata()
    with tf1.Session(shared_cluster.target, graph=g) as sess:
        sess.run(d, {x: [1.0, 2.0]}, run_metadata=md)
    assert md == tf1.RunMetadata()


def test_tf_client_traced_callable_still_runs(shared_cluster):
    """CallableOptions.run_options reach our master (tests/master/test_tracing.py checks
    the RunCallableResponse metadata); TensorFlow's GrpcSession::RunCallable drops that
    metadata, so here only the step's result is checked."""
    g, x, d = build()
    options = tf_config_pb2.CallableOptions(feed=[x.name], fetch=[d.name])
    options.run_options.trace_level = tf1.RunOptions.FULL_TRACE
    options.run_options.output_partition_graphs = True
    with tf1.Session(shared_cluster.target, graph=g) as sess:
        call = sess._make_callable_from_options(options)
        (got,) = call(np.array([1.0, 2.0], np.float32), run_metadata=tf1.RunMetadata())
    assert got.tolist() == [121.0, 484.0]


def test_structure_matches_tensorflows_runtime(shared_cluster, tf_cluster):
    ours = structure(traced_step(shared_cluster.target))
    theirs = structure(traced_step(tf_cluster))
    assert ours == theirs == {DEV0: {"d"}, DEV1: {"a", "c"}}


def costed_step(target: str) -> tf1.RunMetadata:
    """build()'s step in a session that builds a cost model every step."""
    g, x, d = build()
    config = tf1.ConfigProto(graph_options=tf1.GraphOptions(build_cost_model=1))
    md = tf1.RunMetadata()
    with tf1.Session(target, graph=g, config=config) as sess:
        got = sess.run(d, {x: [1.0, 2.0]}, run_metadata=md)
    assert got.tolist() == [121.0, 484.0]
    return md


def cost_nodes(md: tf1.RunMetadata) -> dict[str, dict]:
    """The graph's own nodes in the cost graph, with their inputs named: partitions are
    concatenated, each numbering its nodes from its _SOURCE (id 0). Transfer, feed and
    fetch nodes are named by each runtime's partitioner, so only build()'s nodes count."""
    own = {n.name for n in build()[0].as_graph_def().node}
    parts: list[list] = []
    for node in md.cost_graph.node:
        if node.id == 0 and node.name == "_SOURCE":
            parts.append([])
        parts[-1].append(node)
    out = {}
    for part in parts:
        # A node of another partition's transfer (c/_1 here, c_S3 in TensorFlow): "~".
        names = {n.id: n.name if n.name in own else "~" for n in part}
        for n in part:
            if n.name not in own:
                continue
            out[n.name] = {
                "device": n.device,
                # As a multiset: TensorFlow's optimizer may reorder a commutative op's inputs.
                "inputs": sorted((names[i.preceding_node], i.preceding_port) for i in n.input_info),
                "controls": sorted(names[i] for i in n.control_input),
                "outputs": [([d.size for d in o.shape.dim], o.dtype) for o in n.output_info],
                "sizes": [(o.size, o.alias_input_port) for o in n.output_info],
                "persistent": n.persistent_memory_size,
                "is_final": n.is_final,
            }
    return out


def test_cost_graph_matches_tensorflows_runtime(shared_cluster, tf_cluster):
    """ConfigProto.graph_options.build_cost_model: RunMetadata.cost_graph carries, per
    node, the fields TensorFlow's distributed runtime fills, with the same values (the
    kernel times aside)."""
    ours_md, theirs_md = costed_step(shared_cluster.target), costed_step(tf_cluster)
    ours, theirs = cost_nodes(ours_md), cost_nodes(theirs_md)
    assert set(ours) == set(theirs) == {"a", "c", "d"}
    for name in ours:
        # Output sizes: ours are the bytes each output holds. TensorFlow's count what the
        # step allocated, so 0 where it forwarded an input's buffer (alias_input_port
        # names that input) or built a Const's tensor outside the step, which varies from
        # one session to the next.
        mine, their = ours[name].pop("sizes"), theirs[name].pop("sizes")
        assert mine == [(8, -1)], name  # two float32s each
        assert all(size in (0, 8) and alias in (-1, 0, 1) for size, alias in their), name
        assert ours[name] == theirs[name], name
    finals = [sum(n.is_final for n in md.cost_graph.node) for md in (ours_md, theirs_md)]
    # Every _Send is final: c to worker 0 and the fetch of d in both; TensorFlow's one
    # more is the feed's hop from its master's task (worker 0) to worker 1, where ours
    # takes the fed value straight to worker 1.
    assert finals == [2, 3]
    assert any(n.compute_cost > 0 for n in ours_md.cost_graph.node)
    assert len(ours_md.step_stats.dev_stats) == len(theirs_md.step_stats.dev_stats) == 0
