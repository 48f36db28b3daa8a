"""Client, gradients: TF's manip_grad — Roll's gradient rolls the incoming gradient back
by the negated shift on the same axes."""

from __future__ import annotations

from typing import Any

from client.framework.gradient_registry import RegisterGradient
from client.ops import manip_search_ops


@RegisterGradient("Roll")
def _roll_grad(op: Any, grad: Any) -> Any:
    shift, axis = op.inputs[1], op.inputs[2]
    return [manip_search_ops.roll(grad, -shift, axis), None, None]
