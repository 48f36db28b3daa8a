"""Ops (executor stage): EditDistance (tf.edit_distance), the Levenshtein distance between
the sequences of two SparseTensors grouped by all but their last dimension, as TF's
edit_distance_op.cc computes it: indices taken in the order given (TF assumes them sorted
row-major), a missing truth counting as infinity once normalized. Values are bit for bit
TF's (an integer distance divided by the truth length in float32). Stateless numpy kernel,
safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from common.errors import InternalError, InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

register_op(
    "EditDistance",
    inputs=[
        "hypothesis_indices: int64",
        "hypothesis_values: T",
        "hypothesis_shape: int64",
        "truth_indices: int64",
        "truth_values: T",
        "truth_shape: int64",
    ],
    outputs=["output: float"],
    attrs=["normalize: bool = true", "T: type"],
)


def levenshtein(s: Sequence, t: Sequence) -> int:
    """gtl::LevenshteinDistance with std::equal_to (so NaN never equals NaN)."""
    if not s:
        return len(t)
    if not t:
        return len(s)
    row = list(range(len(t) + 1))
    for i, a in enumerate(s, 1):
        diag, row[0] = row[0], i
        for j, b in enumerate(t, 1):
            cost = 0 if a == b else 1
            diag, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diag + cost)
    return row[-1]


def _check_shapes(h_ix, h_vals, h_shape, t_ix, t_vals, t_shape) -> None:
    for what, arr, rank in (
        ("hypothesis_indices", h_ix, 2),
        ("truth_indices", t_ix, 2),
        ("hypothesis_values", h_vals, 1),
        ("truth_values", t_vals, 1),
        ("hypothesis_shape", h_shape, 1),
        ("truth_shape", t_shape, 1),
    ):
        if arr.ndim != rank:
            kind = "a matrix" if rank == 2 else "a vector"
            raise InvalidArgumentError(
                f"{what} should be {kind}, but got shape: {mu.shape_str(arr.shape)}"
            )
    _check_side("hypothesis", h_ix, h_vals, h_shape)
    if t_shape.size < 2:
        raise InvalidArgumentError(
            "Input SparseTensors must have rank at least 2, but truth_shape rank is: "
            f"{t_shape.size}"
        )
    _check_side("truth", t_ix, t_vals, t_shape)
    if t_shape.size != h_shape.size:
        raise InvalidArgumentError(
            "Expected truth and hypothesis to have matching ranks, but their shapes are: "
            f"{mu.shape_str(t_shape.shape)} and {mu.shape_str(h_shape.shape)}"
        )


def _check_side(side: str, ix: np.ndarray, vals: np.ndarray, shape: np.ndarray) -> None:
    if vals.size != ix.shape[0]:
        raise InvalidArgumentError(
            f"Expected {side}_values.NumElements == #rows({side}_indices), their shapes are: "
            f"{mu.shape_str(vals.shape)} and {mu.shape_str(ix.shape)}"
        )
    if shape.size != ix.shape[1]:
        raise InvalidArgumentError(
            f"Expected {side}_shape.NumElements == #cols({side}_indices), their shapes are: "
            f"{mu.shape_str(shape.shape)} and {mu.shape_str(ix.shape)}"
        )


def _groups(ix: np.ndarray, vals: np.ndarray) -> list[tuple[list[int], list]]:
    """sparse::SparseTensor::group over all but the last dimension: runs of consecutive
    entries sharing their leading indices, in the order given."""
    out: list[tuple[list[int], list]] = []
    keys = ix[:, :-1].tolist()
    items = vals.tolist()
    for key, v in zip(keys, items):
        if out and out[-1][0] == key:
            out[-1][1].append(v)
        else:
            out.append((key, [v]))
    return out


def edit_distance(
    h_ix: np.ndarray,
    h_vals: np.ndarray,
    h_shape: np.ndarray,
    t_ix: np.ndarray,
    t_vals: np.ndarray,
    t_shape: np.ndarray,
    normalize: bool,
) -> np.ndarray:
    _check_shapes(h_ix, h_vals, h_shape, t_ix, t_vals, t_shape)
    for shape in (h_shape, t_shape):
        for size in shape.tolist():
            if size < 0:
                raise InvalidArgumentError(f"Dimension {size} must be >= 0")
    out_shape = [max(a, b) for a, b in zip(h_shape.tolist()[:-1], t_shape.tolist()[:-1])]
    n = int(np.prod(out_shape, dtype=np.int64))
    if n <= 0:
        raise InvalidArgumentError(
            f"Got output shape {mu.shape_str(out_shape)} which has 0 elements"
        )
    strides = [int(np.prod(out_shape[d + 1 :], dtype=np.int64)) for d in range(len(out_shape))]
    out = np.zeros(n, np.float32)

    def put(group: list[int], value: np.float32) -> None:
        loc = sum(g * s for g, s in zip(group, strides))
        if not 0 <= loc < n:
            raise InternalError(
                f"Got an inner product {loc} which would require writing to outside of the "
                f"buffer for the output tensor (max elements {n})"
            )
        out[loc] = value

    hyp, truth = _groups(h_ix, h_vals), _groups(t_ix, t_vals)
    i = j = 0
    while i < len(hyp) or j < len(truth):
        if i < len(hyp) and j < len(truth) and hyp[i][0] == truth[j][0]:
            dist = np.float32(levenshtein(truth[j][1], hyp[i][1]))
            put(truth[j][0], dist / np.float32(len(truth[j][1])) if normalize else dist)
            i, j = i + 1, j + 1
        elif j == len(truth) or (i < len(hyp) and truth[j][0] > hyp[i][0]):
            size = np.float32(len(hyp[i][1]))  # a hypothesis with no truth
            put(hyp[i][0], np.float32(np.inf) if normalize and size != 0 else size)
            i += 1
        else:
            put(truth[j][0], np.float32(1.0 if normalize else len(truth[j][1])))
            j += 1
    return out.reshape(out_shape)


@register_kernel("EditDistance")
def _edit_distance(k: KernelConstruction) -> Callable:
    normalize = bool(k.attr("normalize"))

    def compute(ctx, inputs: list) -> list:
        h_ix, h_vals, h_shape, t_ix, t_vals, t_shape = (np.asarray(v) for v in inputs)
        return [edit_distance(h_ix, h_vals, h_shape, t_ix, t_vals, t_shape, normalize)]

    return compute
