"""Client API, tf.compat.v1.metrics: the means of errors and distances (TF's
metrics_impl: mean_absolute_error, mean_squared_error, root_mean_squared_error,
mean_relative_error, mean_cosine_distance, percentage_below) and mean_tensor. Each is a
`mean` of a per-element quantity, under TF's default scope names. Graph building only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.framework import dtypes
from client.losses import remove_squeezable_dimensions
from client.metrics.metrics_impl import _collected, _mean_of, _streaming_mean, mean
from client.ops import array_ops, math_ops


def _mapped(
    pair: tuple[Any, Any], fn: Callable[[Any], Any], metrics_collections: Any, updates: Any
) -> tuple[Any, Any]:
    """`fn` of a metric's value and of its update op (value first, as TF builds them),
    collected: rmse is the sqrt of an mse, a cosine distance 1 - a mean similarity."""
    value, update_op = pair
    return _collected(metrics_collections, updates, fn(value), fn(update_op))


mean_absolute_error = _mean_of("mean_absolute_error", lambda y, p: math_ops.abs(p - y))
mean_squared_error = _mean_of("mean_squared_error", math_ops.squared_difference)


def root_mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: Any = None,
) -> tuple[Any, Any]:
    labels, predictions, weights = remove_squeezable_dimensions(labels, predictions, weights)
    mse = mean_squared_error(
        labels, predictions, weights, None, None, name or "root_mean_squared_error"
    )
    return _mapped(mse, math_ops.sqrt, metrics_collections, updates_collections)


def mean_relative_error(
    labels: Any,
    predictions: Any,
    normalizer: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: Any = None,
) -> tuple[Any, Any]:
    labels, predictions, weights = remove_squeezable_dimensions(labels, predictions, weights)
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
    labels, predictions, weights = remove_squeezable_dimensions(labels, predictions, weights)
    radial = math_ops.reduce_sum(math_ops.multiply(predictions, labels), axis=[dim], keepdims=True)
    similarity = mean(radial, weights, None, None, name or "mean_cosine_distance")
    return _mapped(
        similarity, lambda x: math_ops.subtract(1.0, x), metrics_collections, updates_collections
    )


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
    return _streaming_mean(values, weights, metrics_collections, updates_collections, name, True)
