"""Ops (executor stage): SparseSlice (tf.sparse.slice): the entries of a SparseTensor
inside [start, start + size), re-based to start, in their input order; each output dim is
max(0, min(start + size, shape) - start), as TF's SparseTensor::Slice. Exact. Stateless,
safe from any thread."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.registry import KernelConstruction, register_kernel, register_op


def sparse_slice(
    indices: np.ndarray,
    values: np.ndarray,
    shape: np.ndarray,
    start: np.ndarray,
    size: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if indices.ndim != 2:
        raise InvalidArgumentError(f"Sparse indices must be rank 2 but is rank {indices.ndim}")
    if values.ndim != 1 or values.shape[0] != indices.shape[0]:
        raise InvalidArgumentError(
            f"Number of elements in indices ({indices.shape[0]}) and values "
            f"({values.size}) do not match"
        )
    rank = indices.shape[1]
    for t, what in ((shape, "shape"), (start, "start"), (size, "size")):
        if t.ndim != 1 or t.size != rank:
            raise InvalidArgumentError(
                f"Expected {what} to be a vector of length {rank} but got length {t.size}"
            )
    for s in size.tolist():
        if s < 0:
            raise InvalidArgumentError(f"Expected a non-negative size, got {s}")
    start, size, shape = (t.astype(np.int64) for t in (start, size, shape))
    end = np.minimum(start + size, shape)
    inside = np.all((indices >= start) & (indices < end), axis=1)
    out_shape = np.maximum(end - start, 0)
    return (indices[inside] - start).reshape(-1, rank), values[inside], out_shape


def _sparse_slice(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        return list(sparse_slice(*(np.asarray(v) for v in inputs)))

    return compute


register_op(
    "SparseSlice",
    ["indices: int64", "values: T", "shape: int64", "start: int64", "size: int64"],
    ["output_indices: int64", "output_values: T", "output_shape: int64"],
    ["T: type"],
)
register_kernel("SparseSlice")(_sparse_slice)
