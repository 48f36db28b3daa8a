"""Client, graph building: tf.io.encode_base64 / decode_base64 (also tf.encode_base64 and
tf.decode_base64 in TF1), one node each as TF's gen_string_ops builds them; the output
has its input's shape. TF registers no gradient for either."""

from __future__ import annotations

from typing import Any

from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.op_builder import apply_op


def encode_base64(input: Any, pad: bool = False, name: str | None = None) -> _ops.Tensor:  # noqa: A002
    return apply_op("EncodeBase64", [input], {"pad": pad}, name).outputs[0]


def decode_base64(input: Any, name: str | None = None) -> _ops.Tensor:  # noqa: A002
    return apply_op("DecodeBase64", [input], {}, name).outputs[0]


for _op in ("EncodeBase64", "DecodeBase64"):
    shape_fns.SHAPE_FNS[_op] = lambda op: [op.inputs[0].shape]
