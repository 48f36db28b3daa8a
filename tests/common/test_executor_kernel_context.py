"""What the executor hands a kernel (OpKernelContext: step, frame_iter, node_name) and how
it checks what a kernel returns, on its short path (a plain node) and its general one
(expensive, dereferencing or control-flow nodes)."""

from __future__ import annotations

import threading

import pytest

from common.dtypes import DataType
from common.errors import InternalError
from common.graph.graph import Graph
from common.ops import registry
from tests.common.test_control_flow_exec import while_loop
from tests.common.test_executor import (
    _clear_trace,  # noqa: F401  (autouse fixture)
    add,
    const,
    new_step,
    retval,
    run,
)

I64 = DataType.DT_INT64
SEEN: list[tuple[str, tuple[int, int], object]] = []
_LOCK = threading.Lock()


def _register_test_ops() -> None:
    if registry.find_op("_CtxTestRecord") is not None:
        return
    registry.register_op("_CtxTestRecord", inputs=["x: int64"], outputs=["y: int64"])

    def record(kc):
        def compute(ctx, ins):
            with _LOCK:
                SEEN.append((ctx.node_name, ctx.frame_iter, ctx.step))
            return [ins[0]]

        return compute

    registry.register_kernel("_CtxTestRecord")(record)
    for op, expensive in (("_CtxTestTwoOutputs", False), ("_CtxTestTwoOutputsPool", True)):
        registry.register_op(op, inputs=["x: int64"], outputs=["y: int64"])
        registry.register_kernel(op, expensive=expensive)(
            lambda kc: lambda ctx, ins: [ins[0], ins[0]]
        )


_register_test_ops()


@pytest.fixture(autouse=True)
def _clear_seen():
    SEEN.clear()
    yield
    SEEN.clear()


def test_kernels_see_their_node_step_and_frame_iteration() -> None:
    g = Graph()
    outside = add(g, "outside", "_CtxTestRecord", [const(g, "i0", 0)])
    (i_exit,) = while_loop(
        g,
        "loop",
        [outside],
        [const(g, "limit", 3), const(g, "one", 1)],
        lambda n, m, inv: add(g, f"{n}/less", "_ExecTestLess", [m[0], inv[0]]),
        lambda n, b, inv: [
            add(
                g,
                f"{n}/next",
                "_ExecTestAdd",
                [add(g, f"{n}/rec", "_CtxTestRecord", [b[0]]), inv[1]],
            )
        ],
    )
    retval(g, "i", i_exit, 0)
    step = new_step()
    assert run(g, 1, step=step) == [3]
    assert SEEN[0] == ("outside", (0, 0), step)
    in_loop = SEEN[1:]
    assert [name for name, _, _ in in_loop] == ["loop/rec"] * 3
    assert [fi[1] for _, fi, _ in in_loop] == [0, 1, 2]  # the iteration
    frame_ids = {fi[0] for _, fi, _ in in_loop}
    assert len(frame_ids) == 1 and 0 not in frame_ids  # the loop's frame, not the root
    assert all(s is step for _, _, s in in_loop)


@pytest.mark.parametrize("op", ["_CtxTestTwoOutputs", "_CtxTestTwoOutputsPool"])
def test_a_kernel_returning_the_wrong_number_of_outputs_fails_its_node(op: str) -> None:
    g = Graph()
    x = const(g, "x", 1)
    # Two ready nodes, so the expensive one really goes to the pool.
    bad = add(g, "bad", op, [x])
    other = add(g, "other", "_ExecTestId", [x])
    retval(g, "r0", bad, 0)
    retval(g, "r1", other, 1)
    with pytest.raises(InternalError, match="bad: kernel returned 2 outputs, expected 1") as e:
        run(g, 2)
    assert e.value.node_name == "bad"
