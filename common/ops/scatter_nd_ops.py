"""Ops (executor stage): N-d scatters — ScatterNdUpdate/Add/Sub/Max/Min on reference
variables, ResourceScatterNdUpdate/Add/Sub/Max/Min on resource variables,
ScatterNdNonAliasingAdd and TensorScatterSub/Max/Min on tensors (TensorScatterUpdate/Add and
ScatterNd live in slicing_ops), and the row updates InplaceUpdate/Add/Sub.

Signatures are TensorFlow's (state_ops.cc, resource_variable_ops.cc, array_ops.cc); the
checks and their wording follow scatter_nd_op.cc (PrepareAndValidateInputs for the variable
forms and ScatterNdNonAliasingAdd, TensorScatterOp's own checks for TensorScatter*) and
inplace_ops.cc. Variables update in place under `Var.lock` when their value is unshared
(`Var.updating`), as the other scatters do. Safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.array_ops import shape_str
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op
from common.ops.state_ops import _NUMBER_TYPES, Var, resource_var

_INDICES = "Tindices: {int32, int64}"
_BAD_INDICES = "bad_indices_policy: string = ''"
_NUMBER_OR_BOOL = _NUMBER_TYPES[:-1] + ", bool}"

# How an updated element combines with its update (None assigns; the last one wins).
_COMBINE: dict[str, np.ufunc | None] = {
    "Update": None,
    "Add": np.add,
    "Sub": np.subtract,
    "Max": np.maximum,
    "Min": np.minimum,
}

# (n, depth) index rows and the (n, *slice) updates that go with them.
Scatter = tuple[np.ndarray, np.ndarray]


def _slice_str(outer: Sequence[int], flat: int) -> str:
    """TensorFlow's SliceDebugString: "" for rank 0, "[i]" for rank 1, else "[i,j]"."""
    if not outer:
        return ""
    if len(outer) == 1:
        return f"[{flat}]"
    return "[" + ",".join(str(int(i)) for i in np.unravel_index(flat, tuple(outer))) + "]"


def _rows_in_range(
    shape: Sequence[int], indices: np.ndarray, updates: np.ndarray, depth: int, ignore: bool
) -> Scatter:
    """Index rows and their updates, the rows outside `shape` dropped when `ignore`, else
    TensorFlow's "indices[...] = [...] does not index into shape ..." for the first."""
    outer = indices.shape[:-1]
    rows = indices.reshape(-1, depth).astype(np.int64)
    upd = updates.reshape((len(rows),) + tuple(shape[depth:]))
    limits = np.asarray(shape[:depth], dtype=np.int64)
    bad = np.flatnonzero(((rows < 0) | (rows >= limits)).any(axis=-1))
    if bad.size and not ignore:
        at = int(bad[0])
        index = ", ".join(str(int(v)) for v in rows[at])
        raise InvalidArgumentError(
            f"indices{_slice_str(outer, at)} = [{index}] does not index into shape "
            f"{shape_str(shape)}"
        )
    if bad.size:
        keep = np.setdiff1d(np.arange(len(rows)), bad)
        rows, upd = rows[keep], upd[keep]
    return rows, upd


def _empty_output_ok(shape: Sequence[int], indices: np.ndarray, updates: np.ndarray) -> bool:
    """TensorFlow's ValidEmptyOutputShape."""
    return (indices.size == 0 and updates.size == 0) or int(np.prod(shape)) != 0


def variable_scatter(shape: Sequence[int], indices: Any, updates: Any, ignore: bool) -> Scatter:
    """Checks of scatter_nd_op.cc's PrepareAndValidateInputs and ValidateScatterNdUpdateShape
    (ScatterNd* on variables, ScatterNdNonAliasingAdd)."""
    indices, updates = np.asarray(indices), np.asarray(updates)
    if len(shape) < 1:
        raise InvalidArgumentError(f"Output must be at least 1-D, got shape: {shape_str(shape)}")
    if not _empty_output_ok(shape, indices, updates):
        raise InvalidArgumentError(
            "Indices and updates specified for empty output.  indices shape: "
            f"{shape_str(indices.shape)}"
        )
    if indices.ndim < 1 or updates.ndim < 1:
        raise InvalidArgumentError(
            f"Indices and updates must be at least 1-D, got indices shape "
            f"{shape_str(indices.shape)} and updates shape {shape_str(updates.shape)}"
        )
    if updates.shape[0] != indices.shape[0]:
        raise InvalidArgumentError(
            f"Dimensions [0,1) of indices[shape={shape_str(indices.shape)}] = "
            f"{indices.shape[0]} must match dimensions [0,1) of updates[shape="
            f"{shape_str(updates.shape)}] = {updates.shape[0]}"
        )
    depth = indices.shape[-1] if indices.ndim > 1 else 1
    batch = indices.ndim - 1 if indices.ndim > 1 else 1
    prefix = InvalidArgumentError(
        f"Dimensions [0,{batch}) of indices[shape={shape_str(indices.shape)}] must match "
        f"dimensions [0,{batch}) of updates[shape={shape_str(updates.shape)}]"
    )
    suffix = InvalidArgumentError(
        f"Dimensions [{depth},{len(shape)}) of input[shape={shape_str(shape)}] must match "
        f"dimensions [{depth},{updates.ndim}) of updates[shape={shape_str(updates.shape)}]"
    )
    if updates.ndim < batch:
        raise prefix
    if updates.ndim != batch + len(shape) - depth or depth > len(shape):
        raise suffix
    if updates.shape[:batch] != indices.shape[:batch]:
        raise prefix
    if tuple(updates.shape[batch:]) != tuple(shape[depth:]):
        raise suffix
    if indices.ndim == 1:
        # TensorFlow's kernel views 1-D indices as one row of their own length (its
        # flat_inner_dims) while taking its depth as 1: only the first index and the first
        # update slice apply, and an error names no position ("indices = [5] ...").
        indices, updates = indices[:1], updates[:1]
    return _rows_in_range(shape, indices, updates, depth, ignore)


def tensor_scatter(shape: Sequence[int], indices: Any, updates: Any, ignore: bool) -> Scatter:
    """Checks of scatter_nd_op.cc's TensorScatterOp (TensorScatterSub/Max/Min)."""
    indices, updates = np.asarray(indices), np.asarray(updates)
    if indices.ndim < 1:
        raise InvalidArgumentError(
            f"Indices shape must have rank at least one. Found:{shape_str(indices.shape)}"
        )
    if updates.ndim < 1:
        raise InvalidArgumentError(
            f"Updates shape must have rank at least one. Found:{shape_str(updates.shape)}"
        )
    if not _empty_output_ok(shape, indices, updates):
        raise InvalidArgumentError("Indices and updates specified for empty output shape")
    outer = indices.ndim - 1
    if updates.ndim < outer or indices.shape[:outer] != updates.shape[:outer]:
        raise InvalidArgumentError(
            "Outer dimensions of indices and update must match. Indices shape: "
            f"{shape_str(indices.shape)}, updates shape:{shape_str(updates.shape)}"
        )
    depth = indices.shape[-1]
    if updates.ndim - outer != len(shape) - depth:
        raise InvalidArgumentError(
            "Inner dimensions of output shape must match inner dimensions of updates shape. "
            f"Output: {shape_str(shape)} updates: {shape_str(updates.shape)}"
        )
    if tuple(updates.shape[outer:]) != tuple(shape[depth:]):
        raise InvalidArgumentError(
            f"The inner {len(shape) - depth} dimensions of output.shape={shape_str(shape)} "
            f"must match the inner {updates.ndim - outer} dimensions of updates.shape="
            f"{shape_str(updates.shape)}"
        )
    return _rows_in_range(shape, indices, updates, depth, ignore)


def scatter_nd_apply(target: np.ndarray, scatter: Scatter, how: str) -> None:
    """Combine the writeable `target` in place with `scatter` (repeated rows all apply,
    in order; for Update the last one wins)."""
    rows, upd = scatter
    where = tuple(rows.T)
    combine = _COMBINE[how]
    upd = upd.astype(target.dtype, copy=False)
    if combine is None:
        target[where] = upd
    elif target.dtype == np.bool_ and combine is np.add:
        np.logical_or.at(target, where, upd)
    else:
        combine.at(target, where, upd)


def _ignores_bad(k: KernelConstruction) -> bool:
    return k.attrs.get("bad_indices_policy", "") == "IGNORE"


def _scatter_var(var: Var, indices: Any, updates: Any, how: str, ignore: bool) -> None:
    """Validate against the variable's current shape, then update it in place under its
    lock (copying first when a reader shares its value)."""
    with var.lock:
        value = var.value
        shape = () if value is None else value.shape
        del value  # our own reference would make the value look shared
        scatter = variable_scatter(shape, indices, updates, ignore)
        with var.updating() as array:
            scatter_nd_apply(array, scatter, how)


# ---------------------------------------------------------------------------------------
# ScatterNd{Update,Add,Sub,Max,Min} and their resource forms
# ---------------------------------------------------------------------------------------


def _ref_scatter_nd(how: str) -> Callable:
    def factory(k: KernelConstruction) -> Callable:
        ignore = _ignores_bad(k)

        def compute(ctx: OpKernelContext, inputs: list) -> list:
            var = inputs[0]
            var.read_ref()  # FailedPrecondition while uninitialized
            _scatter_var(var, inputs[1], inputs[2], how, ignore)
            return [var]

        return compute

    return factory


def _resource_scatter_nd(how: str) -> Callable:
    def factory(k: KernelConstruction) -> Callable:
        dtype, ignore = k.attr("T"), _ignores_bad(k)

        def compute(ctx: OpKernelContext, inputs: list) -> list:
            var = resource_var(ctx, inputs[0], dtype)
            _scatter_var(var, inputs[1], inputs[2], how, ignore)
            return []

        return compute

    return factory


for _how in _COMBINE:
    _locking = "true" if _how == "Update" else "false"
    register_op(
        f"ScatterNd{_how}",
        inputs=["ref: Ref(T)", "indices: Tindices", "updates: T"],
        outputs=["output_ref: Ref(T)"],
        attrs=[
            "T: type" if _how == "Update" else f"T: {_NUMBER_TYPES}",
            _INDICES,
            f"use_locking: bool = {_locking}",
            _BAD_INDICES,
        ],
    )
    register_kernel(f"ScatterNd{_how}")(_ref_scatter_nd(_how))
    register_op(
        f"ResourceScatterNd{_how}",
        inputs=["ref: resource", "indices: Tindices", "updates: T"],
        attrs=["T: type", _INDICES, "use_locking: bool = true", _BAD_INDICES],
        stateful=True,
    )
    register_kernel(f"ResourceScatterNd{_how}")(_resource_scatter_nd(_how))


# ---------------------------------------------------------------------------------------
# ScatterNdNonAliasingAdd, TensorScatter{Sub,Max,Min}
# ---------------------------------------------------------------------------------------

register_op(
    "ScatterNdNonAliasingAdd",
    inputs=["input: T", "indices: Tindices", "updates: T"],
    outputs=["output: T"],
    attrs=[f"T: {_NUMBER_OR_BOOL}", _INDICES, _BAD_INDICES],
)


@register_kernel("ScatterNdNonAliasingAdd")
def _scatter_nd_non_aliasing_add(k: KernelConstruction) -> Callable:
    ignore = _ignores_bad(k)

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        out = np.array(inputs[0])
        scatter_nd_apply(out, variable_scatter(out.shape, inputs[1], inputs[2], ignore), "Add")
        return [out]

    return compute


def _tensor_scatter(how: str) -> Callable:
    def factory(k: KernelConstruction) -> Callable:
        ignore = _ignores_bad(k)

        def compute(ctx: OpKernelContext, inputs: list) -> list:
            out = np.array(inputs[0])
            scatter_nd_apply(out, tensor_scatter(out.shape, inputs[1], inputs[2], ignore), how)
            return [out]

        return compute

    return factory


for _how in ("Sub", "Max", "Min"):
    register_op(
        f"TensorScatter{_how}",
        inputs=["tensor: T", "indices: Tindices", "updates: T"],
        outputs=["output: T"],
        attrs=["T: type", _INDICES, _BAD_INDICES],
    )
    register_kernel(f"TensorScatter{_how}")(_tensor_scatter(_how))


# ---------------------------------------------------------------------------------------
# InplaceUpdate, InplaceAdd, InplaceSub
# ---------------------------------------------------------------------------------------


def inplace(x: Any, i: Any, v: Any, how: str) -> np.ndarray:
    """Rows `i` of a copy of `x` combined with the rows of `v` (inplace_ops.cc). As
    TensorFlow's DoInplaceOp, a row index wraps modulo the row count rather than failing.
    TensorFlow writes into x's buffer; the copy keeps other readers of x unchanged."""
    x, i, v = np.asarray(x), np.asarray(i), np.asarray(v)
    if i.ndim != 1:
        raise InvalidArgumentError(f"i must be a vector. {shape_str(i.shape)}")
    if x.ndim != v.ndim:
        raise InvalidArgumentError(
            f"x and v shape doesn't match (ranks differ): {shape_str(x.shape)} vs. "
            f"{shape_str(v.shape)}"
        )
    for d in range(1, x.ndim):
        if x.shape[d] != v.shape[d]:
            raise InvalidArgumentError(
                f"x and v shape doesn't match at index {d} : {shape_str(x.shape)} vs. "
                f"{shape_str(v.shape)}"
            )
    if x.ndim == 0 or i.shape[0] != v.shape[0]:
        raise InvalidArgumentError(
            f"i and x shape doesn't match at index 0: {shape_str(i.shape)} vs. {shape_str(v.shape)}"
        )
    out = np.array(x)
    if out.shape[0] == 0 or (out.size == 0 and v.size == 0):
        return out
    rows = np.mod(i.astype(np.int64), out.shape[0])
    scatter_nd_apply(out, (rows[:, None], v), how)
    return out


def _inplace(how: str) -> Callable:
    def factory(k: KernelConstruction) -> Callable:
        def compute(ctx: OpKernelContext, inputs: list) -> list:
            return [inplace(inputs[0], inputs[1], inputs[2], how)]

        return compute

    return factory


for _how in ("Update", "Add", "Sub"):
    register_op(
        f"Inplace{_how}",
        inputs=["x: T", "i: int32", "v: T"],
        outputs=["y: T"],
        attrs=["T: type"],
    )
    register_kernel(f"Inplace{_how}")(_inplace(_how))
