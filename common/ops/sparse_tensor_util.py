"""Ops (executor stage): what TensorFlow's sparse::SparseTensor class gives its kernels —
the checks of SparseTensor::Create, IndicesValid, and group(): the runs of consecutive
entries sharing their leading index columns; the input-rank checks the kernels share and
the index-row order (DimComparator). Pure functions, safe from any thread."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.math_util import shape_str
from common.ops.sparse_to_dense_ops import indices_valid

__all__ = ["create_checks", "groups", "indices_valid", "validate_sparse_tensor"]


def create_checks(indices: np.ndarray, values: np.ndarray, rank: int) -> None:
    """SparseTensor::Create's checks, in its order; `rank` is the dense shape's length."""
    if values.ndim != 1:
        raise InvalidArgumentError(f"vals must be a vec, but got: {shape_str(values.shape)}")
    if indices.ndim == 0 or indices.shape[0] != values.shape[0]:
        n = indices.shape[0] if indices.ndim else 0
        raise InvalidArgumentError(
            "indices and values rows (indexing dimension) must match. (indices = "
            f"{n}, values = {values.shape[0]})"
        )
    if indices.ndim != 2:
        raise InvalidArgumentError(f"indices must be a matrix, but got: {shape_str(indices.shape)}")
    if indices.shape[1] != rank:
        raise InvalidArgumentError("Order length must be SparseTensor rank.")


def groups(indices: np.ndarray, ndims: int) -> Iterator[tuple[tuple[int, ...], np.ndarray]]:
    """(group key, entry positions) for each run of consecutive entries whose first
    `ndims` index columns are equal, in entry order, as SparseTensor::group (which expects
    ordered indices: unordered ones give a key more than one run, as TensorFlow's)."""
    n = indices.shape[0]
    if n == 0:
        return
    keys = indices[:, :ndims]
    starts = [0]
    if n > 1:
        changed = np.any(keys[1:] != keys[:-1], axis=1)
        starts += (np.nonzero(changed)[0] + 1).tolist()
    starts.append(n)
    for a, b in zip(starts[:-1], starts[1:]):
        yield tuple(int(x) for x in keys[a]), np.arange(a, b)


def _tuple_str(row: np.ndarray, i: int) -> str:
    return f"indices[{i}, :] = [" + ", ".join(str(int(x)) for x in row) + "]"


def validate_sparse_tensor(
    indices: np.ndarray, values: np.ndarray, shape: np.ndarray, bounds: bool
) -> None:
    """sparse_utils::ValidateSparseTensor: the shapes of the three tensors, and with
    `bounds` each index inside the dense shape (IndexValidation::kUnordered)."""
    if indices.ndim != 2:
        raise InvalidArgumentError(f"Sparse indices must be rank 2 but is rank {indices.ndim}")
    if values.ndim != 1:
        raise InvalidArgumentError(f"Sparse values must be rank 1 but is rank {values.ndim}")
    if shape.ndim != 1:
        raise InvalidArgumentError(f"Sparse shape must be rank 1 but is rank {shape.ndim}")
    if values.shape[0] != indices.shape[0]:
        raise InvalidArgumentError(
            f"Number of elements in indices ({indices.shape[0]}) and values "
            f"({values.shape[0]}) do not match"
        )
    if shape.size != indices.shape[1]:
        raise InvalidArgumentError(
            f"Index rank ({indices.shape[1]}) and shape rank ({shape.size}) do not match"
        )
    if bounds and indices.size:
        bad = np.nonzero(np.any((indices < 0) | (indices >= shape[None, :]), axis=1))[0]
        if bad.size:
            i = int(bad[0])
            raise InvalidArgumentError(
                f"Sparse index tuple {_tuple_str(indices[i], i)} is out of bounds"
            )


def check_input_ranks(indices: np.ndarray, values: np.ndarray, shape: np.ndarray) -> None:
    """A SparseTensor's three inputs must be a matrix and two vectors (TF's words)."""
    for what, arr, kind in (
        ("indices", indices, "a matrix"),
        ("values", values, "a vector"),
        ("shape", shape, "a vector"),
    ):
        if arr.ndim != (2 if what == "indices" else 1):
            raise InvalidArgumentError(
                f"Input {what} should be {kind} but received shape {shape_str(arr.shape)}"
            )


def compare_rows(a: np.ndarray, b: np.ndarray) -> int:
    """DimComparator::cmp: -1, 0 or 1 as index row `a` sorts before, with, after `b`."""
    diff = np.nonzero(a != b)[0]
    if diff.size == 0:
        return 0
    return -1 if a[diff[0]] < b[diff[0]] else 1
