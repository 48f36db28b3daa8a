"""Ops (executor stage): RaggedTensorToTensor and RaggedTensorToSparse (a RaggedTensor's
to_tensor() and to_sparse()), as TensorFlow's ragged_tensor_to_tensor_op.cc and
ragged_tensor_to_sparse_kernel.cc. A ragged tensor arrives as its flat values and one
row partition per ragged dimension: nested row_splits, or (to_tensor only) a first
dimension size followed by value_rowids. Stateless kernels, safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.registry import KernelConstruction, register_kernel, register_op

register_op(
    "RaggedTensorToTensor",
    inputs=[
        "shape: Tshape",
        "values: T",
        "default_value: T",
        "row_partition_tensors: num_row_partition_tensors * Tindex",
    ],
    outputs=["result: T"],
    attrs=[
        "T: type",
        "Tindex: {int64, int32}",
        "Tshape: {int64, int32}",
        "num_row_partition_tensors: int >= 1",
        "row_partition_types: list(string)",
    ],
)
register_op(
    "RaggedTensorToSparse",
    inputs=["rt_nested_splits: RAGGED_RANK * Tsplits", "rt_dense_values: T"],
    outputs=["sparse_indices: int64", "sparse_values: T", "sparse_dense_shape: int64"],
    attrs=["RAGGED_RANK: int >= 1", "T: type", "Tsplits: {int32, int64} = DT_INT64"],
)


def _check_splits(splits: np.ndarray, n_values: int) -> None:
    if splits.ndim != 1 or splits.size == 0:
        raise InvalidArgumentError("ragged splits must be a non-empty vector")
    if splits[0] != 0:
        raise InvalidArgumentError("First value of ragged splits must be 0.")
    if np.any(np.diff(splits) < 0):
        raise InvalidArgumentError("Ragged splits must be sorted in ascending order")
    if splits[-1] != n_values:
        raise InvalidArgumentError(
            f"Final value of ragged splits must match the length the corresponding "
            f"ragged values, but got {splits[-1]} and {n_values}"
        )


def _splits_from_rowids(rowids: np.ndarray, nrows: int) -> np.ndarray:
    if rowids.size and (rowids.min() < 0 or np.any(np.diff(rowids) < 0)):
        raise InvalidArgumentError("value_rowids must be sorted and non-negative")
    if rowids.size and rowids.max() >= nrows:
        raise InvalidArgumentError(f"value_rowids out of range: {rowids.max()} >= {nrows}")
    counts = np.bincount(rowids.astype(np.int64), minlength=nrows)
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def nested_splits(
    types: Sequence[str], partitions: list[np.ndarray], n_values: int
) -> list[np.ndarray]:
    """Row partitions as nested row_splits, outermost first: ROW_SPLITS as given,
    VALUE_ROWIDS counted into rows (the row count from FIRST_DIM_SIZE or from the level
    above)."""
    nrows = -1
    splits_list: list[np.ndarray] = []
    for t, p in zip(types, partitions):
        if t == "FIRST_DIM_SIZE" and not splits_list:
            nrows = int(np.asarray(p))
        elif t == "VALUE_ROWIDS" and (splits_list or nrows >= 0):
            rows = nrows if not splits_list else int(splits_list[-1][-1])
            splits_list.append(_splits_from_rowids(np.asarray(p).reshape(-1), rows))
        elif t == "ROW_SPLITS":
            splits_list.append(np.asarray(p).reshape(-1).astype(np.int64))
        else:
            raise InvalidArgumentError(f"Unsupported row partition types {list(types)}")
    for outer, inner in zip(splits_list, splits_list[1:] + [None]):
        _check_splits(outer, n_values if inner is None else inner.size - 1)
    return splits_list


def ragged_positions(splits_list: list[np.ndarray]) -> np.ndarray:
    """For each flat value, its index in the rows and in every ragged dimension:
    (n_values, 1 + ragged_rank) int64."""
    pos = np.arange(splits_list[0].size - 1, dtype=np.int64)[:, None]
    for splits in splits_list:
        lengths = np.diff(splits)
        rows = np.repeat(np.arange(lengths.size), lengths)
        within = np.arange(int(splits[-1])) - splits[:-1][rows]
        pos = np.concatenate([pos[rows], within[:, None]], axis=1)
    return pos


def _ragged_shape(splits_list: list[np.ndarray], inner: tuple[int, ...]) -> list[int]:
    dims = [int(splits_list[0].size - 1)]
    for splits in splits_list:
        lengths = np.diff(splits)
        dims.append(int(lengths.max()) if lengths.size else 0)
    return dims + list(inner)


def to_tensor(
    shape: np.ndarray,
    values: np.ndarray,
    default: np.ndarray,
    types: Sequence[str],
    partitions: list[np.ndarray],
) -> np.ndarray:
    splits_list = nested_splits(types, partitions, values.shape[0])
    natural = _ragged_shape(splits_list, values.shape[1:])
    wanted = np.asarray(shape).reshape(-1) if np.asarray(shape).ndim else None
    if wanted is not None and wanted.size != len(natural):
        raise InvalidArgumentError(
            f"shape must have rank {len(natural)}, got {wanted.size}"  # TF's ragged rank check
        )
    dims = [n if wanted is None or wanted[i] < 0 else int(wanted[i]) for i, n in enumerate(natural)]
    inner = tuple(dims[len(splits_list) + 1 :])
    if inner != values.shape[1:]:
        raise InvalidArgumentError(
            f"The inner dimensions of values {list(values.shape[1:])} must match the shape "
            f"{list(inner)}"
        )
    out = np.empty(dims, dtype=values.dtype)
    out[...] = np.broadcast_to(default, inner) if np.ndim(default) else default
    pos = ragged_positions(splits_list)
    keep = np.all(pos < np.array(dims[: pos.shape[1]]), axis=1)
    out[tuple(pos[keep].T)] = values[keep]
    return out


@register_kernel("RaggedTensorToTensor")
def _ragged_to_tensor(k: KernelConstruction) -> Callable:
    types = [t.decode() if isinstance(t, bytes) else str(t) for t in k.attr("row_partition_types")]

    def compute(ctx, inputs: list) -> list:
        shape, values, default = (np.asarray(x) for x in inputs[:3])
        return [to_tensor(shape, values, default, types, [np.asarray(p) for p in inputs[3:]])]

    return compute


def to_sparse(
    splits: list[np.ndarray], values: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    splits_list = nested_splits(["ROW_SPLITS"] * len(splits), splits, values.shape[0])
    pos = ragged_positions(splits_list)
    inner = values.shape[1:]
    if inner:
        # One index per element of a value's inner dense dimensions, in row-major order.
        extra = np.indices(inner).reshape(len(inner), -1).T
        pos = np.concatenate(
            [np.repeat(pos, extra.shape[0], axis=0), np.tile(extra, (pos.shape[0], 1))], axis=1
        )
    dense_shape = np.array(_ragged_shape(splits_list, inner), np.int64)
    return pos.astype(np.int64), values.reshape(-1), dense_shape


@register_kernel("RaggedTensorToSparse")
def _ragged_to_sparse(k: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        splits = [np.asarray(s) for s in inputs[:-1]]
        return list(to_sparse(splits, np.asarray(inputs[-1])))

    return compute
