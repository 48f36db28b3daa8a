"""Ops (executor stage): SparseConcat (N SparseTensors joined along one dimension, the
result in row-major order) and SparseSplit (one SparseTensor cut into num_split pieces
along one dimension, each keeping its entries' order), as TensorFlow's
sparse_concat_op.cc and SparseTensor::Split. Stateless numpy kernels, safe from any
thread."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.math_util import shape_str
from common.ops.registry import KernelConstruction, register_kernel, register_op
from common.ops.sparse_ops import reorder
from common.ops.sparse_tensor_util import (
    check_input_ranks,
    create_checks,
    validate_sparse_tensor,
)

register_op(
    "SparseConcat",
    inputs=["indices: N * int64", "values: N * T", "shapes: N * int64"],
    outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
    attrs=["concat_dim: int", "N: int >= 2", "T: type"],
)
register_op(
    "SparseSplit",
    inputs=["split_dim: int64", "indices: int64", "values: T", "shape: int64"],
    outputs=[
        "output_indices: num_split * int64",
        "output_values: num_split * T",
        "output_shape: num_split * int64",
    ],
    attrs=["num_split: int >= 1", "T: type"],
)


def _check_concat_inputs(
    inds: list[np.ndarray], vals: list[np.ndarray], shapes: list[np.ndarray]
) -> None:
    for what, arrs, ndim, kind in (
        ("indices", inds, 2, "a matrix"),
        ("values", vals, 1, "a vector"),
        ("shapes", shapes, 1, "a vector"),
    ):
        for i, a in enumerate(arrs):
            if a.ndim != ndim:
                raise InvalidArgumentError(
                    f"Input {what} should be {kind} but received shape {shape_str(a.shape)} "
                    f"at position {i}"
                )


def sparse_concat(
    inds: list[np.ndarray], vals: list[np.ndarray], shapes: list[np.ndarray], concat_dim: int
) -> list[np.ndarray]:
    _check_concat_inputs(inds, vals, shapes)
    first = [int(d) for d in shapes[0]]
    rank = len(first)
    dim = concat_dim + rank if concat_dim < 0 else concat_dim
    if not 0 <= dim < rank:
        raise InvalidArgumentError(
            f"Concat dimension must be in range [{-rank}, {rank}), got {concat_dim}"
        )
    for i, s in enumerate(shapes[1:], start=1):
        if s.size != rank:
            raise InvalidArgumentError(
                f"Ranks of all input tensors must match: expected {rank} but got {s.size} at "
                f"position {i}"
            )
        for j in range(rank):
            if j != dim and int(s[j]) != first[j]:
                raise InvalidArgumentError(
                    f"Input shapes must match: expected {first[j]} for dimension {j} but got "
                    f"{int(s[j])} at position {i}"
                )
    for idx, v, s in zip(inds, vals, shapes):
        create_checks(idx, v, s.size)
    offset = 0
    parts = []
    for idx, s in zip(inds, shapes):
        shifted = idx.astype(np.int64).copy()
        shifted[:, dim] += offset
        offset += int(s[dim])
        parts.append(shifted)
    indices = np.concatenate(parts).reshape(-1, rank)
    values = np.concatenate(vals)
    order = reorder(indices)
    out_shape = np.array(first, np.int64)
    out_shape[dim] = offset
    return [indices[order], values[order], out_shape]


@register_kernel("SparseConcat")
def _sparse_concat(k: KernelConstruction) -> Callable:
    concat_dim, n = int(k.attr("concat_dim")), int(k.attr("N"))

    def compute(ctx, inputs: list) -> list:
        arrs = [np.asarray(v) for v in inputs]
        return sparse_concat(arrs[:n], arrs[n : 2 * n], arrs[2 * n :], concat_dim)

    return compute


def sparse_split(
    split_dim: np.ndarray,
    indices: np.ndarray,
    values: np.ndarray,
    shape: np.ndarray,
    num_split: int,
) -> list[np.ndarray]:
    check_input_ranks(indices, values, shape)
    rank = shape.size
    axis = int(split_dim)
    if not -rank <= axis < rank:
        raise InvalidArgumentError(f"Input axis should be in range [{-rank}, {rank}), got {axis}")
    axis %= rank
    size = int(shape[axis])
    if not 1 <= num_split <= size:
        raise InvalidArgumentError(
            "Input num_split should be between 1 and the splitting dimension size "
            f"({size}), got {num_split}"
        )
    validate_sparse_tensor(indices, values, shape, bounds=True)
    # The first size % num_split pieces are one longer, as TensorFlow's Split.
    base, residual = divmod(size, num_split)
    sizes = [base + 1 if i < residual else base for i in range(num_split)]
    starts = np.cumsum([0, *sizes])
    idx = indices.astype(np.int64)
    piece = np.searchsorted(starts, idx[:, axis], side="right") - 1
    out_idx, out_val, out_shape = [], [], []
    for p in range(num_split):
        rows = piece == p
        part = idx[rows].copy()
        part[:, axis] -= starts[p]
        dims = shape.astype(np.int64).copy()
        dims[axis] = sizes[p]
        out_idx.append(part)
        out_val.append(values[rows])
        out_shape.append(dims)
    return out_idx + out_val + out_shape


@register_kernel("SparseSplit")
def _sparse_split(k: KernelConstruction) -> Callable:
    num_split = int(k.attr("num_split"))

    def compute(ctx, inputs: list) -> list:
        split_dim, indices, values, shape = (np.asarray(v) for v in inputs)
        return sparse_split(split_dim, indices, values, shape, num_split)

    return compute
