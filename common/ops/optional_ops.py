"""Ops (executor stage): Optionals — DT_VARIANT scalars holding either nothing or a tuple of
tensors (OptionalFromValue, OptionalNone, OptionalHasValue, OptionalGetValue). Besides
tf.data, TensorFlow's cond_v2 emits them: a branch's intermediates that the gradient needs
leave an If as Optionals, the branch that did not compute them returning OptionalNone.

A value is a 0-d object ndarray holding an immutable `Optional`, so kernels are thread-safe
without locks. Across processes it travels as TF's OptionalVariant encodes it
(tensorflow/core/kernels/data/optional_ops_util.h): type_name "tensorflow::data::Optional",
metadata = one byte, the bool has_value, tensors = the components (AsProtoField form).
ZerosLike and AddN on optionals follow OptionalZerosLike / OptionalBinaryAdd.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from common import dtypes
from common import tensor as tensor_util
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops import variant_ops
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op
from common.tensor_shape import shape_string


@dataclasses.dataclass(frozen=True)
class Optional:
    """TF's OptionalVariant: `values` is None when the optional has no value. Immutable."""

    values: tuple[np.ndarray, ...] | None = None

    @property
    def has_value(self) -> bool:
        return self.values is not None


def optional_value(opt: Optional) -> np.ndarray:
    """The DT_VARIANT scalar holding `opt`."""
    return variant_ops.variant_scalar(opt)


def optional_of(value: Any, node_name: str) -> Optional:
    """The Optional a DT_VARIANT input holds."""
    return variant_ops.held(value, Optional, "Input tensor must contain an Optional.", node_name)


# ---------------------------------------------------------------------------------------
# Wire form and variant arithmetic
# ---------------------------------------------------------------------------------------

OPTIONAL_TYPE_NAME = "tensorflow::data::Optional"


def encode_optional(opt: Optional) -> tensor_util.VariantTensorDataProto:
    proto = tensor_util.VariantTensorDataProto(type_name=OPTIONAL_TYPE_NAME)
    proto.metadata = b"\x01" if opt.has_value else b"\x00"
    for value in opt.values or ():
        proto.tensors.append(tensor_util.as_proto_field(value))
    return proto


def decode_optional(proto: tensor_util.VariantTensorDataProto) -> Optional:
    if len(proto.metadata) != 1:
        raise InvalidArgumentError(
            f"Could not decode a {OPTIONAL_TYPE_NAME} variant: metadata is not one bool"
        )
    if proto.metadata == b"\x00":
        return Optional()
    return Optional(tuple(tensor_util.to_numpy(t) for t in proto.tensors))


tensor_util.register_variant_codec(OPTIONAL_TYPE_NAME, Optional, encode_optional, decode_optional)


def _optional_zeros_like(opt: Optional, node_name: str) -> Optional:
    if opt.values is None:
        return opt
    return Optional(tuple(variant_ops.zeros_like_tensor(v, node_name) for v in opt.values))


def _optional_add(a: Optional, b: Optional, node_name: str) -> Optional:
    if a.has_value != b.has_value:
        raise InvalidArgumentError(
            "Cannot add optionals because one has a value and the other doesn't.", node_name
        )
    if a.values is None or b.values is None:
        return a
    if len(a.values) != len(b.values):
        raise InvalidArgumentError(
            "Cannot add optionals because they have different numbers of components "
            f"({len(a.values)} vs. {len(b.values)}).",
            node_name,
        )
    return Optional(
        tuple(variant_ops.add_tensors(x, y, node_name) for x, y in zip(a.values, b.values))
    )


variant_ops.register_variant_ops(Optional, _optional_zeros_like, _optional_add)


# ---------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------

register_op(
    "OptionalFromValue",
    inputs=["components: Toutput_types"],
    outputs=["optional: variant"],
    attrs=["Toutput_types: list(type) >= 1"],
)
register_op("OptionalNone", inputs=[], outputs=["optional: variant"], attrs=[])
register_op("OptionalHasValue", inputs=["optional: variant"], outputs=["has_value: bool"])
register_op(
    "OptionalGetValue",
    inputs=["optional: variant"],
    outputs=["components: output_types"],
    attrs=["output_types: list(type) >= 1", "output_shapes: list(shape) >= 1"],
)


@register_kernel("OptionalFromValue")
def _from_value(k: KernelConstruction) -> Any:
    types = [dtypes.as_numpy(t) for t in k.attr("Toutput_types")]

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        # Private copies: a later in-place kernel never changes what the optional holds.
        values = tuple(np.array(x, dtype=t, copy=True) for x, t in zip(inputs, types))
        return [optional_value(Optional(values))]

    return compute


@register_kernel("OptionalNone")
def _none(k: KernelConstruction) -> Any:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [optional_value(Optional())]

    return compute


@register_kernel("OptionalHasValue")
def _has_value(k: KernelConstruction) -> Any:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [np.bool_(optional_of(inputs[0], k.node_name).has_value)]

    return compute


def _compatible(shape: tuple[int, ...], partial: Any) -> bool:
    if partial is None:
        return True
    return len(shape) == len(partial) and all(p is None or p == d for d, p in zip(shape, partial))


def _check_components(
    values: Sequence[np.ndarray], types: Sequence[DataType], shapes: Sequence[Any], node: str
) -> None:
    """OptionalGetValueOp's checks, in its order and words."""
    if len(values) != len(types):
        raise InvalidArgumentError(
            f"The expected number of components is {len(types)} but the actual number of "
            f"components is {len(values)}.",
            node,
        )
    for i, (value, dt, shape) in enumerate(zip(values, types, shapes)):
        if value.dtype != dtypes.as_numpy(dt):  # object arrays: string/variant alike
            raise InvalidArgumentError(
                f"The expected type at index {i} is {dtypes.tf_name(dt)} but the actual "
                f"type is {dtypes.tf_name(dtypes.from_numpy(value.dtype))}.",
                node,
            )
        if not _compatible(tuple(value.shape), shape):
            raise InvalidArgumentError(
                f"The expected shape at index {i} is {shape_string(shape)} but the actual "
                f"shape is {shape_string(tuple(value.shape))}.",
                node,
            )


@register_kernel("OptionalGetValue")
def _get_value(k: KernelConstruction) -> Any:
    types = list(k.attr("output_types"))
    shapes = list(k.attr("output_shapes"))

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        opt = optional_of(inputs[0], k.node_name)
        if opt.values is None:
            raise InvalidArgumentError("The optional does not have a value.", k.node_name)
        _check_components(opt.values, types, shapes, k.node_name)
        return list(opt.values)

    return compute
