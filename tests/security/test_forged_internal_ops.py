"""A client GraphDef naming `_FusedElementwise`, the op only our graph optimizer writes
(TensorFlow has no such op): sent by a raw gRPC client to CreateSession or
ExtendSession, as a graph node or inside a library function, it is refused with
INVALID_ARGUMENT naming the node, before any worker sees its program. The kernel itself
(reachable through a worker's RegisterGraph) refuses programs whose operand numbers are
not ASCII digits. Graphs our optimizer fuses still run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import numpy as np
import pytest

from common.errors import InvalidArgumentError
from common.ops.fused_ops import compile_program
from deploy.launcher import LocalCluster
from protos import graph_pb2, master_pb2
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import master_stub

from .conftest import stop_cluster
from .hostile_cases import NAME
from .test_hostile_node_defs import our_outcome

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

FUSED = "_FusedElementwise"


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    started = LocalCluster(master_args=["--rpc-timeout", "10"]).start()
    try:
        yield started
    finally:
        stop_cluster(started)


def _input_graph() -> graph_pb2.GraphDef:
    graph = tf1.Graph()
    with graph.as_default(), tf.device("/job:worker/task:0"):
        tf.constant(np.float32(2.0), name="x")
    return graph_pb2.GraphDef.FromString(graph.as_graph_def().SerializeToString())


def _forge(node: Any, program: str = "Neg i0") -> None:
    node.name, node.op = NAME, FUSED
    node.input.append("x")
    node.attr["T"].type = tf.float32.as_datatype_enum
    node.attr["N"].i = 1
    node.attr["program"].list.s.append(program.encode())


def forged_graph() -> graph_pb2.GraphDef:
    graph_def = _input_graph()
    node = graph_def.node.add()
    _forge(node)
    node.device = "/job:worker/task:1"
    return graph_def


def forged_function() -> graph_pb2.GraphDef:
    """A library function whose body holds the forged node (nothing calls it)."""
    graph_def = _input_graph()
    function = graph_def.library.function.add()
    function.signature.name = "forged"
    _forge(function.node_def.add())
    return graph_def


def assert_refused(error: Any) -> None:
    assert isinstance(error, grpc.RpcError), f"accepted: {error!r}"
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert NAME in error.details() and FUSED in error.details()


@pytest.mark.parametrize("build", [forged_graph, forged_function])
def test_create_session_refuses_a_forged_fused_node(cluster: LocalCluster, build: Any) -> None:
    assert_refused(our_outcome(cluster, build()))


def test_extend_session_refuses_a_forged_fused_node(cluster: LocalCluster) -> None:
    channel = grpc.insecure_channel(cluster.master_address, options=GRPC_OPTIONS)
    stub = master_stub(channel)
    try:
        created = stub.CreateSession(
            master_pb2.CreateSessionRequest(graph_def=_input_graph()), timeout=60
        )
        forged = graph_pb2.GraphDef()
        _forge(forged.node.add())
        request = master_pb2.ExtendSessionRequest(
            session_handle=created.session_handle,
            graph_def=forged,
            current_graph_version=created.graph_version,
        )
        with pytest.raises(grpc.RpcError) as caught:
            stub.ExtendSession(request, timeout=60)
        assert_refused(caught.value)
        # The session keeps its graph: x still runs.
        run = master_pb2.RunStepRequest(session_handle=created.session_handle, fetch=["x:0"])
        assert stub.RunStep(run, timeout=60).tensor[0].name == "x:0"
        stub.CloseSession(
            master_pb2.CloseSessionRequest(session_handle=created.session_handle), timeout=30
        )
    finally:
        channel.close()


def test_a_chain_our_optimizer_fuses_still_runs(cluster: LocalCluster) -> None:
    graph = tf1.Graph()
    with graph.as_default(), tf.device("/job:worker/task:1"):
        x = tf1.placeholder(tf.float32, [3])
        y = tf.tanh(x * 2.0 + 1.0) - x
    values = np.arange(3, dtype=np.float32)
    with tf1.Session(cluster.target, graph=graph) as sess:
        got = sess.run(y, {x: values})
    np.testing.assert_allclose(got, np.tanh(values * 2 + 1) - values, rtol=1e-6)


@pytest.mark.parametrize("operand", ["i\u0661", "i\u00b2", "i\uff11", "t\u0660"])
def test_the_fused_kernel_refuses_operands_not_in_ascii_digits(operand: str) -> None:
    with pytest.raises(InvalidArgumentError, match="bad program step 1"):
        compile_program(("Neg i0", f"AddV2 i0 {operand}"), 2)
