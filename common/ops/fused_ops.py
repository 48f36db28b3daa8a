"""Ops: _FusedElementwise, the kernel of a fused elementwise cluster
(common.optimizer.fuse_elementwise writes the `program`; its docstring has the format).

At kernel construction the program is compiled, once per distinct program, to a Python
function of numpy operators: `i0 + i1`, `-i0`, `i0 * i0` ... The operators compute what
each member's own kernel computes (IEEE float32/float64, numpy broadcasting), so results
are those of the unfused graph. 0-d inputs are passed as numpy scalars (a scalar chain
runs at numpy-scalar speed, ~0.1 us a step, instead of an executor node per op).
Stateless and thread-safe.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

_EXPR = {
    "AddV2": "{0} + {1}",
    "Add": "{0} + {1}",
    "Sub": "{0} - {1}",
    "Mul": "{0} * {1}",
    "RealDiv": "{0} / {1}",
    "Neg": "-{0}",
    "Square": "{0} * {0}",
}
_ARITY = {"Neg": 1, "Square": 1}


@functools.lru_cache(maxsize=256)
def compile_program(program: tuple[str, ...], num_inputs: int) -> Callable[..., Any]:
    """The program as `f(i0, ..., iN-1) -> result`; InvalidArgumentError if malformed."""
    lines = [f"def fused({', '.join(f'i{k}' for k in range(num_inputs))}):"]
    for k, step in enumerate(program):
        op, *operands = step.split()
        expr = _EXPR.get(op)
        ok = expr is not None and all(
            (o[0] == "i" and o[1:].isdigit() and int(o[1:]) < num_inputs)
            or (o[0] == "t" and o[1:].isdigit() and int(o[1:]) < k)
            for o in operands
        )
        if expr is None or not ok or len(operands) != _ARITY.get(op, 2):
            raise InvalidArgumentError(f"_FusedElementwise: bad program step {k}: '{step}'")
        lines.append(f"    t{k} = {expr.format(*operands)}")
    lines.append(f"    return t{len(program) - 1}")
    scope: dict[str, Any] = {}
    exec("\n".join(lines), scope)  # noqa: S102 - source built above from a checked program
    fn: Callable[..., Any] = scope["fused"]
    return fn


def _fused(kc: KernelConstruction) -> Callable:
    program = tuple(kc.attr("program"))
    if not program:
        raise InvalidArgumentError("_FusedElementwise: empty program")
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
        except ValueError as exc:  # numpy: shapes that do not broadcast
            raise InvalidArgumentError(f"Incompatible shapes: {exc}") from None
        return [z if type(z) is scalar_t else mu.as_type(z, out)]

    return compute


register_op(
    "_FusedElementwise",
    ["inputs: N * T"],
    ["output: T"],
    ["T: {float, double}", "N: int >= 1", "program: list(string)"],
)
register_kernel("_FusedElementwise")(_fused)
