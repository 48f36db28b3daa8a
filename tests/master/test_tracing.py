"""Master, tracing: RunOptions.trace_level and output_partition_graphs fill RunMetadata
(step_stats per device from the workers' RunGraph, partition graphs), over the workers'
local socket and over gRPC; untraced steps and errors are unaffected. In-process cluster
(tests/master/conftest.py), our client, and the in-process Session."""

from __future__ import annotations

import time

import numpy as np
import pytest

import client as tf
from common import tensor as tensor_util
from common.session import Session as DirectSession
from master.server import MasterServer
from protos import config_pb2, master_pb2, types_pb2
from tests.master.test_master import T, add_graph, create, run, values, x2
from worker.server import start_local_cluster

FULL = config_pb2.RunOptions.FULL_TRACE
DEV0 = "/job:worker/replica:0/task:0/device:CPU:0"
DEV1 = "/job:worker/replica:0/task:1/device:CPU:0"
TRANSFER = {"_Send", "_Recv"}


def op_of(ns) -> str:
    """The op in a TensorFlow timeline label "name = Op(inputs)"."""
    return ns.timeline_label.split(" = ", 1)[1].split("(", 1)[0]


def by_device(step_stats) -> dict[str, dict[str, object]]:
    return {d.device: {ns.node_name: ns for ns in d.node_stats} for d in step_stats.dev_stats}


def traced_run(cluster, handle, **options):
    opts = config_pb2.RunOptions(**options)
    start = time.time_ns() // 1000
    response = run(cluster, handle, ["d:0"], x2(), options=opts)
    end = time.time_ns() // 1000 + 1
    values(response)
    return response, start, end


@pytest.mark.parametrize("local", ["1", "0"])
def test_traced_step_has_one_dev_stats_per_device(cluster, monkeypatch, local):
    monkeypatch.setenv("FLOWRT_LOCAL_RPC", local)  # RunGraph over the socket, or gRPC
    handle = create(cluster, add_graph())
    response, start, end = traced_run(cluster, handle, trace_level=FULL)
    stats = by_device(response.metadata.step_stats)
    assert len(response.metadata.step_stats.dev_stats) == 2
    assert sorted(stats) == [DEV0, DEV1]
    compute = {
        dev: {n for n, ns in nodes.items() if op_of(ns) not in TRANSFER}
        for dev, nodes in stats.items()
    }
    assert compute == {DEV0: {"d"}, DEV1: {"a", "c"}}
    transfers = {
        dev: sorted(op_of(ns) for ns in nodes.values() if op_of(ns) in TRANSFER)
        for dev, nodes in stats.items()
    }
    assert transfers == {DEV0: ["_Recv", "_Send"], DEV1: ["_Recv", "_Send"]}
    recv0 = next(n for n, ns in stats[DEV0].items() if op_of(ns) == "_Recv")
    assert stats[DEV0]["d"].timeline_label == f"d = Mul({recv0}, {recv0})"
    assert stats[DEV1]["a"].timeline_label == "a = Const()"
    for nodes in stats.values():
        for ns in nodes.values():
            assert (
                start <= ns.all_start_micros <= ns.all_start_micros + ns.all_end_rel_micros <= end
            )
            assert 0 <= ns.op_start_rel_micros <= ns.op_end_rel_micros <= ns.all_end_rel_micros
            assert ns.all_start_micros == ns.all_start_nanos // 1000
            assert ns.op_end_rel_nanos >= ns.op_start_rel_nanos
            assert ns.thread_id > 0
    (out,) = stats[DEV1]["c"].output
    assert out.slot == 0 and out.tensor_description.dtype == types_pb2.DT_FLOAT
    assert [d.size for d in out.tensor_description.shape.dim] == [2]
    assert out.tensor_description.allocation_description.requested_bytes == 8
    assert list(response.metadata.partition_graphs) == []


def test_software_trace_records_too(cluster):
    handle = create(cluster, add_graph())
    response, _, _ = traced_run(cluster, handle, trace_level=config_pb2.RunOptions.SOFTWARE_TRACE)
    assert sorted(by_device(response.metadata.step_stats)) == [DEV0, DEV1]


def test_untraced_step_has_empty_metadata(cluster):
    handle = create(cluster, add_graph())
    traced_run(cluster, handle, trace_level=FULL)  # the traced view exists now
    assert run(cluster, handle, ["d:0"], x2()).metadata == config_pb2.RunMetadata()
    response, _, _ = traced_run(cluster, handle, timeout_in_ms=10_000)
    assert response.metadata == config_pb2.RunMetadata()


def test_output_partition_graphs_one_per_partition(cluster):
    handle = create(cluster, add_graph())
    response, _, _ = traced_run(cluster, handle, output_partition_graphs=True)
    graphs = response.metadata.partition_graphs
    assert len(graphs) == 2
    devices = [{n.device for n in g.node} for g in graphs]
    assert sorted(d for ds in devices for d in ds) == [DEV0, DEV1]
    ops = {next(iter(ds)): sorted(n.op for n in g.node) for g, ds in zip(graphs, devices)}
    assert ops == {DEV0: ["Mul", "_Recv", "_Send"], DEV1: ["AddV2", "Const", "_Recv", "_Send"]}
    assert len(response.metadata.step_stats.dev_stats) == 0


def test_traced_step_error_is_unaffected(cluster):
    handle = create(cluster, add_graph())
    bad = {"x:0": np.ones(3, np.float32)}
    plain = run(cluster, handle, ["d:0"], bad)
    traced = run(
        cluster,
        handle,
        ["d:0"],
        bad,
        options=config_pb2.RunOptions(trace_level=FULL, output_partition_graphs=True),
    )
    assert traced.status_code == plain.status_code == 3  # INVALID_ARGUMENT
    # The first line is the kernel's error; which partition reports it first (and so
    # whether the peer's _Recv appends its own node suffix) varies from run to run.
    assert traced.status_error_message.splitlines()[0] == plain.status_error_message.splitlines()[0]
    assert "Incompatible shapes" in traced.status_error_message
    assert "{{node c}}" in traced.status_error_message
    assert traced.metadata == config_pb2.RunMetadata()


def test_disable_output_partition_graphs_refuses_them(cluster):
    request = master_pb2.CreateSessionRequest(graph_def=add_graph().graph_def)
    request.config.experimental.disable_output_partition_graphs = True
    handle = cluster.stub.CreateSession(request, timeout=T).session_handle
    response = run(
        cluster, handle, ["d:0"], x2(), options=config_pb2.RunOptions(output_partition_graphs=True)
    )
    assert response.status_code == 3
    assert "disable_output_partition_graphs" in response.status_error_message
    traced, _, _ = traced_run(cluster, handle, trace_level=FULL)
    assert len(traced.metadata.step_stats.dev_stats) == 2


def test_run_callable_uses_its_run_options(cluster):
    handle = create(cluster, add_graph())
    options = config_pb2.CallableOptions(feed=["x:0"], fetch=["d:0"])
    options.run_options.trace_level = FULL
    made = cluster.stub.MakeCallable(
        master_pb2.MakeCallableRequest(session_handle=handle, options=options), timeout=T
    )
    request = master_pb2.RunCallableRequest(session_handle=handle, handle=made.handle)
    request.feed.add().CopyFrom(tensor_util.as_proto_tensor_content(x2()["x:0"]))
    response = cluster.stub.RunCallable(request, timeout=T)
    np.testing.assert_array_equal(tensor_util.to_numpy(response.fetch[0]), [121.0, 484.0])
    assert sorted(by_device(response.metadata.step_stats)) == [DEV0, DEV1]


def test_worker_with_two_devices_reports_each():
    spec, workers = start_local_cluster({"worker": 1}, num_cpus=2)
    master = MasterServer(spec, bind_host="127.0.0.1", port=0, rpc_timeout=10.0).start()
    try:
        g = tf.Graph()
        with g.as_default():
            with tf.device("/job:worker/task:0/device:CPU:0"):
                x = tf.placeholder(tf.float32, [2], name="x")
                a = tf.add(x, 1.0, name="a")
            with tf.device("/job:worker/task:0/device:CPU:1"):
                b = tf.multiply(a, 3.0, name="b")
            md = config_pb2.RunMetadata()
            with tf.Session(master.target) as sess:
                got = sess.run(
                    b,
                    {x: [0.0, 1.0]},
                    options=config_pb2.RunOptions(trace_level=FULL, output_partition_graphs=True),
                    run_metadata=md,
                )
    finally:
        master.stop(0)
        for w in workers:
            w.stop(0)
    np.testing.assert_array_equal(got, [3.0, 6.0])
    stats = by_device(md.step_stats)
    cpu0, cpu1 = (f"/job:worker/replica:0/task:0/device:CPU:{k}" for k in (0, 1))
    assert sorted(stats) == [cpu0, cpu1]
    assert "a" in stats[cpu0] and "b" in stats[cpu1]
    assert len(md.partition_graphs) == 2  # the worker's own split, one per device


def test_our_client_fills_run_metadata(cluster):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:1"):
            x = tf.placeholder(tf.float32, [2], name="x")
            c = tf.add(x, 1.0, name="c")
        with tf.device("/job:worker/task:0"):
            d = tf.multiply(c, c, name="d")
        with tf.Session(cluster.master.target) as sess:
            md = config_pb2.RunMetadata()
            opts = config_pb2.RunOptions(trace_level=FULL)
            got = sess.run(d, {x: [1.0, 2.0]}, options=opts, run_metadata=md)
            plain = config_pb2.RunMetadata()
            sess.run(d, {x: [1.0, 2.0]}, run_metadata=plain)
    np.testing.assert_array_equal(got, [4.0, 9.0])
    stats = by_device(md.step_stats)
    assert sorted(stats) == [DEV0, DEV1]
    assert "c" in stats[DEV1] and "d" in stats[DEV0]
    assert plain == config_pb2.RunMetadata()


def test_in_process_session_fills_run_metadata():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        y = tf.multiply(x, 2.0, name="y")
        with tf.Session() as sess:
            md = config_pb2.RunMetadata()
            opts = config_pb2.RunOptions(trace_level=FULL, output_partition_graphs=True)
            got = sess.run(y, {x: [1.0, 2.0]}, options=opts, run_metadata=md)
    np.testing.assert_array_equal(got, [2.0, 4.0])
    (dev,) = md.step_stats.dev_stats
    assert dev.device == "/job:localhost/replica:0/task:0/device:CPU:0"
    names = {ns.node_name: ns for ns in dev.node_stats}
    assert names["y"].timeline_label.startswith("y = Mul(")
    assert len(md.partition_graphs) == 1


def test_in_process_session_honours_disable_output_partition_graphs():
    config = config_pb2.ConfigProto()
    config.experimental.disable_output_partition_graphs = True
    sess = DirectSession(add_graph().graph_def, config=config)
    with pytest.raises(tf.errors.InvalidArgumentError, match="disable_output_partition_graphs"):
        sess.run(
            ["d:0"],
            x2(),
            run_options=config_pb2.RunOptions(output_partition_graphs=True),
            run_metadata=config_pb2.RunMetadata(),
        )
