"""Ops (executor stage): the SparseTensor kernels TF1 programs use (tf.sparse.*): a sparse
tensor travels as three tensors, indices [N, rank] int64, values [N] and dense_shape [rank].
SparseTensorDenseMatMul, SparseTensorDenseAdd, SparseReorder, SparseAdd,
SparseFillEmptyRows and SparseDenseCwise{Add,Mul,Div} (SparseToDense is in
sparse_to_dense_ops). Stateless numpy kernels, safe from
any thread.

Values equal TensorFlow's bit for bit: products and sums accumulate in the value dtype, one
index at a time in index order, as TensorFlow's CPU kernels do (np.add.at is sequential).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op
from common.ops.sparse_tensor_util import compare_rows

# TensorFlow's numbertype, in its OpDef order.
ALL_NUMBERS = (
    "float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
    "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64"
)

register_op(
    "SparseTensorDenseMatMul",
    inputs=["a_indices: Tindices", "a_values: T", "a_shape: int64", "b: T"],
    outputs=["product: T"],
    attrs=[
        "T: type",
        "Tindices: {int32, int64} = DT_INT64",
        "adjoint_a: bool = false",
        "adjoint_b: bool = false",
    ],
)
register_op(
    "SparseTensorDenseAdd",
    inputs=["a_indices: Tindices", "a_values: T", "a_shape: Tindices", "b: T"],
    outputs=["output: T"],
    attrs=[f"T: {{{ALL_NUMBERS}}}", "Tindices: {int32, int64}"],
)
register_op(
    "SparseReorder",
    inputs=["input_indices: int64", "input_values: T", "input_shape: int64"],
    outputs=["output_indices: int64", "output_values: T"],
    attrs=["T: type"],
)
register_op(
    "SparseAdd",
    inputs=[
        "a_indices: int64",
        "a_values: T",
        "a_shape: int64",
        "b_indices: int64",
        "b_values: T",
        "b_shape: int64",
        "thresh: Treal",
    ],
    outputs=["sum_indices: int64", "sum_values: T", "sum_shape: int64"],
    attrs=[f"T: {{{ALL_NUMBERS}}}", "Treal: realnumbertype"],
)
register_op(
    "SparseFillEmptyRows",
    inputs=["indices: int64", "values: T", "dense_shape: int64", "default_value: T"],
    outputs=[
        "output_indices: int64",
        "output_values: T",
        "empty_row_indicator: bool",
        "reverse_index_map: int64",
    ],
    attrs=["T: type"],
)
for _kind in ("Add", "Mul", "Div"):
    register_op(
        f"SparseDenseCwise{_kind}",
        inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64", "dense: T"],
        outputs=["output: T"],
        attrs=[f"T: {{{ALL_NUMBERS}}}"],
    )


def _index_str(row: np.ndarray) -> str:
    return "[" + ",".join(str(int(x)) for x in row) + "]"


def check_sparse(indices: np.ndarray, values: np.ndarray, shape: np.ndarray) -> None:
    """The rank checks TensorFlow's sparse kernels open with."""
    if indices.ndim != 2:
        raise InvalidArgumentError(
            f"Input indices should be a matrix but received shape {mu.shape_str(indices.shape)}"
        )
    if values.ndim != 1:
        raise InvalidArgumentError(
            f"Input values should be a vector but received shape {mu.shape_str(values.shape)}"
        )
    if shape.ndim != 1:
        raise InvalidArgumentError(
            f"Input shape should be a vector but received shape {mu.shape_str(shape.shape)}"
        )
    if indices.shape[0] != values.shape[0] or indices.shape[1] != shape.shape[0]:
        raise InvalidArgumentError(
            f"Inconsistent shapes: indices {mu.shape_str(indices.shape)}, values "
            f"{mu.shape_str(values.shape)}, shape {mu.shape_str(shape.shape)}"
        )


# SparseTensorDenseMatMul


def sparse_dense_matmul(
    indices: np.ndarray,
    values: np.ndarray,
    a_shape: np.ndarray,
    b: np.ndarray,
    adjoint_a: bool,
    adjoint_b: bool,
) -> np.ndarray:
    if indices.ndim != 2 or indices.shape[1] != 2:
        raise InvalidArgumentError(
            f"Tensor 'a_indices' is not a matrix with 2 columns: {mu.shape_str(indices.shape)}"
        )
    if values.ndim != 1:
        raise InvalidArgumentError(
            f"Tensor 'a_values' is not a vector: {mu.shape_str(values.shape)}"
        )
    if a_shape.shape != (2,):
        raise InvalidArgumentError(
            f"Tensor 'a_shape' is not a vector of 2: {mu.shape_str(a_shape.shape)}"
        )
    if b.ndim != 2:
        raise InvalidArgumentError(f"Tensor 'b' is not a matrix: {mu.shape_str(b.shape)}")
    if values.shape[0] != indices.shape[0]:
        raise InvalidArgumentError(
            f"Number of rows of a_indices does not match number of entries in a_values: "
            f"{indices.shape[0]} vs {values.shape[0]}"
        )
    outer_left, inner_left = (int(a_shape[1]), int(a_shape[0])) if adjoint_a else (
        int(a_shape[0]), int(a_shape[1]))  # fmt: skip
    bm = b.conj().T if adjoint_b else b
    if inner_left != bm.shape[0]:
        ar, ac = int(a_shape[0]), int(a_shape[1])
        raise InvalidArgumentError(
            f"Cannot multiply A and B because inner dimension does not match: {inner_left} vs. "
            f"{bm.shape[0]}.  Did you forget a transpose?  Dimensions of A: [{ar}, {ac}).  "
            f"Dimensions of B: {mu.shape_str(b.shape)}"
        )
    idx = indices.astype(np.int64)
    rows, cols = (idx[:, 1], idx[:, 0]) if adjoint_a else (idx[:, 0], idx[:, 1])
    vals = values.conj() if adjoint_a else values
    for i in range(idx.shape[0]):
        if not 0 <= cols[i] < inner_left:
            raise InvalidArgumentError(
                f"k ({int(cols[i])}) from index[{i},{0 if adjoint_a else 1}] out of bounds "
                f"(>={inner_left})"
            )
        if not 0 <= rows[i] < outer_left:
            raise InvalidArgumentError(
                f"m ({int(rows[i])}) from index[{i},{1 if adjoint_a else 0}] out of bounds "
                f"(>={outer_left})"
            )
    out = np.zeros((outer_left, bm.shape[1]), dtype=b.dtype)
    np.add.at(out, rows, vals[:, None] * bm[cols])
    return out


@register_kernel("SparseTensorDenseMatMul")
def _sparse_dense_matmul(k: KernelConstruction) -> Callable:
    adj_a, adj_b = bool(k.attr("adjoint_a")), bool(k.attr("adjoint_b"))

    def compute(ctx, inputs: list) -> list:
        indices, values, shape, b = (np.asarray(v) for v in inputs)
        return [sparse_dense_matmul(indices, values, shape, b, adj_a, adj_b)]

    return compute


# SparseTensorDenseAdd


def sparse_dense_add(
    indices: np.ndarray, values: np.ndarray, shape: np.ndarray, b: np.ndarray
) -> np.ndarray:
    if indices.ndim != 2:
        raise InvalidArgumentError(
            f"Input a_indices should be a matrix but received shape: {mu.shape_str(indices.shape)}"
        )
    if values.ndim != 1 or shape.ndim != 1:
        raise InvalidArgumentError(
            "Inputs a_values and a_shape should be vectors but received shapes: "
            f"{mu.shape_str(values.shape)} and {mu.shape_str(shape.shape)}"
        )
    if tuple(int(d) for d in shape) != b.shape:
        raise InvalidArgumentError(
            f"Dimension mismatch: {mu.shape_str(tuple(int(d) for d in shape))} vs. "
            f"{mu.shape_str(b.shape)}"
        )
    idx = indices.astype(np.int64)
    bad = np.nonzero(np.any((idx < 0) | (idx >= shape.astype(np.int64)), axis=1))[0]
    if bad.size:
        raise InvalidArgumentError(
            "Provided indices are out-of-bounds w.r.t. dense side with broadcasted shape"
        )
    out = b.copy()
    np.add.at(out, tuple(idx.T), values)
    return out


@register_kernel("SparseTensorDenseAdd")
def _sparse_tensor_dense_add(k: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        return [sparse_dense_add(*(np.asarray(v) for v in inputs))]

    return compute


# SparseReorder / SparseAdd / SparseFillEmptyRows


def reorder(indices: np.ndarray) -> np.ndarray:
    """The permutation sorting `indices` rows in row-major order (stable)."""
    if indices.shape[0] == 0:
        return np.zeros(0, np.int64)
    return np.lexsort(indices.T[::-1])


@register_kernel("SparseReorder")
def _sparse_reorder(k: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        indices, values, shape = (np.asarray(v) for v in inputs)
        check_sparse(indices, values, shape)
        order = reorder(indices)
        return [indices[order], values[order]]

    return compute


def sparse_add(
    a: tuple[np.ndarray, np.ndarray, np.ndarray],
    b: tuple[np.ndarray, np.ndarray, np.ndarray],
    thresh: np.ndarray,
) -> list:
    (ai, av, ash), (bi, bv, bsh) = a, b
    for xi, xv, xs in (a, b):
        if xi.ndim != 2:
            raise InvalidArgumentError(
                f"Input indices should be a matrix but received shape: {mu.shape_str(xi.shape)}"
            )
        if xv.ndim != 1:
            raise InvalidArgumentError(
                f"Input values should be a vector but received shape: {mu.shape_str(xv.shape)}"
            )
        if xs.ndim != 1:
            raise InvalidArgumentError(
                f"Input shapes should be a vector but received shapes {mu.shape_str(xs.shape)}"
            )
    if ai.shape[0] != av.shape[0] or bi.shape[0] != bv.shape[0]:
        raise InvalidArgumentError(
            "Expected indices and values to have the same number of entries: "
            f"{ai.shape[0]} vs {av.shape[0]} and {bi.shape[0]} vs {bv.shape[0]}"
        )
    if not np.array_equal(ash, bsh):
        raise InvalidArgumentError(
            f"Operands do not have the same ranks; got shapes: {_index_str(ash)} and "
            f"{_index_str(bsh)}"
        )
    if thresh.ndim != 0:
        raise InvalidArgumentError(
            f"The magnitude threshold must be a scalar: got shape {mu.shape_str(thresh.shape)}"
        )
    out_idx: list[np.ndarray] = []
    out_val: list = []
    i = j = 0
    while i < ai.shape[0] and j < bi.shape[0]:
        c = compare_rows(ai[i], bi[j])
        if c < 0:
            out_idx.append(ai[i])
            out_val.append(av[i])
            i += 1
        elif c > 0:
            out_idx.append(bi[j])
            out_val.append(bv[j])
            j += 1
        else:
            s = av[i] + bv[j]
            if thresh <= np.abs(s):
                out_idx.append(ai[i])
                out_val.append(s)
            i += 1
            j += 1
    out_idx.extend(ai[i:])
    out_val.extend(av[i:])
    out_idx.extend(bi[j:])
    out_val.extend(bv[j:])
    rank = ash.shape[0]
    indices = np.array(out_idx, np.int64).reshape(len(out_idx), rank)
    return [indices, np.array(out_val, av.dtype).reshape(-1), ash.astype(np.int64)]


@register_kernel("SparseAdd")
def _sparse_add(k: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        v = [np.asarray(x) for x in inputs]
        return sparse_add((v[0], v[1], v[2]), (v[3], v[4], v[5]), v[6])

    return compute


def fill_empty_rows(
    indices: np.ndarray, values: np.ndarray, shape: np.ndarray, default: np.ndarray
) -> list:
    if shape.ndim != 1:
        raise InvalidArgumentError(
            f"dense_shape must be a vector, saw: {mu.shape_str(shape.shape)}"
        )
    if indices.ndim != 2:
        raise InvalidArgumentError(f"indices must be a matrix, saw: {mu.shape_str(indices.shape)}")
    if values.ndim != 1:
        raise InvalidArgumentError(f"values must be a vector, saw: {mu.shape_str(values.shape)}")
    if default.ndim != 0:
        raise InvalidArgumentError(
            f"default_value must be a scalar, saw: {mu.shape_str(default.shape)}"
        )
    if indices.shape[0] != values.shape[0]:
        raise InvalidArgumentError(
            f"The length of `values` ({values.shape[0]}) must match the first dimension of "
            f"`indices` ({indices.shape[0]})."
        )
    if shape.shape[0] != indices.shape[1]:
        raise InvalidArgumentError(
            f"The length of `dense_shape` ({shape.shape[0]}) must match the second dimension "
            f"of `indices` ({indices.shape[1]})."
        )
    if shape.shape[0] == 0:
        raise InvalidArgumentError("Received SparseTensor with dense_shape of rank 0")
    dense_rows = int(shape[0])
    rows = indices[:, 0] if indices.shape[0] else np.zeros(0, np.int64)
    for i, r in enumerate(rows):
        if not 0 <= r < dense_rows:
            raise InvalidArgumentError(f"indices({i}, 0) is invalid: {int(r)} >= {dense_rows}")
    counts = (
        np.bincount(rows, minlength=dense_rows)[:dense_rows]
        if dense_rows
        else np.zeros(0, np.int64)
    )
    empty = counts == 0
    # Entries keep their order within a row; the rows come out sorted (a stable sort).
    order = np.argsort(rows, kind="stable")
    empty_rows = np.nonzero(empty)[0]
    fill_idx = np.zeros((empty_rows.size, indices.shape[1]), np.int64)
    fill_idx[:, 0] = empty_rows
    all_idx = np.concatenate([indices[order].astype(np.int64), fill_idx])
    all_val = np.concatenate([values[order], np.full(empty_rows.size, default, values.dtype)])
    all_rows = np.concatenate([rows[order], empty_rows])
    final = np.argsort(all_rows, kind="stable")
    position = np.empty_like(final)
    position[final] = np.arange(final.size)
    reverse = np.empty(indices.shape[0], np.int64)
    reverse[order] = position[: indices.shape[0]]
    return [all_idx[final], all_val[final], empty, reverse]


@register_kernel("SparseFillEmptyRows")
def _sparse_fill_empty_rows(k: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        return fill_empty_rows(*(np.asarray(v) for v in inputs))

    return compute


# SparseDenseCwise{Add,Mul,Div}


def _cwise(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable:
    def factory(k: KernelConstruction) -> Callable:
        def compute(ctx, inputs: list) -> list:
            indices, values, shape, dense = (np.asarray(v) for v in inputs)
            check_sparse(indices, values, shape)
            dims = tuple(int(d) for d in shape)
            if dense.ndim > len(dims) or any(
                d not in (1, s) for d, s in zip(dense.shape[::-1], dims[::-1])
            ):
                raise InvalidArgumentError(
                    f"SparseDenseBinaryOpShared broadcasts dense to sparse only; got incompatible "
                    f"shapes: [{','.join(map(str, dims))}] vs. "
                    f"[{','.join(map(str, dense.shape))}]"
                )
            full = np.broadcast_to(dense, dims)
            picked = full[tuple(indices.astype(np.int64).T)]
            return [fn(values, picked).astype(values.dtype)]

        return compute

    return factory


def _divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "iu":  # C++ integer division truncates toward zero
        q = np.abs(x) // np.abs(y)
        return np.where((x < 0) != (y < 0), -q, q) if x.dtype.kind == "i" else q
    return x / y


register_kernel("SparseDenseCwiseAdd")(_cwise(np.add))
register_kernel("SparseDenseCwiseMul")(_cwise(np.multiply))
register_kernel("SparseDenseCwiseDiv")(_cwise(_divide))
