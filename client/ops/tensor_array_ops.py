"""Client, graph building: tf.TensorArray on the V3 ops (TensorArrayV3, Read/Write/Gather/
Scatter/Concat/Split/Size/Close, TensorArrayGradV3), as TensorFlow's _GraphTensorArray
builds them for a TF1 (control flow v1) graph; with control flow v2 on, reads never
clear, as TF 2.x's TensorList-backed TensorArray. A TensorArray value is immutable: each
write returns a new TensorArray object sharing the handle with a new flow."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.ops import Tensor
from client.framework.shape_fns import constant_value
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, control_flow_util, math_ops


class TensorArray:
    """tf.TensorArray (graph mode)."""

    def __init__(
        self,
        dtype: Any,
        size: Any = None,
        dynamic_size: Any = None,
        clear_after_read: Any = None,
        tensor_array_name: Any = None,
        handle: Any = None,
        flow: Any = None,
        infer_shape: bool = True,
        element_shape: Any = None,
        colocate_with_first_write_call: bool = True,
        name: str | None = None,
    ) -> None:
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._dynamic_size = bool(dynamic_size)
        self._infer_shape = infer_shape
        # One shape shared by every TensorArray on this handle (writes refine it).
        self._element_shape = [TensorShape(element_shape)]
        # The size as given (a Python int or a Tensor): size() converts it where it is
        # asked for, as TF does ("TensorArrayStack/Const").
        self._size: Any = size
        if handle is not None:
            if flow is None:
                raise ValueError("flow must not be None if handle is not None.")
            self._handle, self._flow = handle, flow
            return
        if size is None:
            raise ValueError("Size must be provided if handle is not provided")
        with _ops.name_scope(name, "TensorArray", [size]) as scope:
            attrs = {
                "dtype": self._dtype,
                "element_shape": TensorShape(element_shape),
                "identical_element_shapes": infer_shape,
                "dynamic_size": self._dynamic_size,
                "clear_after_read": _clears_after_read(clear_after_read),
                "tensor_array_name": tensor_array_name or "",
            }
            op = apply_op("TensorArrayV3", [size], attrs, scope)
            self._handle, self._flow = op.outputs[0], op.outputs[1]

    dtype = property(lambda self: self._dtype)
    handle = property(lambda self: self._handle)
    flow = property(lambda self: self._flow)

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape[0]

    def _like(self, flow: Any) -> TensorArray:
        ta = TensorArray(self._dtype, handle=self._handle, flow=flow, infer_shape=self._infer_shape)
        ta._element_shape = self._element_shape
        ta._dynamic_size = self._dynamic_size
        ta._size = self._size
        return ta

    def _merge_element_shape(self, shape: TensorShape) -> None:
        if not shape.is_compatible_with(self.element_shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {self.element_shape} ")
        if self._infer_shape:
            self._element_shape[0] = self.element_shape.merge_with(shape)

    def identity(self) -> TensorArray:
        return self._like(array_ops.identity(self._flow))

    def grad(self, source: str, flow: Any = None, name: str | None = None) -> TensorArray:
        flow = self._flow if flow is None else flow
        with (
            _ops.name_scope(name, "TensorArrayGrad", [self._handle]),
            _ops.colocate_with(self._handle),
        ):
            op = apply_op("TensorArrayGradV3", [self._handle, flow], {"source": source}, name)
            with _ops.control_dependencies([op.outputs[0]]):
                flow = array_ops.identity(flow, name="gradient_flow")
            g = TensorArray(
                self._dtype, handle=op.outputs[0], flow=flow, infer_shape=self._infer_shape
            )
            g._element_shape = self._element_shape
            return g

    def read(self, index: Any, name: str | None = None) -> Any:
        value = apply_op(
            "TensorArrayReadV3", [self._handle, index, self._flow], {"dtype": self._dtype}, name
        ).outputs[0]
        value.set_shape(self.element_shape)
        return value

    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        with _ops.name_scope(name, "TensorArrayWrite", [self._handle, index, value]):
            value = convert_to_tensor(value, dtype=self._dtype, name="value")
            self._merge_element_shape(value.shape)
            flow = apply_op(
                "TensorArrayWriteV3", [self._handle, index, value, self._flow], {}, name
            ).outputs[0]
            return self._like(flow)

    def stack(self, name: str | None = None) -> Any:
        with (
            _ops.colocate_with(self._handle),
            _ops.name_scope(name, "TensorArrayStack", [self._handle]),
        ):
            value = self.gather(math_ops.range(0, self.size()), name=name)
            if self.element_shape and not self._dynamic_size and self._size is not None:
                value.set_shape(
                    TensorShape([_static_int(self._size)]).concatenate(self.element_shape)
                )
            return value

    def gather(self, indices: Any, name: str | None = None) -> Any:
        attrs = {"dtype": self._dtype, "element_shape": self.element_shape}
        value = apply_op(
            "TensorArrayGatherV3", [self._handle, indices, self._flow], attrs, name
        ).outputs[0]
        if self.element_shape:
            value.set_shape(TensorShape([None]).concatenate(self.element_shape))
        return value

    def concat(self, name: str | None = None) -> Any:
        attrs = {"dtype": self._dtype, "element_shape_except0": self.element_shape[1:]}
        value = apply_op("TensorArrayConcatV3", [self._handle, self._flow], attrs, name).outputs[0]
        if self.element_shape:
            dim0 = None
            if self._infer_shape:
                size = _static_int(self.size())
                if size is not None and self.element_shape[0] is not None:
                    dim0 = size * self.element_shape[0]
            value.set_shape(TensorShape([dim0]).concatenate(self.element_shape[1:]))
        return value

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        with _ops.name_scope(name, "TensorArrayUnstack", [self._handle, value]):
            num_elements = array_ops.shape(value)[0]
            return self.scatter(math_ops.range(0, num_elements), value, name=name)

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        with _ops.name_scope(name, "TensorArrayScatter", [self._handle, value, indices]):
            value = convert_to_tensor(value, dtype=self._dtype, name="value")
            self._merge_element_shape(value.shape[1:])
            flow = apply_op(
                "TensorArrayScatterV3", [self._handle, indices, value, self._flow], {}, name
            ).outputs[0]
            return self._like(flow)

    def split(self, value: Any, lengths: Any, name: str | None = None) -> TensorArray:
        with _ops.name_scope(name, "TensorArraySplit", [self._handle, value, lengths]):
            value = convert_to_tensor(value, dtype=self._dtype, name="value")
            lengths_64 = math_ops.cast(lengths, dtypes.int64)
            piece = _equal_piece_length(lengths_64)
            if value.shape.dims is not None and piece is not None:
                self._merge_element_shape(TensorShape([piece]).concatenate(value.shape[1:]))
            flow = apply_op(
                "TensorArraySplitV3", [self._handle, value, lengths_64, self._flow], {}, name
            ).outputs[0]
            return self._like(flow)

    def size(self, name: str | None = None) -> Any:
        if not self._dynamic_size and self._size is not None:
            # A fixed size is the value given at creation, converted here (a Python int
            # becomes a Const in the current scope, a Tensor is itself).
            return convert_to_tensor(self._size, dtype=dtypes.int32)
        return apply_op("TensorArraySizeV3", [self._handle, self._flow], {}, name).outputs[0]

    def close(self, name: str | None = None) -> Any:
        return apply_op("TensorArrayCloseV3", [self._handle], {}, name)


def _clears_after_read(clear_after_read: Any) -> bool:
    """TensorArrayV3's clear_after_read. With control flow v2 on (TF 2.x's default),
    TensorFlow builds a TensorList-backed TensorArray whose reads never clear, whatever
    the argument: the array reads the same then (e.g. read(i) after stack()). With v2
    off (disable_v2_behavior()), TF's v1 TensorArray: clears unless told otherwise."""
    if control_flow_util.control_flow_v2_enabled():
        return False
    return True if clear_after_read is None else bool(clear_after_read)


def _static_int(size: Any) -> int | None:
    """tensor_util.constant_value of a size: a Python int, or a Tensor's known value."""
    if isinstance(size, Tensor):
        v = constant_value(size)
        return None if v is None else int(v)
    return int(size)


def _equal_piece_length(lengths: Any) -> int | None:
    """The length of every piece when `lengths` is a known vector of equal lengths (then
    each element's shape is known, as TF's split infers it), else None."""
    v = constant_value(lengths)
    if v is None or v.ndim != 1 or v.size == 0 or v.max() != v.min():
        return None
    return int(v[0])
