"""Ops (executor stage): the sparse segment reductions that tf.nn.embedding_lookup_sparse
builds — SparseSegmentSum/Mean/SqrtN (and ...WithNumSegments): rows `data[indices[i]]`
reduced into segment `segment_ids[i]` — and their gradients, dense (SparseSegment*Grad)
and sparse (SparseSegment*GradV2: the values for each distinct index, sorted).

Kernels are stateless numpy functions, safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

_REAL = "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64"
_FLOAT = "bfloat16, half, float, double"
_INDEX = ("Tidx: {int32, int64} = DT_INT32", "Tsegmentids: {int32, int64} = DT_INT32")


def _check(data: np.ndarray, indices: np.ndarray, ids: np.ndarray, rows: int | None) -> None:
    if indices.ndim != 1:
        raise InvalidArgumentError("indices should be a vector.")
    if ids.ndim != 1:
        raise InvalidArgumentError("segment_ids should be a vector.")
    if indices.shape[0] != ids.shape[0]:
        raise InvalidArgumentError("segment_ids and indices should have same size.")
    if data.ndim < 1:
        raise InvalidArgumentError("Shape must be at least rank 1")
    bad = np.flatnonzero((indices < 0) | (indices >= data.shape[0]))
    if bad.size:
        i = int(bad[0])
        raise InvalidArgumentError(
            f"Bad: indices[{i}] == {int(indices[i])} out of range [0, {data.shape[0]})"
        )
    if rows is None and ids.size and (np.any(np.diff(ids) < 0) or ids[0] < 0):
        raise InvalidArgumentError("segment ids are not increasing")
    if ids.size and (ids.min() < 0 or (rows is not None and ids.max() >= rows)):
        raise InvalidArgumentError(
            f"segment ids must be >= 0 and < {rows if rows is not None else 'num_segments'}"
        )


def _counts(ids: np.ndarray, rows: int) -> np.ndarray:
    return np.bincount(ids.astype(np.int64), minlength=rows)[:rows]


def _reduction(
    norm: str | None, with_num_segments: bool
) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        def compute(ctx, inputs: list) -> list:
            data, indices, ids = (np.asarray(x) for x in inputs[:3])
            rows = int(np.asarray(inputs[3])) if with_num_segments else None
            _check(data, indices, ids, rows)
            n = rows if rows is not None else (int(ids[-1]) + 1 if ids.size else 0)
            wide = mu.upcast(data) if norm else data
            out = np.zeros((n, *data.shape[1:]), wide.dtype)
            np.add.at(out, ids.astype(np.int64), wide[indices.astype(np.int64)])
            if norm:
                count = _counts(ids, n).reshape((n,) + (1,) * (data.ndim - 1))
                scale = np.maximum(count, 1).astype(out.dtype)
                out = out / (np.sqrt(scale) if norm == "sqrtn" else scale)
            return [mu.as_type(out, data.dtype)]

        return compute

    return factory


def _scales(ids: np.ndarray, norm: str | None, dtype: np.dtype) -> np.ndarray:
    """Each input row's weight in its segment: 1, 1/count or 1/sqrt(count)."""
    n = int(ids.max()) + 1 if ids.size else 0
    count = np.maximum(_counts(ids, n), 1).astype(np.float64)
    per_segment = (
        np.ones(n) if norm is None else 1.0 / (np.sqrt(count) if norm == "sqrtn" else count)
    )
    return per_segment[ids.astype(np.int64)].astype(dtype)


def _grad(norm: str | None, sparse: bool) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        def compute(ctx, inputs: list) -> list:
            grad, indices, ids = (np.asarray(x) for x in inputs[:3])
            dim0 = int(np.asarray(inputs[3]))
            if indices.shape != ids.shape or indices.ndim != 1:
                raise InvalidArgumentError("indices and segment_ids should have same size.")
            if ids.size and (ids.min() < 0 or ids.max() >= grad.shape[0]):
                raise InvalidArgumentError(f"Segment id out of range: [0, {grad.shape[0]})")
            if indices.size and (indices.min() < 0 or indices.max() >= dim0):
                raise InvalidArgumentError(f"Index out of range: [0, {dim0})")
            wide = mu.upcast(grad)
            weights = _scales(ids, norm, wide.dtype).reshape((-1,) + (1,) * (grad.ndim - 1))
            rows = wide[ids.astype(np.int64)] * weights
            if sparse:
                unique, where = np.unique(indices, return_inverse=True)
                out = np.zeros((unique.size, *grad.shape[1:]), wide.dtype)
                np.add.at(out, where.reshape(-1), rows)
                return [mu.as_type(out, grad.dtype), unique.astype(indices.dtype)]
            out = np.zeros((dim0, *grad.shape[1:]), wide.dtype)
            np.add.at(out, indices.astype(np.int64), rows)
            return [mu.as_type(out, grad.dtype)]

        return compute

    return factory


def _register() -> None:
    for name, norm, types in (
        ("Sum", None, _REAL),
        ("Mean", "mean", _FLOAT),
        ("SqrtN", "sqrtn", _FLOAT),
    ):
        attrs = [f"T: {{{types}}}", *_INDEX, "sparse_gradient: bool = false"]
        op = "SparseSegment" + name
        register_op(
            op, ["data: T", "indices: Tidx", "segment_ids: Tsegmentids"], ["output: T"], attrs
        )
        register_kernel(op)(_reduction(norm, False))
        register_op(
            op + "WithNumSegments",
            ["data: T", "indices: Tidx", "segment_ids: Tsegmentids", "num_segments: Tnumsegments"],
            ["output: T"],
            [attrs[0], _INDEX[0], "Tnumsegments: {int32, int64} = DT_INT32", *attrs[2:]],
        )
        register_kernel(op + "WithNumSegments", host_memory=("num_segments",))(
            _reduction(norm, True)
        )
        grad_inputs = ["grad: T", "indices: Tidx", "segment_ids: Tsegmentids", "output_dim0: int32"]
        grad_attrs = [f"T: {{{_FLOAT}}}", *_INDEX]
        register_op(op + "Grad", grad_inputs, ["output: T"], grad_attrs)
        register_kernel(op + "Grad", host_memory=("output_dim0",))(_grad(norm, False))
        register_op(
            op + "GradV2",
            [*grad_inputs[:3], "dense_output_dim0: int32"],
            ["output: T", "sorted_unique_indices: Tidx"],
            grad_attrs,
        )
        register_kernel(op + "GradV2", host_memory=("dense_output_dim0",))(_grad(norm, True))


_register()
