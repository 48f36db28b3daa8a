"""Client API, tf.compat.v1.metrics over the top k predicted classes (TF's metrics_impl):
precision_at_k, recall_at_k (TopKV2 then the *_at_top_k forms), precision_at_top_k,
recall_at_top_k and sparse_precision_at_k. Per row, true positives are the size of the
set intersection of the top-k ids and the labels, false positives / negatives the sizes
of the set differences (SetSize over DenseToDenseSetOperation); `class_id` keeps only
that class in both. Labels are dense ids or a SparseTensor of ids (at_k_labels). Same
scopes, variables and update ops as TF builds them. Graph building only."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.losses import assert_broadcastable
from client.metrics.at_k_labels import maybe_expand_labels, maybe_select_class_id
from client.metrics.metrics_impl import _assign_add, _collected, metric_variable
from client.ops import math_ops, nn_impl
from client.ops.sets_ops import set_difference, set_intersection, set_size


def _at_k_name(name: str, k: int | None = None, class_id: int | None = None) -> str:
    name = f"{name}_at_{k}" if k is not None else f"{name}_at_k"
    return f"{name}_class{class_id}" if class_id is not None else name


def _weighted(count: Any, weights: Any) -> Any:
    count = math_ops.cast(count, dtypes.float64)
    if weights is None:
        return count
    with _ops.control_dependencies([assert_broadcastable(weights, count)]):
        return math_ops.multiply(count, math_ops.cast(weights, dtypes.float64))


# Each count: its scope names and the set of ids whose size per row it is.
_COUNTS = {
    "tp": ("true_positive", "true_positives", lambda p, y: set_intersection(p, y)),
    "fp": ("false_positive", "false_positives", lambda p, y: set_difference(p, y, True)),
    "fn": ("false_negative", "false_negatives", lambda p, y: set_difference(p, y, False)),
}


def _streaming_count_at_k(
    key: str, labels: Any, predictions_idx: Any, k: Any, class_id: Any, weights: Any
) -> tuple[Any, Any]:
    outer, inner, ids = _COUNTS[key]
    with _ops.name_scope(
        None, _at_k_name(outer, k, class_id), [predictions_idx, labels, weights]
    ) as scope:
        with _ops.name_scope(None, inner, [predictions_idx, labels, weights]):
            y, p = maybe_select_class_id(labels, predictions_idx, class_id)
            count = _weighted(set_size(ids(p, y)), weights)
        batch_total = math_ops.cast(math_ops.reduce_sum(count), dtypes.float64)
        var = metric_variable([], dtypes.float64, name=scope)
        return var, _assign_add(var, batch_total)


def _at_top_k(default: str, other: str):
    """precision_at_top_k (other = "fp") or recall_at_top_k (other = "fn"): tp / (tp +
    other) streamed over the given top-k ids."""

    def fn(
        labels: Any,
        predictions_idx: Any,
        k: Any = None,
        class_id: Any = None,
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: Any = None,
    ) -> tuple[Any, Any]:
        with _ops.name_scope(
            name, _at_k_name(default, k, class_id), [predictions_idx, labels, weights]
        ) as scope:
            predictions_idx = convert_to_tensor(predictions_idx)
            labels = maybe_expand_labels(labels, predictions_idx)
            top_k_idx = math_ops.cast(predictions_idx, dtypes.int64)
            tp, tp_update = _streaming_count_at_k("tp", labels, top_k_idx, k, class_id, weights)
            x, x_update = _streaming_count_at_k(other, labels, top_k_idx, k, class_id, weights)
            metric = math_ops.divide(tp, math_ops.add(tp, x), name=scope)
            update = math_ops.divide(tp_update, math_ops.add(tp_update, x_update), name="update")
            return _collected(metrics_collections, updates_collections, metric, update)

    fn.__name__ = f"{default}_at_top_k"
    return fn


precision_at_top_k = _at_top_k("precision", "fp")
recall_at_top_k = _at_top_k("recall", "fn")


def _at_k(default: str, at_top_k: Any):
    def fn(
        labels: Any,
        predictions: Any,
        k: int,
        class_id: Any = None,
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: Any = None,
    ) -> tuple[Any, Any]:
        with _ops.name_scope(
            name, _at_k_name(default, k, class_id), [predictions, labels, weights]
        ) as scope:
            _, top_k_idx = nn_impl.top_k(predictions, k)
            return at_top_k(
                labels, top_k_idx, k, class_id, weights, metrics_collections,
                updates_collections, scope,
            )  # fmt: skip

    fn.__name__ = f"{default}_at_k"
    return fn


precision_at_k = _at_k("precision", precision_at_top_k)
recall_at_k = _at_k("recall", recall_at_top_k)
sparse_precision_at_k = precision_at_k  # TF's deprecated alias builds the same graph
