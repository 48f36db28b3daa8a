"""Client, graph building: tf.unique_with_counts (TF's array_ops), the (y, idx, count)
namedtuple of a UniqueWithCounts node, and its client shape function. Neither Unique
nor UniqueWithCounts has a gradient in TensorFlow."""

from __future__ import annotations

import collections
from typing import Any

from client.framework import dtypes, shape_fns
from client.framework.op_builder import apply_op
from client.framework.tensor_shape import TensorShape

UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def unique_with_counts(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> Any:
    op = apply_op("UniqueWithCounts", [x], {"out_idx": dtypes.as_dtype(out_idx)}, name)
    return UniqueWithCounts(*op.outputs)


shape_fns.SHAPE_FNS["UniqueWithCounts"] = lambda op: [
    TensorShape([None]),
    op.inputs[0].shape,
    TensorShape([None]),
]
