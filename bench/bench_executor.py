"""Benchmark, executor: per-step time of a chain of 1,000 scalar float32 AddV2 nodes fed
by an _Arg, and of the same chain with a do-nothing kernel (the executor's own per-node
cost); and the executor's CPU time per node executed (the thread's CPU clock, which a
loaded machine inflates less than wall time) for straight-line nodes (the chain) and for
the nodes of a v1 while loop (1,000 iterations of Merge/Switch/Identity/NextIteration
bookkeeping around two scalar updates, built with our client, run in-process with graph
optimizations off), without and with its gradient loop (forward-value stacks); and a
training step of the 2-layer LSTM of bench.tf_models (128 units, 32 steps, batch 32,
dynamic_rnn, Adam) built with our client and run in-process with graph optimizations off:
its process CPU time per step (every thread, kernels included), per node executed and the
nodes executed per step; and the same with elementwise fusion only (opt_level L0, no CSE
or constant folding; the "_fused" figures). The executor's fixed cost per step is the
thread CPU time of a 3-node step (_Arg, AddV2, _Retval) run 10,000 times, in batches (a
clock read per step would cost as much as what it measures). Prints JSON, medians over
the timed steps (or batches)."""

from __future__ import annotations

from common import blas_env

if __name__ == "__main__":
    blas_env.configure(single_thread=True)  # before numpy loads, as worker/__main__ does

import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import common.ops  # noqa: F401  (registers the ops and kernels)
from common import attr_value
from common.dtypes import DataType
from common.executor import CallFrame, Executor, StepState
from common.graph.graph import Graph, Node
from common.ops import registry

DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


def _add(g: Graph, name: str, op: str, attrs: dict, inputs: list[Node]) -> Node:
    op_def = registry.lookup_op(op)
    protos = {}
    for k, v in attrs.items():
        attr_def = op_def.attr(k)
        assert attr_def is not None, (op, k)  # the bench's own graphs name known attrs
        protos[k] = attr_value.to_proto(v, attr_def.type)
    node = g.add_node(name, op, protos, DEVICE)
    for slot, src in enumerate(inputs):
        g.add_edge(src, 0, node, slot)
    return node


def chain_graph(length: int, op: str = "AddV2") -> Graph:
    g = Graph()
    x = _add(g, "x", "_Arg", {"T": DataType.DT_FLOAT, "index": 0}, [])
    prev = x
    for k in range(length):
        prev = _add(g, f"add_{k}", op, {"T": DataType.DT_FLOAT}, [prev, x])
    _add(g, "y", "_Retval", {"T": DataType.DT_FLOAT, "index": 0}, [prev])
    return g


def _register_trivial_add() -> None:
    """A kernel doing almost nothing, to measure the executor's own per-node cost."""
    if registry.find_op("_BenchTrivialAdd") is None:
        registry.register_op(
            "_BenchTrivialAdd", inputs=["x: T", "y: T"], outputs=["z: T"], attrs=["T: type"]
        )
        registry.register_kernel("_BenchTrivialAdd")(lambda kc: lambda ctx, ins: [ins[0] + ins[1]])


def median_step_ms(steps: int, length: int, op: str) -> float:
    ex = Executor(chain_graph(length, op), DEVICE)
    times = []
    for step_id in range(steps + 10):
        frame = CallFrame([np.float32(1.0)], 1)
        step = StepState(step_id, DEVICE, call_frame=frame)
        t0 = time.perf_counter()
        ex.run(step)
        times.append(time.perf_counter() - t0)
        assert frame.retvals[0] == length + 1, frame.retvals
    return round(statistics.median(times[10:]) * 1e3, 3)


def chain_cpu_ns_per_node(steps: int, length: int, op: str) -> float:
    ex = Executor(chain_graph(length, op), DEVICE)
    times = []
    for step_id in range(steps + 10):
        frame = CallFrame([np.float32(1.0)], 1)
        step = StepState(step_id, DEVICE, call_frame=frame)
        t0 = time.thread_time()
        ex.run(step)
        times.append(time.thread_time() - t0)
    return round(statistics.median(times[10:]) * 1e9 / (length + 2), 1)


def fixed_cpu_us_per_step(batches: int = 10, per_batch: int = 1000) -> float:
    """CPU us per step of a 3-node graph: the executor's per-step set-up and finish,
    which a served trivial step pays on every worker. Only `run` is timed: each batch's
    StepStates and CallFrames are made before its clock starts."""
    ex = Executor(chain_graph(1, "AddV2"), DEVICE)
    times = []
    for _ in range(batches + 1):
        steps = [
            StepState(k, DEVICE, call_frame=CallFrame([np.float32(1.0)], 1))
            for k in range(per_batch)
        ]
        t0 = time.thread_time()
        for step in steps:
            ex.run(step)
        times.append(time.thread_time() - t0)
        assert steps[-1].call_frame is not None and steps[-1].call_frame.retvals[0] == 2.0
    return round(statistics.median(times[1:]) * 1e6 / per_batch, 2)


def loop_cpu_ns_per_node(steps: int, iterations: int, gradient: bool) -> float:
    """CPU ns per node executed of a v1 while loop (and its gradient loop)."""
    import client as tf
    from common.session import Session
    from protos import config_pb2

    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        _, a = tf.while_loop(
            lambda i, a: i < iterations,
            lambda i, a: (i + 1, a * 1.0001 + 0.5),
            [tf.constant(0), x],
        )
        y = tf.gradients(a, x)[0] if gradient else a
    sess = Session(g.as_graph_def(), optimize=False)
    feeds = {"x:0": np.float32(1.0)}
    metadata = config_pb2.RunMetadata()
    sess.run(
        [y.name],
        feeds,
        run_options=config_pb2.RunOptions(trace_level=config_pb2.RunOptions.FULL_TRACE),
        run_metadata=metadata,
    )
    nodes = sum(len(d.node_stats) for d in metadata.step_stats.dev_stats)
    times = []
    for _ in range(steps + 2):
        t0 = time.thread_time()
        sess.run([y.name], feeds)  # one device: the executor runs on this thread
        times.append(time.thread_time() - t0)
    return round(statistics.median(times[2:]) * 1e9 / nodes, 1)


def _fusion_only_config() -> Any:
    """Every optimization off but elementwise fusion (on by default, as TF's remapper)."""
    from protos import config_pb2

    config = config_pb2.ConfigProto()
    opts = config.graph_options.optimizer_options
    opts.opt_level = config_pb2.OptimizerOptions.L0
    opts.do_common_subexpression_elimination = False
    opts.do_constant_folding = False
    return config


def lstm_step_cpu(
    steps: int, batch: int = 32, seq: int = 32, units: int = 128, fused: bool = False
) -> dict:
    """Process CPU ms per training step of a 2-layer LSTM, CPU ns per node executed and
    nodes executed per step; keys end in "_fused" with elementwise fusion on."""
    import client as tf
    from common.session import Session
    from protos import config_pb2

    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [batch, seq, units], name="x")
        h = x
        for layer in range(2):
            with tf.variable_scope(f"rnn{layer}"):
                cell = tf.nn.rnn_cell.BasicLSTMCell(units)
                h, _ = tf.nn.dynamic_rnn(cell, h, dtype=tf.float32)
        loss = tf.reduce_mean(tf.square(h))
        train = tf.train.AdamOptimizer(1e-3).minimize(loss)
        init = tf.global_variables_initializer()
    if fused:
        sess = Session(g.as_graph_def(), config=_fusion_only_config())
    else:
        sess = Session(g.as_graph_def(), optimize=False)
    sess.run([], targets=[init.name])
    feeds = {x.name: np.random.default_rng(0).random((batch, seq, units), np.float32)}
    metadata = config_pb2.RunMetadata()
    sess.run(
        [loss.name],
        feeds,
        [train.name],
        run_options=config_pb2.RunOptions(trace_level=config_pb2.RunOptions.FULL_TRACE),
        run_metadata=metadata,
    )
    nodes = sum(len(d.node_stats) for d in metadata.step_stats.dev_stats)
    times = []
    for _ in range(steps + 3):
        t0 = time.process_time()  # the pool's threads too (expensive kernels run there)
        sess.run([loss.name], feeds, [train.name])
        times.append(time.process_time() - t0)
    cpu = statistics.median(times[3:])
    suffix = "_fused" if fused else ""
    return {
        f"lstm_step_cpu_ms{suffix}": round(cpu * 1e3, 2),
        f"lstm_step_cpu_ns_per_node{suffix}": round(cpu * 1e9 / nodes, 1),
        f"lstm_step_nodes{suffix}": nodes,
    }


def main(steps: int = 200, length: int = 1000) -> dict:
    _register_trivial_add()
    return {
        "chain1000_step_ms": median_step_ms(steps, length, "AddV2"),
        # The same chain with a trivial kernel: the executor's own cost.
        "chain1000_trivial_kernel_step_ms": median_step_ms(steps, length, "_BenchTrivialAdd"),
        "chain_cpu_ns_per_node": chain_cpu_ns_per_node(steps, length, "AddV2"),
        "chain_trivial_kernel_cpu_ns_per_node": chain_cpu_ns_per_node(
            steps, length, "_BenchTrivialAdd"
        ),
        "trivial_graph_cpu_us_per_step": fixed_cpu_us_per_step(),
        "while_loop_cpu_ns_per_node": loop_cpu_ns_per_node(20, 1000, gradient=False),
        "while_loop_gradient_cpu_ns_per_node": loop_cpu_ns_per_node(10, 300, gradient=True),
        **lstm_step_cpu(20),
        **lstm_step_cpu(20, fused=True),
    }


if __name__ == "__main__":
    print(json.dumps(main()))
