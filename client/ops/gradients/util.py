"""Client, gradients: helpers the gradient functions of every family share."""

from __future__ import annotations

from typing import Any

from client.framework.op_builder import apply_op
from client.ops import array_ops, math_ops


def op1(
    op_type: str, inputs: list[Any], attrs: dict[str, Any] | None = None, name: str | None = None
) -> Any:
    """Adds one op and returns its first output."""
    return apply_op(op_type, inputs, attrs or {}, name).outputs[0]


def attrs_of(op: Any, *names: str) -> dict[str, Any]:
    """The named attrs of `op`, strings decoded, to pass on to its gradient op."""
    out = {}
    for n in names:
        v = op.get_attr(n)
        out[n] = v.decode() if isinstance(v, bytes) else v
    return out


def reduce_to(grad: Any, r: Any, s: Any) -> Any:
    """Sums `grad` over the broadcast axes `r` and reshapes it to the input's shape `s`."""
    return array_ops.reshape(math_ops.reduce_sum(grad, r), s)
