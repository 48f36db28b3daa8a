"""Ops (executor stage): Einsum's equation as TensorFlow reads it, for the Einsum kernel.

TensorFlow checks an equation in two places, both InvalidArgument: its shape function
(EinsumShape, at graph construction: one "->", one or two input subscripts, as many
inputs as subscripts, at most one ellipsis per subscript, every output label in an
input) and its kernel (EinsumHelper::ProcessDimensions, at run time: each input's rank,
one size per label, broadcast dimensions only where the output has an ellipsis). Both
run here before numpy sees the operands, with TensorFlow's messages, so a malformed
equation fails as it does in TensorFlow rather than as numpy's parser decides (numpy
refuses labels TensorFlow takes, such as digits, takes ones it refuses, such as spaces,
and broadcasts a label of size 1 that TensorFlow refuses).

A label is any byte of the equation but '.' (TensorFlow's labels are chars); each
distinct one is renamed to a letter for numpy. The output's shape is known before
anything is computed, so the kernel checks it against the memory budget first.
Stateless; safe from any thread.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.math_util import shape_str

_ELLIPSIS = "..."
_LETTERS = string.ascii_letters


@dataclass(frozen=True)
class EinsumPlan:
    """The equation in numpy's letters and the output's shape."""

    numpy_equation: str
    output_shape: tuple[int, ...]


def _split(equation: str) -> tuple[list[bytes], bytes]:
    """(input subscripts, output subscript): TensorFlow's ValidateEinsumEquation."""
    sides = equation.encode().split(b"->")
    if len(sides) != 2:
        raise InvalidArgumentError(f"Expecting exactly one '->' in einsum equation: {equation}")
    inputs = sides[0].split(b",")
    if len(inputs) not in (1, 2):
        raise InvalidArgumentError(
            f"Expecting 1 or 2 input subscripts in equation '{equation}' but got: {len(inputs)}"
        )
    return inputs, sides[1]


def _labels(subscript: bytes) -> list[int | None]:
    """The subscript's labels (bytes), None for its ellipsis: TensorFlow's
    ValidateEinsumEllipsis."""
    periods = subscript.count(b".")
    text = subscript.decode(errors="replace")
    if periods not in (0, 3):
        raise InvalidArgumentError(
            f"Expected at most one ellipsis (...), but found {periods} periods (.) in the "
            f"input subscript: {text}"
        )
    if periods and b"..." not in subscript:
        raise InvalidArgumentError(f"Periods found outside of ellipsis in subscript: {text}")
    head, dots, tail = subscript.partition(b"...")
    return [*head, *([None] if dots else []), *tail]


def _record(sizes: dict[int, int], label: int, axis: int, shape: tuple[int, ...]) -> None:
    """TensorFlow's RecordLabelToDimension: a label keeps one size (0 is its "unset")."""
    seen = sizes.get(label, 0)
    if seen != 0 and seen != shape[axis]:
        raise InvalidArgumentError(
            f"Expected dimension {seen} at axis {axis} of the input shaped {shape_str(shape)} "
            f"but got dimension {shape[axis]}"
        )
    sizes[label] = shape[axis]


def _bcast_shape(i: int, labels: list[int | None], shape: tuple[int, ...]) -> tuple[int, ...]:
    """The dimensions input `i`'s ellipsis stands for; checks its rank."""
    if None not in labels:
        if len(shape) != len(labels):
            raise InvalidArgumentError(
                f"Expected input {i} to have rank {len(labels)} but got: {len(shape)}"
            )
        return ()
    if len(shape) + 1 < len(labels):
        raise InvalidArgumentError(
            f"Expected input {i} to have rank at least {len(labels) - 1} but got: {len(shape)}"
        )
    at = labels.index(None)
    return shape[at : at + len(shape) - len(labels) + 1]


def _axes(labels: list[int | None], rank: int) -> list[tuple[int, int]]:
    """(label, axis) of each named label of an input of `rank`."""
    extra = rank - len(labels) + 1 if None in labels else 0
    out, after = [], 0
    for k, label in enumerate(labels):
        if label is None:
            after = extra - 1
            continue
        out.append((label, k + after))
    return out


def plan(equation: str, shapes: list[tuple[int, ...]]) -> EinsumPlan:
    """The equation checked against the operands' shapes as TensorFlow checks it."""
    input_subscripts, output_subscript = _split(equation)
    if len(shapes) != len(input_subscripts):
        raise InvalidArgumentError(
            f"Expected {len(input_subscripts)} inputs for equation {equation} but got: "
            f"{len(shapes)}"
        )
    inputs = [_labels(s) for s in input_subscripts]
    output = _labels(output_subscript)
    named = {label for labels in inputs for label in labels if label is not None}
    for label in output:
        if label is not None and label not in named:
            raise InvalidArgumentError(
                f"Einsum output subscripts for equation '{equation}' has label "
                f"'{chr(label)}' which is not present in the input subscripts"
            )
    if len(named) > len(_LETTERS):
        raise InvalidArgumentError(
            f"Einsum equation '{equation}' has {len(named)} distinct labels; at most "
            f"{len(_LETTERS)} are supported"
        )
    sizes: dict[int, int] = {}
    bcasts = []
    for i, (labels, shape) in enumerate(zip(inputs, shapes)):
        bcasts.append(_bcast_shape(i, labels, shape))
        for label, axis in _axes(labels, len(shape)):
            _record(sizes, label, axis, shape)
    bcast = _broadcast(bcasts)
    if bcast and None not in output:
        raise InvalidArgumentError(
            f"Output contains {len(bcast)} broadcasting dimension(s) but no ellipsis (...) "
            "was found in the output subscripts."
        )
    letter = {label: _LETTERS[k] for k, label in enumerate(sorted(named))}

    def spell(labels: list[int | None]) -> str:
        return "".join(_ELLIPSIS if label is None else letter[label] for label in labels)

    out_shape: list[int] = []
    for label in output:
        out_shape.extend(bcast if label is None else (sizes[label],))
    numpy_equation = ",".join(spell(labels) for labels in inputs) + "->" + spell(output)
    return EinsumPlan(numpy_equation, tuple(out_shape))


def _broadcast(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise InvalidArgumentError(
            f"Invalid broadcasting dimensions: {' vs. '.join(shape_str(s) for s in shapes)}"
        ) from None
