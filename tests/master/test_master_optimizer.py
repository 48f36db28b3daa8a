"""Master, in-process: the graph optimizations run before partitioning, as the session's
ConfigProto asks (TensorFlow's default L1: CSE and constant folding; L0: none)."""

from __future__ import annotations

import numpy as np

from common.dtypes import DataType
from examples.demo import GraphBuilder
from protos import config_pb2, master_pb2
from tests.master.test_master import T, run, values

F32 = DataType.DT_FLOAT
W0 = "/job:worker/task:0"


def foldable_graph() -> GraphBuilder:
    b = GraphBuilder()
    b.node("x", "Placeholder", dtype=F32, shape=(2,))
    b.const("a", np.array([2.0, 2.0], np.float32), W0)
    b.const("b", np.array([3.0, 3.0], np.float32), W0)
    b.node("ab", "Mul", ["a", "b"], device=W0, T=F32)  # constant: folds
    b.node("sq1", "Mul", ["x", "x"], device=W0, T=F32)  # twins: CSE keeps one
    b.node("sq2", "Mul", ["x", "x"], device=W0, T=F32)
    b.node("s", "AddV2", ["sq1", "sq2"], device=W0, T=F32)
    b.node("y", "AddV2", ["s", "ab"], device=W0, T=F32)
    return b


def registered_ops(cluster, task: str) -> list[str]:
    worker = next(w.worker for w in cluster.workers if w.task_name == task)
    names = []
    for mgr in worker._sessions.values():
        for item in mgr._items.values():
            for unit in item.units:
                names += [n.name for n in unit.executor.graph.op_nodes()]
    return sorted(names)


def run_once(cluster, config: config_pb2.ConfigProto) -> list[str]:
    request = master_pb2.CreateSessionRequest(config=config)
    request.graph_def.CopyFrom(foldable_graph().graph_def)
    handle = cluster.stub.CreateSession(request, timeout=T).session_handle
    got = values(run(cluster, handle, ["y:0"], {"x:0": np.array([1.0, 3.0], np.float32)}))
    np.testing.assert_array_equal(got["y:0"], [8.0, 24.0])  # 2x^2 + 6
    names = registered_ops(cluster, "/job:worker/replica:0/task:0")
    cluster.stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=handle), timeout=T)
    return names


def test_default_config_folds_constants_and_merges_twins(cluster):
    names = run_once(cluster, config_pb2.ConfigProto())
    assert "ab" not in names and "a" not in names and "b" not in names
    assert any("__cf__" in n for n in names), names
    assert ("sq1" in names) != ("sq2" in names), names


def test_l0_leaves_the_graph_as_written(cluster):
    config = config_pb2.ConfigProto()
    config.graph_options.optimizer_options.opt_level = config_pb2.OptimizerOptions.L0
    # L0 leaves TensorFlow's Grappler, and so our elementwise fusion, on: off as well here.
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    names = run_once(cluster, config)
    assert {"a", "b", "ab", "sq1", "sq2"} <= set(names), names
    assert not any("__cf__" in n for n in names)
