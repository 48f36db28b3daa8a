"""Client, graph building: N-d scatters into tensors as tensorflow.compat.v1 builds them —
tf.scatter_nd, tf.tensor_scatter_nd_update/add/sub/max/min (and TF1's tensor_scatter_update/
add/sub), and their gradients (TensorFlow's array_grad.py). The variable forms
(tf.scatter_nd_update/add/sub) are in client.ops.state_ops."""

from __future__ import annotations

from typing import Any

from client.framework import shape_fns
from client.framework.gradient_registry import RegisterGradient
from client.framework.op_builder import apply_op
from client.ops import array_ops, math_ops


def _gen(op_type: str, arg_names: tuple[str, ...]):
    def fn(*args: Any, name: str | None = None, **kwargs: Any) -> Any:
        policy = kwargs.pop("bad_indices_policy", "")
        values = list(args) + [kwargs.pop(a) for a in arg_names[len(args) :]]
        if kwargs:
            raise TypeError(f"{op_type}: unexpected arguments {sorted(kwargs)}")
        attrs = {"bad_indices_policy": policy}
        return apply_op(op_type, values, attrs, name).outputs[0]

    fn.__name__ = op_type
    return fn


_TENSOR_ARGS = ("tensor", "indices", "updates")
scatter_nd = _gen("ScatterNd", ("indices", "updates", "shape"))
tensor_scatter_nd_update = tensor_scatter_update = _gen("TensorScatterUpdate", _TENSOR_ARGS)
tensor_scatter_nd_add = tensor_scatter_add = _gen("TensorScatterAdd", _TENSOR_ARGS)
tensor_scatter_nd_sub = tensor_scatter_sub = _gen("TensorScatterSub", _TENSOR_ARGS)
tensor_scatter_nd_max = _gen("TensorScatterMax", _TENSOR_ARGS)
tensor_scatter_nd_min = _gen("TensorScatterMin", _TENSOR_ARGS)


def _shape_of_input(op: Any) -> list[Any]:
    """The output of a scatter into a tensor has that tensor's shape."""
    return [op.inputs[0].shape]


for _op_type in (
    "TensorScatterUpdate",
    "TensorScatterAdd",
    "TensorScatterSub",
    "TensorScatterMax",
    "TensorScatterMin",
    "ScatterNdNonAliasingAdd",
    "InplaceUpdate",
    "InplaceAdd",
    "InplaceSub",
):
    shape_fns.SHAPE_FNS.setdefault(_op_type, _shape_of_input)


def _gather_nd(params: Any, indices: Any, bad_indices_policy: str = "") -> Any:
    """TF's array_ops.gather_nd (batch_dims=0): one GatherNd."""
    attrs = {"bad_indices_policy": bad_indices_policy}
    return apply_op("GatherNd", [params, indices], attrs).outputs[0]


@RegisterGradient("ScatterNd")
def _scatter_nd_grad(op: Any, grad: Any) -> Any:
    return [None, _gather_nd(grad, op.inputs[0]), None]


@RegisterGradient("TensorScatterUpdate")
def _tensor_scatter_update_grad(op: Any, grad: Any) -> Any:
    indices = op.inputs[1]
    updates_grad = _gather_nd(grad, indices)
    tensor_grad = tensor_scatter_update(
        array_ops.identity(grad),
        indices,
        array_ops.zeros_like(op.inputs[2], dtype=grad.dtype),
    )
    return [tensor_grad, None, updates_grad]


@RegisterGradient("TensorScatterAdd")
def _tensor_scatter_add_grad(op: Any, grad: Any) -> Any:
    updates_grad = _gather_nd(grad, op.inputs[1])
    return [array_ops.identity(grad), None, updates_grad]


@RegisterGradient("TensorScatterSub")
def _tensor_scatter_sub_grad(op: Any, grad: Any) -> Any:
    updates_grad = _gather_nd(grad, op.inputs[1])
    return [array_ops.identity(grad), None, -updates_grad]


@RegisterGradient("ScatterNdNonAliasingAdd")
def _scatter_nd_non_aliasing_add_grad(op: Any, grad: Any) -> Any:
    return [grad, None, _gather_nd(grad, op.inputs[1])]


def _tensor_scatter_min_or_max_grad(op: Any, grad: Any) -> Any:
    """TF's _TensorScatterMinOrMaxGrad: the gradient is split between the tensor's element
    and the updates that all reach the extreme value."""
    indices, x, y, output = op.inputs[1], op.inputs[0], op.inputs[2], op.outputs[0]
    x_indicators = math_ops.cast(math_ops.equal(x, output), grad.dtype)
    policy = op.get_attr("bad_indices_policy")
    y_output = _gather_nd(output, indices, policy)
    y_indicators = math_ops.cast(math_ops.equal(y, y_output), grad.dtype)
    ys_indicators = scatter_nd(
        indices,
        y_indicators,
        array_ops.shape(x, out_type=indices.dtype),
        bad_indices_policy=policy,
    )
    indicators = x_indicators + ys_indicators  # every element is >= 1
    x_grad = grad * x_indicators / indicators
    y_grad = _gather_nd(grad / indicators, indices, policy) * y_indicators
    return [x_grad, None, y_grad]


RegisterGradient("TensorScatterMax")(_tensor_scatter_min_or_max_grad)
RegisterGradient("TensorScatterMin")(_tensor_scatter_min_or_max_grad)
