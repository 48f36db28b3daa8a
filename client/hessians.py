"""Client, graph building: TF1's tf.hessians as TensorFlow's gradients_impl builds it:
the first gradients, then per x a v1 while loop whose body takes the gradient of one
element of the flattened first gradient (a gradient of a gradient, built inside the
loop) and writes it to a TensorArray, stacked and reshaped to x.shape + x.shape. Pure
graph building; not thread-safe (as a Graph)."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework.op_builder import constant
from client.gradients import gradients
from client.ops import array_ops
from client.ops import control_flow_ops as cfo
from client.ops.tensor_array_ops import TensorArray


def hessians(
    ys: Any,
    xs: Any,
    name: str = "hessians",
    colocate_gradients_with_ops: bool = False,
    gate_gradients: bool = False,
    aggregation_method: Any = None,
) -> list[Any]:
    """The Hessian of sum(ys) for each x in xs (`name` is unused, as in TF)."""
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    kwargs = {
        "colocate_gradients_with_ops": colocate_gradients_with_ops,
        "gate_gradients": gate_gradients,
        "aggregation_method": aggregation_method,
    }
    result = []
    for gradient, x in zip(gradients(ys, xs, **kwargs), xs):
        gradient = array_ops.reshape(gradient, [-1])
        n = array_ops.size(x)
        loop_vars = [constant(0, dtypes.int32), TensorArray(x.dtype, n)]

        def body(j: Any, ta: Any, gradient: Any = gradient, x: Any = x) -> Any:
            return j + 1, ta.write(j, gradients(gradient[j], x)[0])

        def cond(j: Any, _: Any, n: Any = n) -> Any:
            return j < n

        _, hessian = cfo.while_loop(cond, body, loop_vars)
        shape = array_ops.shape(x)
        result.append(array_ops.reshape(hessian.stack(), array_ops.concat((shape, shape), 0)))
    return result
