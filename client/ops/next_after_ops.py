"""Client, graph building: tf.math.nextafter with TensorFlow's node names, and TF's
_NextAfterGrad (1 for x1, 0 for x2, each summed over its broadcast axes)."""

from __future__ import annotations

from typing import Any

from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.gradient_registry import RegisterGradient
from client.framework.op_builder import apply_op
from client.ops import array_ops, math_ops


def nextafter(x1: Any, x2: Any, name: str | None = None) -> Any:
    return apply_op("NextAfter", [x1, x2], {}, name).outputs[0]


@RegisterGradient("NextAfter")
def _next_after_grad(op: Any, grad: Any) -> Any:
    x1, x2 = op.inputs[0], op.inputs[1]
    s_x1, s_x2 = array_ops.shape(x1), array_ops.shape(x2)
    r_x1, r_x2 = apply_op("BroadcastGradientArgs", [s_x1, s_x2]).outputs
    with _ops.control_dependencies([grad]):
        partial_x1 = array_ops.ones(s_x1, dtype=x1.dtype)
        partial_x2 = array_ops.zeros(s_x2, dtype=x2.dtype)
        return [
            array_ops.reshape(math_ops.reduce_sum(partial_x1 * grad, r_x1), s_x1),
            array_ops.reshape(math_ops.reduce_sum(partial_x2 * grad, r_x2), s_x2),
        ]


shape_fns.SHAPE_FNS["NextAfter"] = lambda op: [
    shape_fns.broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape)
]
