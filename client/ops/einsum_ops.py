"""Client, graph building: tf.einsum as TensorFlow 2.21's compat.v1 builds it in a graph
(special_math_ops._einsum_v2: one Einsum op for one or two operands, one per pairwise
contraction of opt_einsum's path for more) and Einsum's static shape (TF's EinsumShape).
Its gradient is client/ops/gradients/einsum_grad.py."""

from __future__ import annotations

import collections
import functools
import re
from typing import Any

import numpy as np

from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.op_builder import apply_op
from client.framework.tensor_shape import TensorShape

ELLIPSIS = "..."
# What opt_einsum reads of an operand: its shape only (no array is made for the path).
_Shaped = collections.namedtuple("_Shaped", ["shape"])


def einsum_op(inputs: list[Any], equation: str, name: str | None = None) -> Any:
    """One Einsum node (gen_linalg_ops.einsum): TF's einsum and its gradient build these."""
    return apply_op("Einsum", [list(inputs)], {"equation": equation}, name).outputs[0]


def _static_shape(operand: Any) -> list[Any] | None:
    """An operand's static shape as a list (None for an unknown rank). TensorFlow reads
    `.shape` before converting, so numpy arrays (and here lists) are converted by the
    Einsum op that takes them, under its own name scope."""
    shape = getattr(operand, "shape", None)
    if isinstance(shape, TensorShape):
        return shape.as_list() if shape.ndims is not None else None
    return list(np.shape(operand))


def _parse_equation(equation: str, n_inputs: int) -> tuple[str, list[str], str | None]:
    """The first half of TF's _einsum_v2_parse_and_resolve_equation: the equation without
    spaces, with an explicit output, "..." spelled as the label "0" (returned as the
    ellipsis label) so that opt_einsum treats it as one more label; and the inputs' labels."""
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
    return resolved, input_labels, ellipsis_label


def _resolve_shapes(
    equation: str,
    input_labels: list[str],
    shapes: list[list[Any] | None],
    ellipsis_label: str | None,
) -> list[list[int]]:
    """The second half of TF's _einsum_v2_parse_and_resolve_equation: one positive size per
    label for opt_einsum, the largest any input gives it (1 where none knows it), an
    ellipsis as one label sized by the product of its known dims."""
    label_to_dim: dict[str, int] = collections.defaultdict(lambda: 1)
    for i, (labels, shape) in enumerate(zip(input_labels, shapes)):
        if shape is None:
            continue
        start = labels.find(ellipsis_label) if ellipsis_label else -1
        if start != -1:
            if start != labels.rfind(labels[start]):
                spelled = labels.replace(labels[start], ELLIPSIS)
                raise ValueError(f"Too many ellipses in input label {spelled}.")
            if len(labels) > len(shape) + 1:
                raise ValueError(
                    f"Too many named labels in {i}th subscript string of equation {equation} "
                    f"for input shape {shape} "
                )
            end = start + len(shape) + 1 - len(labels)
            # TF's filter(None, ...) drops unknown and zero dims alike from the product.
            shape[start:end] = [np.prod([d for d in shape[start:end] if d], dtype=np.int64)]
        elif len(labels) != len(shape):
            raise ValueError(
                f"Number of named labels in input #{i} of equation {equation} must be equal "
                f"to the number of dimensions in shape {shape}"
            )
        for dim, label in zip(shape, labels):
            if dim is not None:
                label_to_dim[label] = max(label_to_dim[label], dim)
    return [[label_to_dim[label] for label in labels] for labels in input_labels]


def einsum(equation: str, *inputs: Any, **kwargs: Any) -> Any:
    """tf.einsum / tf.linalg.einsum: Einsum ops under the name scope "einsum"; with three
    or more operands one Einsum per pairwise contraction of opt_einsum's path."""
    name = kwargs.pop("name", None)
    optimize = kwargs.pop("optimize", "greedy")
    if kwargs:
        raise TypeError(
            f"Invalid keyword arguments for einsum: {', '.join(kwargs)}. "
            "Valid arguments: name, optimize, greedy."
        )
    with _ops.name_scope(name, "einsum", [equation, inputs]):
        operands = list(inputs)
        shapes = [_static_shape(x) for x in operands]
        resolved, input_labels, ellipsis_label = _parse_equation(equation, len(operands))
        if len(operands) <= 2:
            if ellipsis_label:
                resolved = resolved.replace(ellipsis_label, ELLIPSIS)
            return einsum_op(operands, resolved)
        resolved_shapes = _resolve_shapes(equation, input_labels, shapes, ellipsis_label)
        shaped = tuple(_Shaped(tuple(s)) for s in resolved_shapes)
        for indices, binary_equation in _contraction_path(resolved, shaped, optimize):
            if ellipsis_label:
                binary_equation = binary_equation.replace(ellipsis_label, ELLIPSIS)
            picked = [operands.pop(i) for i in indices]
            operands.append(einsum_op(picked, binary_equation))
        return operands[0]


# Memoized as TensorFlow memoizes it (so an unhashable `optimize`, such as a path given as a
# list, is refused the same way: TypeError).
@functools.lru_cache(maxsize=128)
def _contraction_path(
    equation: str, shaped: tuple[Any, ...], optimize: Any
) -> tuple[tuple[tuple[int, ...], str], ...]:
    """opt_einsum's contraction path as (operand indices, two-operand equation) pairs.
    opt_einsum is imported here only: one or two operands never need it."""
    import opt_einsum  # type: ignore[import-not-found, import-untyped, unused-ignore]

    # einsum_call=True: the path and its equations, without opt_einsum contracting anything.
    _, contractions = opt_einsum.contract_path(
        equation, *shaped, optimize=optimize, einsum_call=True, use_blas=True
    )
    return tuple((tuple(c[0]), c[2]) for c in contractions)


# -- static shape (TF's EinsumShape, for the shapes a client graph needs) ------------------


def _einsum_shape(op: Any) -> list[Any]:
    """TF's EinsumShape: each input's rank checked against its labels, a label's dims
    merged across inputs, the ellipsis as the broadcast of the inputs' batch dims (unknown
    rank if one input's rank is unknown)."""
    equation = op.get_attr("equation")
    if isinstance(equation, bytes):
        equation = equation.decode()
    inputs_part, output_part = equation.split("->")
    dims: dict[str, Any] = {}
    batch: TensorShape = TensorShape([])
    for i, (subs, t) in enumerate(zip(inputs_part.split(","), op.inputs)):
        head, has_ellipsis, tail = subs.partition(ELLIPSIS)
        if t.shape.ndims is None:
            batch = TensorShape(None) if has_ellipsis else batch
            have: list[Any] = [None] * (len(head) + len(tail))
        else:
            have = t.shape.as_list()
            _check_rank(len(have), len(head) + len(tail), has_ellipsis, i, equation)
        labelled = [*zip(head, have), *zip(tail, have[len(have) - len(tail) :] if tail else [])]
        for label, d in labelled:
            dims[label] = _merge_dim(dims[label], d) if label in dims else d
        if has_ellipsis and t.shape.ndims is not None:
            batch = shape_fns.broadcast_shapes(
                batch, TensorShape(have[len(head) : len(have) - len(tail)])
            )
    head, has_ellipsis, tail = output_part.partition(ELLIPSIS)
    if has_ellipsis and batch.ndims is None:
        return [TensorShape(None)]
    if not has_ellipsis and batch.ndims:
        raise shape_fns.ShapeError(
            f"Shape must be at most rank 0 but is rank {batch.ndims}\n\t for einsum equation "
            f"'{equation}' without ellipsis (...) in the output subscripts where input(s) "
            "have non-empty broadcasting shape"
        )
    middle = batch.as_list() if has_ellipsis else []
    return [TensorShape([dims.get(c) for c in head] + middle + [dims.get(c) for c in tail])]


def _check_rank(rank: int, named: int, has_ellipsis: bool, i: int, equation: str) -> None:
    """TF's WithRank (WithRankAtLeast with an ellipsis) on input i, in TF's words."""
    if rank == named or (has_ellipsis and rank > named):
        return
    at_least = "at least " if has_ellipsis else ""
    raise shape_fns.ShapeError(
        # TF adds its context to a status on a new, tab-indented line.
        f"Shape must be {at_least}rank {named} but is rank {rank}\n\t "
        f"for {i}th input and equation: {equation}"
    )


def _merge_dim(a: int | None, b: int | None) -> int | None:
    if a is not None and b is not None and a != b:
        raise shape_fns.ShapeError(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


shape_fns.SHAPE_FNS.setdefault("Einsum", _einsum_shape)
