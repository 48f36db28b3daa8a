"""Limits on what a request may ask, through real processes: a self-recursive function is
an InvalidArgument at registration, a Fill larger than a task's --memory-limit is a
ResourceExhausted naming the node and the size (never the OOM killer), and constant
folding never materialises it on the master."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import numpy as np
import pytest
from google.protobuf import text_format

import client as tf
from common.errors import ResourceExhaustedError
from common.graph.constructor import convert_graph_def_to_graph
from common.optimizer.constant_folding import evaluate
from deploy.launcher import LocalCluster
from protos import graph_pb2, master_pb2
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import master_stub

from .conftest import stop_cluster

# f(x) = f(x): about 150 bytes; inlining it never ends.
RECURSIVE = """
library { function {
  signature { name: "f" input_arg { name: "x" type: DT_FLOAT } output_arg { name: "y" type: DT_FLOAT } }
  node_def { name: "c" op: "f" input: "x" }
  ret { key: "y" value: "c:y:0" } } }
node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }
node { name: "call" op: "f" input: "a" }
"""


@pytest.fixture(scope="module")
def limited_cluster() -> Iterator[LocalCluster]:
    cluster = LocalCluster(
        jobs={"worker": 1},
        master_args=["--rpc-timeout", "10", "--memory-limit", "1G"],
        worker_args=["--memory-limit", "1G"],
    ).start()
    try:
        yield cluster
    finally:
        stop_cluster(cluster)


def test_a_self_recursive_function_is_invalid_at_registration(
    limited_cluster: LocalCluster,
) -> None:
    channel = grpc.insecure_channel(limited_cluster.master_address, options=GRPC_OPTIONS)
    stub = master_stub(channel)
    request = master_pb2.CreateSessionRequest()
    text_format.Parse(RECURSIVE, request.graph_def)
    try:
        with pytest.raises(grpc.RpcError) as info:
            stub.CreateSession(request, timeout=30)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "Function 'f' is recursive (f -> f)" in info.value.details()
        assert stub.ListDevices(master_pb2.ListDevicesRequest(), timeout=30).remote_device
    finally:
        channel.close()


def test_a_fill_over_the_memory_limit_is_resource_exhausted(
    limited_cluster: LocalCluster,
) -> None:
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            big = tf.fill([30000, 30000], 1.0, name="big")  # 3.6 GB of float32
            total = tf.reduce_sum(big)
        with tf.Session(limited_cluster.target) as sess:
            with pytest.raises(tf.errors.ResourceExhaustedError) as info:
                sess.run(total)
            assert "shape[30000,30000] and type float32" in info.value.message
            assert "3600000000 bytes" in info.value.message
            assert "{{node big}}" in info.value.message
            assert sess.run(tf.fill([2], 3.0)).tolist() == [3.0, 3.0]  # the task lives on


def test_constant_folding_refuses_a_large_fill_before_allocating() -> None:
    gd = graph_pb2.GraphDef()
    text_format.Parse(
        """
        node { name: "dims" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
          attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } }
            int_val: 100000 int_val: 100000 } } } }
        node { name: "v" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
          attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }
        node { name: "big" op: "Fill" input: "dims" input: "v"
          attr { key: "T" value { type: DT_FLOAT } } attr { key: "index_type" value { type: DT_INT32 } } }
        """,
        gd,
    )
    graph = convert_graph_def_to_graph(gd)
    nodes = [graph.node(n) for n in ("dims", "v", "big")]
    with pytest.raises(ResourceExhaustedError) as info:  # 40 GB: never allocated
        evaluate(nodes, [(graph.node("big"), 0)], max_bytes=10 << 20)
    assert info.value.node_name == "big"
    small = evaluate(nodes[:2], [(graph.node("v"), 0)])
    np.testing.assert_array_equal(small[0], np.float32(1))
