"""Tests for the executor's control flow: dead tensors through Switch/Merge, while loops
built by hand from Enter/Merge/Switch/LoopCond/NextIteration/Exit (as TF's Python
while_loop builds them), nested loops, parallel_iterations, errors inside a loop."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.executor import CallFrame, Executor
from common.graph.graph import Graph, Node
from common.rendezvous import LocalRendezvous
from tests.common.test_executor import (
    DEVICE,
    TIMEOUT,
    TRACE,
    _clear_trace,  # noqa: F401  (autouse fixture)
    add,
    const,
    new_step,
    retval,
    run,
)

I64 = DataType.DT_INT64

Body = Callable[[str, list[Node], list[Node]], list[Node]]
Cond = Callable[[str, list[Node], list[Node]], Node]


def while_loop(
    g: Graph,
    name: str,
    loop_vars: Sequence[Node],
    invariants: Sequence[Node],
    cond: Cond,
    body: Body,
    parallel_iterations: int = 10,
) -> list[Node]:
    """TF1's while_loop graph: Enter -> Merge -> Switch(LoopCond) -> body -> NextIteration
    -> Merge, with Switch:0 -> Exit. Returns the Exit nodes."""
    frame = {"frame_name": name, "parallel_iterations": parallel_iterations, "T": I64}
    enters = [add(g, f"{name}/enter_{k}", "Enter", [v], **frame) for k, v in enumerate(loop_vars)]
    invs = [
        add(g, f"{name}/inv_{k}", "Enter", [v], is_constant=True, **frame)
        for k, v in enumerate(invariants)
    ]
    merges = [
        add(g, f"{name}/merge_{k}", "Merge", [e, e], T=I64, N=2) for k, e in enumerate(enters)
    ]
    for m in merges:  # input 1 is the back edge, wired below
        g.remove_edge(m.input_edge(1))
    pred = add(g, f"{name}/loop_cond", "LoopCond", [cond(name, merges, invs)])
    switches = [
        add(g, f"{name}/switch_{k}", "Switch", [m, pred], T=I64) for k, m in enumerate(merges)
    ]
    bodies = [add(g, f"{name}/body_{k}", "_ExecTestId", [(s, 1)]) for k, s in enumerate(switches)]
    for k, (m, new) in enumerate(zip(merges, body(name, bodies, invs))):
        nxt = add(g, f"{name}/next_{k}", "NextIteration", [new], T=I64)
        g.add_edge(nxt, 0, m, 1)
    return [add(g, f"{name}/exit_{k}", "Exit", [(s, 0)], T=I64) for k, s in enumerate(switches)]


def sum_loop(g: Graph, parallel_iterations: int = 10) -> list[Node]:
    """i = 1; s = 0; while i < 11: s += i; i += 1  -> (11, 55)."""
    return while_loop(
        g,
        "sum",
        [const(g, "i0", 1), const(g, "s0", 0)],
        [const(g, "limit", 11), const(g, "one", 1)],
        lambda n, m, inv: add(g, f"{n}/less", "_ExecTestLess", [m[0], inv[0]]),
        lambda n, b, inv: [
            add(g, f"{n}/i_next", "_ExecTestAdd", [b[0], inv[1]]),
            add(g, f"{n}/s_next", "_ExecTestAdd", [b[1], b[0]]),
        ],
        parallel_iterations,
    )


# -- conditionals ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "x, expected, taken, untaken", [(5, 105, "big", "small"), (-5, -4, "small", "big")]
)
def test_switch_merge_runs_only_the_taken_branch(x, expected, taken, untaken) -> None:
    g = Graph()
    v = const(g, "x", x)
    pred = add(g, "pred", "_ExecTestLess", [const(g, "zero", 0), v])
    sw = add(g, "sw", "Switch", [v, pred], T=I64)
    small = add(g, "small", "_ExecTestAdd", [(sw, 0), const(g, "one", 1)])
    big = add(g, "big", "_ExecTestAdd", [(sw, 1), const(g, "hundred", 100)])
    merge = add(g, "merge", "Merge", [small, big], T=I64, N=2)
    retval(g, "out", merge, 0)
    retval(g, "index", (merge, 1), 1)
    assert run(g, 2) == [expected, 1 if taken == "big" else 0]
    assert taken in TRACE and untaken not in TRACE


def test_deadness_flows_through_control_edges_but_not_into_control_trigger() -> None:
    g = Graph()
    v = const(g, "x", 1)
    pred = add(g, "pred", "_ExecTestLess", [v, const(g, "zero", 0)])  # False
    sw = add(g, "sw", "Switch", [v, pred], T=I64)
    dead = add(g, "dead", "_ExecTestId", [(sw, 1)])
    gated = add(g, "gated", "_ExecTestConst", ctrl=[dead], value=9)
    trigger = add(g, "trigger", "ControlTrigger", ctrl=[dead])
    after_trigger = add(g, "after_trigger", "_ExecTestConst", ctrl=[trigger], value=4)
    retval(g, "r0", gated, 0)
    retval(g, "r1", after_trigger, 1)
    assert run(g, 2) == [None, 4]
    assert "dead" not in TRACE and "gated" not in TRACE and "after_trigger" in TRACE


def test_merge_of_all_dead_inputs_is_dead() -> None:
    g = Graph()
    v = const(g, "x", 1)
    pred = add(g, "pred", "_ExecTestLess", [v, const(g, "zero", 0)])  # False
    sw = add(g, "sw", "Switch", [v, pred], T=I64)
    merge = add(g, "merge", "Merge", [(sw, 1), (sw, 1)], T=I64, N=2)
    retval(g, "out", add(g, "after", "_ExecTestId", [merge]), 0)
    assert run(g) == [None]
    assert "after" not in TRACE


# -- loops -------------------------------------------------------------------------------------
@pytest.mark.parametrize("parallel_iterations", [1, 2, 10])
def test_while_loop_sums_one_to_ten(parallel_iterations: int) -> None:
    g = Graph()
    i_exit, s_exit = sum_loop(g, parallel_iterations)
    retval(g, "i", i_exit, 0)
    retval(g, "s", s_exit, 1)
    assert run(g, 2) == [11, 55]
    assert TRACE.count("sum/s_next") == 10 and TRACE.count("sum/less") == 11


def _run_with(executor: Executor, num_retvals: int, args: Sequence = ()) -> list:
    step = new_step()
    step.call_frame = CallFrame(list(args), num_retvals)
    executor.run(step, timeout=TIMEOUT)
    return step.call_frame.retvals


def test_bookkeeping_nodes_run_without_calling_their_kernels() -> None:
    # Enter, Merge, NextIteration, Exit, Identity, NoOp and Const: the executor does their
    # registered kernels' work itself (no context, no call), with the same results.
    g = Graph()
    i_exit, s_exit = sum_loop(g)
    gate = add(g, "gate", "NoOp", ctrl=[i_exit])
    retval(g, "i", add(g, "i_out", "Identity", [i_exit], ctrl=[gate], T=I64), 0)
    retval(g, "s", s_exit, 1)
    retval(g, "c_out", add(g, "seven", "Const", dtype=I64, value=np.int64(7)), 2)
    executor = Executor(g, DEVICE)
    view = executor.view
    bookkeeping = {"Enter", "Merge", "NextIteration", "Exit", "Identity", "NoOp", "Const"}

    def not_called(ctx, inputs):
        raise AssertionError(f"{ctx.node_name}'s kernel ran")

    replaced = [i for i, nd in enumerate(view.nodes) if nd.op in bookkeeping]
    assert len(replaced) == 13 and all(view.trivial[i] for i in replaced)
    for i in replaced:
        view.computes[i] = not_called
    assert _run_with(executor, 3) == [11, 55, 7]


@pytest.mark.parametrize("pred, taken", [(True, 1), (False, 0)])
def test_switch_on_a_scalar_bool_forwards_to_one_output_without_its_kernel(pred, taken) -> None:
    g = Graph()
    x = const(g, "x", 5)
    p = add(g, "p", "_Arg", T=DataType.DT_BOOL, index=0)
    sw = add(g, "sw", "Switch", [x, p], T=I64)
    merge = add(g, "merge", "Merge", [(sw, 0), (sw, 1)], T=I64, N=2)
    retval(g, "out", merge, 0)
    retval(g, "index", (merge, 1), 1)
    executor = Executor(g, DEVICE)
    for name in ("sw", "merge"):
        executor.view.computes[executor.view.names.index(name)] = None  # never called
    value, index = _run_with(executor, 2, [np.bool_(pred)])
    assert value == 5 and index == taken and type(index) is np.int32


def test_switch_on_a_non_scalar_predicate_still_fails_naming_the_node() -> None:
    g = Graph()
    p = add(g, "p", "_Arg", T=DataType.DT_BOOL, index=0)
    retval(g, "out", (add(g, "sw", "Switch", [const(g, "x", 5), p], T=I64), 1), 0)
    with pytest.raises(InvalidArgumentError) as info:
        _run_with(Executor(g, DEVICE), 1, [np.array([True, False])])
    assert info.value.node_name == "sw"
    assert "must be a scalar" in info.value.message


def _loop_with_side_chain(g: Graph, parallel_iterations: int) -> list[Node]:
    """Counts i to 4; each iteration also runs an 8-node side chain off the loop variable
    that the next iteration does not depend on."""

    def body(n, b, inv):
        side = b[0]
        for k in range(1, 8):
            side = add(g, f"{n}/side_{k}", "_ExecTestId", [side])
        add(g, f"{n}/side_end", "_ExecTestSink", [side])
        return [add(g, f"{n}/i_next", "_ExecTestAdd", [b[0], inv[1]])]

    return while_loop(
        g,
        "loop",
        [const(g, "i0", 0)],
        [const(g, "limit", 4), const(g, "one", 1)],
        lambda n, m, inv: add(g, f"{n}/less", "_ExecTestLess", [m[0], inv[0]]),
        body,
        parallel_iterations,
    )


@pytest.mark.parametrize("parallel_iterations, lockstep", [(1, True), (10, False)])
def test_parallel_iterations_bounds_live_iterations(parallel_iterations, lockstep) -> None:
    g = Graph()
    retval(g, "i", _loop_with_side_chain(g, parallel_iterations)[0], 0)
    assert run(g) == [4]
    events = [t.split("/")[-1] for t in TRACE if t in ("loop/less", "loop/side_end")]
    # With one live iteration, iteration k's side chain ends before iteration k+1's
    # predicate runs; with ten, the next iteration's predicate overtakes it.
    assert (events == ["less", "side_end"] * 4 + ["less"]) is lockstep
    assert events.count("side_end") == 4


def test_nested_loops() -> None:
    """for i in 1..3: for j in 1..4: acc += i   -> acc = 4 * (1 + 2 + 3) = 24."""
    g = Graph()

    def outer_body(name, b, inv):
        i, acc = b
        _, acc_exit = while_loop(
            g,
            f"{name}/inner",
            [const_in(g, f"{name}/j0", 1, i), acc],
            [i, inv[1], inv[2]],
            lambda n, m, iv: add(g, f"{n}/less", "_ExecTestLess", [m[0], iv[1]]),
            lambda n, bb, iv: [
                add(g, f"{n}/j_next", "_ExecTestAdd", [bb[0], iv[2]]),
                add(g, f"{n}/acc_next", "_ExecTestAdd", [bb[1], iv[0]]),
            ],
        )
        return [add(g, f"{name}/i_next", "_ExecTestAdd", [i, inv[2]]), acc_exit]

    exits = while_loop(
        g,
        "outer",
        [const(g, "i0", 1), const(g, "acc0", 0)],
        [const(g, "four", 4), const(g, "five", 5), const(g, "one", 1)],
        lambda n, m, inv: add(g, f"{n}/less", "_ExecTestLess", [m[0], inv[0]]),
        outer_body,
    )
    retval(g, "i", exits[0], 0)
    retval(g, "acc", exits[1], 1)
    assert run(g, 2) == [4, 24]
    assert TRACE.count("outer/inner/acc_next") == 12


def const_in(g: Graph, name: str, value: int, anchor: Node) -> Node:
    """A constant inside a loop body: tied to the frame by a control edge (TF's pivot)."""
    return add(g, name, "_ExecTestConst", ctrl=[anchor], value=value)


def test_parallel_iterations_do_not_change_results() -> None:
    results = []
    for p in (1, 10):
        g = Graph()
        i_exit, s_exit = sum_loop(g, p)
        retval(g, "i", i_exit, 0)
        retval(g, "s", s_exit, 1)
        results.append(run(g, 2))
    assert results[0] == results[1] == [11, 55]


def test_loop_that_fails_mid_iteration_fails_the_step_cleanly() -> None:
    g = Graph()
    exits = while_loop(
        g,
        "loop",
        [const(g, "i0", 1)],
        [const(g, "limit", 100), const(g, "one", 1)],
        lambda n, m, inv: add(g, f"{n}/less", "_ExecTestLess", [m[0], inv[0]]),
        lambda n, b, inv: [
            add(
                g,
                f"{n}/check",
                "_ExecTestFail",
                [add(g, f"{n}/inc", "_ExecTestAdd", [b[0], inv[1]])],
                fail_at=5,
            )
        ],
    )
    retval(g, "i", exits[0], 0)
    step = new_step(1, rendezvous=LocalRendezvous())
    with pytest.raises(InvalidArgumentError) as info:
        run(g, step=step)  # run() has a timeout: a hang fails the test
    assert info.value.node_name == "loop/check"
    assert info.value.message == "loop/check: ValueError: boom at 5"
    assert TRACE.count("loop/check") == 4  # 2, 3, 4 passed; 5 failed


def test_loop_on_an_untaken_branch_is_dead_and_the_step_finishes() -> None:
    g = Graph()
    v = const(g, "x", 3)
    pred = add(g, "pred", "_ExecTestLess", [v, const(g, "zero", 0)])  # False: true side dead
    sw = add(g, "sw", "Switch", [v, pred], T=I64)
    exits = while_loop(
        g,
        "dead_loop",
        [add(g, "into_loop", "_ExecTestId", [(sw, 1)])],
        [const(g, "limit", 10), const(g, "one", 1)],
        lambda n, m, inv: add(g, f"{n}/less", "_ExecTestLess", [m[0], inv[0]]),
        lambda n, b, inv: [add(g, f"{n}/inc", "_ExecTestAdd", [b[0], inv[1]])],
    )
    merge = add(g, "merge", "Merge", [exits[0], (sw, 0)], T=I64, N=2)
    retval(g, "out", merge, 0)
    assert run(g) == [3]
    assert not any(t.startswith("dead_loop/") for t in TRACE)


def test_executor_is_reusable_across_steps() -> None:
    g = Graph()
    _, s_exit = sum_loop(g, 3)
    retval(g, "s", s_exit, 0)
    ex = Executor(g, DEVICE)
    for step_id in range(3):
        frame = CallFrame([], 1)
        ex.run(new_step(step_id, call_frame=frame), timeout=TIMEOUT)
        assert frame.retvals == [55]
    assert TRACE.count("sum/s_next") == 30


def test_send_recv_inside_loops_of_two_partitions_match_by_frame_and_iteration() -> None:
    """Partition A sends its loop variable every iteration; partition B runs the same
    frame and receives it: keys match only if both compute the same frame_id:iter_id."""
    from tests.common.test_executor import _transfer_attrs

    def counter(g: Graph, extra_vars, body_extra):
        return while_loop(
            g,
            "loop",
            [const(g, "i0", 1), *extra_vars],
            [const(g, "limit", 11), const(g, "one", 1)],
            lambda n, m, inv: add(g, f"{n}/less", "_ExecTestLess", [m[0], inv[0]]),
            lambda n, b, inv: (
                [add(g, f"{n}/i_next", "_ExecTestAdd", [b[0], inv[1]])] + body_extra(n, b)
            ),
        )

    sender = Graph()

    def send_body(n, b):
        add(sender, f"{n}/send", "_Send", [b[0]], **_transfer_attrs("i", "T"))
        return []  # no loop variable of its own

    counter(sender, [], send_body)
    receiver = Graph()

    def recv_body(n, b):
        got = add(
            receiver, f"{n}/recv", "_Recv", ctrl=[b[0]], **_transfer_attrs("i", "tensor_type")
        )
        return [add(receiver, f"{n}/acc_next", "_ExecTestAdd", [b[1], got])]

    exits = counter(receiver, [const(receiver, "acc0", 0)], recv_body)
    retval(receiver, "acc", exits[1], 0)
    step = new_step(1, rendezvous=LocalRendezvous(), call_frame=CallFrame([], 1))
    finished = threading.Event()
    errors: list = []

    def done(error) -> None:
        errors.append(error)
        if len(errors) == 2:
            finished.set()

    Executor(receiver, DEVICE).run_async(step, done)
    Executor(sender, DEVICE).run_async(step, done)
    assert finished.wait(TIMEOUT)
    assert errors == [None, None]
    assert step.call_frame.retvals == [55]
    assert TRACE.count("loop/acc_next") == 10


def test_loop_cond_and_control_trigger_run_without_their_kernels() -> None:
    # LoopCond forwards its scalar bool and ControlTrigger has no output: the executor
    # does both itself (a while loop runs one LoopCond per iteration), with the same results.
    g = Graph()
    i_exit, s_exit = sum_loop(g)
    trigger = add(g, "trigger", "ControlTrigger", ctrl=[i_exit])
    retval(g, "i", add(g, "i_out", "_ExecTestId", [i_exit], ctrl=[trigger]), 0)
    retval(g, "s", s_exit, 1)
    executor = Executor(g, DEVICE)
    view = executor.view

    def not_called(ctx, inputs):
        raise AssertionError(f"{ctx.node_name}'s kernel ran")

    replaced = [i for i, nd in enumerate(view.nodes) if nd.op in ("LoopCond", "ControlTrigger")]
    assert len(replaced) == 2 and all(view.trivial[i] for i in replaced)
    for i in replaced:
        view.computes[i] = not_called
    assert _run_with(executor, 2) == [11, 55]


def test_loop_cond_on_a_non_scalar_input_still_fails_naming_the_node() -> None:
    g = Graph()
    p = add(g, "p", "_Arg", T=DataType.DT_BOOL, index=0)
    retval(g, "out", add(g, "cond", "LoopCond", [p]), 0)
    with pytest.raises(InvalidArgumentError) as info:
        _run_with(Executor(g, DEVICE), 1, [np.array([True, False])])
    assert info.value.node_name == "cond"
    assert "must be a scalar" in info.value.message
