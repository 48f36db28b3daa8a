"""Client, graph building: tf.einsum as TensorFlow 2.21's compat.v1 builds it in a graph
(special_math_ops._einsum_v2: one Einsum op for one or two operands, opt_einsum's greedy
contraction path for more), Einsum's static shape, and its gradient (linalg_grad.py's
_EinsumGrad, node for node)."""

from __future__ import annotations

import collections
import re
from typing import Any

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.gradient_registry import RegisterGradient
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, math_ops
from client.ops.gradients.math_grad import _reduced_shape
from client.ops.linalg_norm_ops import conj

_ELLIPSIS = "..."


def _einsum_op(inputs: list[Any], equation: str, name: str | None = None) -> Any:
    return apply_op("Einsum", [list(inputs)], {"equation": equation}, name).outputs[0]


def _resolve_equation(equation: str, n_inputs: int) -> tuple[str, str | None]:
    """TF's _einsum_v2_parse_and_resolve_equation: the equation without spaces, with an
    explicit output, "..." spelled as the label "0" (returned as the ellipsis label)."""
    resolved = equation.replace(" ", "")
    ellipsis_label = None
    if "..." in equation:
        ellipsis_label = "0"
        if ellipsis_label in resolved:
            raise ValueError(f'Invalid character "{ellipsis_label}" in equation: {equation}.')
        resolved = resolved.replace("...", ellipsis_label)
    allowed = "a-zA-Z" + (ellipsis_label or "")
    match = re.match(f"^([{allowed},]*)(->[{allowed}]*)?$", resolved)
    if not match:
        raise ValueError(f"Subscripts have incorrect format: {resolved}")
    input_labels = match.group(1).split(",")
    output_labels = match.group(2)[2:] if match.group(2) else None
    if n_inputs != len(input_labels):
        raise ValueError(
            f'Got {n_inputs} inputs for equation "{equation}", expecting {len(input_labels)}'
        )
    if "->" not in resolved:
        counts = collections.Counter(match.group(1))
        output_labels = "".join(x for x in sorted(counts) if x != "," and counts[x] == 1)
        resolved += "->" + output_labels
    if output_labels and len(set(output_labels)) != len(output_labels):
        raise ValueError(f"Output subscripts contain a label appearing more than once: {equation}")
    for label in output_labels or "":
        if label != ellipsis_label and label not in set(match.group(1)):
            raise ValueError(
                f"Output subscripts contain the label {label} not present in the input subscripts."
            )
    if ellipsis_label and output_labels and output_labels.count(ellipsis_label) > 1:
        raise ValueError(f"Output subscripts contain multiple ellipsis: {equation}")
    return resolved, ellipsis_label


def einsum(equation: str, *inputs: Any, **kwargs: Any) -> Any:
    """tf.einsum / tf.linalg.einsum: Einsum ops under the name scope "einsum"."""
    name = kwargs.pop("name", None)
    optimize = kwargs.pop("optimize", "greedy")
    if kwargs:
        raise TypeError(
            f"Invalid keyword arguments for einsum: {', '.join(kwargs)}. "
            "Valid arguments: name, optimize, greedy."
        )
    with _ops.name_scope(name, "einsum", [equation, inputs]):
        operands = [convert_to_tensor(x) for x in inputs]
        resolved, ellipsis_label = _resolve_equation(equation, len(operands))
        if len(operands) <= 2:
            if ellipsis_label:
                resolved = resolved.replace(ellipsis_label, _ELLIPSIS)
            return _einsum_op(operands, resolved)
        return _contract_along_path(resolved, operands, ellipsis_label, optimize)


def _contract_along_path(
    equation: str, operands: list[Any], ellipsis_label: str | None, optimize: str
) -> Any:
    """Three or more operands: pairwise Einsum ops in the order opt_einsum's contraction
    path gives (TensorFlow's choice; opt_einsum is needed to make the same one)."""
    try:
        import opt_einsum  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        raise NotImplementedError(
            "einsum of more than two operands follows opt_einsum's contraction path; "
            "install opt_einsum"
        ) from None
    shaped = collections.namedtuple("shaped", ["shape"])
    shapes = []
    for t in operands:
        if t.shape.ndims is None:
            raise ValueError("einsum of more than two operands needs their ranks")
        shapes.append(shaped(tuple(t.shape.as_list())))
    if ellipsis_label:
        raise NotImplementedError("einsum of more than two operands with an ellipsis")
    _, contractions = opt_einsum.contract_path(
        equation, *shapes, optimize=optimize, einsum_call=True, use_blas=True
    )
    pending = list(operands)
    for contraction in contractions:
        picked = [pending.pop(i) for i in contraction[0]]
        pending.append(_einsum_op(picked, contraction[2]))
    return pending[0]


# -- static shape (TF's EinsumShape, for the shapes a client graph needs) ------------------


def _einsum_shape(op: Any) -> list[Any]:
    """Each output label's dim from the inputs (None where no input knows it), the
    ellipsis as the broadcast of the inputs' batch dims (unknown rank if one is)."""
    equation = op.get_attr("equation")
    if isinstance(equation, bytes):
        equation = equation.decode()
    inputs_part, output_part = equation.split("->")
    dims: dict[str, Any] = {}
    batch: list[Any] | None = []
    for subs, t in zip(inputs_part.split(","), op.inputs):
        head, has_ellipsis, tail = subs.partition(_ELLIPSIS)
        if t.shape.ndims is None:
            batch = None if has_ellipsis else batch
            continue
        have = t.shape.as_list()
        tail_dims = have[len(have) - len(tail) :] if tail else []
        for label, d in [*zip(head, have), *zip(tail, tail_dims)]:
            if dims.get(label) is None:
                dims[label] = d
        if has_ellipsis and batch is not None:
            batch = _broadcast_dims(batch, have[len(head) : len(have) - len(tail)])
    head, has_ellipsis, tail = output_part.partition(_ELLIPSIS)
    if has_ellipsis and batch is None:
        return [TensorShape(None)]
    middle = batch if has_ellipsis and batch is not None else []
    return [TensorShape([dims.get(c) for c in head] + middle + [dims.get(c) for c in tail])]


def _broadcast_dims(a: list[Any], b: list[Any]) -> list[Any]:
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    return [y if x == 1 else x if y == 1 else (x if x is not None else y) for x, y in zip(a, b)]


shape_fns.SHAPE_FNS.setdefault("Einsum", _einsum_shape)


# -- gradient (TensorFlow's _EinsumGrad) ---------------------------------------------------


def _axis_from_label(subscripts: str, label: str) -> int | None:
    splits = subscripts.split(_ELLIPSIS)
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
    start = subscripts.find(_ELLIPSIS)
    if start == -1:
        return 0, 0
    remaining = len(subscripts) - (start + len(_ELLIPSIS))
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
    return _einsum_op([broadcasted], f"{reduced_subs + output_subs}->{input_subs}")


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
    grad_reduced = _einsum_op(
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
        reduced_label_set = set(input_subs).difference(set(output_subs + _ELLIPSIS))
        if not reduced_label_set:
            return _einsum_op([grad], f"{output_subs}->{input_subs}")
        return _grad_reduced(grad, output_subs, input_subs, input_shape, reduced_label_set)

    x_subs, y_subs = input_subs.split(",")
    if _ELLIPSIS in output_subs:
        if _ELLIPSIS not in x_subs:
            x_subs += _ELLIPSIS
        if _ELLIPSIS not in y_subs:
            y_subs += _ELLIPSIS
    x, y = op.inputs[0], op.inputs[1]
    if grad.dtype.is_complex:
        x, y = conj(x), conj(y)
    x_shape = array_ops.shape(x)
    y_shape = array_ops.shape(y)
    grad_x = _grad_wrt(grad, y, x_shape, x_subs, y_subs, output_subs)
    grad_y = _grad_wrt(grad, x, y_shape, y_subs, x_subs, output_subs)
    if _ELLIPSIS not in output_subs:
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
