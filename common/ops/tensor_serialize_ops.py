"""Ops (executor stage): SerializeTensor and ParseTensor (tf.io.serialize_tensor /
parse_tensor), as TensorFlow's parse_tensor_op.cc: a tensor to the bytes of its
TensorProto and back. The bytes equal TensorFlow's: strings in their typed field
(Tensor::AsProtoField), every other dtype in tensor_content (AsProtoTensorContent), the
shape always present, even a scalar's empty one. Stateless kernels, safe from any thread.
"""

from __future__ import annotations

import base64
from collections.abc import Callable

import numpy as np
from google.protobuf.message import DecodeError

from common import dtypes
from common import tensor as tensor_util
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops.math_util import shape_str
from common.ops.registry import KernelConstruction, register_kernel, register_op
from protos.tensor_pb2 import TensorProto

register_op("SerializeTensor", inputs=["tensor: T"], outputs=["serialized: string"])
register_op("ParseTensor", inputs=["serialized: string"], outputs=["output: out_type"],
            attrs=["out_type: type"])  # fmt: skip


def serialize_tensor(value: np.ndarray, dt: DataType) -> bytes:
    if dt == DataType.DT_STRING:
        proto = tensor_util.as_proto_field(value, dt)
    else:
        proto = tensor_util.from_numpy(value, dt)
        proto.tensor_shape.SetInParent()  # TF always writes the shape field
    return proto.SerializeToString()


def parse_tensor(data: bytes, out_type: DataType) -> np.ndarray:
    proto = TensorProto()
    try:
        proto.ParseFromString(data)
    except DecodeError:
        raise InvalidArgumentError(
            "Could not parse `serialized` as TensorProto, base64: "
            + base64.b64encode(data).decode()
        ) from None
    parsed = tensor_util.proto_dtype(proto)
    if parsed != out_type:
        raise InvalidArgumentError(
            f"Type mismatch between parsed tensor ({dtypes.tf_name(parsed)}) and dtype "
            f"({dtypes.tf_name(out_type)})"
        )
    return tensor_util.to_numpy(proto)


@register_kernel("SerializeTensor")
def _serialize_tensor(k: KernelConstruction) -> Callable:
    dt = DataType(k.attr("T"))

    def compute(ctx, inputs: list) -> list:
        return [np.array(serialize_tensor(np.asarray(inputs[0]), dt), dtype=object)]

    return compute


@register_kernel("ParseTensor")
def _parse_tensor(k: KernelConstruction) -> Callable:
    out_type = DataType(k.attr("out_type"))

    def compute(ctx, inputs: list) -> list:
        serialized = np.asarray(inputs[0], dtype=object)
        if serialized.ndim != 0:
            raise InvalidArgumentError(
                f"Expected `serialized` to be a scalar, got shape: {shape_str(serialized.shape)}"
            )
        return [parse_tensor(serialized.item(), out_type)]

    return compute
