"""Ops (executor stage): SparseReduceSum and SparseReduceMax (tf.sparse.reduce_sum/max),
reducing a SparseTensor (indices, values, dense_shape) over some axes into a dense tensor.
Stateless numpy kernels, safe from any thread.

Sums accumulate in the value dtype in index order (TensorFlow reorders the entries and sums
each group; float sums may differ from TensorFlow's in the last bit for large groups). The
max of a group is over its entries only (implicit zeros do not count); an output position
no entry reduces into is 0, as TensorFlow's.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.registry import KernelConstruction, register_kernel, register_op
from common.ops.sparse_ops import ALL_NUMBERS, check_sparse

for _op, _types in (
    ("SparseReduceSum", ALL_NUMBERS),
    ("SparseReduceMax", "realnumbertype"),
):
    register_op(
        _op,
        inputs=[
            "input_indices: int64",
            "input_values: T",
            "input_shape: int64",
            "reduction_axes: int32",
        ],
        outputs=["output: T"],
        attrs=["keep_dims: bool = false", f"T: {{{_types}}}"],
    )


def _axes(reduction_axes: np.ndarray, rank: int) -> list[int]:
    axes = []
    for a in reduction_axes.reshape(-1):
        a = int(a)
        if not -rank <= a < rank:
            raise InvalidArgumentError(
                f"Invalid reduction dimension {a}, for input with {rank} dimensions."
            )
        axes.append(a % rank)
    return sorted(set(axes))


def _lowest(dtype: np.dtype) -> object:
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def sparse_reduce(
    indices: np.ndarray,
    values: np.ndarray,
    shape: np.ndarray,
    reduction_axes: np.ndarray,
    keep_dims: bool,
    kind: str,
) -> np.ndarray:
    check_sparse(indices, values, shape)
    rank = shape.shape[0]
    axes = _axes(reduction_axes, rank)
    dims = [int(d) for d in shape]
    kept = [d for d in range(rank) if d not in axes]
    out_dims = [1 if d in axes else dims[d] for d in range(rank)]
    idx = indices.astype(np.int64)
    for i in range(idx.shape[0]):
        if np.any(idx[i] < 0) or np.any(idx[i] >= dims):
            raise InvalidArgumentError(
                f"Invalid index: [{','.join(str(int(x)) for x in idx[i])}] is out of bounds "
                f"for shape [{','.join(map(str, dims))}]"
            )
    target = tuple(
        idx[:, d] if d in kept else np.zeros(idx.shape[0], np.int64) for d in range(rank)
    )
    if kind == "sum":
        out = np.zeros(out_dims, values.dtype)
        np.add.at(out, target, values)
    else:
        out = np.full(out_dims, _lowest(values.dtype), values.dtype)
        np.maximum.at(out, target, values)
        seen = np.zeros(out_dims, bool)
        seen[target] = True
        out[~seen] = 0
    if keep_dims:
        return out
    return out.reshape([dims[d] for d in kept])


def _factory(kind: str) -> Callable:
    def factory(k: KernelConstruction) -> Callable:
        keep = bool(k.attr("keep_dims"))

        def compute(ctx, inputs: list) -> list:
            indices, values, shape, axes = (np.asarray(v) for v in inputs)
            return [sparse_reduce(indices, values, shape, axes, keep, kind)]

        return compute

    return factory


register_kernel("SparseReduceSum")(_factory("sum"))
register_kernel("SparseReduceMax")(_factory("max"))
