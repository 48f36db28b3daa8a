"""Client API, tf.compat.v1.metrics over classes and thresholds (TF's metrics_impl):
mean_iou and mean_per_class_accuracy (a streaming confusion matrix / per-class counts),
precision_at_thresholds, recall_at_thresholds and the four counts at thresholds. Same
scopes, variables and update ops as TF builds them. Graph building only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.framework import dtypes
from client.framework.op_builder import apply_op, convert_to_tensor
from client.metrics.metrics_impl import (
    _assign_add,
    _collected,
    _confusion_matrix_at_thresholds,
    _metric_pair,
    _safe_mean,
    _unread,
    metric_variable,
)
from client.ops import array_ops, linalg_ops, math_ops
from client.ops import confusion_matrix as cm_ops
from client.ops import variable_scope as vs


def _flat(t: Any) -> Any:
    return array_ops.reshape(t, [-1]) if t.shape.ndims > 1 else t


def _streaming_confusion_matrix(
    labels: Any, predictions: Any, num_classes: int, weights: Any = None
) -> tuple[Any, Any]:
    total_cm = metric_variable(
        [num_classes, num_classes], dtypes.float64, name="total_confusion_matrix"
    )
    predictions = math_ops.cast(predictions, dtypes.int64)
    labels = math_ops.cast(labels, dtypes.int64)
    num = math_ops.cast(num_classes, dtypes.int64)
    predictions, labels = _flat(predictions), _flat(labels)
    if weights is not None:
        weights = convert_to_tensor(weights)
        weights = _flat(weights)
    current = cm_ops.confusion_matrix(
        labels, predictions, num, weights=weights, dtype=dtypes.float64
    )
    return total_cm, _assign_add(total_cm, current)


def mean_iou(
    labels: Any,
    predictions: Any,
    num_classes: int,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: Any = None,
) -> tuple[Any, Any]:
    with vs.variable_scope(name, "mean_iou", [predictions, labels, weights]):
        predictions, labels = convert_to_tensor(predictions), convert_to_tensor(labels)
        predictions.shape.assert_is_compatible_with(labels.shape)
        total_cm, update_op = _streaming_confusion_matrix(labels, predictions, num_classes, weights)
        rows = math_ops.cast(math_ops.reduce_sum(total_cm, 0), dtypes.float32)
        cols = math_ops.cast(math_ops.reduce_sum(total_cm, 1), dtypes.float32)
        diag = math_ops.cast(linalg_ops.tensor_diag_part(total_cm), dtypes.float32)
        denominator = rows + cols - diag
        valid = math_ops.reduce_sum(
            math_ops.cast(math_ops.not_equal(denominator, 0), dtype=dtypes.float32)
        )
        denominator = array_ops.where(
            math_ops.greater(denominator, 0), denominator, array_ops.ones_like(denominator)
        )
        iou = math_ops.divide(diag, denominator)
        value = array_ops.where(
            math_ops.greater(valid, 0), math_ops.reduce_sum(iou, name="mean_iou") / valid, 0
        )
        return _collected(metrics_collections, updates_collections, value, update_op)


def _scatter_add(var: Any, indices: Any, updates: Any) -> Any:
    """state_ops.scatter_add as TF returns it on a resource variable: read lazily by each
    consumer, under the consumer's scope."""
    if not var._is_resource_variable:
        return apply_op("ScatterAdd", [var, indices, updates], {}).outputs[0]
    return _unread(var, apply_op("ResourceScatterAdd", [var.handle, indices, updates], {}))


def mean_per_class_accuracy(
    labels: Any,
    predictions: Any,
    num_classes: int,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: Any = None,
) -> tuple[Any, Any]:
    with vs.variable_scope(name, "mean_accuracy", [predictions, labels, weights]):
        labels = _flat(math_ops.cast(labels, dtypes.int64))
        predictions = _flat(convert_to_tensor(predictions))
        predictions.shape.assert_is_compatible_with(labels.shape)
        total = metric_variable([num_classes], dtypes.float32, name="total")
        count = metric_variable([num_classes], dtypes.float32, name="count")
        ones = array_ops.ones([array_ops.size(labels)], dtypes.float32)
        if labels.dtype != predictions.dtype:
            predictions = math_ops.cast(predictions, labels.dtype)
        is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
        if weights is not None:
            weights = math_ops.cast(_flat(convert_to_tensor(weights)), dtypes.float32)
            is_correct *= weights
            ones *= weights
        update_total = _scatter_add(total, labels, ones)
        update_count = _scatter_add(count, labels, is_correct)
        per_class = _safe_mean((count, total), None)
        value = math_ops.reduce_mean(per_class, name="mean_accuracy")
        update_op = _safe_mean((update_count, update_total), "update_op")
        return _collected(metrics_collections, updates_collections, value, update_op)


# What a metric at thresholds makes of the counts' variables and updates (dicts by "tp",
# "fp", ...) with its metrics and updates collections.
_Finish = Callable[[dict[str, Any], dict[str, Any], Any, Any], tuple[Any, Any]]


def _at_thresholds(fn_name: str, scope: str, includes: tuple[str, ...], finish: _Finish):
    """A metric over the counts `includes` at the given thresholds, under `scope`."""

    def fn(
        labels: Any,
        predictions: Any,
        thresholds: Any,
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: Any = None,
    ) -> tuple[Any, Any]:
        with vs.variable_scope(name, scope, [predictions, labels, weights]):
            values, updates = _confusion_matrix_at_thresholds(
                labels, predictions, list(thresholds), weights, includes=includes
            )
            return finish(values, updates, metrics_collections, updates_collections)

    fn.__name__ = fn_name
    return fn


def _ratio_at_thresholds(default_name: str, other: str):
    """precision = tp / (tp + fp + 1e-7), recall = tp / (tp + fn + 1e-7) per threshold."""
    prefix = default_name.split("_")[0]

    def compute(counts: dict[str, Any], suffix: str) -> Any:
        tp, x = counts["tp"], counts[other]
        return math_ops.divide(tp, 1e-7 + tp + x, name=f"{prefix}_{suffix}")

    def finish(values: dict, updates: dict, mc: Any, uc: Any) -> tuple[Any, Any]:
        return _metric_pair(compute, values, updates, mc, uc)

    return _at_thresholds(default_name, default_name, ("tp", other), finish)


precision_at_thresholds = _ratio_at_thresholds("precision_at_thresholds", "fp")
recall_at_thresholds = _ratio_at_thresholds("recall_at_thresholds", "fn")


def _count_at_thresholds(key: str, default_name: str):
    def finish(values: dict, updates: dict, mc: Any, uc: Any) -> tuple[Any, Any]:
        value = array_ops.identity(values[key])  # TF's default strategy's read_var
        return _collected(mc, uc, value, updates[key])

    return _at_thresholds(f"{default_name}_at_thresholds", default_name, (key,), finish)


true_positives_at_thresholds = _count_at_thresholds("tp", "true_positives")
false_positives_at_thresholds = _count_at_thresholds("fp", "false_positives")
false_negatives_at_thresholds = _count_at_thresholds("fn", "false_negatives")
true_negatives_at_thresholds = _count_at_thresholds("tn", "true_negatives")
