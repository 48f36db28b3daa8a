"""Ops (executor stage): arithmetic on the values of SparseTensors — SparseSoftmax (a
softmax over the last dimension's entries of each row, implicit zeros not counted),
SparseSparseMaximum/Minimum (the union of two SparseTensors' indices, a missing entry
counting as 0) and SparseAddGrad (SparseAdd's gradient: the sum's gradient handed back to
the entries of each operand). Stateless numpy kernels, safe from any thread.

SparseSoftmax computes in the value dtype as Eigen does (max, exp of the shifted values,
their sum, one division); float results may differ from TensorFlow's in the last bit.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op
from common.ops.sparse_ops import ALL_NUMBERS, reorder
from common.ops.sparse_tensor_util import (
    compare_rows,
    create_checks,
    groups,
    validate_sparse_tensor,
)

register_op(
    "SparseSoftmax",
    inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64"],
    outputs=["output: T"],
    attrs=["T: {half, float, double}"],
)
_SPARSE_SPARSE_IN = [
    f"{x}_{part}" for x in "ab" for part in ("indices: int64", "values: T", "shape: int64")
]
register_op(
    "SparseSparseMaximum",
    _SPARSE_SPARSE_IN,
    ["output_indices: int64", "output_values: T"],
    ["T: realnumbertype"],
)
register_op(
    "SparseSparseMinimum",
    _SPARSE_SPARSE_IN,
    ["output_indices: int64", "output_values: T"],
    [f"T: {{{ALL_NUMBERS}}}"],
)
register_op(
    "SparseAddGrad",
    inputs=[
        "backprop_val_grad: T",
        "a_indices: int64",
        "b_indices: int64",
        "sum_indices: int64",
    ],
    outputs=["a_val_grad: T", "b_val_grad: T"],
    attrs=[f"T: {{{ALL_NUMBERS}}}"],
)


def _summarize(shape: np.ndarray) -> str:
    """Tensor::SummarizeValue(10) of an int vector: its values separated by spaces."""
    flat = [str(int(x)) for x in shape.reshape(-1)]
    return " ".join(flat[:10]) + ("..." if len(flat) > 10 else "")


def sparse_softmax(indices: np.ndarray, values: np.ndarray, shape: np.ndarray) -> np.ndarray:
    if indices.ndim != 2:
        raise InvalidArgumentError(
            f"Input sp_indices should be a matrix but received shape: {mu.shape_str(indices.shape)}"
        )
    if values.ndim != 1 or shape.ndim != 1:
        raise InvalidArgumentError(
            "Inputs sp_values and sp_shape should be vectors but received shapes: "
            f"{mu.shape_str(values.shape)} and {mu.shape_str(shape.shape)}"
        )
    if shape.size < 2:
        raise InvalidArgumentError(
            f"Input should have rank >= 2, but received shape: {_summarize(shape)}"
        )
    create_checks(indices, values, shape.size)
    # The result follows the row-major order of the indices, as TensorFlow's kernel
    # reorders its copy of the input before grouping the rows.
    order = reorder(indices)
    idx, vals = indices[order], values[order]
    out = np.empty_like(vals)
    with mu.FpErrorsIgnored():
        for _, rows in groups(idx, shape.size - 1):
            shifted = np.exp(vals[rows] - vals[rows].max())
            out[rows] = shifted / shifted.sum(dtype=vals.dtype)
    return out


@register_kernel("SparseSoftmax")
def _sparse_softmax(k: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        return [sparse_softmax(*(np.asarray(v) for v in inputs))]

    return compute


def union_with_zeros(
    ai: np.ndarray, av: np.ndarray, bi: np.ndarray, bv: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """UnionSparseIndicesAndValues: the merged indices, with each operand's value there
    (0 where it has no entry)."""
    rows: list[np.ndarray] = []
    a_vals: list = []
    b_vals: list = []
    zero = av.dtype.type(0)
    i = j = 0
    while i < ai.shape[0] and j < bi.shape[0]:
        c = compare_rows(ai[i], bi[j])
        if c <= 0:
            rows.append(ai[i])
            a_vals.append(av[i])
            b_vals.append(bv[j] if c == 0 else zero)
            j += c == 0
            i += 1
        else:
            rows.append(bi[j])
            a_vals.append(zero)
            b_vals.append(bv[j])
            j += 1
    for k in range(i, ai.shape[0]):
        rows.append(ai[k])
        a_vals.append(av[k])
        b_vals.append(zero)
    for k in range(j, bi.shape[0]):
        rows.append(bi[k])
        a_vals.append(zero)
        b_vals.append(bv[k])
    indices = np.array(rows, np.int64).reshape(len(rows), ai.shape[1])
    return indices, np.array(a_vals, av.dtype), np.array(b_vals, av.dtype)


def sparse_sparse_binary(
    a: list[np.ndarray], b: list[np.ndarray], fn: Callable[[np.ndarray, np.ndarray], np.ndarray]
) -> list[np.ndarray]:
    validate_sparse_tensor(a[0], a[1], a[2], bounds=True)
    validate_sparse_tensor(b[0], b[1], b[2], bounds=True)
    if a[2].shape != b[2].shape:
        raise InvalidArgumentError(
            f"Operands do not have the same ranks; got shapes: {_summarize(a[2])} and "
            f"{_summarize(b[2])}"
        )
    for d, (x, y) in enumerate(zip(a[2], b[2])):
        if x != y:
            raise InvalidArgumentError(
                f"Operands' shapes do not match: got {int(x)} and {int(y)} for dimension {d}"
            )
    indices, a_vals, b_vals = union_with_zeros(a[0], a[1], b[0], b[1])
    return [indices, fn(a_vals, b_vals).astype(a[1].dtype)]


def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable:
    def factory(k: KernelConstruction) -> Callable:
        def compute(ctx, inputs: list) -> list:
            v = [np.asarray(x) for x in inputs]
            return sparse_sparse_binary(v[:3], v[3:], fn)

        return compute

    return factory


register_kernel("SparseSparseMaximum")(_binary(np.maximum))
register_kernel("SparseSparseMinimum")(_binary(np.minimum))


def sparse_add_grad(
    grad: np.ndarray, a_idx: np.ndarray, b_idx: np.ndarray, sum_idx: np.ndarray
) -> list[np.ndarray]:
    if a_idx.ndim != 2 or b_idx.ndim != 2 or sum_idx.ndim != 2:
        raise InvalidArgumentError(
            "Input indices should be matrices but received shapes: "
            f"{mu.shape_str(a_idx.shape)} and {mu.shape_str(b_idx.shape)} and "
            f"{mu.shape_str(sum_idx.shape)}"
        )
    if grad.ndim != 1:
        raise InvalidArgumentError(
            "Input backprop_val_grad should be a vector but received shape: "
            f"{mu.shape_str(grad.shape)}"
        )
    if not a_idx.shape[1] == b_idx.shape[1] == sum_idx.shape[1]:
        # TensorFlow's message runs the three numbers together.
        raise InvalidArgumentError(
            "The densified operands should have the same ndims; for A, B, sum got: "
            f"{a_idx.shape[1]}{b_idx.shape[1]}{sum_idx.shape[1]}"
        )
    if grad.shape[0] != sum_idx.shape[0]:
        raise InvalidArgumentError(
            "# elements of backprop_val_grad and # rows of sum_indices should match (#nnz of "
            f"sum): got {grad.shape[0]} and {sum_idx.shape[0]}"
        )
    a_grad = np.zeros(a_idx.shape[0], grad.dtype)
    b_grad = np.zeros(b_idx.shape[0], grad.dtype)
    pos = {"a": 0, "b": 0}
    operands = {"a": (a_idx, a_grad), "b": (b_idx, b_grad)}
    k = 0

    def step(name: str) -> bool:
        """One comparison of operand `name`'s next entry with sum entry k; False when the
        operand's entry sorts before it (it was cancelled out of the sum)."""
        idx, out = operands[name]
        c = compare_rows(idx[pos[name]], sum_idx[k])
        if c == 0:
            out[pos[name]] = grad[k]
        if c <= 0:
            pos[name] += 1
        return c >= 0

    # The three lists are walked together, as TensorFlow's kernel does.
    while pos["a"] < a_idx.shape[0] and pos["b"] < b_idx.shape[0] and k < sum_idx.shape[0]:
        a_geq, b_geq = step("a"), step("b")
        k += a_geq and b_geq
    for name in ("a", "b"):
        while pos[name] < operands[name][0].shape[0] and k < sum_idx.shape[0]:
            k += step(name)
    return [a_grad, b_grad]


@register_kernel("SparseAddGrad")
def _sparse_add_grad(k: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        return sparse_add_grad(*(np.asarray(v) for v in inputs))

    return compute
