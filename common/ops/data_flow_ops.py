"""Ops (executor stage): per-step data structures — TensorArrays (TensorArrayV3 and its
Read/Write/Gather/Scatter/Concat/Split/Size/Close/Grad ops, as tf.TensorArray, map_fn and
v1 while_loop emit them) and stacks (StackV2 and friends, which v1 while_loop gradients
use to save forward values; the TF1 Ref-handle Stack ops too).

Both live in the step's per-step container (`ctx.step.step_container` of the device's
ResourceMgr, dropped when the step ends), named by a DT_RESOURCE `ResourceHandle`; the
Ref-handle Stack ops pass the `Stack` object itself along the ref edge. Each structure
guards its contents with its own lock, so kernels are safe from any thread. Errors carry
TensorFlow's codes and messages.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any, TypeGuard, TypeVar

import numpy as np

from common import dtypes
from common.dtypes import DataType
from common.errors import InvalidArgumentError, NotFoundError
from common.ops.array_ops import shape_compatible, shape_str
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op
from common.resource_mgr import ResourceHandle, handle_of
from common.tensor_shape import shape_string

_FLOW = np.float32(0.0)
_R = TypeVar("_R")
_ids = itertools.count()  # unique TensorArray / Stack names within the process


def _unique_name(prefix: str, node_name: str) -> str:
    return f"{prefix}_{node_name}_{next(_ids)}"


def _dtype_name(dt: DataType) -> str:
    return dtypes.tf_name(dtypes.base(dt))


def _is_fully_defined(shape: tuple | None) -> TypeGuard[tuple[int, ...]]:
    return shape is not None and all(d is not None for d in shape)


def _merge_shapes(a: tuple | None, b: tuple) -> tuple:
    if a is None:
        return tuple(b)
    return tuple(x if x is not None else y for x, y in zip(a, b))


# ---------------------------------------------------------------------------------------
# TensorArray
# ---------------------------------------------------------------------------------------


class _Slot:
    __slots__ = ("value", "written", "read", "cleared")

    def __init__(self) -> None:
        self.value: np.ndarray | None = None
        self.written = False
        self.read = False
        self.cleared = False


class TensorArray:
    """TensorFlow's TensorArray: a list of tensors written once (or, for gradient arrays,
    aggregated by sum) and read once unless clear_after_read is off. Thread-safe."""

    def __init__(
        self,
        name: str,
        dtype: DataType,
        size: int,
        element_shape: tuple | None,
        *,
        dynamic_size: bool = False,
        clear_after_read: bool = True,
        identical_element_shapes: bool = False,
        multiple_writes_aggregate: bool = False,
    ) -> None:
        self.name = name
        self.dtype = dtypes.base(dtype)
        self.element_shape = element_shape
        self.dynamic_size = dynamic_size
        self.clear_after_read = clear_after_read
        self.identical_element_shapes = identical_element_shapes
        self.multiple_writes_aggregate = multiple_writes_aggregate
        self.slots = [_Slot() for _ in range(size)]
        self.closed = False
        self.lock = threading.Lock()

    # -- checks (caller holds lock) ---------------------------------------------------------
    def _check_open(self) -> None:
        if self.closed:
            raise InvalidArgumentError(f"TensorArray {self.name} has already been closed.")

    def _check_dtype(self, dt: DataType, writing: bool) -> None:
        if dtypes.base(dt) != self.dtype:
            what = "is trying to write dtype" if writing else "requested dtype"
            raise InvalidArgumentError(
                f"TensorArray dtype is {_dtype_name(self.dtype)} but Op {what} {_dtype_name(dt)}."
            )

    # -- writes ---------------------------------------------------------------------------
    def write(self, index: int, value: np.ndarray, dt: DataType) -> None:
        with self.lock:
            self._check_open()
            self._check_dtype(dt, writing=True)
            self._write_locked(index, value)

    def _write_locked(self, index: int, value: np.ndarray, owned: bool = False) -> None:
        """Write `value` at `index`; `owned`: a private array of our dtype (no copy made)."""
        if index < 0:
            raise InvalidArgumentError(f"Tried to write to index {index} but array size is: "
                                       f"{len(self.slots)}")  # fmt: skip
        if index >= len(self.slots):
            if not self.dynamic_size:
                raise InvalidArgumentError(
                    f"Tried to write to index {index} but array is not resizeable and size "
                    f"is: {len(self.slots)}"
                )
            self.slots.extend(_Slot() for _ in range(index + 1 - len(self.slots)))
        if not shape_compatible(value.shape, self.element_shape):
            raise InvalidArgumentError(
                f"Could not write to TensorArray index {index} because the value shape is "
                f"{shape_str(value.shape)} which is incompatible with the TensorArray's "
                f"inferred element shape: {shape_string(self.element_shape)} (consider "
                "setting infer_shape=False)."
            )
        if self.identical_element_shapes and not _is_fully_defined(self.element_shape):
            self.element_shape = _merge_shapes(self.element_shape, value.shape)
        slot = self.slots[index]
        if slot.read:
            raise InvalidArgumentError(
                f"Could not write to TensorArray index {index} because it has already been read."
            )
        if slot.written and not self.multiple_writes_aggregate:
            raise InvalidArgumentError(
                f"Could not write to TensorArray index {index} because it has already been "
                "written to."
            )
        if not owned:
            value = np.array(value, dtype=dtypes.as_numpy(self.dtype), copy=True)
        if slot.written and slot.value is not None:
            if slot.value.shape != value.shape:
                raise InvalidArgumentError(
                    f"Could not aggregate to TensorArray index {index} because the existing "
                    f"shape is {shape_str(slot.value.shape)} but the new input shape is "
                    f"{shape_str(value.shape)}."
                )
            value = slot.value + value
        slot.value, slot.written = value, True

    def scatter(self, indices: np.ndarray, value: np.ndarray, dt: DataType) -> None:
        with self.lock:
            self._check_open()
            self._check_dtype(dt, writing=True)
            idx = indices.reshape(-1)
            if value.ndim == 0 or value.shape[0] != idx.size:
                raise InvalidArgumentError(
                    f"Expected len(indices) == values.shape[0], but saw: {idx.size} vs. "
                    f"{value.shape[0] if value.ndim else 0}"
                )
            if not self.dynamic_size:
                for i in idx:
                    if i >= len(self.slots):
                        raise InvalidArgumentError(
                            f"Tried to write to index {int(i)} but array is not resizeable "
                            f"and size is: {len(self.slots)}"
                        )
            # One copy of the whole value; each slot holds a row of it (not a copy each).
            rows = np.array(value, dtype=dtypes.as_numpy(self.dtype), copy=True)
            for k, i in enumerate(idx.tolist()):
                self._write_locked(i, rows[k], owned=True)

    def split(self, value: np.ndarray, lengths: np.ndarray, dt: DataType) -> None:
        with self.lock:
            self._check_open()
            self._check_dtype(dt, writing=True)
            if value.ndim == 0:
                raise InvalidArgumentError(
                    f"Expected value to be at least a vector, but received shape: "
                    f"{shape_str(value.shape)}"
                )
            lens = [int(x) for x in lengths.reshape(-1)]
            if sum(lens) != value.shape[0]:
                raise InvalidArgumentError(
                    f"Expected sum of lengths to be equal to values.shape[0], but sum of "
                    f"lengths is {sum(lens)} and value's shape is: {shape_str(value.shape)}"
                )
            if not self.dynamic_size and len(lens) != len(self.slots):
                raise InvalidArgumentError(
                    f"TensorArray's size is not equal to the size of lengths ({len(self.slots)}"
                    f" vs. {len(lens)}), and the TensorArray is not marked as dynamically "
                    "resizeable"
                )
            start = 0
            for i, n in enumerate(lens):
                self._write_locked(i, value[start : start + n])
                start += n

    # -- reads ----------------------------------------------------------------------------
    def read(self, index: int, dt: DataType) -> np.ndarray:
        with self.lock:
            self._check_open()
            self._check_dtype(dt, writing=False)
            return self._read_locked(index)

    def _read_locked(self, index: int) -> np.ndarray:
        if index < 0 or index >= len(self.slots):
            raise InvalidArgumentError(
                f"Tried to read from index {index} but array size is: {len(self.slots)}"
            )
        slot = self.slots[index]
        if not slot.written:
            if not _is_fully_defined(self.element_shape):
                raise InvalidArgumentError(
                    f"TensorArray {self.name}: Could not read from TensorArray index {index}. "
                    " Furthermore, the element shape is not fully defined: "
                    f"{shape_string(self.element_shape)}.  It is possible you are working "
                    "with a resizeable TensorArray and stop_gradients is not allowing the "
                    "gradients to be written.  If you set the full element_shape property "
                    "on the forward TensorArray, the proper all-zeros tensor will be "
                    "returned instead of incurring this error."
                )
            return np.zeros(self.element_shape, dtypes.as_numpy(self.dtype))
        if slot.cleared:
            raise InvalidArgumentError(
                f"TensorArray {self.name}: Could not read index {index} twice because it was "
                "cleared after a previous read (perhaps try setting clear_after_read = false?)."
            )
        value = slot.value
        assert value is not None
        slot.read = True
        if self.clear_after_read:
            slot.value, slot.cleared = None, True
        return value

    def gather(self, indices: np.ndarray, dt: DataType, element_shape: tuple | None):
        with self.lock:
            self._check_open()
            self._check_dtype(dt, writing=False)
            idx = [int(i) for i in indices.reshape(-1)]
            if not idx:
                return self._empty(element_shape)
            values = [self._read_locked(i) for i in idx]
        return _stack(values, idx)

    def concat(self, dt: DataType, element_shape_except0: tuple | None):
        with self.lock:
            self._check_open()
            self._check_dtype(dt, writing=False)
            if not self.slots:
                rest = element_shape_except0
                if not _is_fully_defined(rest):
                    raise InvalidArgumentError(
                        "TensorArray has size zero, but element_shape "
                        f"{shape_string(rest)} is not fully defined. Currently only static "
                        "shapes are supported when concatenating zero-size TensorArrays."
                    )
                empty = np.zeros((0, *rest), dtypes.as_numpy(self.dtype))
                return empty, np.zeros(0, np.int64)
            values = [self._read_locked(i) for i in range(len(self.slots))]
        for i, v in enumerate(values):
            if v.ndim == 0:
                raise InvalidArgumentError(
                    f"Concat saw a scalar shape at index {i} but requires at least vectors.  "
                    "Did you mean to call TensorArray::Pack instead?"
                )
        for i, v in enumerate(values[1:], 1):
            if v.shape[1:] != values[0].shape[1:]:
                raise InvalidArgumentError(
                    "TensorArray has inconsistent shapes.  Index 0 has (excepting dimension "
                    f"0) shape: {shape_str(values[0].shape[1:])} but index {i} has (excepting "
                    f"dimension 0) shape: {shape_str(v.shape[1:])}"
                )
        lengths = np.array([v.shape[0] for v in values], np.int64)
        return np.concatenate(values, axis=0), lengths

    def _empty(self, element_shape: tuple | None) -> np.ndarray:
        shape = element_shape if _is_fully_defined(element_shape) else self.element_shape
        if not _is_fully_defined(shape):
            raise InvalidArgumentError(
                f"TensorArray has size zero, but element shape {shape_string(shape)} is not "
                "fully defined. Currently only static shapes are supported when packing "
                "zero-size TensorArrays."
            )
        return np.zeros((0, *shape), dtypes.as_numpy(self.dtype))

    def size(self) -> int:
        with self.lock:
            self._check_open()
            return len(self.slots)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.slots = []


def _stack(values: list[np.ndarray], idx: list[int]) -> np.ndarray:
    first = values[0].shape
    for k, v in enumerate(values[1:], 1):
        if v.shape != first:
            raise InvalidArgumentError(
                f"TensorArray has inconsistent shapes.  Index {idx[0]} has shape: "
                f"{shape_str(first)} but index {idx[k]} has shape: {shape_str(v.shape)}"
            )
    return np.stack(values)


TENSOR_ARRAY_TYPE_NAME = "N10tensorflow11TensorArrayE"


def _ta_handle(device: str, container: str, name: str) -> np.ndarray:
    return ResourceHandle(device, container, name, TENSOR_ARRAY_TYPE_NAME).as_tensor()


def lookup_tensor_array(ctx: OpKernelContext, handle_value: Any) -> TensorArray:
    return lookup_per_step(ctx, handle_value, TensorArray)


def lookup_per_step(ctx: OpKernelContext, handle_value: Any, kind: type[_R]) -> _R:
    """The `kind` resource (a TensorArray or Stack) a DT_RESOURCE handle names, found once
    per step and handle tensor: a loop's push/pop/read/write ops get the same handle
    tensor (through Enter) every iteration, and the table lookup under the manager's lock
    cost more than the push itself. Per-step resources stay in their container until the
    step ends, so a found one stays valid for the step; a miss is not remembered."""
    cache = ctx.step.resource_cache
    hit = cache.get(id(handle_value))
    if hit is not None and hit[0] is handle_value:
        return hit[1]
    h = handle_of(handle_value, ctx.node_name)
    found = ctx.step.resource_mgr.find(h.container, h.name)
    if not isinstance(found, kind):
        raise NotFoundError(
            f"Container {h.container} does not exist. (Could not find resource: "
            f"{h.container}/{h.name})",
            ctx.node_name,
        )
    cache[id(handle_value)] = (handle_value, found)
    return found


register_op(
    "TensorArrayV3",
    inputs=["size: int32"],
    outputs=["handle: resource", "flow: float"],
    attrs=[
        "dtype: type",
        "element_shape: shape = <unknown>",
        "dynamic_size: bool = false",
        "clear_after_read: bool = true",
        "identical_element_shapes: bool = false",
        "tensor_array_name: string = ''",
    ],
    stateful=True,
)


@register_kernel("TensorArrayV3")
def _tensor_array_v3(k: KernelConstruction) -> Callable:
    dtype, element_shape = k.attr("dtype"), k.attr("element_shape")
    flags = {
        "dynamic_size": bool(k.attr("dynamic_size")),
        "clear_after_read": bool(k.attr("clear_after_read")),
        "identical_element_shapes": bool(k.attr("identical_element_shapes")),
    }
    prefix = k.attr("tensor_array_name") or "_tensor_arrays"

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        size = int(np.asarray(inputs[0]))
        if size < 0:
            raise InvalidArgumentError(f"Size should be >= 0, but got {size}")
        name = _unique_name(prefix, ctx.node_name)
        ta = TensorArray(name, dtype, size, element_shape, **flags)
        container = ctx.step.step_container
        ctx.step.resource_mgr.create(container, name, ta)
        return [_ta_handle(ctx.step.device, container, name), _FLOW]

    return compute


register_op(
    "TensorArrayGradV3",
    inputs=["handle: resource", "flow_in: float"],
    outputs=["grad_handle: resource", "flow_out: float"],
    attrs=["source: string"],
    stateful=True,
)
register_op(
    "TensorArrayGradWithShape",
    inputs=["handle: resource", "flow_in: float", "shape_to_prepend: int32"],
    outputs=["grad_handle: resource", "flow_out: float"],
    attrs=["source: string"],
    stateful=True,
)


def _grad_kernel(with_shape: bool) -> Callable[[KernelConstruction], Callable]:
    def factory(k: KernelConstruction) -> Callable:
        source = k.attr("source")

        def compute(ctx: OpKernelContext, inputs: list) -> list:
            # The gradient array of one forward handle tensor is one array for the step: a
            # gradient loop asks for it every iteration, and the same handle tensor back
            # lets the ops using it find the array once (lookup_per_step).
            cache, key = ctx.step.resource_cache, (id(inputs[0]), source)
            hit = cache.get(key)
            if hit is not None and hit[0] is inputs[0]:
                return [hit[1], _FLOW]
            h = handle_of(inputs[0], ctx.node_name)
            forward = lookup_tensor_array(ctx, inputs[0])
            with forward.lock:
                size, element_shape = len(forward.slots), forward.element_shape
                identical = forward.identical_element_shapes
            if with_shape:
                prepend = tuple(int(d) for d in np.asarray(inputs[2]).reshape(-1))
                element_shape = None if element_shape is None else prepend + element_shape
            name = f"{h.name}@{source}"

            def create() -> TensorArray:
                return TensorArray(
                    name, forward.dtype, size, element_shape,
                    identical_element_shapes=identical, multiple_writes_aggregate=True,
                )  # fmt: skip

            ctx.step.resource_mgr.lookup_or_create(h.container, name, create)
            handle = _ta_handle(h.device, h.container, name)
            cache[key] = (inputs[0], handle)
            return [handle, _FLOW]

        return compute

    return factory


register_kernel("TensorArrayGradV3")(_grad_kernel(False))
register_kernel("TensorArrayGradWithShape")(_grad_kernel(True))

register_op(
    "TensorArrayWriteV3",
    inputs=["handle: resource", "index: int32", "value: T", "flow_in: float"],
    outputs=["flow_out: float"],
    attrs=["T: type"],
    stateful=True,
)


def _updates_array(update: Callable[[TensorArray, np.ndarray, np.ndarray, Any], None]) -> Callable:
    """The kernel of an op that changes the TensorArray of its handle input with its next two
    inputs (Write, Scatter, Split) and outputs the array's flow."""

    def factory(k: KernelConstruction) -> Callable:
        dt = k.attr("T")

        def compute(ctx: OpKernelContext, inputs: list) -> list:
            ta = lookup_tensor_array(ctx, inputs[0])
            update(ta, np.asarray(inputs[1]), np.asarray(inputs[2]), dt)
            return [_FLOW]

        return compute

    return factory


register_kernel("TensorArrayWriteV3")(
    _updates_array(lambda ta, index, value, dt: ta.write(int(index), value, dt))
)


register_op(
    "TensorArrayScatterV3",
    inputs=["handle: resource", "indices: int32", "value: T", "flow_in: float"],
    outputs=["flow_out: float"],
    attrs=["T: type"],
    stateful=True,
)


register_kernel("TensorArrayScatterV3")(
    _updates_array(lambda ta, indices, value, dt: ta.scatter(indices, value, dt))
)


register_op(
    "TensorArraySplitV3",
    inputs=["handle: resource", "value: T", "lengths: int64", "flow_in: float"],
    outputs=["flow_out: float"],
    attrs=["T: type"],
    stateful=True,
)


register_kernel("TensorArraySplitV3")(
    _updates_array(lambda ta, value, lengths, dt: ta.split(value, lengths, dt))
)


register_op(
    "TensorArrayReadV3",
    inputs=["handle: resource", "index: int32", "flow_in: float"],
    outputs=["value: dtype"],
    attrs=["dtype: type"],
    stateful=True,
)


@register_kernel("TensorArrayReadV3")
def _tensor_array_read(k: KernelConstruction) -> Callable:
    dt = k.attr("dtype")

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        ta = lookup_tensor_array(ctx, inputs[0])
        return [ta.read(int(np.asarray(inputs[1])), dt)]

    return compute


register_op(
    "TensorArrayGatherV3",
    inputs=["handle: resource", "indices: int32", "flow_in: float"],
    outputs=["value: dtype"],
    attrs=["dtype: type", "element_shape: shape = <unknown>"],
    stateful=True,
)


@register_kernel("TensorArrayGatherV3")
def _tensor_array_gather(k: KernelConstruction) -> Callable:
    dt, element_shape = k.attr("dtype"), k.attr("element_shape")

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        ta = lookup_tensor_array(ctx, inputs[0])
        return [ta.gather(np.asarray(inputs[1]), dt, element_shape)]

    return compute


register_op(
    "TensorArrayConcatV3",
    inputs=["handle: resource", "flow_in: float"],
    outputs=["value: dtype", "lengths: int64"],
    attrs=["dtype: type", "element_shape_except0: shape = <unknown>"],
    stateful=True,
)


@register_kernel("TensorArrayConcatV3")
def _tensor_array_concat(k: KernelConstruction) -> Callable:
    dt, rest = k.attr("dtype"), k.attr("element_shape_except0")

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return list(lookup_tensor_array(ctx, inputs[0]).concat(dt, rest))

    return compute


register_op(
    "TensorArraySizeV3",
    inputs=["handle: resource", "flow_in: float"],
    outputs=["size: int32"],
    stateful=True,
)


@register_kernel("TensorArraySizeV3")
def _tensor_array_size(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [np.int32(lookup_tensor_array(ctx, inputs[0]).size())]

    return compute


register_op("TensorArrayCloseV3", inputs=["handle: resource"], stateful=True)


@register_kernel("TensorArrayCloseV3")
def _tensor_array_close(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        lookup_tensor_array(ctx, inputs[0]).close()
        return []

    return compute


# ---------------------------------------------------------------------------------------
# Stacks
# ---------------------------------------------------------------------------------------


class Stack:
    """TensorFlow's Stack: a bounded (max_size < 0: unbounded) LIFO of tensors of one
    dtype. Thread-safe. Also the value of a TF1 Stack op's Ref(string) handle edge."""

    def __init__(self, name: str, elem_type: DataType, max_size: int) -> None:
        self.name = name
        self.elem_type = dtypes.base(elem_type)
        self.max_size = max_size
        self.items: list[np.ndarray] = []
        self.closed = False
        self.lock = threading.Lock()

    def _check_open(self) -> None:
        if self.closed:
            raise InvalidArgumentError(f"Stack[{self.name}] has already been closed.")

    def push(self, value: np.ndarray, dt: DataType) -> None:
        with self.lock:
            self._check_open()
            if dtypes.base(dt) != self.elem_type:
                raise InvalidArgumentError(
                    f"Must have type {_dtype_name(self.elem_type)} but got {_dtype_name(dt)}"
                )
            if 0 <= self.max_size <= len(self.items):
                raise InvalidArgumentError(
                    f"Stack[{self.name}] overflowed its max_size ({self.max_size})"
                )
            self.items.append(value)

    def pop(self, dt: DataType) -> np.ndarray:
        with self.lock:
            self._check_open()
            if dtypes.base(dt) != self.elem_type:
                raise InvalidArgumentError(
                    f"Must have type {_dtype_name(self.elem_type)} but got {_dtype_name(dt)}"
                )
            if not self.items:
                raise InvalidArgumentError(f"Stack[{self.name}] is empty.")
            return self.items.pop()

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.items = []


STACK_TYPE_NAME = "N10tensorflow5StackE"


def lookup_stack(ctx: OpKernelContext, handle_value: Any) -> Stack:
    """The Stack a handle names: a DT_RESOURCE handle, or the object on a Ref edge."""
    if isinstance(handle_value, Stack):
        return handle_value
    return lookup_per_step(ctx, handle_value, Stack)


def _create_stack(ctx: OpKernelContext, k: KernelConstruction, max_size: int) -> Stack:
    name = _unique_name(k.attr("stack_name") or "stack", ctx.node_name)
    stack = Stack(name, k.attr("elem_type"), max_size)
    ctx.step.resource_mgr.create(ctx.step.step_container, name, stack)
    return stack


register_op(
    "StackV2",
    inputs=["max_size: int32"],
    outputs=["handle: resource"],
    attrs=["elem_type: type", "stack_name: string = ''"],
    stateful=True,
)


@register_kernel("StackV2")
def _stack_v2(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        stack = _create_stack(ctx, k, int(np.asarray(inputs[0])))
        handle = ResourceHandle(ctx.step.device, ctx.step.step_container, stack.name,
                                STACK_TYPE_NAME)  # fmt: skip
        return [handle.as_tensor()]

    return compute


register_op(
    "Stack",
    outputs=["handle: Ref(string)"],
    attrs=["elem_type: type", "stack_name: string = ''"],
    stateful=True,
)


@register_kernel("Stack")
def _stack_v1(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [_create_stack(ctx, k, -1)]

    return compute


def _push_kernel(k: KernelConstruction) -> Callable:
    dt = k.attr("T")

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        value = np.asarray(inputs[1])
        lookup_stack(ctx, inputs[0]).push(value, dt)
        return [value]

    return compute


def _pop_kernel(k: KernelConstruction) -> Callable:
    dt = k.attr("elem_type")

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [lookup_stack(ctx, inputs[0]).pop(dt)]

    return compute


def _close_kernel(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        lookup_stack(ctx, inputs[0]).close()
        return []

    return compute


for _suffix, _handle, _stateful in (("V2", "handle: resource", True),
                                    ("", "handle: Ref(string)", False)):  # fmt: skip
    register_op(
        f"StackPush{_suffix}",
        inputs=[_handle, "elem: T"],
        outputs=["output: T"],
        attrs=["T: type", "swap_memory: bool = false"],
        stateful=_stateful,
    )
    register_op(
        f"StackPop{_suffix}",
        inputs=[_handle],
        outputs=["elem: elem_type"],
        attrs=["elem_type: type"],
        stateful=_stateful,
    )
    register_op(f"StackClose{_suffix}", inputs=[_handle], stateful=_stateful)
    register_kernel(f"StackPush{_suffix}")(_push_kernel)
    register_kernel(f"StackPop{_suffix}")(_pop_kernel)
    register_kernel(f"StackClose{_suffix}")(_close_kernel)
