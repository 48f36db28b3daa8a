"""Client API, tf.compat.v1.metrics: the means of errors and distances (TF's
metrics_impl: mean_absolute_error, mean_squared_error, root_mean_squared_error,
mean_relative_error, mean_cosine_distance, percentage_below) and mean_tensor. Each is a
`mean` of a per-element quantity, under TF's default scope names. Graph building only."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.losses import broadcast_weights, remove_squeezable_dimensions
from client.metrics.metrics_impl import (
    _assign_add,
    _collected,
    _metric_pair,
    _safe_mean,
    mean,
    metric_variable,
)
from client.ops import array_ops, math_ops
from client.ops import variable_scope as vs


def _squeezed(labels: Any, predictions: Any, weights: Any) -> tuple[Any, Any, Any]:
    return remove_squeezable_dimensions(labels, predictions, weights)


def mean_absolute_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: Any = None,
) -> tuple[Any, Any]:
    labels, predictions, weights = _squeezed(labels, predictions, weights)
    errors = math_ops.abs(predictions - labels)
    return mean(
        errors, weights, metrics_collections, updates_collections, name or "mean_absolute_error"
    )


def mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: Any = None,
) -> tuple[Any, Any]:
    labels, predictions, weights = _squeezed(labels, predictions, weights)
    errors = math_ops.squared_difference(labels, predictions)
    return mean(
        errors, weights, metrics_collections, updates_collections, name or "mean_squared_error"
    )


def root_mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: Any = None,
) -> tuple[Any, Any]:
    labels, predictions, weights = _squeezed(labels, predictions, weights)
    mse, update_mse = mean_squared_error(
        labels, predictions, weights, None, None, name or "root_mean_squared_error"
    )
    rmse = math_ops.sqrt(mse)
    return _collected(metrics_collections, updates_collections, rmse, math_ops.sqrt(update_mse))


def mean_relative_error(
    labels: Any,
    predictions: Any,
    normalizer: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: Any = None,
) -> tuple[Any, Any]:
    labels, predictions, weights = _squeezed(labels, predictions, weights)
    predictions, normalizer, _ = remove_squeezable_dimensions(predictions, normalizer)
    predictions.shape.assert_is_compatible_with(normalizer.shape)
    errors = array_ops.where(
        math_ops.equal(normalizer, 0.0),
        array_ops.zeros_like(labels),
        math_ops.divide(math_ops.abs(labels - predictions), normalizer),
    )
    return mean(
        errors, weights, metrics_collections, updates_collections, name or "mean_relative_error"
    )


def mean_cosine_distance(
    labels: Any,
    predictions: Any,
    dim: int,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: Any = None,
) -> tuple[Any, Any]:
    labels, predictions, weights = _squeezed(labels, predictions, weights)
    radial = math_ops.reduce_sum(math_ops.multiply(predictions, labels), axis=[dim], keepdims=True)
    distance, update_op = mean(radial, weights, None, None, name or "mean_cosine_distance")
    distance = math_ops.subtract(1.0, distance)
    update_op = math_ops.subtract(1.0, update_op)
    return _collected(metrics_collections, updates_collections, distance, update_op)


def percentage_below(
    values: Any,
    threshold: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: Any = None,
) -> tuple[Any, Any]:
    below = math_ops.cast(math_ops.less(values, threshold), dtypes.float32)
    return mean(
        below,
        weights,
        metrics_collections,
        updates_collections,
        name or "percentage_below_threshold",
    )


def mean_tensor(
    values: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: Any = None,
) -> tuple[Any, Any]:
    """The element-wise mean of `values` over the updates (a tensor of their shape)."""
    with vs.variable_scope(name, "mean", [values, weights]):
        values = math_ops.cast(values, dtypes.float32)
        total = metric_variable(values.shape, dtypes.float32, name="total_tensor")
        count = metric_variable(values.shape, dtypes.float32, name="count_tensor")
        num_values = array_ops.ones_like(values)
        if weights is not None:
            _, values, weights = remove_squeezable_dimensions(None, values, weights)
            weights = broadcast_weights(math_ops.cast(weights, dtypes.float32), values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.multiply(num_values, weights)
        update_total = _assign_add(total, values)
        with _ops.control_dependencies([values]):
            update_count = _assign_add(count, num_values)
        return _metric_pair(
            _safe_mean,
            (total, count),
            (update_total, update_count),
            metrics_collections,
            updates_collections,
        )
