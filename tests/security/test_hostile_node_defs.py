"""Hostile NodeDefs that TensorFlow's client refuses to build (an attr under its minimum,
a zero stride, an equation for more operands than given, an input of another dtype than
its attr): built valid by TensorFlow, then edited in the GraphDef and sent straight to our
master over gRPC. Where TensorFlow refuses one (at import or at run), ours must answer INVALID_ARGUMENT
naming the node (at CreateSession or at RunStep); where it runs one (Dilation2D takes
rates of 0), the same values. The workers keep serving."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import grpc
import numpy as np
import pytest

from common.tensor import to_numpy
from deploy.launcher import LocalCluster
from protos import graph_pb2, master_pb2
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import master_stub

from .conftest import stop_cluster
from .hostile_cases import NAME
from .test_hostile_kernels import assert_alive

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

IMAGE = np.zeros((1, 4, 4, 1), np.float32)


def _ctc(tf: Any) -> Any:
    return tf.raw_ops.CTCBeamSearchDecoder(
        inputs=tf.zeros([3, 1, 4]),
        sequence_length=tf.constant([3]),
        beam_width=2,
        top_paths=1,
        name=NAME,
    )[1]


def _patches(tf: Any) -> Any:
    return tf.raw_ops.ExtractImagePatches(
        images=tf.constant(IMAGE),
        ksizes=[1, 2, 2, 1],
        strides=[1, 1, 1, 1],
        rates=[1, 1, 1, 1],
        padding="VALID",
        name=NAME,
    )


def _pool(tf: Any) -> Any:
    return tf.raw_ops.FractionalMaxPool(
        value=tf.constant(IMAGE), pooling_ratio=[1.0, 1.5, 1.5, 1.0], name=NAME
    )[0]


def _dilation(tf: Any) -> Any:
    return tf.raw_ops.Dilation2D(
        input=tf.constant(IMAGE),
        filter=tf.zeros([2, 2, 1]),
        strides=[1, 1, 1, 1],
        rates=[1, 1, 1, 1],
        padding="VALID",
        name=NAME,
    )


def _einsum(tf: Any) -> Any:
    return tf.raw_ops.Einsum(inputs=[tf.ones([2, 3])], equation="ij->ji", name=NAME)


def _einsum_pair(tf: Any) -> Any:
    tf.ones([4, 5], name="third")  # an input the edit below gives the node
    return tf.raw_ops.Einsum(
        inputs=[tf.ones([2, 3]), tf.ones([3, 4])], equation="ij,jk->ik", name=NAME
    )


def _third_operand(node: Any) -> None:
    node.input.append("third")
    node.attr["N"].i = 3
    node.attr["equation"].s = b"ij,jk,kl->il"


def _scatter(tf: Any) -> Any:
    return tf.raw_ops.TensorScatterUpdate(
        tensor=tf.zeros([3]), indices=tf.constant([[0]]), updates=tf.ones([1]), name=NAME
    )


def _set_attr(field: str, value: Any) -> Callable[[Any], None]:
    def edit(node: Any) -> None:
        attr = node.attr[field]
        if isinstance(value, list):
            attr.list.Clear()
            kind = "f" if isinstance(value[0], float) else "i"
            getattr(attr.list, kind).extend(value)
        elif isinstance(value, str):
            attr.s = value.encode()
        else:
            attr.i = value

    return edit


def _set_type(field: str, dtype: Any) -> Callable[[Any], None]:
    def edit(node: Any) -> None:
        node.attr[field].type = dtype.as_datatype_enum

    return edit


CASES: dict[str, tuple[Callable[[Any], Any], Callable[[Any], None]]] = {
    "beam width 0": (_ctc, _set_attr("beam_width", 0)),
    "top paths 0": (_ctc, _set_attr("top_paths", 0)),
    "patch strides of 0": (_patches, _set_attr("strides", [1, 0, 0, 1])),
    "patch sizes of 3 dims": (_patches, _set_attr("ksizes", [1, 2, 2])),
    "pooling ratio under 1": (_pool, _set_attr("pooling_ratio", [1.0, 0.5, 0.5, 1.0])),
    "dilation rates of 0": (_dilation, _set_attr("rates", [1, 0, 0, 1])),
    "einsum equation of two operands, one given": (_einsum, _set_attr("equation", "ij,jk->ik")),
    "einsum output label absent from inputs": (_einsum, _set_attr("equation", "ij->iz")),
    "einsum equation without an arrow": (_einsum, _set_attr("equation", "ij")),
    "einsum subscript of two periods": (_einsum, _set_attr("equation", "..ij->ij")),
    "einsum of three operands in one node": (_einsum_pair, _third_operand),
    "scatter T of int32 over float inputs": (_scatter, _set_type("T", tf.int32)),
}


def hostile_graph_def(name: str) -> graph_pb2.GraphDef:
    build, edit = CASES[name]
    graph = tf1.Graph()
    with graph.as_default(), tf.device("/job:worker/task:0"):
        build(tf)
    graph_def = graph_pb2.GraphDef.FromString(graph.as_graph_def().SerializeToString())
    (node,) = [n for n in graph_def.node if n.name == NAME]
    node.device = "/job:worker/task:1"
    edit(node)
    return graph_def


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    started = LocalCluster(master_args=["--rpc-timeout", "10"]).start()
    try:
        yield started
    finally:
        stop_cluster(started)


def tf_outcome(graph_def: graph_pb2.GraphDef) -> Any:
    """TensorFlow's answer in-process: the fetched value, or the error it refuses with
    (at import or at run)."""
    theirs = _as_tf(graph_def)
    for node in theirs.node:
        node.device = ""
    graph = tf1.Graph()
    try:
        with graph.as_default():
            tf.graph_util.import_graph_def(theirs, name="")
        with tf1.Session(graph=graph) as sess:
            return sess.run(f"{NAME}:0")
    except (ValueError, tf.errors.OpError) as error:
        return error


def our_outcome(cluster: LocalCluster, graph_def: graph_pb2.GraphDef) -> Any:
    """Our master's answer: the fetched value, or the RpcError of CreateSession/RunStep."""
    channel = grpc.insecure_channel(cluster.master_address, options=GRPC_OPTIONS)
    stub = master_stub(channel)
    try:
        request = master_pb2.CreateSessionRequest(graph_def=graph_def)
        handle = stub.CreateSession(request, timeout=60).session_handle
        try:
            run = master_pb2.RunStepRequest(session_handle=handle, fetch=[f"{NAME}:0"])
            return to_numpy(stub.RunStep(run, timeout=60).tensor[0].tensor)
        finally:
            stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=handle), timeout=30)
    except grpc.RpcError as error:
        return error
    finally:
        channel.close()


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_node_def_is_answered_as_tensorflow_does(
    cluster: LocalCluster, name: str
) -> None:
    graph_def = hostile_graph_def(name)
    theirs, ours = tf_outcome(graph_def), our_outcome(cluster, graph_def)
    if isinstance(theirs, Exception):
        # ValueError: TensorFlow's import refused the node (InvalidArgument in its C API).
        assert isinstance(ours, grpc.RpcError), f"TensorFlow: {theirs}; ours ran: {ours}"
        assert ours.code() == grpc.StatusCode.INVALID_ARGUMENT, ours.details()
        if isinstance(theirs, tf.errors.OpError):
            assert theirs.error_code == tf.errors.INVALID_ARGUMENT
        assert NAME in ours.details()
    else:
        assert not isinstance(ours, grpc.RpcError), f"TensorFlow ran; ours: {ours.details()}"
        np.testing.assert_array_equal(ours, theirs)
    assert_alive(cluster)


def _as_tf(graph_def: graph_pb2.GraphDef) -> Any:
    """Our GraphDef message as TensorFlow's (the same wire format)."""
    from tensorflow.core.framework import graph_pb2 as tf_graph_pb2

    return tf_graph_pb2.GraphDef.FromString(graph_def.SerializeToString())
