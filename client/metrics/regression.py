"""Client API, tf.compat.v1.metrics: the means of errors and distances (TF's
metrics_impl: mean_absolute_error, mean_squared_error, root_mean_squared_error,
mean_relative_error, mean_cosine_distance, percentage_below) and mean_tensor. Each is a
`mean` of a per-element quantity, under TF's default scope names. Graph building only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.framework import dtypes
from client.losses import remove_squeezable_dimensions
from client.metrics.metrics_impl import (
    _collected,
    _streaming_mean,
    _weighted_values,
    mean,
    metric_variable,
)
from client.ops import array_ops, math_ops
from client.ops import variable_scope as vs


def _squeezed(labels: Any, predictions: Any, weights: Any) -> tuple[Any, Any, Any]:
    return remove_squeezable_dimensions(labels, predictions, weights)


def _mean_error(default_name: str, error: Callable[[Any, Any], Any]):
    """The streaming mean of `error(labels, predictions)`."""

    def fn(
        labels: Any,
        predictions: Any,
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: Any = None,
    ) -> tuple[Any, Any]:
        labels, predictions, weights = _squeezed(labels, predictions, weights)
        errors = error(labels, predictions)
        return mean(errors, weights, metrics_collections, updates_collections, name or default_name)

    fn.__name__ = default_name
    return fn


mean_absolute_error = _mean_error("mean_absolute_error", lambda y, p: math_ops.abs(p - y))
mean_squared_error = _mean_error("mean_squared_error", math_ops.squared_difference)


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
            values, weights = _weighted_values(values, weights)
            num_values = math_ops.multiply(num_values, weights)
        return _streaming_mean(
            total, count, values, values, num_values, metrics_collections, updates_collections
        )
