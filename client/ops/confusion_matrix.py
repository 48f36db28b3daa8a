"""Client, graph building: tf.math.confusion_matrix as TF1 builds it (TF's
python/ops/confusion_matrix.py): labels and predictions cast to int64, guarded by
assert_non_negative (and assert_less when num_classes is given), then one ScatterNd of
ones (or the weights) at [label, prediction] into a [num_classes, num_classes] matrix.
ScatterNd's gradient serves it; TF registers none of its own."""

from __future__ import annotations

from typing import Any

from client import losses
from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.ops import array_ops, check_ops, control_flow_ops, math_ops


def _guard(assertion: Any, x: Any) -> Any:
    return control_flow_ops.with_dependencies([assertion], x)


def confusion_matrix(
    labels: Any,
    predictions: Any,
    num_classes: Any = None,
    weights: Any = None,
    dtype: Any = dtypes.int32,
    name: str | None = None,
) -> _ops.Tensor:
    with _ops.name_scope(name, "confusion_matrix", [predictions, labels, num_classes, weights]):
        labels, predictions, _ = losses.remove_squeezable_dimensions(
            convert_to_tensor(labels, name="labels"),
            convert_to_tensor(predictions, name="predictions"),
        )
        predictions = math_ops.cast(predictions, dtypes.int64)
        labels = math_ops.cast(labels, dtypes.int64)
        labels = _guard(
            check_ops.assert_non_negative(labels, message="`labels` contains negative values"),
            labels,
        )
        predictions = _guard(
            check_ops.assert_non_negative(
                predictions, message="`predictions` contains negative values"
            ),
            predictions,
        )
        if num_classes is None:
            num_classes = (
                math_ops.maximum(math_ops.reduce_max(predictions), math_ops.reduce_max(labels)) + 1
            )
        else:
            n64 = math_ops.cast(num_classes, dtypes.int64)
            labels = _guard(
                check_ops.assert_less(labels, n64, message="`labels` out of bound"), labels
            )
            predictions = _guard(
                check_ops.assert_less(predictions, n64, message="`predictions` out of bound"),
                predictions,
            )
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
            predictions.shape.assert_is_compatible_with(weights.shape)
            weights = math_ops.cast(weights, dtype)
        shape = array_ops.stack([num_classes, num_classes])
        indices = array_ops.stack([labels, predictions], axis=1)
        values = array_ops.ones_like(predictions, dtype) if weights is None else weights
        shape = math_ops.cast(shape, dtypes.int64)
        return apply_op("ScatterNd", [indices, values, shape], {}, "ScatterNd").outputs[0]
