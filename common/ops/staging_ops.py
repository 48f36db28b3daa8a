"""Ops (executor stage): staging areas — Stage / Unstage / StagePeek / StageSize /
StageClear on a FIFO buffer (TensorFlow's stage_op.cc), and MapStage / MapUnstage /
MapPeek / MapUnstageNoKey / MapSize / MapIncompleteSize / MapClear and their OrderedMap*
forms on a map from int64 keys to tuples that may arrive a few components at a time
(map_stage_op.cc).

A staging area lives in its device's ResourceMgr under (container, shared_name or the
node's name), made by whichever of its ops runs first with that op's capacity and
memory_limit. An op that must wait (a put into a full area, a take of what is not there)
is parked, no thread blocks: it completes when the area changes, and a closed session or
an aborted step cancels it (TensorFlow's kernels block a thread and cannot be
cancelled). Parked attempts are retried in arrival order. One lock per area guards its
contents and its parked attempts; callbacks run outside it. Safe from any thread.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from common.errors import InvalidArgumentError, OpError, ResourceExhaustedError
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op
from common.ops.resource_op_kernel import container_info, lookup_or_create

Done = Callable[[Any, Any], None]  # the executor's async done(outputs, error)
# An attempt runs under the area's lock: None to keep waiting, else its outputs.
Attempt = Callable[[], list | None]


class _Parked:
    __slots__ = ("attempt", "done", "finished", "cancel_hooks")

    def __init__(self, attempt: Attempt, done: Done) -> None:
        self.attempt, self.done = attempt, done
        self.finished = False
        self.cancel_hooks: list[Callable[[], None]] = []


class StagingArea:
    """What Buffer and StagingMap share: capacity, memory limit, parked attempts."""

    def __init__(self, capacity: int, memory_limit: int) -> None:
        self.capacity, self.memory_limit = capacity, memory_limit
        self.current_bytes = 0
        self.lock = threading.Lock()
        self._parked: collections.deque[_Parked] = collections.deque()

    def check_memory_limit(self, nbytes: int) -> None:
        if self.memory_limit > 0 and nbytes > self.memory_limit:
            raise ResourceExhaustedError(
                f"Attempted to insert tensors with combined size of '{nbytes}' bytes into "
                f"Staging Area with a memory limit of '{self.memory_limit}'."
            )

    def would_exceed_memory_limit(self, nbytes: int) -> bool:
        return self.memory_limit > 0 and nbytes + self.current_bytes > self.memory_limit

    def submit(self, ctx: OpKernelContext, attempt: Attempt, done: Done) -> None:
        """Run `attempt` now or park it until it succeeds, fails, or the step aborts."""
        parked = _Parked(attempt, done)
        step = ctx.step
        if getattr(step, "abort_error", None) is not None:
            done(None, step.abort_error)
            return
        add = getattr(step, "add_abort_callback", None)
        if add is not None:

            def on_abort(error: OpError) -> None:
                self._cancel(parked, error)

            add(on_abort)
            parked.cancel_hooks.append(lambda: step.remove_abort_callback(on_abort))
        with self.lock:
            self._parked.append(parked)
            finished = self._flush_locked()
        _run(finished)

    def changed(self) -> None:
        """The area changed outside an attempt (a clear): retry the parked ones."""
        with self.lock:
            finished = self._flush_locked()
        _run(finished)

    def _cancel(self, parked: _Parked, error: OpError) -> None:
        with self.lock:
            if parked.finished:
                return
            self._parked.remove(parked)
            parked.finished = True
        _run([(parked, None, error)])

    def _flush_locked(self) -> list[tuple[_Parked, Any, Any]]:
        finished: list[tuple[_Parked, Any, Any]] = []
        progress = True
        while progress:
            progress = False
            for parked in list(self._parked):
                error: OpError | None = None
                outputs: list | None = None
                try:
                    outputs = parked.attempt()
                except OpError as e:
                    error = e
                else:
                    if outputs is None:
                        continue
                self._parked.remove(parked)
                parked.finished = True
                finished.append((parked, outputs, error))
                progress = True
        return finished


def _run(finished: list[tuple[_Parked, Any, Any]]) -> None:
    for parked, outputs, error in finished:
        for hook in parked.cancel_hooks:
            hook()
        parked.done(outputs, error)


def _nbytes(values: list[np.ndarray]) -> int:
    return sum(int(np.asarray(v).nbytes) for v in values)


# ---------------------------------------------------------------------------------------
# Stage: a FIFO buffer
# ---------------------------------------------------------------------------------------


class Buffer(StagingArea):
    def __init__(self, capacity: int, memory_limit: int) -> None:
        super().__init__(capacity, memory_limit)
        self.tuples: collections.deque[list[np.ndarray]] = collections.deque()

    def put(self, values: list[np.ndarray]) -> Attempt:
        nbytes = _nbytes(values)

        def attempt() -> list | None:
            self.check_memory_limit(nbytes)
            full = self.capacity > 0 and len(self.tuples) >= self.capacity
            if full or self.would_exceed_memory_limit(nbytes):
                return None
            self.current_bytes += nbytes
            self.tuples.append(values)
            return []

        return attempt

    def get(self) -> list | None:
        if not self.tuples:
            return None
        values = self.tuples.popleft()
        self.current_bytes -= _nbytes(values)
        return values

    def peek(self, index: int) -> list | None:
        return list(self.tuples[index]) if index < len(self.tuples) else None

    def clear(self) -> None:
        with self.lock:
            self.tuples.clear()
            self.current_bytes = 0
        self.changed()

    def size(self) -> int:
        with self.lock:
            return len(self.tuples)


_AREA_ATTRS = [
    "capacity: int >= 0 = 0",
    "memory_limit: int >= 0 = 0",
    "dtypes: list(type)",
    "container: string = ''",
    "shared_name: string = ''",
]
_AREA_ATTRS_NONEMPTY = [a if a != "dtypes: list(type)" else "dtypes: list(type) >= 1"
                        for a in _AREA_ATTRS]  # fmt: skip

register_op("Stage", inputs=["values: dtypes"], attrs=_AREA_ATTRS_NONEMPTY, stateful=True)
register_op("Unstage", outputs=["values: dtypes"], attrs=_AREA_ATTRS_NONEMPTY, stateful=True)
register_op("StagePeek", inputs=["index: int32"], outputs=["values: dtypes"],
            attrs=_AREA_ATTRS_NONEMPTY, stateful=True)  # fmt: skip
register_op("StageSize", outputs=["size: int32"], attrs=_AREA_ATTRS, stateful=True)
register_op("StageClear", attrs=_AREA_ATTRS, stateful=True)


def _area_of(ctx: OpKernelContext, k: KernelConstruction, cls: type, make: Callable) -> Any:
    """GetBuffer / GetStagingMap: the area named by node `k`, made with its attrs."""
    rm = ctx.step.resource_mgr
    container, name = container_info(k, rm, use_node_name=True)
    return lookup_or_create(rm, container, name, make, cls, cls.__name__, k.node_name)


def _buffer(ctx: OpKernelContext, k: KernelConstruction) -> Buffer:
    return _area_of(ctx, k, Buffer, lambda: Buffer(k.attr("capacity"), k.attr("memory_limit")))


def _check_arity(tuple_: list, n: int) -> list:
    if len(tuple_) != n:
        raise InvalidArgumentError(f"Mismatch stage/unstage: {len(tuple_)} vs. {n}")
    return tuple_


@register_kernel("Stage", is_async=True)
def _stage(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list, done: Done) -> None:
        buf = _buffer(ctx, k)
        values = [np.array(v, copy=True) for v in inputs]
        buf.submit(ctx, buf.put(values), done)

    return compute


@register_kernel("Unstage", is_async=True)
def _unstage(k: KernelConstruction) -> Callable:
    n = len(k.attr("dtypes"))

    def compute(ctx: OpKernelContext, inputs: list, done: Done) -> None:
        buf = _buffer(ctx, k)

        def attempt() -> list | None:
            got = buf.get()
            return None if got is None else _check_arity(got, n)

        buf.submit(ctx, attempt, done)

    return compute


@register_kernel("StagePeek", is_async=True)
def _stage_peek(k: KernelConstruction) -> Callable:
    n = len(k.attr("dtypes"))

    def compute(ctx: OpKernelContext, inputs: list, done: Done) -> None:
        buf = _buffer(ctx, k)
        index = np.asarray(inputs[0])
        if index.ndim != 0:
            raise InvalidArgumentError("index must be scalar")
        i = int(index) & 0xFFFFFFFFFFFFFFFF  # size_t, as TF reads it: -1 never arrives

        def attempt() -> list | None:
            got = buf.peek(i)
            return None if got is None else _check_arity(got, n)

        buf.submit(ctx, attempt, done)

    return compute


@register_kernel("StageSize")
def _stage_size(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [np.int32(_buffer(ctx, k).size())]

    return compute


@register_kernel("StageClear")
def _stage_clear(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        _buffer(ctx, k).clear()
        return []

    return compute


# ---------------------------------------------------------------------------------------
# MapStage: a map from int64 keys to tuples, maybe filled a few components at a time
# ---------------------------------------------------------------------------------------


class StagingMap(StagingArea):
    def __init__(self, types: list, capacity: int, memory_limit: int, ordered: bool) -> None:
        super().__init__(capacity, memory_limit)
        self.n = len(types)
        self.ordered = ordered
        self.map: dict[int, list[np.ndarray | None]] = {}
        self.incomplete: dict[int, list[np.ndarray | None]] = {}

    def _check_index(self, key: int, index: int) -> None:
        if index >= self.n or index < 0:
            raise InvalidArgumentError(
                f"Index '{index}' for key '{key}' was out of bounds '{self.n}'."
            )

    def put(self, key: int, indices: list[int], values: list[np.ndarray]) -> Attempt:
        _check_ordering(indices)
        nbytes = _nbytes(values)

        def attempt() -> list | None:
            self.check_memory_limit(nbytes)
            if len(indices) != self.n:
                return self._put_incomplete(key, indices, values, nbytes)
            full = self.capacity > 0 and len(self.map) >= self.capacity
            if full or self.would_exceed_memory_limit(nbytes):
                return None
            self.map.setdefault(key, list(values))  # as std::map::insert: the first stays
            self.current_bytes += nbytes
            return []

        return attempt

    def _put_incomplete(self, key: int, indices: list[int], values: list, nbytes: int):
        if self.would_exceed_memory_limit(nbytes):
            return None
        present = self.incomplete.get(key)
        if present is None:
            tuple_: list[np.ndarray | None] = [None] * self.n
            for i, index in enumerate(indices):
                self._check_index(key, index)
                tuple_[index] = values[i]
            self.incomplete[key] = tuple_
            self.current_bytes += nbytes
            return []
        for i, index in enumerate(indices):
            self._check_index(key, index)
            if present[index] is not None:
                raise InvalidArgumentError(
                    f"The tensor for index '{index}' for key '{key}' was already initialized "
                    f"'{self.n}'."
                )
            present[index] = values[i]
        self.current_bytes += nbytes
        if all(v is not None for v in present):
            del self.incomplete[key]
            self.map.setdefault(key, present)
        return []

    def take(self, key: int | None, indices: list[int], remove: bool) -> Attempt:
        """Peek (remove False) or pop the tuple at `key` (None: the first key)."""
        _check_ordering(indices)

        def attempt() -> list | None:
            if key is None:
                if not self.map:
                    return None
                found = min(self.map) if self.ordered else next(iter(self.map))
            elif key not in self.map:
                return None
            else:
                found = key
            tuple_ = self.map[found]
            out = []
            for index in indices:
                self._check_index(found, index)
                value = tuple_[index]
                if value is None:
                    raise InvalidArgumentError(
                        f"Tensor at index '{index}' for key '{found}' has already been removed."
                    )
                out.append(value)
                if remove:
                    tuple_[index] = None
            if remove:
                if all(v is None for v in tuple_):
                    del self.map[found]
                self.current_bytes -= _nbytes(out)
            return out if key is not None else [np.int64(found), *out]

        return attempt

    def clear(self) -> None:
        with self.lock:
            self.map.clear()
            self.incomplete.clear()
            self.current_bytes = 0
        self.changed()

    def sizes(self) -> tuple[int, int]:
        with self.lock:
            return len(self.map), len(self.incomplete)


def _check_ordering(indices: list[int]) -> None:
    if any(a >= b for a, b in zip(indices, indices[1:])):
        raise InvalidArgumentError("Indices are not strictly ordered")


def _map_ops(prefix: str, ordered: bool) -> None:
    """Register the MapStage family under `prefix` ("Map" or "OrderedMap")."""
    key_in = ["key: int64", "indices: int32"]
    register_op(f"{prefix}Stage", inputs=[*key_in, "values: fake_dtypes"],
                attrs=[*_AREA_ATTRS[:3], "fake_dtypes: list(type) >= 1", *_AREA_ATTRS[3:]],
                stateful=True)  # fmt: skip
    for op in ("Unstage", "Peek"):
        register_op(f"{prefix}{op}", inputs=key_in, outputs=["values: dtypes"],
                    attrs=_AREA_ATTRS_NONEMPTY, stateful=True)  # fmt: skip
    register_op(f"{prefix}UnstageNoKey", inputs=["indices: int32"],
                outputs=["key: int64", "values: dtypes"], attrs=_AREA_ATTRS_NONEMPTY,
                stateful=True)  # fmt: skip
    for op in ("Size", "IncompleteSize"):
        register_op(f"{prefix}{op}", outputs=["size: int32"], attrs=_AREA_ATTRS, stateful=True)
    register_op(f"{prefix}Clear", attrs=_AREA_ATTRS, stateful=True)

    def staging_map(ctx: OpKernelContext, k: KernelConstruction) -> StagingMap:
        def make() -> StagingMap:
            return StagingMap(list(k.attr("dtypes")), k.attr("capacity"),
                              k.attr("memory_limit"), ordered)  # fmt: skip

        return _area_of(ctx, k, StagingMap, make)

    @register_kernel(f"{prefix}Stage", is_async=True)
    def _stage(k: KernelConstruction) -> Callable:
        def compute(ctx: OpKernelContext, inputs: list, done: Done) -> None:
            area = staging_map(ctx, k)
            key, indices = int(np.asarray(inputs[0])), _indices(inputs[1])
            values = [np.array(v, copy=True) for v in inputs[2:]]
            area.submit(ctx, area.put(key, indices, values), done)

        return compute

    def _taker(remove: bool, with_key: bool) -> Callable[[KernelConstruction], Callable]:
        def factory(k: KernelConstruction) -> Callable:
            n = len(k.attr("dtypes"))

            def compute(ctx: OpKernelContext, inputs: list, done: Done) -> None:
                area = staging_map(ctx, k)
                key = int(np.asarray(inputs[0])) if with_key else None
                indices = _indices(inputs[-1])
                take = area.take(key, indices, remove)

                def attempt() -> list | None:
                    got = take()
                    if got is None:
                        return None
                    values = got if with_key else got[1:]
                    _check_arity(values, n)
                    return got

                area.submit(ctx, attempt, done)

            return compute

        return factory

    register_kernel(f"{prefix}Unstage", is_async=True)(_taker(True, True))
    register_kernel(f"{prefix}Peek", is_async=True)(_taker(False, True))
    register_kernel(f"{prefix}UnstageNoKey", is_async=True)(_taker(True, False))

    def _size(which: int) -> Callable[[KernelConstruction], Callable]:
        def factory(k: KernelConstruction) -> Callable:
            def compute(ctx: OpKernelContext, inputs: list) -> list:
                return [np.int32(staging_map(ctx, k).sizes()[which])]

            return compute

        return factory

    register_kernel(f"{prefix}Size")(_size(0))
    register_kernel(f"{prefix}IncompleteSize")(_size(1))

    @register_kernel(f"{prefix}Clear")
    def _clear(k: KernelConstruction) -> Callable:
        def compute(ctx: OpKernelContext, inputs: list) -> list:
            staging_map(ctx, k).clear()
            return []

        return compute


def _indices(value: Any) -> list[int]:
    return [int(i) for i in np.asarray(value).reshape(-1)]


_map_ops("Map", ordered=False)
_map_ops("OrderedMap", ordered=True)
