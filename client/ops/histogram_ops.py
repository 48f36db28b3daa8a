"""Client, graph building: tf.histogram_fixed_width as TF1 builds it (a name scope
"histogram_fixed_width" around one HistogramFixedWidth node), with the shape functions
of HistogramFixedWidth and Bucketize. TF registers no gradient for either."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.op_builder import apply_op
from client.framework.tensor_shape import TensorShape


def histogram_fixed_width(
    values: Any,
    value_range: Any,
    nbins: Any = 100,
    dtype: Any = dtypes.int32,
    name: str | None = None,
) -> _ops.Tensor:
    with _ops.name_scope(name, "histogram_fixed_width", [values, value_range, nbins]) as scope:
        attrs = {"dtype": dtypes.as_dtype(dtype)}
        return apply_op("HistogramFixedWidth", [values, value_range, nbins], attrs, scope).outputs[
            0
        ]


def _histogram_shape(op: Any) -> list[TensorShape]:
    nbins = shape_fns.constant_value(op.inputs[2])
    return [TensorShape([None if nbins is None else int(nbins)])]


shape_fns.SHAPE_FNS["HistogramFixedWidth"] = _histogram_shape
shape_fns.SHAPE_FNS["Bucketize"] = lambda op: [op.inputs[0].shape]
