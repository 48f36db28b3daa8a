"""Client, graph building: tf.math.cumulative_logsumexp with TensorFlow's node names, and
its gradient (TF's math_grad _CumulativeLogsumexpGrad: the incoming gradient split into
positive and negative parts, each scanned in log space in the opposite direction)."""

from __future__ import annotations

from typing import Any

from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.gradient_registry import RegisterGradient
from client.framework.op_builder import apply_op, convert_to_tensor
from client.ops import array_ops, math_ops


def cumulative_logsumexp(
    x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Any:
    with _ops.name_scope(name, "CumulativeLogsumexp", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        attrs = {"exclusive": exclusive, "reverse": reverse}
        return apply_op("CumulativeLogsumexp", [x, axis], attrs, scope).outputs[0]


@RegisterGradient("CumulativeLogsumexp")
def _cumulative_logsumexp_grad(op: Any, grad: Any) -> Any:
    x, axis = op.inputs[0], op.inputs[1]
    scan = op.outputs[0]
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    lowest = grad.dtype.min
    log_grad_positive = array_ops.where_v2(math_ops.greater(grad, 0), math_ops.log(grad), lowest)
    log_grad_negative = array_ops.where_v2(math_ops.less(grad, 0), math_ops.log(-grad), lowest)

    def back(log_grad: Any) -> Any:
        rescan = cumulative_logsumexp(
            log_grad - scan, axis=axis, reverse=not reverse, exclusive=exclusive
        )
        return math_ops.exp(rescan + x)

    return [back(log_grad_positive) - back(log_grad_negative), None]


shape_fns.SHAPE_FNS["CumulativeLogsumexp"] = lambda op: [op.inputs[0].shape]
