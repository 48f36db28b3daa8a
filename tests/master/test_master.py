"""Master, in-process: master + 2 workers + ps on port 0 in this process, driven through
MasterService with hand-built GraphDefs (no TensorFlow needed)."""

from __future__ import annotations

import os

import grpc
import numpy as np
import pytest

from common import tensor as tensor_util
from common.dtypes import DataType
from examples.demo import GraphBuilder
from protos import config_pb2, master_pb2

F32 = DataType.DT_FLOAT
W0, W1, PS = "/job:worker/task:0", "/job:worker/task:1", "/job:ps/task:0"
T = 10  # seconds: every test RPC carries a deadline


def add_graph() -> GraphBuilder:
    b = GraphBuilder()
    b.node("x", "Placeholder", dtype=F32, shape=(2,))
    b.const("a", np.array([10.0, 20.0], np.float32), W1)
    b.node("c", "AddV2", ["x", "a"], device=W1, T=F32)
    b.node("d", "Mul", ["c", "c"], device=W0, T=F32)
    return b


def create(cluster, b: GraphBuilder | None = None) -> str:
    request = master_pb2.CreateSessionRequest()
    if b is not None:
        request.graph_def.CopyFrom(b.graph_def)
    response = cluster.stub.CreateSession(request, timeout=T)
    assert response.session_handle and response.graph_version == 0
    return response.session_handle


def run(cluster, handle, fetches=(), feeds=None, targets=(), *, body=True, **kw):
    request = master_pb2.RunStepRequest(
        session_handle=handle,
        fetch=list(fetches),
        target=list(targets),
        store_errors_in_response_body=body,
        **kw,
    )
    for name, value in (feeds or {}).items():
        request.feed.add(name=name).tensor.CopyFrom(tensor_util.as_proto_tensor_content(value))
    return cluster.stub.RunStep(request, timeout=T)


def values(response) -> dict[str, np.ndarray]:
    assert response.status_code == 0, response.status_error_message
    return {t.name: tensor_util.to_numpy(t.tensor) for t in response.tensor}


def x2() -> dict[str, np.ndarray]:
    return {"x:0": np.array([1.0, 2.0], np.float32)}


def test_run_across_workers_echoes_fetch_names(cluster):
    handle = create(cluster, add_graph())
    got = values(run(cluster, handle, ["d:0", "c"], x2()))
    assert sorted(got) == ["c", "d:0"]
    np.testing.assert_array_equal(got["c"], [11.0, 22.0])
    np.testing.assert_array_equal(got["d:0"], [121.0, 484.0])
    assert cluster.live_steps() == {w.task_name: [] for w in cluster.workers}


def test_registration_reused_per_signature(cluster):
    handle = create(cluster, add_graph())
    for _ in range(3):
        values(run(cluster, handle, ["d:0"], x2()))
    counts = {w.task_name: len(w.worker.graph_mgr(handle, True).handles()) for w in cluster.workers}
    assert counts == {
        "/job:worker/replica:0/task:0": 1,
        "/job:worker/replica:0/task:1": 1,
        "/job:ps/replica:0/task:0": 0,
    }
    values(run(cluster, handle, ["c:0"], x2()))  # a new signature registers again
    assert (
        len(cluster.worker("/job:worker/replica:0/task:1").graph_mgr(handle, True).handles()) == 2
    )


def test_close_then_handle_is_not_found(cluster):
    handle = create(cluster, add_graph())
    cluster.stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=handle), timeout=T)
    response = run(cluster, handle, ["c:0"], x2())
    assert response.status_code == grpc.StatusCode.ABORTED.value[0]
    assert response.status_error_message == f"Session {handle} is not found."
    assert all(handle not in w.worker.session_handles() for w in cluster.workers)


def test_empty_create_extend_versions_and_duplicates(cluster):
    handle = create(cluster)
    b = add_graph()
    extend = master_pb2.ExtendSessionRequest(
        session_handle=handle, graph_def=b.graph_def, current_graph_version=0
    )
    assert cluster.stub.ExtendSession(extend, timeout=T).new_graph_version == 1
    with pytest.raises(grpc.RpcError) as stale:
        cluster.stub.ExtendSession(extend, timeout=T)
    assert stale.value.code() == grpc.StatusCode.ABORTED
    assert stale.value.details() == "Current version is 1 but caller expected 0."
    extend.current_graph_version = 1
    with pytest.raises(grpc.RpcError) as dup:
        cluster.stub.ExtendSession(extend, timeout=T)
    assert dup.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert dup.value.details() == (
        "GraphDef argument to Extend includes node 'x', which was created by a previous call "
        "to Create or Extend in this session."
    )
    more = GraphBuilder()
    more.node("e", "Neg", ["d"], device=W0, T=F32)
    f = more.graph_def.library.function.add()
    f.signature.name = "same_fn"
    extend = master_pb2.ExtendSessionRequest(
        session_handle=handle, graph_def=more.graph_def, current_graph_version=1
    )
    assert cluster.stub.ExtendSession(extend, timeout=T).new_graph_version == 2
    again = master_pb2.ExtendSessionRequest(session_handle=handle, current_graph_version=2)
    again.graph_def.library.CopyFrom(more.graph_def.library)  # the client re-sends it
    assert cluster.stub.ExtendSession(again, timeout=T).new_graph_version == 3
    np.testing.assert_array_equal(
        values(run(cluster, handle, ["e:0"], x2()))["e:0"], [-121.0, -484.0]
    )


def test_step_errors_in_body_and_as_status(cluster):
    handle = create(cluster, add_graph())
    unknown = run(cluster, handle, ["nonexistent:0"])
    assert (unknown.status_code, unknown.status_error_message) == (
        grpc.StatusCode.NOT_FOUND.value[0],
        "FetchOutputs node nonexistent:0: not found",
    )
    missing = run(cluster, handle, ["c:0"])
    assert missing.status_code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert "x" in missing.status_error_message
    with pytest.raises(grpc.RpcError) as err:
        run(cluster, handle, ["c:0"], body=False)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    both = run(cluster, handle, ["x:0"], x2())
    assert both.status_error_message == "x:0 is both fed and fetched."
    assert cluster.live_steps() == {w.task_name: [] for w in cluster.workers}


def test_list_devices(cluster):
    handle = create(cluster)
    response = cluster.stub.ListDevices(
        master_pb2.ListDevicesRequest(session_handle=handle), timeout=T
    )
    assert list(response.local_device) == []  # a master of its own runs no ops
    assert [d.name for d in response.remote_device] == [
        "/job:worker/replica:0/task:0/device:CPU:0",
        "/job:worker/replica:0/task:1/device:CPU:0",
        "/job:ps/replica:0/task:0/device:CPU:0",
    ]
    assert all(d.device_type == "CPU" and d.incarnation for d in response.remote_device)


def variable_graph() -> GraphBuilder:
    b = GraphBuilder()
    b.node("v", "VarHandleOp", device=PS, dtype=F32, shape=(2,), container="", shared_name="v")
    b.const("init", np.array([1.0, 2.0], np.float32), PS)
    b.node("assign", "AssignVariableOp", ["v", "init"], device=PS, dtype=F32)
    b.const("one", np.array([1.0, 1.0], np.float32), W1)
    b.node("inc", "AssignAddVariableOp", ["v", "one"], dtype=F32)
    b.node("read", "ReadVariableOp", ["v"], dtype=F32)
    b.node("twice", "Mul", ["read", "read"], device=W0, T=F32)
    return b


def test_variables_persist_and_reset_clears_them(cluster):
    handle = create(cluster, variable_graph())
    uninit = run(cluster, handle, ["twice:0"])
    assert uninit.status_code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    values(run(cluster, handle, targets=["assign"]))
    values(run(cluster, handle, targets=["inc"]))
    np.testing.assert_array_equal(values(run(cluster, handle, ["twice:0"]))["twice:0"], [4.0, 9.0])
    cluster.stub.Reset(master_pb2.ResetRequest(), timeout=T)
    assert run(cluster, handle, ["twice:0"]).status_code == grpc.StatusCode.ABORTED.value[0]
    handle2 = create(cluster, variable_graph())
    again = run(cluster, handle2, ["twice:0"])
    assert again.status_code == grpc.StatusCode.FAILED_PRECONDITION.value[0]


def test_retried_request_id_runs_once(cluster):
    handle = create(cluster, variable_graph())
    values(run(cluster, handle, targets=["assign"]))
    first = values(run(cluster, handle, ["read:0"], targets=["inc"], request_id=-77))
    retry = values(run(cluster, handle, ["read:0"], targets=["inc"], request_id=-77))
    np.testing.assert_array_equal(first["read:0"], retry["read:0"])
    after = values(run(cluster, handle, ["read:0"]))["read:0"]
    np.testing.assert_array_equal(after, [2.0, 3.0])  # incremented once


def test_run_options_timeout_is_deadline_exceeded_and_cleans_up(cluster):
    b = GraphBuilder()
    # A long computation: a 1500x1500 matmul chain on worker 1 with a 1 ms deadline.
    b.const("m", np.ones((1500, 1500), np.float32), W1)
    prev = "m"
    for i in range(6):
        prev = b.node(f"mm{i}", "MatMul", [prev, "m"], device=W1, T=F32)
    handle = create(cluster, b)
    options = config_pb2.RunOptions(timeout_in_ms=1)
    response = run(cluster, handle, [f"{prev}:0"], options=options)
    assert response.status_code == grpc.StatusCode.DEADLINE_EXCEEDED.value[0]
    assert cluster.live_steps() == {w.task_name: [] for w in cluster.workers}


def test_partial_run(cluster):
    b = GraphBuilder()
    b.node("a", "Placeholder", dtype=F32, shape=())
    b.node("b", "Placeholder", dtype=F32, shape=())
    b.node("s1", "AddV2", ["a", "a"], device=W0, T=F32)
    b.node("s2", "Mul", ["s1", "b"], device=W1, T=F32)
    handle = create(cluster, b)
    setup = cluster.stub.PartialRunSetup(
        master_pb2.PartialRunSetupRequest(
            session_handle=handle, feed=["a:0", "b:0"], fetch=["s1:0", "s2:0"]
        ),
        timeout=T,
    )
    prh = setup.partial_run_handle
    assert prh == "0"
    one = values(run(cluster, handle, ["s1:0"], {"a:0": np.float32(3)}, partial_run_handle=prh))
    assert one["s1:0"] == 6.0
    two = values(run(cluster, handle, ["s2:0"], {"b:0": np.float32(5)}, partial_run_handle=prh))
    assert two["s2:0"] == 30.0
    bad = run(cluster, handle, ["d:0"], partial_run_handle=prh)
    assert bad.status_code == grpc.StatusCode.INVALID_ARGUMENT.value[0]


def test_callables(cluster):
    handle = create(cluster, add_graph())
    options = config_pb2.CallableOptions(feed=["x:0"], fetch=["d:0", "c:0"])
    made = cluster.stub.MakeCallable(
        master_pb2.MakeCallableRequest(session_handle=handle, options=options), timeout=T
    )
    assert made.handle == 0
    request = master_pb2.RunCallableRequest(session_handle=handle, handle=made.handle)
    request.feed.add().CopyFrom(tensor_util.as_proto_tensor_content(x2()["x:0"]))
    response = cluster.stub.RunCallable(request, timeout=T)
    got = [tensor_util.to_numpy(t) for t in response.fetch]
    np.testing.assert_array_equal(got[0], [121.0, 484.0])
    np.testing.assert_array_equal(got[1], [11.0, 22.0])
    cluster.stub.ReleaseCallable(
        master_pb2.ReleaseCallableRequest(session_handle=handle, handle=made.handle), timeout=T
    )
    with pytest.raises(grpc.RpcError) as err:
        cluster.stub.RunCallable(request, timeout=T)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_kernel_error_on_one_worker_fails_step_everywhere(cluster):
    b = GraphBuilder()
    b.node("x", "Placeholder", dtype=F32, shape=(None,))
    b.node("shape", "Const", device=W0, dtype=DataType.DT_INT32, value=np.array([7], np.int32))
    b.node("bad", "Reshape", ["x", "shape"], device=W0, T=F32, Tshape=DataType.DT_INT32)
    b.node("w1_only", "Const", device=W1, dtype=F32, value=np.array(2, np.float32))
    b.node("out", "Mul", ["bad", "w1_only"], device=W1, T=F32)
    handle = create(cluster, b)
    response = run(cluster, handle, ["out:0"], {"x:0": np.ones(3, np.float32)})
    assert response.status_code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert "bad" in response.status_error_message
    assert cluster.live_steps() == {w.task_name: [] for w in cluster.workers}


def test_ids_come_from_the_os_generator_a_buffer_at_a_time(monkeypatch):
    """Step and request ids are unguessable (the OS's generator) but not one getrandom()
    each: a step takes three, and each system call releases the GIL."""
    from master import partition_runner

    reads: list[int] = []
    real = os.urandom

    def counting(n: int) -> bytes:
        reads.append(n)
        return real(n)

    monkeypatch.setattr(os, "urandom", counting)
    monkeypatch.setattr(partition_runner, "_IDS", partition_runner._RandomWords())
    ids = {partition_runner.new_id(57) for _ in range(1000)}
    assert len(ids) == 1000 and all(0 < i < 2**57 for i in ids)
    assert len(reads) == 2  # 512 ids a read
    assert 0 < partition_runner.new_id(1) < 2
