"""Ops (executor stage): the tf.sets kernels as TensorFlow's set_kernels.cc — SetSize and
the a-b / b-a / intersection / union of the sets along the last dimension of two inputs,
dense or sparse (DenseToDenseSetOperation, DenseToSparseSetOperation,
SparseToSparseSetOperation). A result is a SparseTensor: per group (the leading n-1
indices) its sorted set, in positions 0..k-1 of the last dimension, whose size is the
largest set. Stateless numpy kernels, safe from any thread."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InternalError, InvalidArgumentError
from common.ops.registry import KernelConstruction, register_kernel, register_op
from common.ops.sparse_tensor_util import create_checks, groups, indices_valid

SET_TYPES = "T: {int8, int16, int32, int64, uint8, uint16, string}"
_SET_ATTRS = ["set_operation: string", "validate_indices: bool = true", SET_TYPES]
_RESULT = ["result_indices: int64", "result_values: T", "result_shape: int64"]

register_op(
    "SetSize",
    inputs=["set_indices: int64", "set_values: T", "set_shape: int64"],
    outputs=["size: int32"],
    attrs=["validate_indices: bool = true", SET_TYPES],
)
register_op("DenseToDenseSetOperation", ["set1: T", "set2: T"], _RESULT, _SET_ATTRS)
register_op(
    "DenseToSparseSetOperation",
    ["set1: T", "set2_indices: int64", "set2_values: T", "set2_shape: int64"],
    _RESULT,
    _SET_ATTRS,
)
register_op(
    "SparseToSparseSetOperation",
    [f"set{i}_{part}" for i in (1, 2) for part in ("indices: int64", "values: T", "shape: int64")],
    _RESULT,
    _SET_ATTRS,
)

SparseSet = tuple[np.ndarray, np.ndarray, list[int]]
SetFn = Callable[[set, set], set]

_OPERATIONS: dict[str, SetFn] = {
    "a-b": lambda a, b: a - b,
    "b-a": lambda a, b: b - a,
    "intersection": lambda a, b: a & b,
    "union": lambda a, b: a | b,
}


def _sparse_set(
    indices: np.ndarray, values: np.ndarray, shape: np.ndarray, validate: bool
) -> SparseSet:
    """SparseTensorFromContext: a rank >= 2 SparseTensor, its indices checked if asked."""
    if shape.ndim != 1:
        raise InvalidArgumentError("Shape must be a 1D tensor.")
    dims = [int(d) for d in shape]
    if any(d < 0 for d in dims):
        raise InvalidArgumentError(f"Dimension {min(dims)} must be >= 0")
    if len(dims) < 2:
        raise InvalidArgumentError(f"Invalid rank {len(dims)}.")
    create_checks(indices, values, len(dims))
    idx = indices.astype(np.int64)
    if validate:
        indices_valid(idx, dims)
    return idx, values, dims


def _group_shape(shape: list[int]) -> list[int]:
    if len(shape) < 2:
        raise InvalidArgumentError(f"Shape [{','.join(map(str, shape))}] has rank {len(shape)} < 2")
    return shape[:-1]


def _common_group_shape(shape1: list[int], shape2: list[int]) -> list[int]:
    g1, g2 = _group_shape(shape1), _group_shape(shape2)
    if g1 != g2:
        raise InvalidArgumentError(
            f"Mismatched shapes [{','.join(map(str, g1))}] vs [{','.join(map(str, g2))}]"
        )
    return g1


def _checked_group(idx: np.ndarray, rows: np.ndarray, dims: list[int]) -> None:
    """CheckGroup: TensorFlow's sanity check that a group's indices are in bounds."""
    for j, d in enumerate(dims):
        if d <= 0:
            raise InternalError(f"Invalid dim_size[{j}] = {d}.")
        for i, r in enumerate(rows):
            if idx[r, j] >= d:
                raise InternalError(f"indices[{i}, {j}] expected < {d}, got {int(idx[r, j])}.")


def _values(s: SparseSet, rows: np.ndarray) -> set:
    _checked_group(s[0], rows, s[2])
    return set(s[1][rows].tolist())


def _dense_groups(dense: np.ndarray) -> np.ndarray:
    """The rows of a rank >= 2 dense input, one per group."""
    return dense.reshape(int(np.prod(dense.shape[:-1])), dense.shape[-1])


def _output(
    group_shape: list[int], results: list[tuple[tuple[int, ...], set]], dtype: np.dtype
) -> list[np.ndarray]:
    """OutputSparseTensor: each group's sorted set along the last dimension."""
    results = [(key, s) for key, s in results if s]
    width = max((len(s) for _, s in results), default=0)
    rank = len(group_shape) + 1
    rows: list[list[int]] = []
    vals: list = []
    for key, s in results:
        for pos, v in enumerate(sorted(s)):
            rows.append([*key, pos])
            vals.append(v)
    indices = np.array(rows, np.int64).reshape(len(rows), rank)
    values = np.empty(len(vals), dtype)
    values[:] = vals
    return [indices, values, np.array([*group_shape, width], np.int64)]


def _group_keys(group_shape: list[int]) -> list[tuple[int, ...]]:
    return [tuple(int(x) for x in k) for k in np.ndindex(*group_shape)]


def dense_to_dense(set1: np.ndarray, set2: np.ndarray, op: SetFn) -> list[np.ndarray]:
    group_shape = _common_group_shape(list(set1.shape), list(set2.shape))
    rows1, rows2 = _dense_groups(set1), _dense_groups(set2)
    results = [
        (key, op(set(rows1[g].tolist()), set(rows2[g].tolist())))
        for g, key in enumerate(_group_keys(group_shape))
    ]
    return _output(group_shape, results, set1.dtype)


def dense_to_sparse(set1: np.ndarray, set2: SparseSet, op: SetFn) -> list[np.ndarray]:
    group_shape = _common_group_shape(list(set1.shape), set2[2])
    rows1 = _dense_groups(set1)
    pending = list(groups(set2[0], len(set2[2]) - 1))
    results = []
    at = 0
    for g, key in enumerate(_group_keys(group_shape)):
        values2: set = set()
        # The sparse groups are walked in step with the dense ones; a sparse group whose
        # key is not the next dense key stalls the walk (TensorFlow's iterator does too).
        if at < len(pending) and pending[at][0] == key:
            values2 = _values(set2, pending[at][1])
            at += 1
        results.append((key, op(set(rows1[g].tolist()), values2)))
    return _output(group_shape, results, set1.dtype)


def sparse_to_sparse(set1: SparseSet, set2: SparseSet, op: SetFn) -> list[np.ndarray]:
    group_shape = _common_group_shape(set1[2], set2[2])
    g1 = list(groups(set1[0], len(set1[2]) - 1))
    g2 = list(groups(set2[0], len(set2[2]) - 1))
    i = j = 0
    results = []
    while i < len(g1) or j < len(g2):
        k1 = g1[i][0] if i < len(g1) else None
        k2 = g2[j][0] if j < len(g2) else None
        a: set = set()
        b: set = set()
        key = k1
        if k2 is None or (k1 is not None and k1 <= k2):
            a = _values(set1, g1[i][1])
            i += 1
        if k1 is None or (k2 is not None and k2 <= k1):
            b = _values(set2, g2[j][1])
            j += 1
            key = k2
        assert key is not None
        results.append((key, op(a, b)))
    return _output(group_shape, results, set1[1].dtype)


def set_size(s: SparseSet) -> np.ndarray:
    idx, _, dims = s
    out_shape = _group_shape(dims)
    out = np.zeros(out_shape, np.int32)
    flat = out.reshape(-1)
    strides = np.array([int(np.prod(out_shape[d + 1 :])) for d in range(len(out_shape))])
    for key, rows in groups(idx, len(out_shape)):
        size = len(_values(s, rows))
        where = int(np.dot(key, strides)) if key else 0
        if where >= flat.size:
            raise InvalidArgumentError(
                f"Index out of range, {idx[rows]} vs [{','.join(map(str, out_shape))}]"
            )
        flat[where] = size
    return out


def _operation(k: KernelConstruction) -> SetFn:
    name = str(k.attr("set_operation")).lower()
    if name not in _OPERATIONS:
        raise InvalidArgumentError(f"Invalid set_operation {name}.")
    return _OPERATIONS[name]


@register_kernel("SetSize")
def _set_size(k: KernelConstruction) -> Callable:
    validate = bool(k.attr("validate_indices"))

    def compute(ctx, inputs: list) -> list:
        indices, values, shape = (np.asarray(v) for v in inputs)
        return [set_size(_sparse_set(indices, values, shape, validate))]

    return compute


@register_kernel("DenseToDenseSetOperation")
def _dense_to_dense(k: KernelConstruction) -> Callable:
    op = _operation(k)

    def compute(ctx, inputs: list) -> list:
        return dense_to_dense(np.asarray(inputs[0]), np.asarray(inputs[1]), op)

    return compute


@register_kernel("DenseToSparseSetOperation")
def _dense_to_sparse(k: KernelConstruction) -> Callable:
    op, validate = _operation(k), bool(k.attr("validate_indices"))

    def compute(ctx, inputs: list) -> list:
        set1, *sparse = (np.asarray(v) for v in inputs)
        set2 = _sparse_set(sparse[0], sparse[1], sparse[2], validate)
        return dense_to_sparse(set1, set2, op)

    return compute


@register_kernel("SparseToSparseSetOperation")
def _sparse_to_sparse(k: KernelConstruction) -> Callable:
    op, validate = _operation(k), bool(k.attr("validate_indices"))

    def compute(ctx, inputs: list) -> list:
        v = [np.asarray(x) for x in inputs]
        set1 = _sparse_set(v[0], v[1], v[2], validate)
        set2 = _sparse_set(v[3], v[4], v[5], validate)
        return sparse_to_sparse(set1, set2, op)

    return compute
