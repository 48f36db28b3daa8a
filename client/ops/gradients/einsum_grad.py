"""Client, gradients: Einsum (TensorFlow's _EinsumGrad of linalg_grad.py, node for node):
each input's gradient is an Einsum of the output gradient with the other input, summed
over the labels only that input has and over broadcast batch dims."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework.gradient_registry import RegisterGradient
from client.framework.op_builder import apply_op, convert_to_tensor
from client.ops import array_ops, math_ops
from client.ops.einsum_ops import ELLIPSIS, einsum_op
from client.ops.gradients.math_grad import _reduced_shape
from client.ops.linalg_norm_ops import conj


def _axis_from_label(subscripts: str, label: str) -> int | None:
    splits = subscripts.split(ELLIPSIS)
    index = splits[0].find(label)
    if index != -1:
        return index
    if len(splits) < 2:
        return None
    index = splits[1].find(label)
    if index != -1:
        return index - len(splits[1])
    return None


def _bcast_subshape(subscripts: str) -> tuple[int, int | None]:
    start = subscripts.find(ELLIPSIS)
    if start == -1:
        return 0, 0
    remaining = len(subscripts) - (start + len(ELLIPSIS))
    return start, (-remaining if remaining > 0 else None)


def _reduced_subscripts(
    reduced_label_set: set[str], input_shape: Any, subscripts: str
) -> tuple[str, Any, list[Any]]:
    reduced_subs = "".join(list(reduced_label_set))
    reduced_axes = [_axis_from_label(subscripts, s) for s in reduced_subs]
    reduced_dims = array_ops.stack([input_shape[ax] for ax in reduced_axes])
    return reduced_subs, reduced_dims, reduced_axes


def _grad_reduced(
    output_grad: Any,
    output_subs: str,
    input_subs: str,
    input_shape: Any,
    reduced_label_set: set[str],
) -> Any:
    reduced_subs, reduced_dims, reduced_axes = _reduced_subscripts(
        reduced_label_set, input_shape, input_subs
    )
    has_repeated_labels = len(set(input_subs)) + len(set(output_subs)) < len(input_subs) + len(
        output_subs
    )
    input_subs_without_reduced = "".join(s for s in input_subs if s not in reduced_label_set)
    if not has_repeated_labels and input_subs_without_reduced == output_subs:
        reduced_shape = _reduced_shape(input_shape, convert_to_tensor(reduced_axes))
        return array_ops.broadcast_to(array_ops.reshape(output_grad, reduced_shape), input_shape)
    grad_shape_with_reduced = array_ops.concat([reduced_dims, array_ops.shape(output_grad)], axis=0)
    reduced_shape = array_ops.concat(
        [
            array_ops.ones(len(reduced_label_set), dtype=dtypes.int32),
            array_ops.shape(output_grad),
        ],
        axis=0,
    )
    broadcasted = array_ops.broadcast_to(
        array_ops.reshape(output_grad, reduced_shape), grad_shape_with_reduced
    )
    return einsum_op([broadcasted], f"{reduced_subs + output_subs}->{input_subs}")


def _grad_wrt(
    output_grad: Any,
    other_operand: Any,
    input_shape: Any,
    input_subs: str,
    other_subs: str,
    output_subs: str,
) -> Any:
    reduced_label_set = set(input_subs).difference(set(output_subs + other_subs + "."))
    left_subs = "".join(s for s in input_subs if s not in reduced_label_set)
    grad_reduced = einsum_op(
        [output_grad, other_operand], f"{output_subs},{other_subs}->{left_subs}"
    )
    if not reduced_label_set:
        return grad_reduced
    return _grad_reduced(grad_reduced, left_subs, input_subs, input_shape, reduced_label_set)


@RegisterGradient("Einsum")
def _einsum_grad(op: Any, grad: Any) -> Any:
    equation = op.get_attr("equation")
    if isinstance(equation, bytes):
        equation = equation.decode()
    input_subs, output_subs = equation.split("->")
    if len(op.inputs) == 1:
        input_shape = array_ops.shape(op.inputs[0])
        reduced_label_set = set(input_subs).difference(set(output_subs + ELLIPSIS))
        if not reduced_label_set:
            return einsum_op([grad], f"{output_subs}->{input_subs}")
        return _grad_reduced(grad, output_subs, input_subs, input_shape, reduced_label_set)

    x_subs, y_subs = input_subs.split(",")
    if ELLIPSIS in output_subs:
        if ELLIPSIS not in x_subs:
            x_subs += ELLIPSIS
        if ELLIPSIS not in y_subs:
            y_subs += ELLIPSIS
    x, y = op.inputs[0], op.inputs[1]
    if grad.dtype.is_complex:
        x, y = conj(x), conj(y)
    x_shape = array_ops.shape(x)
    y_shape = array_ops.shape(y)
    grad_x = _grad_wrt(grad, y, x_shape, x_subs, y_subs, output_subs)
    grad_y = _grad_wrt(grad, x, y_shape, y_subs, x_subs, output_subs)
    if ELLIPSIS not in output_subs:
        return grad_x, grad_y
    bx_start, bx_end = _bcast_subshape(x_subs)
    by_start, by_end = _bcast_subshape(y_subs)
    xs, ys = x.shape, y.shape
    if (
        xs.is_fully_defined()
        and ys.is_fully_defined()
        and xs.as_list()[bx_start:bx_end] == ys.as_list()[by_start:by_end]
    ):
        return grad_x, grad_y
    rx, ry = apply_op(
        "BroadcastGradientArgs", [x_shape[bx_start:bx_end], y_shape[by_start:by_end]]
    ).outputs
    grad_x = array_ops.reshape(math_ops.reduce_sum(grad_x, bx_start + rx), x_shape)
    grad_y = array_ops.reshape(math_ops.reduce_sum(grad_y, by_start + ry), y_shape)
    return grad_x, grad_y
