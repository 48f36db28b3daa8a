"""Ops (executor stage): conditional accumulators, what SyncReplicasOptimizer aggregates
gradients with — ConditionalAccumulator, SparseConditionalAccumulator and their Resource
forms, Accumulator{ApplyGradient,TakeGradient,NumAccumulated,SetGlobalStep} (ref and
resource handles) and SparseAccumulator{Apply,Take}Gradient (TensorFlow's
conditional_accumulator_base.cc and its dense and sparse subclasses).

An accumulator lives in its device's ResourceMgr (named as queues are: shared_name, or
private to the session) and keeps a time step. ApplyGradient adds a gradient whose
local_step is at least that step and silently drops a stale one; TakeGradient waits (parked,
no thread blocks) until num_required gradients are in, returns their mean (dense: divided by
the count; sparse: each row by how many gradients touched it) or sum, resets the count and
advances the step by one. SetGlobalStep moves the step. A ref-handle accumulator travels on
its Ref(string) edge as the object itself, as a TF1 Stack does. One lock per accumulator
guards its sum and parked takes; callbacks run outside it. Safe from any thread.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from common import dtypes
from common.dtypes import DataType
from common.errors import InvalidArgumentError, NotFoundError, OpError
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op
from common.ops.resource_op_kernel import resource_op_kernel
from common.resource_mgr import handle_of
from common.tensor_shape import shape_string

ACCUMULATOR_TYPE_NAME = "N10tensorflow26ConditionalAccumulatorBaseE"
Done = Callable[[Any, Any], None]  # the executor's async done(outputs, error)
_log = logging.getLogger(__name__)


def _divide(total: np.ndarray, count: Any) -> np.ndarray:
    """`total / count` in the accumulator's dtype; integers truncate toward zero, as
    Eigen's integer division does."""
    if total.dtype.kind in "iu":
        return (np.sign(total) * (np.abs(total) // count)).astype(total.dtype)
    return (total / np.asarray(count, total.dtype)).astype(total.dtype)


class _Take:
    """A parked TakeGradient: how many gradients it needs and its callback."""

    __slots__ = ("num_required", "done", "finished")

    def __init__(self, num_required: int, done: Done) -> None:
        self.num_required = num_required
        self.done = done
        self.finished = False


class Accumulator:
    """The dense accumulator; `SparseAccumulator` changes what a gradient is."""

    kind = "ConditionalAccumulator"

    def __init__(self, name: str, dtype: DataType, shape: tuple | None, reduction: str) -> None:
        self.name = name
        self.dtype = dtypes.base(dtype)
        self.shape = shape  # a partial shape: None for unknown rank, None dims unknown
        self.reduction = reduction
        self.counter = 0
        self.global_step = 0
        self.takes: collections.deque[_Take] = collections.deque()
        self.lock = threading.Lock()
        self.total: Any = None

    def check_dtype(self, kernel_dtype: DataType, node_name: str) -> None:
        """The node's dtype attr must be the accumulator's (TensorFlow checks it with
        MatchSignature but then goes on and crashes; we refuse)."""
        if dtypes.base(kernel_dtype) != self.dtype:
            raise InvalidArgumentError(
                f"Signature mismatch: node {node_name} has dtype "
                f"{dtypes.tf_name(kernel_dtype)} but accumulator '{self.name}' holds "
                f"{dtypes.tf_name(self.dtype)}",
                node_name,
            )

    # -- apply ----------------------------------------------------------------------------
    def apply(self, local_step: int, gradient: Any) -> None:
        with self.lock:
            if local_step < self.global_step:
                return  # stale: silently dropped
            self._validate(gradient)
            if self.counter > 0:
                self._add(gradient)
            else:
                self._assign(gradient)
            self.counter += 1
            finished = self._flush_locked()
        _run(finished)

    def _validate(self, grad: np.ndarray) -> None:
        if self.counter > 0 and self.total.shape != grad.shape:
            raise InvalidArgumentError(
                f"Shape mismatch: expected {shape_string(self.total.shape)}, got "
                f"{shape_string(grad.shape)}"
            )
        if self.shape is not None and (
            len(self.shape) != grad.ndim
            or any(d is not None and d != g for d, g in zip(self.shape, grad.shape, strict=True))
        ):
            raise InvalidArgumentError(
                f"Shape mismatch: expected {shape_string(self.shape)}, got "
                f"{shape_string(grad.shape)}"
            )

    def _assign(self, grad: np.ndarray) -> None:
        self.total = np.array(grad, dtype=dtypes.as_numpy(self.dtype), copy=True)

    def _add(self, grad: np.ndarray) -> None:
        self.total = self.total + grad

    def _result(self) -> list:
        total = _divide(self.total, self.counter) if self.reduction == "MEAN" else self.total
        return [total]

    # -- take -----------------------------------------------------------------------------
    def park(self, take: _Take) -> None:
        with self.lock:
            self.takes.append(take)
            finished = self._flush_locked()
        _run(finished)

    def cancel(self, take: _Take, error: OpError) -> None:
        with self.lock:
            if take.finished:
                return
            self.takes.remove(take)
            take.finished = True
        take.done(None, error)

    def _flush_locked(self) -> list[tuple[_Take, list]]:
        """Complete parked takes in arrival order while enough gradients are in."""
        finished = []
        while self.takes and self.counter >= self.takes[0].num_required:
            take = self.takes.popleft()
            take.finished = True
            self.global_step += 1  # TakeGradLockedHelper's implicit increment
            finished.append((take, self._result()))
            self.counter = 0
        return finished

    # -- step and count -------------------------------------------------------------------
    def set_global_step(self, step: int) -> None:
        with self.lock:
            if step < self.global_step:
                _log.warning(
                    "Attempt to set current_global_step_ to smaller value: "
                    "current_global_step_ = %d >= %d = new_global_step.",
                    self.global_step,
                    step,
                )
            self.global_step = step

    def num_accumulated(self) -> int:
        with self.lock:
            return self.counter


class SparseAccumulator(Accumulator):
    """Sums IndexedSlices: rows merged by index (each input taken as sorted, as TensorFlow
    merges them), and a count per row that the mean divides by."""

    kind = "SparseConditionalAccumulator"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.indices: list[int] = []
        self.counts: list[int] = []

    def _validate(self, grad: Any) -> None:
        indices, values, given = grad
        if indices.ndim != 1:
            raise InvalidArgumentError(
                f"Input indices should be vector but received shape: {shape_string(indices.shape)}"
            )
        if values.ndim == 0:
            raise InvalidArgumentError("Values cannot be 0-dimensional.")
        if values.shape[0] != indices.shape[0]:
            raise InvalidArgumentError(
                f"Expected {indices.shape[0]} non-empty input values, got {values.shape[0]}"
            )
        dims = self.shape
        rank = -1 if dims is None else len(dims)
        if given is not None:
            if rank > given.size:
                raise InvalidArgumentError(
                    f"Shape mismatch: expected shape rank at least {rank}, got {given.size}"
                )
            for i in range(max(rank, 0)):
                assert dims is not None
                if dims[i] is not None and dims[i] != int(given[i]):
                    raise InvalidArgumentError(
                        f"Shape mismatch: expected shape dim {i} to be {dims[i]}, got "
                        f"{int(given[i])}"
                    )
        if dims and dims[0] is not None:
            for i, index in enumerate(indices.tolist()):
                if index >= dims[0]:
                    raise InvalidArgumentError(
                        f"Shape mismatch: index of slice {i} exceeded limits of shape; index "
                        f"is {index} exceeded {dims[0]}"
                    )
        if self.counter > 0:
            if self.total.ndim != values.ndim:
                raise InvalidArgumentError(
                    f"Shape mismatch: expected values rank {self.total.ndim}, got {values.ndim}"
                )
            for i in range(1, values.ndim):
                if self.total.shape[i] != values.shape[i]:
                    raise InvalidArgumentError(
                        f"Shape mismatch: expected values dim {i} to be {self.total.shape[i]}, "
                        f"got {values.shape[i]}"
                    )
            return
        if rank > values.ndim:
            raise InvalidArgumentError(
                f"Shape mismatch: expected values rank at least {rank}, got {values.ndim}"
            )
        for i in range(1, max(rank, 0)):
            assert dims is not None
            if dims[i] is not None and dims[i] != values.shape[i]:
                raise InvalidArgumentError(
                    f"Shape mismatch: expected values dim {i} to be {dims[i]}, got "
                    f"{values.shape[i]}"
                )

    def _assign(self, grad: Any) -> None:
        indices, values, _ = grad
        self.indices = [int(i) for i in indices]
        self.total = np.array(values, dtype=dtypes.as_numpy(self.dtype), copy=True)
        self.counts = [1] * len(self.indices)

    def _add(self, grad: Any) -> None:
        """One merge pass over both index lists, as TensorFlow's sparse add walks them."""
        new_indices = [int(i) for i in grad[0]]
        values = grad[1]
        rows: list[np.ndarray] = []
        indices: list[int] = []
        counts: list[int] = []
        i = j = 0
        while i < len(self.indices) or j < len(new_indices):
            a = self.indices[i] if i < len(self.indices) else None
            b = new_indices[j] if j < len(new_indices) else None
            if b is None or (a is not None and a < b):
                indices.append(a)  # type: ignore[arg-type]  # a is set here
                rows.append(self.total[i])
                counts.append(self.counts[i])
                i += 1
            elif a is None or a > b:
                indices.append(b)
                rows.append(values[j].astype(self.total.dtype))
                counts.append(1)
                j += 1
            else:
                indices.append(a)
                rows.append(self.total[i] + values[j])
                counts.append(self.counts[i] + 1)
                i += 1
                j += 1
        self.indices, self.counts = indices, counts
        shape = (len(rows), *self.total.shape[1:])
        self.total = (
            np.stack(rows).astype(self.total.dtype) if rows else np.zeros(shape, self.total.dtype)
        )

    def _result(self) -> list:
        total = self.total
        if self.reduction == "MEAN":
            counts = np.asarray(self.counts).reshape((-1,) + (1,) * (total.ndim - 1))
            total = _divide(total, counts) if total.size else total
        first = -1 if not self.shape else (-1 if self.shape[0] is None else self.shape[0])
        shape = np.array([first, *total.shape[1:]], np.int64)
        return [np.array(self.indices, np.int64), total, shape]


def _run(finished: list[tuple[_Take, list]]) -> None:
    for take, outputs in finished:
        take.done(outputs, None)


# ---------------------------------------------------------------------------------------
# Creation
# ---------------------------------------------------------------------------------------

# TensorFlow's numbertype plus qint16/quint16, as its accumulator ops list them.
_DTYPE = (
    "dtype: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, "
    "qint32, bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}"
)
_ATTRS = [
    _DTYPE,
    "shape: shape",
    "container: string = ''",
    "shared_name: string = ''",
    "reduction_type: { 'MEAN', 'SUM' } = 'MEAN'",
]
register_op("ConditionalAccumulator", outputs=["handle: Ref(string)"], attrs=_ATTRS,
            stateful=True)  # fmt: skip
register_op("ResourceConditionalAccumulator", outputs=["handle: resource"], attrs=_ATTRS,
            stateful=True)  # fmt: skip
register_op("SparseConditionalAccumulator", outputs=["handle: Ref(string)"], attrs=_ATTRS,
            stateful=True)  # fmt: skip


# TensorFlow registers accumulator kernels for these dtypes only.
_KERNEL_DTYPES = (DataType.DT_HALF, DataType.DT_FLOAT, DataType.DT_DOUBLE)


def _creator(cls: type[Accumulator], resource: bool):
    def factory(k: KernelConstruction) -> Callable:
        if k.attr("dtype") not in _KERNEL_DTYPES:
            raise InvalidArgumentError(
                f"No OpKernel was registered to support Op '{k.op}' used by "
                f"{{{{node {k.node_name}}}}} with these attrs: [dtype="
                f"{dtypes.tf_name(k.attr('dtype'))}]\nRegistered kernels: dtype in "
                "[DT_DOUBLE], [DT_FLOAT], [DT_HALF]",
                k.node_name,
            )

        def make(name: str) -> Accumulator:
            return cls(name, k.attr("dtype"), k.attr("shape"), k.attr("reduction_type"))

        return resource_op_kernel(k, make, kind=Accumulator, what=cls.kind,
                                  type_name=ACCUMULATOR_TYPE_NAME, ref=not resource)  # fmt: skip

    return factory


register_kernel("ConditionalAccumulator")(_creator(Accumulator, False))
register_kernel("ResourceConditionalAccumulator")(_creator(Accumulator, True))
register_kernel("SparseConditionalAccumulator")(_creator(SparseAccumulator, False))


def _lookup(ctx: OpKernelContext, value: Any) -> Accumulator:
    """The accumulator a handle names: the object on a Ref edge, or a DT_RESOURCE handle."""
    if isinstance(value, Accumulator):
        return value
    h = handle_of(value, ctx.node_name)
    acc = ctx.step.resource_mgr.find(h.container, h.name)
    if not isinstance(acc, Accumulator):
        raise NotFoundError(
            f"Resource {h.container}/{h.name}/{ACCUMULATOR_TYPE_NAME} does not exist."
        )
    return acc


def _scalar(value: Any, what: str) -> int:
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise InvalidArgumentError(
            f"Argument {what} must be scalar, but had bad shape {shape_string(arr.shape)}"
        )
    return int(arr)


# ---------------------------------------------------------------------------------------
# Apply / take / count / step, for both handle kinds
# ---------------------------------------------------------------------------------------

_REF, _RES = "handle: Ref(string)", "handle: resource"


def _apply_kernel(k: KernelConstruction) -> Callable:
    dtype = k.attr("dtype")

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        acc = _lookup(ctx, inputs[0])
        acc.check_dtype(dtype, ctx.node_name)
        acc.apply(_scalar(inputs[1], "local_step"), np.asarray(inputs[2]))
        return []

    return compute


def _take_kernel(k: KernelConstruction) -> Callable:
    dtype = k.attr("dtype")

    def compute(ctx: OpKernelContext, inputs: list, done: Done) -> None:
        acc = _lookup(ctx, inputs[0])
        acc.check_dtype(dtype, ctx.node_name)
        n = _scalar(inputs[1], "num_required")
        if n <= 0:
            raise InvalidArgumentError(f"Argument num_required must be positive, but was {n}")
        _park(ctx, acc, _Take(n, done))

    return compute


def _park(ctx: OpKernelContext, acc: Accumulator, take: _Take) -> None:
    """Park `take` with its exit: the step's abort cancels it."""
    step = ctx.step
    if getattr(step, "abort_error", None) is not None:
        take.done(None, step.abort_error)
        return
    add = getattr(step, "add_abort_callback", None)
    if add is not None:

        def on_abort(error: OpError) -> None:
            acc.cancel(take, error)

        add(on_abort)
        inner = take.done

        def done(outputs: Any, error: Any) -> None:
            step.remove_abort_callback(on_abort)
            inner(outputs, error)

        take.done = done
    acc.park(take)


def _num_kernel(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [np.int32(_lookup(ctx, inputs[0]).num_accumulated())]

    return compute


def _set_step_kernel(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        _lookup(ctx, inputs[0]).set_global_step(_scalar(inputs[1], "new_global_step"))
        return []

    return compute


for _prefix, _handle in (("", _REF), ("Resource", _RES)):
    _stateful = _handle == _RES
    register_op(f"{_prefix}AccumulatorApplyGradient",
                inputs=[_handle, "local_step: int64", "gradient: dtype"],
                attrs=[_DTYPE], stateful=_stateful)  # fmt: skip
    register_op(f"{_prefix}AccumulatorTakeGradient", inputs=[_handle, "num_required: int32"],
                outputs=["average: dtype"], attrs=[_DTYPE],
                stateful=_stateful)  # fmt: skip
    register_op(f"{_prefix}AccumulatorNumAccumulated", inputs=[_handle],
                outputs=["num_accumulated: int32"], stateful=_stateful)  # fmt: skip
    register_op(f"{_prefix}AccumulatorSetGlobalStep",
                inputs=[_handle, "new_global_step: int64"], stateful=_stateful)  # fmt: skip
    register_kernel(f"{_prefix}AccumulatorApplyGradient")(_apply_kernel)
    register_kernel(f"{_prefix}AccumulatorTakeGradient", is_async=True)(_take_kernel)
    register_kernel(f"{_prefix}AccumulatorNumAccumulated")(_num_kernel)
    register_kernel(f"{_prefix}AccumulatorSetGlobalStep")(_set_step_kernel)

register_op(
    "SparseAccumulatorApplyGradient",
    inputs=[_REF, "local_step: int64", "gradient_indices: int64", "gradient_values: dtype",
            "gradient_shape: int64"],
    attrs=[_DTYPE, "has_known_shape: bool"],
)  # fmt: skip
register_op(
    "SparseAccumulatorTakeGradient",
    inputs=[_REF, "num_required: int32"],
    outputs=["indices: int64", "values: dtype", "shape: int64"],
    attrs=[_DTYPE],
)


@register_kernel("SparseAccumulatorApplyGradient")
def _sparse_apply(k: KernelConstruction) -> Callable:
    dtype, known = k.attr("dtype"), bool(k.attr("has_known_shape"))

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        acc = _lookup(ctx, inputs[0])
        if not isinstance(acc, SparseAccumulator):
            raise InvalidArgumentError(f"{acc.name} is not a SparseConditionalAccumulator")
        acc.check_dtype(dtype, ctx.node_name)
        step = _scalar(inputs[1], "local_step")
        indices, values = np.asarray(inputs[2]), np.asarray(inputs[3])
        acc.apply(step, (indices, values, np.asarray(inputs[4]) if known else None))
        return []

    return compute


register_kernel("SparseAccumulatorTakeGradient", is_async=True)(_take_kernel)
