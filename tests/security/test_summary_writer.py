"""Summary-writer ops (what `tf.summary.create_file_writer` builds in a graph) write the
event file TensorFlow writes, and only under the task's --file-root: elsewhere
CreateSummaryFileWriter is PermissionDenied naming the node, and nothing is created.
TensorFlow builds the graphs and is the oracle for the events; the confinement runs on a
real worker started by its CLI."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from common.record_io import RecordReader
from common.session import Session
from deploy.launcher import LocalCluster
from protos import event_pb2, graph_pb2, master_pb2
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import master_stub

from .conftest import stop_cluster

tf = pytest.importorskip("tensorflow")

NODES = ["write_summary", "scalar", "histogram", "raw", "flush", "close"]


def _graph(logdir: str, device: str = "") -> tuple[graph_pb2.GraphDef, str]:
    """(graph, init node): a writer, then summaries written by the NODES targets."""
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        writer = tf.summary.create_file_writer(logdir, filename_suffix=".v2")
        res = writer._resource
        step = tf.constant(3, tf.int64)
        tf.raw_ops.WriteSummary(
            writer=res, step=step, tensor=tf.constant([1.5, -2.0]), tag="loss",
            summary_metadata=b"", name="write_summary",
        )  # fmt: skip
        tf.raw_ops.WriteScalarSummary(writer=res, step=step, tag="x", value=2.5, name="scalar")
        tf.raw_ops.WriteHistogramSummary(
            writer=res, step=step, tag="h", values=tf.constant([1.0, 2.0, 2.0]), name="histogram"
        )
        raw = tf.compat.v1.summary.scalar("legacy", tf.constant(7.0))
        tf.raw_ops.WriteRawProtoSummary(writer=res, step=step, tensor=raw, name="raw")
        tf.raw_ops.FlushSummaryWriter(writer=res, name="flush")
        tf.raw_ops.CloseSummaryWriter(writer=res, name="close")
        init = writer.init()
    return graph_pb2.GraphDef.FromString(g.as_graph_def().SerializeToString()), init.name


def _events(logdir: Path) -> list[event_pb2.Event]:
    (name,) = os.listdir(logdir)
    assert name.startswith("events.out.tfevents.") and name.endswith(".v2"), name
    out = []
    for record in RecordReader(str(logdir / name)):
        event = event_pb2.Event.FromString(record)
        event.ClearField("wall_time")
        out.append(event)
    return out


def test_the_events_are_tensorflows(tmp_path: Path) -> None:
    graph_def, init = _graph(str(tmp_path / "ours"))
    ours = Session(graph_def)
    ours.run([], targets=[init])
    for node in NODES:
        ours.run([], targets=[node])
    ours.close()
    graph_def, init = _graph(str(tmp_path / "tf"))
    with tf.compat.v1.Session(graph=_tf_graph(graph_def)) as sess:
        sess.run(init)
        for node in NODES:
            sess.run(node)
    assert _events(tmp_path / "ours") == _events(tmp_path / "tf")


def _tf_graph(graph_def: graph_pb2.GraphDef) -> object:
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(
            tf.compat.v1.GraphDef.FromString(graph_def.SerializeToString()), name=""
        )
    return g


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("file_root")


@pytest.fixture(scope="module")
def confined(root: Path) -> Iterator[LocalCluster]:
    cluster = LocalCluster(
        jobs={"worker": 1},
        master_args=["--rpc-timeout", "10"],
        worker_args=["--file-root", str(root)],
    ).start()
    try:
        yield cluster
    finally:
        stop_cluster(cluster)


def _run(cluster: LocalCluster, graph_def: graph_pb2.GraphDef, targets: list[str]) -> None:
    with grpc.insecure_channel(cluster.master_address, options=GRPC_OPTIONS) as channel:
        stub = master_stub(channel)
        request = master_pb2.CreateSessionRequest()
        request.graph_def.CopyFrom(graph_def)
        handle = stub.CreateSession(request, timeout=60).session_handle
        try:
            for target in targets:
                stub.RunStep(
                    master_pb2.RunStepRequest(session_handle=handle, target=[target]), timeout=60
                )
        finally:
            stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=handle), timeout=60)


def test_a_logdir_outside_the_file_root_is_refused(
    confined: LocalCluster, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    graph_def, init = _graph(str(outside), "/job:worker/task:0")
    with pytest.raises(grpc.RpcError) as info:
        _run(confined, graph_def, [init])
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert init in info.value.details() and "--file-root" in info.value.details()
    assert not outside.exists()


def test_a_logdir_under_the_file_root_gets_the_events(confined: LocalCluster, root: Path) -> None:
    graph_def, init = _graph("logs/run1", "/job:worker/task:0")
    _run(confined, graph_def, [init, *NODES])
    events = _events(root / "logs" / "run1")
    assert events[0].file_version == "brain.Event:2"
    assert [v.tag for e in events[1:] for v in e.summary.value] == ["loss", "x", "h", "legacy"]
