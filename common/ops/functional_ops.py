"""Ops, functional control flow and calls: While/If/Case (and Stateless variants),
PartitionedCall/StatefulPartitionedCall, and nodes whose op is a library function
(TensorFlow's functional_ops.cc and the function-call kernel).

Every kernel here is async: it runs its bodies through `ctx.step.function_runtime`
(common.function_runtime.FunctionRuntime) and calls `done` when the last body finished,
so no thread blocks waiting on a body. Loops are driven by a trampoline (`_drive`): a
body that completes inline returns to the driver's loop instead of recursing, so a
10,000-iteration While uses constant stack. A step without a function runtime (a worker
that did not set one) gets a kernel-local runtime over the graph's library that runs
bodies on the caller's device. Kernels are stateless apart from that lazily built
runtime: safe from any thread.
"""

from __future__ import annotations

import threading
from collections.abc import Generator
from typing import Any

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.registry import (
    ComputeFn,
    KernelConstruction,
    OpKernelContext,
    register_kernel,
    register_op,
)

# The kernel every node whose op names a library function gets (see graph_view).
FUNCTION_CALL_KERNEL = "_FunctionCall"

# -- signatures (TensorFlow's REGISTER_OP) -----------------------------------------------------
_WHILE_ATTRS = [
    "T: list(type) >= 0",
    "cond: func",
    "body: func",
    "output_shapes: list(shape) = []",
    "parallel_iterations: int = 10",
]
register_op("While", inputs=["input: T"], outputs=["output: T"], attrs=_WHILE_ATTRS, stateful=True)
register_op("StatelessWhile", inputs=["input: T"], outputs=["output: T"], attrs=_WHILE_ATTRS)
_IF_ATTRS = [
    "Tcond: type",
    "Tin: list(type) >= 0",
    "Tout: list(type) >= 0",
    "then_branch: func",
    "else_branch: func",
    "output_shapes: list(shape) = []",
]
register_op(
    "If",
    inputs=["cond: Tcond", "input: Tin"],
    outputs=["output: Tout"],
    attrs=_IF_ATTRS,
    stateful=True,
)
register_op(
    "StatelessIf", inputs=["cond: Tcond", "input: Tin"], outputs=["output: Tout"], attrs=_IF_ATTRS
)
_CASE_ATTRS = [
    "Tin: list(type) >= 0",
    "Tout: list(type) >= 0",
    "branches: list(func) >= 1",
    "output_shapes: list(shape) = []",
]
register_op(
    "Case",
    inputs=["branch_index: int32", "input: Tin"],
    outputs=["output: Tout"],
    attrs=_CASE_ATTRS,
    stateful=True,
)
register_op(
    "StatelessCase",
    inputs=["branch_index: int32", "input: Tin"],
    outputs=["output: Tout"],
    attrs=_CASE_ATTRS,
)
_CALL_ATTRS = [
    "Tin: list(type) >= 0",
    "Tout: list(type) >= 0",
    "f: func",
    "config: string = ''",
    "config_proto: string = ''",
    "executor_type: string = ''",
]
register_op("PartitionedCall", inputs=["args: Tin"], outputs=["output: Tout"], attrs=_CALL_ATTRS)
register_op(
    "StatefulPartitionedCall",
    inputs=["args: Tin"],
    outputs=["output: Tout"],
    attrs=_CALL_ATTRS,
    stateful=True,
)


# -- the driver -----------------------------------------------------------------------------------
Call = tuple[str, dict, list]  # (function name, attrs, args)
Calls = Generator[Call, list, list]


def _drive(calls: Calls, runtime: Any, ctx: OpKernelContext, done: Any) -> None:
    """Run the function calls `calls` yields, one after another, sending each call's
    outputs back in; the generator's return value is the kernel's outputs. A call that
    completes inline continues this loop (no recursion); one that completes later
    resumes the loop on the thread that completed it."""

    def resume(value: list | None, error: BaseException | None) -> None:
        while True:
            try:
                if error is not None:
                    call = calls.throw(error)
                else:  # value None: the first resume primes the generator
                    call = next(calls) if value is None else calls.send(value)
            except StopIteration as stop:
                done(stop.value, None)
                return
            except BaseException as e:  # noqa: BLE001  (a failed body fails the node)
                done(None, e)
                return
            result = _call(runtime, call, ctx, resume)
            if result is None:
                return  # completes later, on another thread
            value, error = result

    resume(None, None)


def _call(runtime: Any, call: Call, ctx: OpKernelContext, later: Any) -> tuple | None:
    """Start one call: its (outputs, error) if it completed inline, else None and
    `later(outputs, error)` is called when it completes."""
    lock = threading.Lock()
    inline: list[tuple[Any, Any]] = []
    pending = [True]

    def called(outputs: Any, err: Any) -> None:
        with lock:
            if pending[0]:
                inline.append((outputs, err))
                return
        later(outputs, err)

    name, attrs, args = call
    runtime.run_async(name, attrs, args, ctx.step, called)
    with lock:
        pending[0] = False
        return inline[0] if inline else None


def _async_kernel(kc: KernelConstruction, body: Any) -> ComputeFn:
    """An async compute running the generator `body(ctx, inputs)` through `_drive`."""
    from common.function_runtime import LazyRuntime  # it imports the kernel registry

    local = LazyRuntime(kc.flib)

    def compute(ctx: OpKernelContext, inputs: list, done: Any) -> None:
        _drive(body(ctx, inputs), local.get(ctx), ctx, done)

    return compute


def to_bool(value: Any) -> bool:
    """TF's ToBool for a predicate tensor: a scalar's truth, else "has elements"."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        if arr.dtype == object:
            return len(arr.item()) > 0
        return bool(arr)
    return arr.size > 0


def _func(kc: KernelConstruction, name: str) -> tuple[str, dict]:
    f = kc.attr(name)
    return _name_attrs(f)


def _name_attrs(f: Any) -> tuple[str, dict]:
    if isinstance(f, str):
        return f, {}
    return f.name, dict(f.attrs)


def _check_count(ctx: OpKernelContext, what: str, got: list, want: int) -> None:
    if len(got) != want:
        raise InvalidArgumentError(
            f"{ctx.node_name}: {what} returned {len(got)} values, expected {want}", ctx.node_name
        )


# -- kernels ---------------------------------------------------------------------------------
def _while_factory(kc: KernelConstruction) -> ComputeFn:
    cond, cond_attrs = _func(kc, "cond")
    body, body_attrs = _func(kc, "body")
    n = len(kc.input_types)

    def loop(ctx: OpKernelContext, inputs: list) -> Calls:
        values = list(inputs)
        while True:
            pred = yield (cond, cond_attrs, values)
            if not pred:
                raise InvalidArgumentError(
                    f"{ctx.node_name}: cond function {cond} returned no value", ctx.node_name
                )
            if not to_bool(pred[0]):
                return values
            values = yield (body, body_attrs, values)
            _check_count(ctx, f"body function {body}", values, n)

    return _async_kernel(kc, loop)


def _if_factory(kc: KernelConstruction) -> ComputeFn:
    then_branch = _func(kc, "then_branch")
    else_branch = _func(kc, "else_branch")
    n = len(kc.output_types)

    def branch(ctx: OpKernelContext, inputs: list) -> Calls:
        name, attrs = then_branch if to_bool(inputs[0]) else else_branch
        outputs = yield (name, attrs, list(inputs[1:]))
        _check_count(ctx, f"branch function {name}", outputs, n)
        return outputs

    return _async_kernel(kc, branch)


def _case_factory(kc: KernelConstruction) -> ComputeFn:
    branches = [_name_attrs(f) for f in kc.attr("branches")]
    n = len(kc.output_types)

    def branch(ctx: OpKernelContext, inputs: list) -> Calls:
        index = int(np.asarray(inputs[0]))
        if not 0 <= index < len(branches):  # TF: out of range runs the last (default)
            index = len(branches) - 1
        name, attrs = branches[index]
        outputs = yield (name, attrs, list(inputs[1:]))
        _check_count(ctx, f"branch function {name}", outputs, n)
        return outputs

    return _async_kernel(kc, branch)


def _call_factory(kc: KernelConstruction) -> ComputeFn:
    name, attrs = _func(kc, "f")
    n = len(kc.output_types)

    def call(ctx: OpKernelContext, inputs: list) -> Calls:
        outputs = yield (name, attrs, list(inputs))
        _check_count(ctx, f"function {name}", outputs, n)
        return outputs

    return _async_kernel(kc, call)


def function_call_factory(kc: KernelConstruction) -> ComputeFn:
    """A node whose op is library function `kc.op`; its attrs instantiate the function."""
    name = kc.op
    attrs = {k: v for k, v in kc.attrs.items() if not k.startswith("_")}
    n = len(kc.output_types)

    def call(ctx: OpKernelContext, inputs: list) -> Calls:
        outputs = yield (name, attrs, list(inputs))
        _check_count(ctx, f"function {name}", outputs, n)
        return outputs

    return _async_kernel(kc, call)


for _op in ("While", "StatelessWhile"):
    register_kernel(_op, is_async=True)(_while_factory)
for _op in ("If", "StatelessIf"):
    register_kernel(_op, is_async=True)(_if_factory)
for _op in ("Case", "StatelessCase"):
    register_kernel(_op, is_async=True)(_case_factory)
for _op in ("PartitionedCall", "StatefulPartitionedCall"):
    register_kernel(_op, is_async=True)(_call_factory)

# The gradient of function `f` (common.symbolic_gradient builds its body when the
# runtime instantiates the op name itself, as TensorFlow's function runtime does).
register_op(
    "SymbolicGradient",
    inputs=["input: Tin"],
    outputs=["output: Tout"],
    attrs=["Tin: list(type) >= 1", "Tout: list(type) >= 1", "f: func"],
)


@register_kernel("SymbolicGradient", is_async=True)
def _symbolic_gradient_factory(kc: KernelConstruction) -> ComputeFn:
    attrs = {k: v for k, v in kc.attrs.items() if not k.startswith("_")}
    n = len(kc.output_types)

    def call(ctx: OpKernelContext, inputs: list) -> Calls:
        outputs = yield ("SymbolicGradient", attrs, list(inputs))
        _check_count(ctx, "SymbolicGradient", outputs, n)
        return outputs

    return _async_kernel(kc, call)


register_kernel(FUNCTION_CALL_KERNEL, is_async=True)(function_call_factory)
