"""Ops (executor stage): queues — FIFOQueueV2, PaddingFIFOQueueV2, RandomShuffleQueueV2 and
the QueueEnqueue(Many)V2 / QueueDequeue(Many|UpTo)V2 / QueueClose / QueueSize /
QueueIsClosed ops on them.

A queue lives in its device's ResourceMgr (container attr, shared_name or a unique
"_<id>_<node>" name, as TensorFlow's ResourceOpKernel names it) and persists across steps;
one without a shared_name is private to its session and deleted when the session closes.
Enqueue and dequeue kernels are async: an attempt that cannot complete now is parked on
the queue (no thread blocks) and finishes when the queue changes, when it is closed, when
its timeout_ms passes, or when the step aborts (`StepState.add_abort_callback`). Attempts
complete in arrival order. One lock per queue guards its elements and parked attempts;
callbacks run outside it. Safe from any thread.
"""

from __future__ import annotations

import collections
import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from common import dtypes
from common.dtypes import DataType
from common.errors import (
    CancelledError,
    DeadlineExceededError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    OutOfRangeError,
)
from common.ops.array_ops import shape_compatible, shape_str
from common.ops.random.philox import PhiloxRandom, WordStream
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op
from common.ops.resource_op_kernel import resource_op_kernel
from common.resource_mgr import handle_of
from common.tensor_shape import shape_string

QUEUE_TYPE_NAME = "N10tensorflow14QueueInterfaceE"
_INT32_MAX = 2**31 - 1

Element = tuple  # one np.ndarray per component
Done = Callable[[Any, Any], None]  # the executor's async done(outputs, error)


class _Attempt:
    """A parked enqueue (`items` to add) or dequeue (`count` to take) with its callback.
    A RandomShuffleQueue dequeue keeps in `items` the elements taken so far."""

    __slots__ = ("items", "count", "allow_smaller", "done", "finished", "cancel_hooks")

    def __init__(self, done: Done, items: list | None = None, count: int = 0,
                 allow_smaller: bool = False) -> None:  # fmt: skip
        self.items = items or []
        self.count = count
        self.allow_smaller = allow_smaller
        self.done = done
        self.finished = False
        self.cancel_hooks: list[Callable[[], None]] = []


class Queue:
    """FIFOQueue; subclasses change how a batch is taken (padding, random order)."""

    kind = "FIFOQueue"

    def __init__(self, name: str, component_types: list[DataType], shapes: list,
                 capacity: int) -> None:  # fmt: skip
        self.name = name
        self.component_types = [dtypes.base(t) for t in component_types]
        self.shapes = [tuple(s) if s is not None else None for s in shapes]
        self.capacity = _INT32_MAX if capacity < 0 else capacity
        self.elements: collections.deque[Element] = collections.deque()
        self.closed = False
        self.enqueues: collections.deque[_Attempt] = collections.deque()
        self.dequeues: collections.deque[_Attempt] = collections.deque()
        self.lock = threading.Lock()

    # -- validation -----------------------------------------------------------------------
    def check_types(self, types: list[DataType]) -> None:
        if [dtypes.base(t) for t in types] != self.component_types:
            want = ", ".join(dtypes.tf_name(t) for t in self.component_types)
            got = ", ".join(dtypes.tf_name(dtypes.base(t)) for t in types)
            raise InvalidArgumentError(
                f"Type mismatch: queue '{self.name}' expects component types {want} but got {got}"
            )

    def check_element_shape(self, i: int, shape: tuple) -> None:
        if self.shapes and not self._shape_ok(shape, self.shapes[i]):
            raise InvalidArgumentError(
                f"Shape mismatch in tuple component {i}. Expected "
                f"{shape_string(self.shapes[i])}, got {shape_str(shape)}"
            )

    def _shape_ok(self, shape: tuple, expected: tuple | None) -> bool:
        return expected is None or tuple(shape) == expected

    def check_batchable(self) -> None:
        """DequeueMany/UpTo stack elements: without declared shapes TF refuses at once."""
        if not self.shapes:
            raise InvalidArgumentError(
                f"{self.kind}'s DequeueMany and DequeueUpTo require the components to have "
                "specified shapes."
            )

    def check_matches(self, requested: Queue) -> None:
        """A shared queue found under the name must have the attributes `requested` has
        (TF's QueueBase::MatchesNodeDef*)."""
        if requested.kind != self.kind:
            raise InvalidArgumentError(f"Expected {self.kind}, found {requested.kind}V2")
        if requested.capacity != self.capacity:
            raise InvalidArgumentError(
                f"Shared queue '{self.name}' has capacity {self.capacity} but requested "
                f"capacity was {requested.capacity}"
            )
        check_shared_components("queue", self.name, self, requested)

    def split_batch(self, components: list[np.ndarray]) -> list[Element]:
        """The elements of an enqueue_many batch (dimension 0 of every component)."""
        if any(c.ndim == 0 for c in components):
            raise InvalidArgumentError("EnqueueMany requires all components to be at least "
                                       "vectors")  # fmt: skip
        n = components[0].shape[0]
        for i, c in enumerate(components):
            if c.shape[0] != n:
                raise InvalidArgumentError(
                    f"Shape mismatch in tuple component {i}. Expected [{n},...], got "
                    f"{shape_str(c.shape)}"
                )
            self.check_element_shape(i, c.shape[1:])
        # c[k] of a string batch is a bare bytes object: keep it a DT_STRING scalar.
        return [tuple(_row(c, k) for c in components) for k in range(n)]

    # -- batches --------------------------------------------------------------------------
    def can_take(self, n: int) -> bool:
        return len(self.elements) >= n

    def take(self, n: int) -> list[Element]:
        return [self.elements.popleft() for _ in range(n)]

    def batch(self, items: list[Element]) -> list[np.ndarray]:
        out = []
        for i, t in enumerate(self.component_types):
            parts = [e[i] for e in items]
            if parts:
                out.append(np.stack(parts))
                continue
            shape = self.shapes[i] if self.shapes else None
            if shape is None or any(d is None for d in shape):
                raise InvalidArgumentError(
                    f"{self.kind}'s DequeueMany and DequeueUpTo require the components to "
                    "have specified shapes."
                )
            out.append(np.zeros((0, *shape), dtypes.as_numpy(t)))
        return out

    def closed_error(self, requested: int) -> OutOfRangeError:
        return OutOfRangeError(
            f"{self.kind} '{self.name}' is closed and has insufficient elements (requested "
            f"{requested}, current size {len(self.elements)})"
        )

    # -- attempts -------------------------------------------------------------------------
    def park(self, attempt: _Attempt, enqueue: bool) -> None:
        """Add an attempt and complete whatever can complete now."""
        with self.lock:
            if enqueue and self.closed:
                attempt.finished = True
                finished = [
                    (attempt, None, CancelledError(f"{self.kind} '{self.name}' is closed."))
                ]
            else:
                (self.enqueues if enqueue else self.dequeues).append(attempt)
                finished = self._flush_locked()
        _run(finished)

    def cancel(self, attempt: _Attempt, error: OpError) -> None:
        with self.lock:
            if attempt.finished:
                return
            for q in (self.enqueues, self.dequeues):
                if attempt in q:
                    q.remove(attempt)
                    if q is self.dequeues:  # a partly taken batch goes back
                        self.elements.extend(attempt.items)
            attempt.finished = True
        _run([(attempt, None, error)])

    def close(self, cancel_pending_enqueues: bool) -> None:
        with self.lock:
            self.closed = True
            finished = []
            if cancel_pending_enqueues:
                while self.enqueues:
                    a = self.enqueues.popleft()
                    a.finished = True
                    finished.append((a, None, CancelledError("Enqueue operation was cancelled")))
            finished += self._flush_locked()
        _run(finished)

    def size(self) -> int:
        with self.lock:
            return len(self.elements)

    def _flush_locked(self) -> list[tuple[_Attempt, Any, Any]]:
        finished: list[tuple[_Attempt, Any, Any]] = []
        progress = True
        while progress:
            progress = False
            while self.enqueues and len(self.elements) < self.capacity:
                a = self.enqueues[0]
                while a.items and len(self.elements) < self.capacity:
                    self.elements.append(a.items.pop(0))
                    progress = True
                if a.items:
                    break
                self.enqueues.popleft()
                a.finished = True
                finished.append((a, [], None))
            # Dequeues in arrival order while they complete, then back to the enqueues
            # (TF's FlushUnlocked): which elements a random dequeue can pick depends on it.
            while self.dequeues:
                a = self.dequeues[0]
                before = len(self.elements)
                result = self._try_dequeue(a)
                if result is None:
                    if len(self.elements) != before:  # took part of a batch: room to enqueue
                        progress = True
                    break
                self.dequeues.popleft()
                a.finished = True
                finished.append((a, *result))
                progress = True
        return finished

    def _try_dequeue(self, a: _Attempt) -> tuple[Any, Any] | None:
        n = 1 if a.count < 0 else a.count  # count -1: one element without a batch dimension
        if n == 0 or self.can_take(n):  # n == 0: an empty batch at once, closed or not
            items = self.take(n)
        elif not self.closed:
            return None
        elif a.allow_smaller and self.elements:
            items = self.take(len(self.elements))
        else:
            return None, self.closed_error(n)
        return self._output(a, items)

    def _output(self, a: _Attempt, items: list[Element]) -> tuple[Any, Any]:
        """A finished dequeue's outputs: the one element (count -1) or the batch of
        `items`, else the error batching them raised."""
        try:
            return (list(items[0]) if a.count < 0 else self.batch(items)), None
        except OpError as e:
            return None, e


class PaddingFIFOQueue(Queue):
    """A FIFOQueue whose shapes may have unknown dims; batches pad with zeros."""

    kind = "PaddingFIFOQueue"

    def _shape_ok(self, shape: tuple, expected: tuple | None) -> bool:
        return shape_compatible(shape, expected)

    def batch(self, items: list[Element]) -> list[np.ndarray]:
        if not items:
            return super().batch(items)
        out = []
        for i, t in enumerate(self.component_types):
            parts = [e[i] for e in items]
            shape = tuple(max(p.shape[d] for p in parts) for d in range(parts[0].ndim))
            padded = np.zeros((len(parts), *shape), dtypes.as_numpy(t))
            for k, p in enumerate(parts):
                region: tuple[int | slice, ...] = (k, *[slice(0, d) for d in p.shape])
                padded[region] = p
            out.append(padded)
        return out


class RandomShuffleQueue(Queue):
    """Dequeues elements in random order, keeping min_after_dequeue until closed, as
    TensorFlow's random_shuffle_queue_op.cc does: each dequeued element is the one at
    index word % size, where word is the next 32-bit output of a Philox generator seeded
    once from (seed, seed2) (from the OS when both are 0), and the last element moves
    into its place. A batch is taken one element at a time, whenever more than
    min_after_dequeue elements are queued, so the same seeds and the same sequence of
    enqueues and dequeues give TensorFlow's batches."""

    kind = "RandomShuffleQueue"

    def __init__(self, name: str, component_types: list[DataType], shapes: list,
                 capacity: int, min_after_dequeue: int, seed: int, seed2: int) -> None:  # fmt: skip
        super().__init__(name, component_types, shapes, capacity)
        self.min_after_dequeue = min_after_dequeue
        self.seeds = (seed, seed2)
        if seed == 0 and seed2 == 0:
            seed, seed2 = (int.from_bytes(os.urandom(8), "little") for _ in range(2))
        self.words = WordStream(PhiloxRandom.from_seeds(seed, seed2))

    def check_matches(self, requested: Queue) -> None:
        super().check_matches(requested)
        assert isinstance(requested, RandomShuffleQueue)  # same kind, checked above
        if requested.min_after_dequeue != self.min_after_dequeue:
            raise InvalidArgumentError(
                f"Shared queue '{self.name}' has min_after_dequeue {self.min_after_dequeue} "
                f"but requested min_after_dequeue was {requested.min_after_dequeue}."
            )
        if requested.seeds != self.seeds:
            raise InvalidArgumentError(
                f"Shared queue '{self.name}' has random seeds {self.seeds} but requested "
                f"seeds are {requested.seeds}."
            )

    def take(self, n: int) -> list[Element]:
        out = []
        for _ in range(n):
            k = int(self.words.take(1)[0]) % len(self.elements)
            out.append(self.elements[k])
            self.elements[k] = self.elements[-1]
            self.elements.pop()
        return out

    def _try_dequeue(self, a: _Attempt) -> tuple[Any, Any] | None:
        """TF's TryDequeue(Many): take what min_after_dequeue allows now and keep
        waiting for the rest; once closed, a batch that cannot complete returns its
        elements (last taken first) and fails, or, for DequeueUpTo, takes the rest."""
        n = 1 if a.count < 0 else a.count
        if n == 0:
            return super()._try_dequeue(a)
        target, size, remaining = n, len(self.elements), n - len(a.items)
        if self.closed and size < remaining:
            while a.items:
                self.elements.append(a.items.pop())
            if a.allow_smaller and self.elements:
                target = len(self.elements)
            elif a.allow_smaller and self.enqueues:
                return None  # a pending enqueue may still add elements
            else:
                return None, OutOfRangeError(
                    f"{self.kind} '{self.name}' is closed and has insufficient elements "
                    f"(requested {remaining}, current size {size})"
                )
        available = len(self.elements) - (0 if self.closed else self.min_after_dequeue)
        a.items.extend(self.take(max(0, min(available, target - len(a.items)))))
        if len(a.items) < target:
            return None
        items, a.items = a.items, []
        return self._output(a, items)


def check_shared_components(what: str, name: str, found: Any, requested: Any) -> None:
    """A shared queue or barrier found under `name` must have the requested component
    types and shapes (TF's words; `what` is "queue" or "barrier")."""
    if found.component_types != requested.component_types:
        have, want = (
            ", ".join(dtypes.tf_name(t) for t in q.component_types) for q in (found, requested)
        )
        raise InvalidArgumentError(
            f"Shared {what} '{name}' has component types {have} but requested "
            f"component types were {want}"
        )
    if found.shapes != requested.shapes:
        have, want = (
            "[" + ", ".join(shape_string(s) for s in q.shapes) + "]" for q in (found, requested)
        )
        raise InvalidArgumentError(
            f"Shared {what} '{name}' has component shapes {have} but requested "
            f"component shapes were {want}"
        )


def _row(component: np.ndarray, k: int) -> Any:
    row = component[k]
    return np.array(row, dtype=object) if component.dtype == object else row


def _run(finished: list[tuple[_Attempt, Any, Any]]) -> None:
    for attempt, outputs, error in finished:
        for hook in attempt.cancel_hooks:
            hook()
        attempt.done(outputs, error)


# ---------------------------------------------------------------------------------------
# Queue creation
# ---------------------------------------------------------------------------------------

_COMMON_ATTRS = ["component_types: list(type) >= 1", "shapes: list(shape) >= 0 = []",
                 "capacity: int = -1"]  # fmt: skip
_NAME_ATTRS = ["container: string = ''", "shared_name: string = ''"]

register_op("FIFOQueueV2", outputs=["handle: resource"], attrs=_COMMON_ATTRS + _NAME_ATTRS,
            stateful=True)  # fmt: skip
register_op("PaddingFIFOQueueV2", outputs=["handle: resource"],
            attrs=_COMMON_ATTRS + _NAME_ATTRS, stateful=True)  # fmt: skip
register_op(
    "RandomShuffleQueueV2",
    outputs=["handle: resource"],
    attrs=_COMMON_ATTRS
    + ["min_after_dequeue: int = 0", "seed: int = 0", "seed2: int = 0"]
    + _NAME_ATTRS,
    stateful=True,
)


def _queue_factory(make: Callable[[KernelConstruction, str], Queue]):
    def factory(k: KernelConstruction) -> Callable:
        def verify(found: Queue, name: str) -> None:
            found.check_matches(make(k, name))

        return resource_op_kernel(
            k, lambda name: make(k, name), kind=Queue, what="queue",
            type_name=QUEUE_TYPE_NAME, verify=verify,
        )  # fmt: skip

    return factory


def _base_args(k: KernelConstruction, name: str) -> tuple[str, list, list, int]:
    return name, list(k.attr("component_types")), list(k.attr("shapes")), k.attr("capacity")


register_kernel("FIFOQueueV2")(_queue_factory(lambda k, n: Queue(*_base_args(k, n))))
register_kernel("PaddingFIFOQueueV2")(
    _queue_factory(lambda k, n: PaddingFIFOQueue(*_base_args(k, n)))
)
register_kernel("RandomShuffleQueueV2")(
    _queue_factory(
        lambda k, n: RandomShuffleQueue(
            *_base_args(k, n), k.attr("min_after_dequeue"), k.attr("seed"), k.attr("seed2")
        )
    )
)


def lookup_queue(ctx: OpKernelContext, handle_value: Any) -> Queue:
    h = handle_of(handle_value, ctx.node_name)
    q = ctx.step.resource_mgr.find(h.container, h.name)
    if not isinstance(q, Queue):
        raise NotFoundError(f"Resource {h.container}/{h.name}/{QUEUE_TYPE_NAME} does not exist.")
    return q


# ---------------------------------------------------------------------------------------
# Enqueue / dequeue (async)
# ---------------------------------------------------------------------------------------


def _start(ctx: OpKernelContext, q: Queue, attempt: _Attempt, enqueue: bool,
           timeout_ms: int) -> None:  # fmt: skip
    """Park `attempt` on `q` with its exits: step abort and timeout."""
    step = ctx.step
    if getattr(step, "abort_error", None) is not None:
        attempt.done(None, step.abort_error)
        return
    add = getattr(step, "add_abort_callback", None)
    if add is not None:

        def on_abort(error: OpError) -> None:
            q.cancel(attempt, error)

        add(on_abort)
        attempt.cancel_hooks.append(lambda: step.remove_abort_callback(on_abort))
    if timeout_ms >= 0:
        what = "Enqueue" if enqueue else "Dequeue"
        timer = threading.Timer(
            timeout_ms / 1000.0,
            lambda: q.cancel(attempt, DeadlineExceededError(f"{what} timed out after "
                                                            f"{timeout_ms} ms")),
        )  # fmt: skip
        timer.daemon = True
        attempt.cancel_hooks.append(timer.cancel)
        timer.start()
    q.park(attempt, enqueue)


_TIMEOUT = "timeout_ms: int = -1"
register_op("QueueEnqueueV2", inputs=["handle: resource", "components: Tcomponents"],
            attrs=["Tcomponents: list(type) >= 1", _TIMEOUT], stateful=True)  # fmt: skip
register_op("QueueEnqueueManyV2", inputs=["handle: resource", "components: Tcomponents"],
            attrs=["Tcomponents: list(type) >= 1", _TIMEOUT], stateful=True)  # fmt: skip


def _enqueue_factory(many: bool):
    def factory(k: KernelConstruction) -> Callable:
        types, timeout_ms = list(k.attr("Tcomponents")), k.attr("timeout_ms")

        def compute(ctx: OpKernelContext, inputs: list, done: Done) -> None:
            q = lookup_queue(ctx, inputs[0])
            q.check_types(types)
            components = [np.array(c, copy=True) for c in inputs[1:]]
            if many:
                items = q.split_batch(components)
            else:
                for i, c in enumerate(components):
                    q.check_element_shape(i, c.shape)
                items = [tuple(components)]
            _start(ctx, q, _Attempt(done, items=items), True, timeout_ms)

        return compute

    return factory


register_kernel("QueueEnqueueV2", is_async=True)(_enqueue_factory(False))
register_kernel("QueueEnqueueManyV2", is_async=True)(_enqueue_factory(True))

register_op("QueueDequeueV2", inputs=["handle: resource"],
            outputs=["components: component_types"],
            attrs=["component_types: list(type) >= 1", _TIMEOUT], stateful=True)  # fmt: skip
for _op in ("QueueDequeueManyV2", "QueueDequeueUpToV2"):
    register_op(_op, inputs=["handle: resource", "n: int32"],
                outputs=["components: component_types"],
                attrs=["component_types: list(type) >= 1", _TIMEOUT], stateful=True)  # fmt: skip


def _dequeue_factory(batched: bool, allow_smaller: bool):
    def factory(k: KernelConstruction) -> Callable:
        types, timeout_ms = list(k.attr("component_types")), k.attr("timeout_ms")

        def compute(ctx: OpKernelContext, inputs: list, done: Done) -> None:
            q = lookup_queue(ctx, inputs[0])
            q.check_types(types)
            count = -1  # one element, no batch dimension
            if batched:
                q.check_batchable()
                count = int(np.asarray(inputs[1]))
                if count < 0:
                    raise InvalidArgumentError(f"Dequeue requested n < 0: {count}")
            _start(ctx, q, _Attempt(done, count=count, allow_smaller=allow_smaller),
                   False, timeout_ms)  # fmt: skip

        return compute

    return factory


register_kernel("QueueDequeueV2", is_async=True)(_dequeue_factory(False, False))
register_kernel("QueueDequeueManyV2", is_async=True)(_dequeue_factory(True, False))
register_kernel("QueueDequeueUpToV2", is_async=True)(_dequeue_factory(True, True))

# ---------------------------------------------------------------------------------------
# Close / size
# ---------------------------------------------------------------------------------------

register_op("QueueCloseV2", inputs=["handle: resource"],
            attrs=["cancel_pending_enqueues: bool = false"], stateful=True)  # fmt: skip
register_op("QueueSizeV2", inputs=["handle: resource"], outputs=["size: int32"], stateful=True)
register_op("QueueIsClosedV2", inputs=["handle: resource"], outputs=["is_closed: bool"],
            stateful=True)  # fmt: skip


@register_kernel("QueueCloseV2")
def _queue_close(k: KernelConstruction) -> Callable:
    cancel = bool(k.attr("cancel_pending_enqueues"))

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        lookup_queue(ctx, inputs[0]).close(cancel)
        return []

    return compute


@register_kernel("QueueSizeV2")
def _queue_size(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [np.int32(lookup_queue(ctx, inputs[0]).size())]

    return compute


@register_kernel("QueueIsClosedV2")
def _queue_is_closed(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        q = lookup_queue(ctx, inputs[0])
        with q.lock:
            return [np.bool_(q.closed)]

    return compute
