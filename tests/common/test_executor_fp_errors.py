"""Floating-point errors are silent, as in TensorFlow: overflow, divide by zero and invalid
operations give inf/nan (or wrap, for integers) and never a RuntimeWarning, whoever runs
the kernel: the executor inline, on its thread pool or after an async kernel's `done` on
another thread, DirectSession (with and without constant folding), or a direct call.
The executor silences numpy once per scheduling loop (math_util.FpErrorsIgnored); the
cwise kernels rely on that and silence themselves only when called outside it."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator

import numpy as np
import pytest

import common.ops  # noqa: F401  (registers every op and kernel)
from bench import bench_executor
from common import dtypes
from common.dtypes import DataType
from common.executor import CallFrame, Executor, StepState
from common.graph.graph import Graph, Node
from common.ops import math_util, registry
from common.session import Session
from common.tensor import from_numpy
from protos import attr_value_pb2, graph_pb2
from tests.common.ops import kernel_construction, run_kernel

DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
F32, F64, I32 = np.float32, np.float64, np.int32
BIG = 3e38

# (op, x, y or None for unary ops, expected value); each overflows, divides by zero or is
# invalid. Values are numpy scalars or arrays, as fed.
CASES = [
    ("AddV2", F32(BIG), F32(BIG), np.inf),
    ("AddV2", np.full(3, BIG, F32), np.full(3, BIG, F32), np.inf),
    ("AddV2", I32(2**31 - 1), I32(1), -(2**31)),  # wraps
    ("Add", F64(1e308), F64(1e308), np.inf),
    ("Sub", F32(-BIG), F32(BIG), -np.inf),
    ("Sub", F32(np.inf), F32(np.inf), np.nan),
    ("Mul", F32(BIG), F32(10), np.inf),
    ("Mul", np.asarray(F32(np.inf)), np.asarray(F32(0)), np.nan),
    ("Mul", np.full(2, 1e-30, F32), np.full(2, 1e-30, F32), 0.0),  # underflow
    ("Div", F32(1), F32(0), np.inf),
    ("RealDiv", np.zeros(2, F32), np.zeros(2, F32), np.nan),
    ("FloorDiv", F64(1), F64(0), np.inf),
    ("Pow", F32(10), F32(100), np.inf),
    ("AddV2", np.full(2, 6e4, np.float16), np.full(2, 6e4, np.float16), np.inf),
    ("Log", F32(0), None, -np.inf),
    ("Log", np.full(2, -1, F64), None, np.nan),
    ("Exp", F32(1000), None, np.inf),
    ("Sqrt", F32(-1), None, np.nan),
    ("Reciprocal", F32(0), None, np.inf),
]
IDS = [f"{op}-{np.asarray(x).dtype}-{np.ndim(x)}d" for op, x, _, _ in CASES]


@pytest.fixture(autouse=True)
def no_warnings() -> Iterator[None]:
    """Any warning raised in the test (on any thread) fails it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    assert [str(w.message) for w in caught] == []


def check(value, x, expected) -> None:
    dtype = np.asarray(x).dtype
    assert np.asarray(value).dtype == dtype
    assert np.shape(value) == np.shape(x)
    np.testing.assert_array_equal(np.asarray(value, np.float64), np.float64(expected))


# -- GraphDefs ----------------------------------------------------------------------------
def _node(gd: graph_pb2.GraphDef, name: str, op: str, *inputs: str, **attrs) -> None:
    n = gd.node.add(name=name, op=op)
    n.input.extend(inputs)
    for k, v in attrs.items():
        n.attr[k].CopyFrom(v)


def _type(dt: DataType) -> attr_value_pb2.AttrValue:
    return attr_value_pb2.AttrValue(type=int(dt))


def graph_def(op: str, x, y, *, consts: bool) -> graph_pb2.GraphDef:
    """z = op(x[, y]) with x, y as Placeholders or (consts) Consts."""
    dt = dtypes.from_numpy(np.asarray(x).dtype)
    gd = graph_pb2.GraphDef()
    names = ["x"] if y is None else ["x", "y"]
    for name, v in zip(names, (x, y)):
        if consts:
            value = attr_value_pb2.AttrValue(tensor=from_numpy(np.asarray(v), dt))
            _node(gd, name, "Const", dtype=_type(dt), value=value)
        else:
            _node(gd, name, "Placeholder", dtype=_type(dt))
    _node(gd, "z", op, *names, T=_type(dt))
    return gd


@pytest.mark.parametrize(("op", "x", "y", "expected"), CASES, ids=IDS)
def test_direct_session_runs_without_warnings(op, x, y, expected):
    feeds = {"x:0": x} if y is None else {"x:0": x, "y:0": y}
    with Session(graph_def(op, x, y, consts=False), optimize=False) as sess:
        (z,) = sess.run(["z:0"], feeds)
    check(z, x, expected)


@pytest.mark.parametrize(("op", "x", "y", "expected"), CASES, ids=IDS)
def test_constant_folding_runs_without_warnings(op, x, y, expected):
    with Session(graph_def(op, x, y, consts=True)) as sess:
        (z,) = sess.run(["z:0"])
    check(z, x, expected)


@pytest.mark.parametrize(("op", "x", "y", "expected"), CASES, ids=IDS)
def test_kernel_called_directly_runs_without_warnings(op, x, y, expected):
    assert not math_util.fp_errors_ignored()  # outside the executor
    (z,) = run_kernel(op, [x] if y is None else [x, y])
    check(z, x, expected)


def test_the_flag_and_errstate_are_scoped_to_the_executor_loop():
    with math_util.FpErrorsIgnored():
        assert math_util.fp_errors_ignored() and np.geterr()["over"] == "ignore"
    assert not math_util.fp_errors_ignored() and np.geterr()["over"] == "warn"


# -- the executor's other threads ---------------------------------------------------------
def _register_test_ops() -> None:
    if registry.find_op("_FpTestOverflow") is not None:
        return
    # No errstate in these kernels: they rely on the executor's.
    registry.register_op("_FpTestOverflow", inputs=["x: float"], outputs=["y: float"])
    registry.register_kernel("_FpTestOverflow", expensive=True)(
        lambda kc: lambda ctx, ins: [np.asarray(ins[0] * F32(BIG) * F32(BIG))]
    )
    registry.register_op("_FpTestAsync", inputs=["x: float"], outputs=["y: float"])

    def async_factory(kc):
        def compute(ctx, ins, done):
            # `done` from another thread: the executor runs the consumers there.
            threading.Thread(target=lambda: done([ins[0] * F32(BIG)])).start()

        return compute

    registry.register_kernel("_FpTestAsync", is_async=True)(async_factory)


def _add(g: Graph, name: str, op: str, inputs: list[Node], **attrs) -> Node:
    return bench_executor._add(g, name, op, attrs, inputs)


def test_kernels_on_the_pool_and_after_async_done_run_without_warnings():
    _register_test_ops()
    g = Graph()
    x = _add(g, "x", "_Arg", [], T=DataType.DT_FLOAT, index=0)
    # Two ready expensive nodes: one of them goes to the thread pool.
    a = _add(g, "a", "_FpTestOverflow", [x])
    b = _add(g, "b", "_FpTestOverflow", [x])
    c = _add(g, "c", "_FpTestAsync", [x])
    # Consumers of the async kernel run on the thread that called `done`.
    d = _add(g, "d", "Mul", [c, c], T=DataType.DT_FLOAT)  # overflows
    ab = _add(g, "ab", "Sub", [a, b], T=DataType.DT_FLOAT)
    for k, src in enumerate((ab, d)):
        _add(g, f"r{k}", "_Retval", [src], T=DataType.DT_FLOAT, index=k)
    executor = Executor(g, DEVICE)
    for _ in range(5):
        frame = CallFrame([F32(1)], 2)
        executor.run(StepState(1, DEVICE, call_frame=frame), timeout=20)
        assert np.isnan(frame.retvals[0]) and frame.retvals[1] == np.inf
        assert type(frame.retvals[1]) is F32


def test_scalar_math_takes_zero_d_arrays_too():
    """Fed, received and Const scalars are 0-d arrays: AddV2/Sub/Mul give the same value and
    type as with numpy scalars (numpy's 0-d ufunc result is a scalar too)."""

    def compute(op, x, y):
        kc = kernel_construction(op, [x, y], T=DataType.DT_FLOAT)
        return registry.lookup_kernel(op, "CPU", "", kc.node_name).factory(kc)(None, [x, y])

    for op, expect in (("AddV2", 5.0), ("Sub", -1.0), ("Mul", 6.0)):
        for x, y in (
            (np.array(2, np.float32), np.float32(3)),
            (np.float32(2), np.array(3, np.float32)),
            (np.array(2, np.float32), np.array(3, np.float32)),
        ):
            (z,) = compute(op, x, y)
            assert type(z) is np.float32 and z == expect, (op, type(x), type(y))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (big,) = compute("Mul", np.array(3e38, np.float32), np.float32(10))
    assert np.isinf(big) and type(big) is np.float32
    (mixed,) = compute("AddV2", np.array(1, np.float32), np.arange(3, dtype=np.float32))
    assert mixed.tolist() == [1.0, 2.0, 3.0]
