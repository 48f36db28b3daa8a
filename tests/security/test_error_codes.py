"""TensorFlow's error codes at the edges, through a real cluster: a Const whose value does
not match its dtype or whose TensorProto is malformed is INVALID_ARGUMENT naming the node,
a malformed feed INVALID_ARGUMENT naming the feed, a fetch listed twice is answered twice,
and a failed allocation is RESOURCE_EXHAUSTED (never INTERNAL with a Python type name)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import numpy as np
import pytest

from common import errors
from common.tensor import from_numpy
from deploy.launcher import LocalCluster
from protos import master_pb2, node_def_pb2, tensor_pb2
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import master_stub

FLOAT = 1


@pytest.fixture(scope="module")
def stub(shared_cluster: LocalCluster) -> Iterator[Any]:
    channel = grpc.insecure_channel(shared_cluster.master_address, options=GRPC_OPTIONS)
    yield master_stub(channel)
    channel.close()


def _const(name: str, value: tensor_pb2.TensorProto, dtype: int = FLOAT) -> Any:
    node = node_def_pb2.NodeDef(name=name, op="Const")
    node.attr["dtype"].type = dtype
    node.attr["value"].tensor.CopyFrom(value)
    return node


def _session(stub: Any, *nodes: Any) -> str:
    request = master_pb2.CreateSessionRequest()
    request.graph_def.node.extend(nodes)
    return stub.CreateSession(request, timeout=60).session_handle


def _run_error(stub: Any, request: master_pb2.RunStepRequest) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        stub.RunStep(request, timeout=60)
    return info.value


def _close(stub: Any, handle: str) -> None:
    stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=handle), timeout=30)


def test_a_const_of_another_type_is_invalid(stub: Any) -> None:
    handle = _session(stub, _const("c", from_numpy(np.array([1, 2], np.int32))))
    error = _run_error(stub, master_pb2.RunStepRequest(session_handle=handle, fetch=["c:0"]))
    _close(stub, handle)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith("Type mismatch between value (int32) and dtype (float)")
    assert "{{node c}}" in error.details()


def test_a_malformed_const_is_invalid(stub: Any) -> None:
    value = from_numpy(np.array([1.0, 2.0], np.float32))
    value.tensor_content = b"123"
    handle = _session(stub, _const("c", value))
    error = _run_error(stub, master_pb2.RunStepRequest(session_handle=handle, fetch=["c:0"]))
    _close(stub, handle)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "tensor_content has 3 bytes" in error.details()
    assert "{{node c}}" in error.details()


def test_a_malformed_feed_is_invalid_naming_it(stub: Any) -> None:
    placeholder = node_def_pb2.NodeDef(name="p", op="Placeholder")
    placeholder.attr["dtype"].type = FLOAT
    identity = node_def_pb2.NodeDef(name="i", op="Identity", input=["p"])
    identity.attr["T"].type = FLOAT
    handle = _session(stub, placeholder, identity)
    request = master_pb2.RunStepRequest(session_handle=handle, fetch=["i:0"])
    feed = request.feed.add(name="p:0")
    feed.tensor.CopyFrom(from_numpy(np.array([1.0, 2.0], np.float32)))
    feed.tensor.tensor_content = b"12345"
    error = _run_error(stub, request)
    _close(stub, handle)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith("Cannot feed p:0: Invalid TensorProto")


def test_a_fetch_listed_twice_is_answered_twice(stub: Any) -> None:
    handle = _session(
        stub,
        _const("a", from_numpy(np.array([1.0], np.float32))),
        _const("b", from_numpy(np.array([2.0], np.float32))),
    )
    request = master_pb2.RunStepRequest(session_handle=handle, fetch=["b:0", "a:0", "b:0"])
    response = stub.RunStep(request, timeout=60)
    _close(stub, handle)
    assert [t.name for t in response.tensor] == ["a:0", "b:0", "b:0"]


def test_memory_error_is_resource_exhausted() -> None:
    error = errors.as_op_error(MemoryError("Unable to allocate 3.35 GiB"))
    assert error.code == errors.Code.RESOURCE_EXHAUSTED
    assert "Unable to allocate" in error.message


def test_a_failed_step_is_one_log_line_on_master_and_worker(
    shared_cluster: LocalCluster, stub: Any
) -> None:
    x = _const("x", from_numpy(np.array([1.0, 2.0, 3.0], np.float32)))
    shape = _const("shape", from_numpy(np.array([2, 2], np.int32)), dtype=3)
    reshape = node_def_pb2.NodeDef(
        name="bad_reshape", op="Reshape", input=["x", "shape"], device="/job:worker/task:1"
    )
    reshape.attr["T"].type = FLOAT
    reshape.attr["Tshape"].type = 3
    request = master_pb2.CreateSessionRequest()
    request.graph_def.node.extend([x, shape, reshape])
    request.config.graph_options.optimizer_options.opt_level = -1  # L0: keep the Reshape
    handle = stub.CreateSession(request, timeout=60).session_handle
    error = _run_error(
        stub, master_pb2.RunStepRequest(session_handle=handle, fetch=["bad_reshape:0"])
    )
    _close(stub, handle)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT

    def failed(task: str) -> list[str]:
        return [
            line
            for line in shared_cluster.tasks[task].lines
            if "step failed" in line and handle in line
        ]

    for task in ("master", "worker1"):
        lines = failed(task)
        assert len(lines) == 1, (task, shared_cluster.tasks[task].lines[-20:])
        assert "code=INVALID_ARGUMENT" in lines[0] and "node=bad_reshape" in lines[0]
    assert failed("worker0") == []
