"""Ops (executor stage): the SparseTensor kernels that move entries to new positions
without touching their values: SparseReshape (reshape_util.cc), SparseSlice and its
gradient SparseSliceGrad. Stateless numpy kernels, safe from any thread."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InternalError, InvalidArgumentError
from common.ops.math_util import shape_str
from common.ops.registry import KernelConstruction, register_kernel, register_op
from common.ops.sparse_ops import ALL_NUMBERS
from common.ops.sparse_tensor_util import validate_sparse_tensor

register_op(
    "SparseReshape",
    inputs=["input_indices: int64", "input_shape: int64", "new_shape: int64"],
    outputs=["output_indices: int64", "output_shape: int64"],
)
register_op(
    "SparseSlice",
    inputs=["indices: int64", "values: T", "shape: int64", "start: int64", "size: int64"],
    outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
    attrs=["T: type"],
)
register_op(
    "SparseSliceGrad",
    inputs=[
        "backprop_val_grad: T",
        "input_indices: int64",
        "input_start: int64",
        "output_indices: int64",
    ],
    outputs=["val_grad: T"],
    attrs=[f"T: {{{ALL_NUMBERS}}}"],
)


def _strides(dims: list[int]) -> np.ndarray:
    out = np.ones(len(dims), np.int64)
    for d in range(len(dims) - 2, -1, -1):
        out[d] = out[d + 1] * dims[d + 1]
    return out


def _target_shape(new_shape: np.ndarray, dense_size: int, in_dims: list[int]) -> list[int]:
    """ReshapeSparseTensor's output shape: the sizes, one of them -1 for "the rest"."""
    out: list[int] = []
    product, unknown = 1, -1
    for d, size in enumerate(int(x) for x in new_shape):
        if size == -1:
            if unknown != -1:
                raise InvalidArgumentError(
                    f"only one output dimension may be -1, not both {unknown} and {d}"
                )
            unknown = d
            out.append(1)
        else:
            if size < 0:
                raise InvalidArgumentError(f"size {d} must be non-negative, not {size}")
            product *= size
            out.append(size)
    if unknown != -1:
        if product <= 0:
            raise InvalidArgumentError(
                "reshape cannot infer the missing input size for an empty tensor unless all "
                "specified input sizes are non-zero"
            )
        missing = dense_size // product
        if product * missing != dense_size:
            raise InvalidArgumentError(
                f"Input to reshape is a SparseTensor with {dense_size} dense values, but the "
                f"requested shape requires a multiple of {product}. input_shape="
                f"{shape_str(in_dims)} output_shape={shape_str(out)}"
            )
        out[unknown] = missing
    if int(np.prod(out, dtype=np.int64)) != dense_size:
        raise InvalidArgumentError(
            f"Input to reshape is a tensor with {dense_size} dense values, but the requested "
            f"shape has {int(np.prod(out, dtype=np.int64))}. input_shape={shape_str(in_dims)} "
            f"output_shape={shape_str(out)}"
        )
    return out


def sparse_reshape(
    indices: np.ndarray, in_shape: np.ndarray, new_shape: np.ndarray
) -> list[np.ndarray]:
    # SparseReshapeOp's own checks, then ReshapeSparseTensor's.
    if indices.ndim != 2:
        raise InvalidArgumentError("Input must be a matrix.")
    if in_shape.ndim != 1:
        raise InvalidArgumentError("Input shape must be a vector.")
    if indices.shape[1] != in_shape.shape[0]:
        raise InvalidArgumentError("Input tensor rank must match input shape length.")
    for what, arr, ndim in (
        ("Input indices should be a matrix", indices, 2),
        ("Input shape should be a vector", in_shape, 1),
        ("Target shape should be a vector", new_shape, 1),
    ):
        if arr.ndim != ndim:
            raise InvalidArgumentError(f"{what} but received shape {shape_str(arr.shape)}")
    in_dims = [int(d) for d in in_shape]
    if any(d < 0 for d in in_dims):
        raise InvalidArgumentError(f"Dimension {min(in_dims)} must be >= 0")
    dense_size = int(np.prod(in_dims, dtype=np.int64))
    out_dims = _target_shape(new_shape, dense_size, in_dims)
    if out_dims == in_dims:
        return [indices, in_shape]
    nnz = indices.shape[0]
    if nnz and dense_size == 0:
        raise InvalidArgumentError(
            f"Input tensor has {nnz} non zero elements but input shape "
            f"({shape_str(in_dims)}) or output shape ({shape_str(out_dims)}) is empty"
        )
    flat = indices.astype(np.int64) @ _strides(in_dims) if nnz else np.zeros(0, np.int64)
    out = np.zeros((nnz, len(out_dims)), np.int64)
    for j, stride in enumerate(_strides(out_dims)):
        out[:, j], flat = np.divmod(flat, stride)
    return [out, np.array(out_dims, np.int64)]


@register_kernel("SparseReshape")
def _sparse_reshape(k: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        return sparse_reshape(*(np.asarray(v) for v in inputs))

    return compute


def sparse_slice(
    indices: np.ndarray,
    values: np.ndarray,
    shape: np.ndarray,
    start: np.ndarray,
    size: np.ndarray,
) -> list[np.ndarray]:
    # Indices are not checked against the shape: some ops use -1 as a placeholder.
    validate_sparse_tensor(indices, values, shape, bounds=False)
    for what, arr in (("start", start), ("size", size)):
        if arr.ndim != 1:
            raise InvalidArgumentError(
                f"Input {what} should be a vector but received shape {shape_str(arr.shape)}"
            )
    rank = shape.size
    for what, arr in (("start", start), ("size", size)):
        if arr.size != rank:
            raise InvalidArgumentError(
                f"Expected {what} to be a vector of length {rank} but got length {arr.size}"
            )
    lo, sz = start.astype(np.int64), size.astype(np.int64)
    for s in sz:
        if s < 0:
            raise InvalidArgumentError(f"Expected a non-negative size, got {int(s)}")
    dims = shape.astype(np.int64)
    out_shape = np.maximum(np.minimum(lo + sz, dims) - lo, 0)
    idx = indices.astype(np.int64)
    keep = np.all((idx >= lo) & (idx < lo + sz), axis=1) if idx.size else np.zeros(
        idx.shape[0], bool)  # fmt: skip
    return [idx[keep] - lo, values[keep], out_shape]


@register_kernel("SparseSlice")
def _sparse_slice(k: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        return sparse_slice(*(np.asarray(v) for v in inputs))

    return compute


def sparse_slice_grad(
    grad: np.ndarray, in_indices: np.ndarray, start: np.ndarray, out_indices: np.ndarray
) -> np.ndarray:
    if in_indices.ndim != 2 or out_indices.ndim != 2:
        raise InvalidArgumentError(
            "Input and output indices should be matrices but received shapes: "
            f"{shape_str(in_indices.shape)} and {shape_str(out_indices.shape)}"
        )
    if grad.ndim != 1:
        raise InvalidArgumentError(
            f"Input backprop_val_grad should be a vector but received shape: "
            f"{shape_str(grad.shape)}"
        )
    if in_indices.shape[1] != out_indices.shape[1]:
        raise InvalidArgumentError(
            "The input and output should have the same ndims: got: "
            f"{in_indices.shape[1]} and {out_indices.shape[1]}"
        )
    if grad.shape[0] != out_indices.shape[0]:
        raise InvalidArgumentError(
            "# elements of backprop_val_grad and # rows of output_indices should match "
            f"(#nnz of sum): got {grad.shape[0]} and {out_indices.shape[0]}"
        )
    ndims = in_indices.shape[1]
    if start.ndim != 1 or start.size != ndims:
        raise InvalidArgumentError(
            f"Expected input_start to be a vector of length {ndims} but got length {start.size}"
        )
    out = np.zeros(in_indices.shape[0], grad.dtype)
    # Both index lists are in the same order: walk them together, as TensorFlow does.
    shifted = out_indices.astype(np.int64) + start.astype(np.int64)
    j = 0
    for i in range(in_indices.shape[0]):
        if j >= grad.shape[0]:
            break
        if np.array_equal(in_indices[i], shifted[j]):
            out[i] = grad[j]
            j += 1
    if j != grad.shape[0]:
        raise InternalError(
            "Elements of backprop_val_grad aren't all propagated. Num elements:"
            f"{grad.shape[0]}, used: {j}"
        )
    return out


@register_kernel("SparseSliceGrad")
def _sparse_slice_grad(k: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        return [sparse_slice_grad(*(np.asarray(v) for v in inputs))]

    return compute
