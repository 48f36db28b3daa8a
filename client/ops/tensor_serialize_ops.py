"""Client, graph building: tf.io.serialize_tensor / parse_tensor (also tf.serialize_tensor
and tf.parse_tensor in TF1), one node each as TF's gen_parsing_ops builds them: a scalar
string, and a tensor of unknown shape parsed back. TF registers no gradient for either."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.op_builder import apply_op
from client.framework.tensor_shape import TensorShape


def serialize_tensor(tensor: Any, name: str | None = None) -> _ops.Tensor:
    return apply_op("SerializeTensor", [tensor], {}, name).outputs[0]


def parse_tensor(serialized: Any, out_type: Any, name: str | None = None) -> _ops.Tensor:
    attrs = {"out_type": dtypes.as_dtype(out_type)}
    return apply_op("ParseTensor", [serialized], attrs, name).outputs[0]


shape_fns.SHAPE_FNS["SerializeTensor"] = lambda op: [TensorShape([])]
shape_fns.SHAPE_FNS["ParseTensor"] = lambda op: [TensorShape(None)]
