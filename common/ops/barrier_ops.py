"""Ops (executor stage): barriers — Barrier, BarrierInsertMany, BarrierTakeMany,
BarrierClose, BarrierReadySize, BarrierIncompleteSize (TensorFlow's barrier_ops.cc).

A barrier maps string keys to tuples filled one component at a time (InsertMany gives
one component for many keys). A tuple whose components are all in is complete: it moves,
with its key and the insertion index of its key's first insert, to a ready PriorityQueue
ordered by that index, from which TakeMany dequeues (parked, no thread blocks, as queue
dequeues are: a closed session or an aborted step cancels the wait). Closing refuses new
keys; once no key is incomplete (or at once with cancel_pending_enqueues) the ready queue
closes, and a take that cannot be served fails with OutOfRange. The barrier travels on its
Ref(string) edge as the object itself, as a TF1 accumulator does. One lock per barrier
guards the incomplete map and the flags; the ready queue has its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from common import dtypes
from common.dtypes import DataType
from common.errors import CancelledError, InternalError, InvalidArgumentError, OutOfRangeError
from common.ops import queue_ops
from common.ops.priority_queue_ops import PriorityQueue
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op
from common.ops.resource_op_kernel import resource_op_kernel
from common.tensor_shape import shape_string

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
Done = Callable[[Any, Any], None]  # the executor's async done(outputs, error)


class Barrier:
    def __init__(self, name: str, component_types: list[DataType], shapes: list) -> None:
        self.name = name
        self.component_types = [dtypes.base(t) for t in component_types]
        self.shapes = [tuple(s) for s in shapes]
        self.ready = PriorityQueue(
            f"{name}_queue",
            [DataType.DT_INT64, DataType.DT_STRING, *self.component_types],
            [(), (), *self.shapes],
            -1,
        )
        self.lock = threading.Lock()
        self.incomplete: dict[bytes, list[Any]] = {}  # key -> [index, component...]
        self.input_index = _INT64_MIN
        self.closed = False
        self.cancel_pending_enqueues = False
        self.queue_closed = False
        self.queue_cancelled = False

    def verify(self, found: Barrier, name: str) -> None:
        """TF's BarrierOp::VerifyResource: `found` must have this barrier's attrs."""
        queue_ops.check_shared_components("barrier", name, found, self)

    # -- insert ---------------------------------------------------------------------------
    def insert_many(self, keys: np.ndarray, index: int, values: np.ndarray) -> None:
        keys_flat = keys.reshape(-1)
        if keys_flat.size and values.size == 0:
            raise InvalidArgumentError(
                f"Tensors with no elements are not supported {self.name}: received shape "
                f"{shape_string(values.shape)}"
            )
        if values.ndim == 0 or values.shape[0] < keys_flat.size:
            raise InvalidArgumentError(
                f"Barrier {self.name}: {keys_flat.size} keys but values of shape "
                f"{shape_string(values.shape)}"
            )
        ready: list[tuple] = []
        with self.lock:
            if self.closed and (
                self.cancel_pending_enqueues or (keys_flat.size and not self.incomplete)
            ):
                raise CancelledError(
                    f"Barrier {self.name} is closed.  Pending enqueues cancelled: "
                    f"{int(self.cancel_pending_enqueues)}.  Number of new insertions: "
                    f"{keys_flat.size}.  Number of incomplete keys: {len(self.incomplete)}."
                )
            new_elements = False
            try:
                for i, key in enumerate(keys_flat):
                    row = np.array(values[i], dtype=values.dtype, copy=True)
                    new_elements |= self._insert_one_locked(key, index, row, i, ready)
            finally:
                if new_elements:
                    self.input_index += 1
            if self.input_index == _INT64_MAX:
                raise InternalError(
                    f"Barrier has had {self.input_index} insertions and can no longer keep "
                    "track of new ones."
                )
        if ready:
            self.ready.park(queue_ops._Attempt(_ignore, items=ready), True)

    def _insert_one_locked(self, key: Any, index: int, value: np.ndarray, i: int,
                           ready: list[tuple]) -> bool:  # fmt: skip
        """Store component `index` of `key`; a completed tuple joins `ready`. True if the
        key is new."""
        key_bytes = key if isinstance(key, bytes) else str(key).encode()
        element = self.incomplete.get(key_bytes)
        if self.closed and element is None:
            raise CancelledError(
                f"Barrier {self.name} is closed, but attempted to insert a brand new key: "
                f"{key_bytes.decode(errors='replace')}.  Pending enqueues cancelled: "
                f"{int(self.cancel_pending_enqueues)}.  Insertion index: {i}.  Number of "
                f"incomplete keys: {len(self.incomplete)}."
            )
        new = element is None
        if element is None:
            element = [np.int64(self.input_index)] + [None] * len(self.component_types)
            self.incomplete[key_bytes] = element
        if element[1 + index] is not None:
            raise InvalidArgumentError(
                f"Key {key_bytes.decode(errors='replace')} already has a value for component "
                f"{index} in barrier {self.name}"
            )
        element[1 + index] = value
        if all(c is not None for c in element):
            tuple_ = (element[0], np.array(key_bytes, dtype=object), *element[1:])
            del self.incomplete[key_bytes]
            for j, c in enumerate(tuple_[2:]):
                self.ready.check_element_shape(j + 2, c.shape)
            ready.append(tuple_)
        return new

    # -- take / close ---------------------------------------------------------------------
    def deliverable(self, n: int, allow_small_batch: bool) -> int:
        """How many elements a take of `n` asks the ready queue for (TF's TryTakeMany)."""
        with self.lock:
            if not self.closed:
                return n
            available = self.ready.size()
            if allow_small_batch:
                n = min(n, available)
            else:
                available += len(self.incomplete)
            if available < max(n, 1):
                raise OutOfRangeError(
                    f"Barrier '{self.name}' is closed and has insufficient elements "
                    f"(requested {n}, total size {available})"
                )
            return n

    def close(self, cancel_pending_enqueues: bool) -> None:
        with self.lock:
            if self.closed and (self.cancel_pending_enqueues or not cancel_pending_enqueues):
                raise CancelledError(f"Barrier '{self.name}' is already closed.")
            self.cancel_pending_enqueues = cancel_pending_enqueues
            self.closed = True
            if not (cancel_pending_enqueues or not self.incomplete):
                return
            self.incomplete.clear()
            if self.queue_closed and not cancel_pending_enqueues:
                return
            if self.queue_cancelled and cancel_pending_enqueues:
                return
            self.queue_closed = True
            self.queue_cancelled |= cancel_pending_enqueues
        self.ready.close(cancel_pending_enqueues)

    def incomplete_size(self) -> int:
        with self.lock:
            return len(self.incomplete)


def _ignore(outputs: Any, error: Any) -> None:
    """An insert into the unbounded ready queue completes at once and cannot fail."""


_HANDLE = "handle: Ref(string)"
register_op(
    "Barrier",
    outputs=[_HANDLE],
    attrs=[
        "component_types: list(type) >= 1",
        "shapes: list(shape) >= 0 = []",
        "capacity: int = -1",
        "container: string = ''",
        "shared_name: string = ''",
    ],
    stateful=True,
)
register_op("BarrierInsertMany", inputs=[_HANDLE, "keys: string", "values: T"],
            attrs=["T: type", "component_index: int"])  # fmt: skip
register_op(
    "BarrierTakeMany",
    inputs=[_HANDLE, "num_elements: int32"],
    outputs=["indices: int64", "keys: string", "values: component_types"],
    attrs=[
        "component_types: list(type) >= 1",
        "allow_small_batch: bool = false",
        "wait_for_incomplete: bool = false",
        "timeout_ms: int = -1",
    ],
)
register_op("BarrierClose", inputs=[_HANDLE], attrs=["cancel_pending_enqueues: bool = false"])
register_op("BarrierReadySize", inputs=[_HANDLE], outputs=["size: int32"])
register_op("BarrierIncompleteSize", inputs=[_HANDLE], outputs=["size: int32"])


@register_kernel("Barrier")
def _barrier(k: KernelConstruction) -> Callable:
    types, shapes = list(k.attr("component_types")), list(k.attr("shapes"))
    if len(shapes) != len(types):
        raise InvalidArgumentError("All of the component shapes must be specified", k.node_name)
    if k.attr("capacity") != -1:
        raise InvalidArgumentError(
            "Barrier only accepts capacity=-1.  Feed the inputs to your Barrier through a "
            "queue to enforce a limited capacity.",
            k.node_name,
        )

    def make(name: str) -> Barrier:
        return Barrier(name, types, shapes)

    def verify(found: Barrier, name: str) -> None:
        make(name).verify(found, name)

    return resource_op_kernel(k, make, kind=Barrier, what="barrier", type_name="Barrier",
                              verify=verify, ref=True)  # fmt: skip


def _barrier_of(ctx: OpKernelContext, value: Any) -> Barrier:
    if not isinstance(value, Barrier):
        raise InvalidArgumentError("Expected a barrier on the handle input", ctx.node_name)
    return value


@register_kernel("BarrierInsertMany")
def _insert_many(k: KernelConstruction) -> Callable:
    index, value_type = k.attr("component_index"), dtypes.base(k.attr("T"))

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        barrier = _barrier_of(ctx, inputs[0])
        n = len(barrier.component_types)
        if index >= n:
            raise InvalidArgumentError(
                f"The component ID is out of range {index} > num_components (= {n})"
            )
        if barrier.component_types[index] != value_type:
            want = dtypes.tf_name(barrier.component_types[index])
            raise InvalidArgumentError(
                f"Signature mismatch, have: string_ref, string, {dtypes.tf_name(value_type)}->"
                f" expected: string_ref, string, {want}->"
            )
        barrier.insert_many(np.asarray(inputs[1]), index, np.asarray(inputs[2]))
        return []

    return compute


@register_kernel("BarrierTakeMany", is_async=True)
def _take_many(k: KernelConstruction) -> Callable:
    if k.attr("timeout_ms") != -1:
        raise InvalidArgumentError("Timeout not supported yet.", k.node_name)
    types = [dtypes.base(t) for t in k.attr("component_types")]
    allow_small = bool(k.attr("allow_small_batch"))

    def compute(ctx: OpKernelContext, inputs: list, done: Done) -> None:
        barrier = _barrier_of(ctx, inputs[0])
        n_arr = np.asarray(inputs[1])
        if n_arr.ndim != 0:
            raise InvalidArgumentError("num_elements must be a scalar.")
        if int(n_arr) < 0:  # TensorFlow aborts its process here (a CHECK on the shape)
            raise InvalidArgumentError(
                f"Expected shape dimensions to be non-negative, got {int(n_arr)}"
            )
        if types != barrier.component_types:
            have = ", ".join(dtypes.tf_name(t) for t in types)
            want = ", ".join(dtypes.tf_name(t) for t in barrier.component_types)
            raise InvalidArgumentError(
                f"Signature mismatch, have: string_ref, int32->int64, string, {have} expected:"
                f" string_ref, int32->int64, string, {want}"
            )
        n = barrier.deliverable(int(n_arr), allow_small)
        attempt = queue_ops._Attempt(done, count=n, allow_smaller=allow_small)
        queue_ops._start(ctx, barrier.ready, attempt, False, -1)

    return compute


@register_kernel("BarrierClose")
def _close(k: KernelConstruction) -> Callable:
    cancel = bool(k.attr("cancel_pending_enqueues"))

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        _barrier_of(ctx, inputs[0]).close(cancel)
        return []

    return compute


@register_kernel("BarrierReadySize")
def _ready_size(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [np.int32(_barrier_of(ctx, inputs[0]).ready.size())]

    return compute


@register_kernel("BarrierIncompleteSize")
def _incomplete_size(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [np.int32(_barrier_of(ctx, inputs[0]).incomplete_size())]

    return compute
