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

from common import memory
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


_INT64_MAX = 2**63 - 1


def _check_num_elements(dims: list[int]) -> None:
    """TensorFlow's TensorShape of the input's dense_shape: its size must fit int64."""
    n = 1
    for d in dims:
        if n * d > _INT64_MAX:
            raise InvalidArgumentError(
                f"Encountered overflow when multiplying {n} with {d}, result: -1"
            )
        n *= d


def _lowest(dtype: np.dtype) -> object:
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def sparse_reduce(
    indices: np.ndarray,
    values: np.ndarray,
    shape: np.ndarray,
    reduction_axes: np.ndarray,
    keep_dims: bool,
    kind: str,
    k: KernelConstruction | None = None,
) -> np.ndarray:
    check_sparse(indices, values, shape)
    rank = shape.shape[0]
    axes = _axes(reduction_axes, rank)
    dims = [int(d) for d in shape]
    _check_num_elements(dims)
    kept = [d for d in range(rank) if d not in axes]
    out_dims = [1 if d in axes else dims[d] for d in range(rank)]
    idx = indices.astype(np.int64)
    # Only the kept axes address the output: TensorFlow sums an entry whose reduced
    # coordinates are out of bounds as any other (and fails on a kept one).
    out_of_bounds = (idx < 0) | (idx >= np.array(dims, np.int64))
    bad = np.flatnonzero(np.any(out_of_bounds[:, kept], axis=1))
    if len(bad):
        raise InvalidArgumentError(
            f"Invalid index: [{','.join(str(int(x)) for x in idx[bad[0]])}] is out of bounds "
            f"for shape [{','.join(map(str, dims))}]"
        )
    # The output's size comes from dense_shape, a value the client chose.
    memory.check_allocation(k, out_dims, values.dtype)
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
            return [sparse_reduce(indices, values, shape, axes, keep, kind, k)]

        return compute

    return factory


register_kernel("SparseReduceSum")(_factory("sum"))
register_kernel("SparseReduceMax")(_factory("max"))
