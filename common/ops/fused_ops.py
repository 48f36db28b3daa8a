"""Ops: _FusedElementwise, the kernel of a fused elementwise cluster
(common.optimizer.fuse_elementwise writes the `program`; its docstring has the format).

At kernel construction the program is compiled, once per distinct program, to a Python
function of numpy operators: `i0 + i1`, `-i0`, `_tanh(i0)` ... Each step calls what the
member's own kernel calls (the same operator or ufunc, or the very function its kernel
uses: cwise_ops._sigmoid, grad_ops._tanh_grad ...), on IEEE float32/float64 with numpy
broadcasting, so results are those of the unfused graph bit for bit. 0-d inputs are
passed as numpy scalars (a scalar chain runs at numpy-scalar speed, ~0.1 us a step,
instead of an executor node per op).

Errors: the generated function checks what the members' kernels check and it would not
(the activation gradients' equal shapes); when it fails, the program is run again step
by step with each member's own kernel, and the first member to fail raises its own
error, attributed to that member's node (attr `names`), as in the unfused graph.
Stateless and thread-safe.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops import cwise_ops, grad_ops, nn_ops
from common.ops import math_util as mu
from common.ops.registry import (
    KernelConstruction,
    OpKernelContext,
    find_kernel,
    register_kernel,
    register_op,
)

# op -> one step's expression; "{k}" is operand k.
_EXPR = {
    "AddV2": "{0} + {1}",
    "Add": "{0} + {1}",
    "Sub": "{0} - {1}",
    "Mul": "{0} * {1}",
    "RealDiv": "{0} / {1}",
    "Maximum": "_maximum({0}, {1})",
    "Minimum": "_minimum({0}, {1})",
    "SquaredDifference": "_squared_difference({0}, {1})",
    "Neg": "-{0}",
    "Square": "{0} * {0}",
    "Sigmoid": "_sigmoid({0})",
    "Tanh": "_tanh({0})",
    "Exp": "_exp({0})",
    "Log": "_log({0})",
    "Reciprocal": "_reciprocal({0})",
    "Relu": "_relu({0}, None)",
    "SigmoidGrad": "_sigmoid_grad({0}, {1}, None)",
    "TanhGrad": "_tanh_grad({0}, {1}, None)",
    "ReluGrad": "_relu_grad({0}, {1}, None)",
}
UNARY = frozenset({"Neg", "Square", "Sigmoid", "Tanh", "Exp", "Log", "Reciprocal", "Relu"})
# Kernels (grad_ops._binary_grad) that refuse operands of different shapes.
_SAME_SHAPE = frozenset({"SigmoidGrad", "TanhGrad", "ReluGrad"})
FUSIBLE_OPS = frozenset(_EXPR)

# What the generated code calls: the members' kernels' own functions.
_SCOPE: dict[str, Any] = {
    "_maximum": np.maximum,
    "_minimum": np.minimum,
    "_squared_difference": cwise_ops._squared_difference,
    "_sigmoid": cwise_ops._sigmoid,
    "_tanh": np.tanh,
    "_exp": np.exp,
    "_log": np.log,
    "_reciprocal": cwise_ops._reciprocal,
    "_relu": nn_ops._relu,
    "_sigmoid_grad": grad_ops._sigmoid_grad,
    "_tanh_grad": grad_ops._tanh_grad,
    "_relu_grad": grad_ops._relu_grad,
}


class _Unfused(Exception):
    """The generated function met operands a member's kernel refuses."""


def _is_index(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _parse(program: tuple[str, ...], num_inputs: int) -> list[tuple[str, list[str]]]:
    steps = []
    for k, step in enumerate(program):
        op, *operands = step.split()
        # ASCII digits only: str.isdigit also takes "²" (int() refuses it) and "١"
        # (int() takes it, but "i١" is another Python name than "i1").
        ok = op in _EXPR and all(
            (o[0] == "i" and _is_index(o[1:]) and int(o[1:]) < num_inputs)
            or (o[0] == "t" and _is_index(o[1:]) and int(o[1:]) < k)
            for o in operands
        )
        if not ok or len(operands) != (1 if op in UNARY else 2):
            raise InvalidArgumentError(f"_FusedElementwise: bad program step {k}: '{step}'")
        steps.append((op, operands))
    return steps


@functools.lru_cache(maxsize=256)
def compile_program(program: tuple[str, ...], num_inputs: int) -> Callable[..., Any]:
    """The program as `f(i0, ..., iN-1) -> result`; InvalidArgumentError if malformed."""
    lines = [f"def fused({', '.join(f'i{k}' for k in range(num_inputs))}):"]
    for k, (op, operands) in enumerate(_parse(program, num_inputs)):
        if op in _SAME_SHAPE:
            lines.append(f"    if {operands[0]}.shape != {operands[1]}.shape: raise _Unfused")
        lines.append(f"    t{k} = {_EXPR[op].format(*operands)}")
    lines.append(f"    return t{len(program) - 1}")
    scope: dict[str, Any] = {**_SCOPE, "_Unfused": _Unfused}
    exec("\n".join(lines), scope)  # noqa: S102 - source built above from a checked program
    fn: Callable[..., Any] = scope["fused"]
    return fn


def _run_unfused(
    kc: KernelConstruction, names: list[str], ctx: OpKernelContext, args: list
) -> None:
    """Run the program with each member's own kernel; raise the first member's error."""
    from common.executor import node_error  # only on this error path: executor imports ops

    t = DataType(kc.attr("T"))
    steps = _parse(tuple(kc.attr("program")), len(args))
    values: list[Any] = []
    for k, (op, operands) in enumerate(steps):
        name = names[k] if k < len(names) else kc.node_name
        member = KernelConstruction(
            name, op, {"T": t}, (t,) * len(operands), (t,), kc.device, kc.device_type
        )
        kernel = find_kernel(op, kc.device_type)
        assert kernel is not None, op  # every fusible op has a CPU kernel
        ins = [args[int(o[1:])] if o[0] == "i" else values[int(o[1:])] for o in operands]
        try:
            values.append(kernel.factory(member)(ctx, ins)[0])
        except Exception as exc:  # noqa: BLE001 - the member's error, as the executor reports it
            raise node_error(name, exc) from None


def _fused(kc: KernelConstruction) -> Callable:
    program = tuple(kc.attr("program"))
    if not program:
        raise InvalidArgumentError("_FusedElementwise: empty program")
    names = list(kc.attrs.get("names") or ())
    out = mu.np_type(kc.output_types[0])
    scalar_t = out.type
    fn = compile_program(program, len(kc.input_types))

    def compute(ctx, inputs: list) -> list:
        args = []
        for x in inputs:
            if type(x) is np.ndarray and x.shape == () and x.dtype.type is scalar_t:
                x = x[()]
            elif type(x) is not scalar_t:
                x = np.asarray(x)
                if x.dtype != out:
                    x = x.astype(out)
            args.append(x)
        try:
            if mu.fp_errors_ignored():
                z = fn(*args)
            else:
                with np.errstate(all="ignore"):
                    z = fn(*args)
        except (ValueError, _Unfused):  # shapes a member refuses: its own error
            _run_unfused(kc, names, ctx, args)
            raise InvalidArgumentError(
                f"_FusedElementwise: operands of shapes {[np.shape(a) for a in args]}"
            ) from None
        return [z if type(z) is scalar_t else mu.as_type(z, out)]

    return compute


register_op(
    "_FusedElementwise",
    ["inputs: N * T"],
    ["output: T"],
    ["T: {float, double}", "N: int >= 1", "program: list(string)", "names: list(string) = []"],
)
register_kernel("_FusedElementwise")(_fused)
