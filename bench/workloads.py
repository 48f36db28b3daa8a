"""Benchmark, workloads: the GraphDefs both runtimes run, and how each step is driven.

Each workload is a `Workload`: one GraphDef (every node pinned to a worker task), the
targets of its initialization step, the feeds, the fetch, and the value the fetch must
have (every timed step is checked, so a fast wrong answer cannot pass). The GraphDefs
are built with our protos (field numbers = TensorFlow's), so the TensorFlow side imports
the very same bytes with tf.compat.v1.import_graph_def. Pure functions.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from common import attr_value
from common import tensor as tensor_util
from common.dtypes import DataType
from protos import config_pb2, graph_pb2, rewriter_config_pb2

F = DataType.DT_FLOAT
I32 = DataType.DT_INT32
MB = 1 << 20


def worker(task: int) -> str:
    return f"/job:worker/replica:0/task:{task}/device:CPU:0"


class GraphBuilder:
    """Appends NodeDefs to a GraphDef; attrs given as Python values with their types."""

    def __init__(self) -> None:
        self.graph_def = graph_pb2.GraphDef()
        self.graph_def.versions.producer = 1087

    def op(
        self,
        name: str,
        op: str,
        inputs: list[str],
        device: str,
        **attrs: tuple[Any, str],
    ) -> str:
        node = self.graph_def.node.add(name=name, op=op, device=device)
        node.input.extend(inputs)
        for key, (value, attr_type) in attrs.items():
            node.attr[key].CopyFrom(attr_value.to_proto(value, attr_type))
        return name

    def const(self, name: str, value: np.ndarray, device: str) -> str:
        value = np.asarray(value)
        dt = tensor_util.infer_dtype(value)
        return self.op(name, "Const", [], device, dtype=(dt, "type"), value=(value, "tensor"))

    def variable(self, name: str, shape: tuple[int, ...], device: str) -> str:
        return self.op(
            name,
            "VarHandleOp",
            [],
            device,
            dtype=(F, "type"),
            shape=(shape, "shape"),
            shared_name=(name, "string"),
            container=("", "string"),
        )

    def fill(self, name: str, shape: tuple[int, ...], value: float, device: str) -> str:
        dims = self.const(f"{name}/dims", np.array(shape, np.int32), device)
        val = self.const(f"{name}/value", np.float32(value), device)
        return self.op(name, "Fill", [dims, val], device, T=(F, "type"), index_type=(I32, "type"))

    def assign(self, name: str, var: str, value: str, device: str) -> str:
        return self.op(name, "AssignVariableOp", [var, value], device, dtype=(F, "type"))

    def read(self, name: str, var: str, device: str) -> str:
        return self.op(name, "ReadVariableOp", [var], device, dtype=(F, "type"))

    def binary(self, name: str, op: str, a: str, b: str, device: str) -> str:
        return self.op(name, op, [a, b], device, T=(F, "type"))

    def sum_all(self, name: str, x: str, rank: int, device: str) -> str:
        axes = self.const(f"{name}/axes", np.arange(rank, dtype=np.int32), device)
        return self.op(
            name,
            "Sum",
            [x, axes],
            device,
            T=(F, "type"),
            Tidx=(I32, "type"),
            keep_dims=(False, "bool"),
        )


@dataclasses.dataclass
class Workload:
    name: str
    graph_def: Any
    init_targets: list[str]
    fetch: str
    expect: float
    feeds: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    num_bytes: int = 0  # bytes crossing workers per step (transfer workloads)

    def check(self, value: Any) -> None:
        got = float(np.asarray(value))
        if not np.isclose(got, self.expect, rtol=1e-3):
            raise AssertionError(f"{self.name}: fetched {got}, expected {self.expect}")


def config_proto() -> config_pb2.ConfigProto:
    """Graph optimizations off on both runtimes (TF: also Grappler), no deadline."""
    config = config_pb2.ConfigProto()
    opts = config.graph_options.optimizer_options
    opts.opt_level = config_pb2.OptimizerOptions.L0
    opts.do_common_subexpression_elimination = False
    opts.do_constant_folding = False
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    config.graph_options.rewrite_options.constant_folding = rewriter_config_pb2.RewriterConfig.OFF
    return config


def optimized_config_proto() -> config_pb2.ConfigProto:
    """Graph optimizations on: the defaults (our L1 passes, TF's L1 and Grappler) plus
    RewriterConfig.remapping explicitly ON (our elementwise fusion; TF's remapper)."""
    config = config_pb2.ConfigProto()
    config.graph_options.rewrite_options.remapping = rewriter_config_pb2.RewriterConfig.ON
    return config


def trivial() -> Workload:
    """Read a variable on worker 1, add 1 on worker 0, fetch."""
    b = GraphBuilder()
    w0, w1 = worker(0), worker(1)
    var = b.variable("v", (), w1)
    init = b.assign("v/init", var, b.const("v/zero", np.float32(41.0), w1), w1)
    read = b.read("v/read", var, w1)
    out = b.binary("out", "AddV2", read, b.const("one", np.float32(1.0), w0), w0)
    return Workload("trivial", b.graph_def, [init], f"{out}:0", 42.0)


def transfer(num_bytes: int) -> Workload:
    """A float32 variable of `num_bytes` read on worker 1 and summed on worker 0."""
    b = GraphBuilder()
    w0, w1 = worker(0), worker(1)
    n = num_bytes // 4
    name = f"big{num_bytes}"  # one variable per size: sessions share worker resources
    var = b.variable(name, (n,), w1)
    init = b.assign(f"{name}/init", var, b.fill(f"{name}/ones", (n,), 1.0, w1), w1)
    read = b.read(f"{name}/read", var, w1)
    out = b.sum_all("sum", read, 1, w0)
    return Workload(
        f"transfer_{num_bytes // MB}MB",
        b.graph_def,
        [init],
        f"{out}:0",
        float(n),
        num_bytes=num_bytes,
    )


def chain(length: int = 1000) -> Workload:
    """`length` scalar AddV2 nodes in a chain on worker 0, fed by a placeholder."""
    b = GraphBuilder()
    w0 = worker(0)
    x = b.op("x", "Placeholder", [], w0, dtype=(F, "type"), shape=((), "shape"))
    prev = x
    for k in range(length):
        prev = b.binary(f"add_{k}", "AddV2", prev, x, w0)
    return Workload(
        f"chain{length}",
        b.graph_def,
        [],
        f"{prev}:0",
        float(length + 1),
        feeds={"x:0": np.float32(1.0)},
    )


def mlp(layers: int = 4, width: int = 1024, batch: int = 256) -> Workload:
    """Relu(MatMul) layers alternating between workers 0 and 1; weights are variables
    filled with 1/width, so every activation stays 1 and the summed output is exact."""
    b = GraphBuilder()
    inits = []
    h = b.fill("x", (batch, width), 1.0, worker(0))
    for k in range(layers):
        dev = worker(k % 2)
        var = b.variable(f"w{k}", (width, width), dev)
        inits.append(
            b.assign(
                f"w{k}/init", var, b.fill(f"w{k}/value", (width, width), 1.0 / width, dev), dev
            )
        )
        mm = b.op(
            f"mm{k}",
            "MatMul",
            [h, b.read(f"w{k}/read", var, dev)],
            dev,
            T=(F, "type"),
            transpose_a=(False, "bool"),
            transpose_b=(False, "bool"),
        )
        h = b.op(f"relu{k}", "Relu", [mm], dev, T=(F, "type"))
    out = b.sum_all("out", h, 2, worker(0))
    return Workload("mlp", b.graph_def, inits, f"{out}:0", float(batch * width))


def fanout(num_workers: int) -> Workload:
    """One op per worker (Identity of a constant), all summed (AddN) on worker 0."""
    b = GraphBuilder()
    parts = []
    for t in range(num_workers):
        c = b.const(f"c{t}", np.float32(t + 1), worker(t))
        parts.append(b.op(f"id{t}", "Identity", [c], worker(t), T=(F, "type")))
    out = b.op("sum", "AddN", parts, worker(0), T=(F, "type"), N=(num_workers, "int"))
    return Workload(
        f"fanout_{num_workers}",
        b.graph_def,
        [],
        f"{out}:0",
        float(num_workers * (num_workers + 1) // 2),
    )


def control_inputs(num_inputs: int = 100_000) -> Any:
    """A GraphDef of `num_inputs` NoOps alternating between workers 0 and 1, and one NoOp
    "target" on worker 0 with all of them as control inputs (planning linear in edges)."""
    b = GraphBuilder()
    for i in range(num_inputs):
        b.graph_def.node.add(name=f"c{i}", op="NoOp", device=worker(i % 2))
    target = b.graph_def.node.add(name="target", op="NoOp", device=worker(0))
    target.input.extend(f"^c{i}" for i in range(num_inputs))
    return b.graph_def
