"""Client API, tf.compat.v1.metrics average_precision_at_k and its deprecated alias
sparse_average_precision_at_k (TF's metrics_impl): per row, the precision at each rank
where the top-k id is a label, summed and divided by min(#labels, k); streamed as the
(weighted) mean over rows. Labels at or past the number of classes count as none (-1).
Labels dense or a SparseTensor, as in ranking.py. Same scopes, variables and update ops as TF builds
them. Graph building only."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.losses import broadcast_weights
from client.metrics.at_k_labels import (
    clean_out_of_range_indices,
    expand_and_tile,
    maybe_expand_labels,
    num_relevant,
)
from client.metrics.metrics_impl import _assign_add, _collected, metric_variable
from client.metrics.ranking import _at_k_name, _weighted
from client.ops import array_ops, math_ops, nn_impl
from client.ops.sets_ops import set_intersection, set_size


def _average_precision_at_top_k(labels: Any, predictions_idx: Any) -> Any:
    with _ops.name_scope(None, "average_precision", [predictions_idx, labels]) as scope:
        predictions_idx = math_ops.cast(predictions_idx, dtypes.int64, name="predictions_idx")
        if predictions_idx.shape.ndims == 0:
            raise ValueError("The rank of `predictions_idx` must be at least 1.")
        k = predictions_idx.shape.as_list()[-1]
        if k is None:
            raise ValueError(
                "The last dimension of predictions_idx must be set. Currently, it is None."
            )
        labels = maybe_expand_labels(labels, predictions_idx)
        predictions_idx_per_k = array_ops.expand_dims(
            predictions_idx, -1, name="predictions_idx_per_k"
        )
        labels_per_k = expand_and_tile(labels, k, -1, "labels_per_k")
        with _ops.name_scope(None, "relevant_per_k", [predictions_idx_per_k, labels_per_k]):
            relevant_per_k = _weighted(
                set_size(set_intersection(predictions_idx_per_k, labels_per_k)), None
            )
        tp_per_k = math_ops.cumsum(relevant_per_k, axis=-1, name="tp_per_k")
        retrieved_per_k = math_ops.cumsum(
            array_ops.ones_like(relevant_per_k), axis=-1, name="retrieved_per_k"
        )
        precision_per_k = math_ops.divide(
            math_ops.cast(tp_per_k, dtypes.float64),
            math_ops.cast(retrieved_per_k, dtypes.float64),
            name="precision_per_k",
        )
        relevant_precision_per_k = math_ops.multiply(
            precision_per_k,
            math_ops.cast(relevant_per_k, dtypes.float64),
            name="relevant_precision_per_k",
        )
        precision_sum = math_ops.reduce_sum(
            relevant_precision_per_k, axis=(-1,), name="precision_sum"
        )
        num_relevant_items = math_ops.cast(num_relevant(labels, k), dtypes.float64)
        return math_ops.divide(precision_sum, num_relevant_items, name=scope)


def _streaming_average_precision_at_top_k(
    labels: Any,
    predictions_idx: Any,
    weights: Any,
    metrics_collections: Any,
    updates_collections: Any,
    name: Any,
) -> tuple[Any, Any]:
    with _ops.name_scope(
        name, "average_precision_at_top_k", [predictions_idx, labels, weights]
    ) as scope:
        average_precision = _average_precision_at_top_k(labels, predictions_idx)
        if weights is not None:
            weights = broadcast_weights(math_ops.cast(weights, dtypes.float64), average_precision)
            average_precision = math_ops.multiply(average_precision, weights)
        with _ops.name_scope(None, "max", [average_precision]) as max_scope:
            max_var = metric_variable([], dtypes.float64, name=max_scope)
            if weights is None:
                batch_max = math_ops.cast(
                    array_ops.size(average_precision, name="batch_max"), dtypes.float64
                )
            else:
                batch_max = math_ops.reduce_sum(weights, name="batch_max")
            max_update = _assign_add(max_var, batch_max)
        with _ops.name_scope(None, "total", [average_precision]) as total_scope:
            total_var = metric_variable([], dtypes.float64, name=total_scope)
            batch_total = math_ops.reduce_sum(average_precision, name="batch_total")
            total_update = _assign_add(total_var, batch_total)
        value = math_ops.div_no_nan(total_var, max_var, name="mean")
        update = math_ops.div_no_nan(total_update, max_update, name=scope)
        return _collected(metrics_collections, updates_collections, value, update)


def average_precision_at_k(
    labels: Any,
    predictions: Any,
    k: int,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: Any = None,
) -> tuple[Any, Any]:
    if k < 1:
        raise ValueError(f"Invalid k={k}. `k` should be >= 1.")
    with _ops.name_scope(
        name, _at_k_name("average_precision", k), [predictions, labels, weights]
    ) as scope:
        _, predictions_idx = nn_impl.top_k(predictions, k)
        num_classes = math_ops.cast(array_ops.shape(predictions)[-1], dtypes.int64)
        labels = clean_out_of_range_indices(labels, num_classes)
        return _streaming_average_precision_at_top_k(
            labels, predictions_idx, weights, metrics_collections, updates_collections, scope
        )


sparse_average_precision_at_k = average_precision_at_k  # TF's deprecated alias
