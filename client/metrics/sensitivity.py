"""Client API, tf.compat.v1.metrics sensitivity_at_specificity and
specificity_at_sensitivity (TF's metrics_impl): the four counts at `num_thresholds`
thresholds, the threshold whose specificity (sensitivity) is nearest the wanted one, and
the sensitivity (specificity) there. Same scopes, variables and update ops as TF builds
them. Graph building only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.framework import dtypes
from client.metrics.metrics_impl import _confusion_matrix_at_thresholds, _metric_pair
from client.ops import math_ops
from client.ops import variable_scope as vs

_KEPSILON = 1e-7  # floating point slack at the end thresholds and in the ratios, as TF


def _check_rate(what: str, rate: float, verb: str) -> None:
    if rate < 0 or rate > 1:
        raise ValueError(
            f"`{what}` must be in the range [0, 1]. Currently, `{what}` {verb} {rate}."
        )


def _cuts(num_thresholds: int, last: float) -> list[float]:
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - _KEPSILON, *inner, last]


def _at_cuts(
    scope: str,
    labels: Any,
    predictions: Any,
    weights: Any,
    last_cut: float,
    num_thresholds: int,
    compute: Callable[[dict[str, Any], str], Any],
    metrics_collections: Any,
    updates_collections: Any,
    name: Any,
) -> tuple[Any, Any]:
    """The four counts at `num_thresholds` cuts under `scope`; `compute` over them."""
    with vs.variable_scope(name, scope, [predictions, labels, weights]):
        cuts = _cuts(num_thresholds, last_cut)
        values, updates = _confusion_matrix_at_thresholds(labels, predictions, cuts, weights)
        return _metric_pair(compute, values, updates, metrics_collections, updates_collections)


def sensitivity_at_specificity(
    labels: Any,
    predictions: Any,
    specificity: float,
    weights: Any = None,
    num_thresholds: int = 200,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: Any = None,
) -> tuple[Any, Any]:
    _check_rate("specificity", specificity, "got")

    def compute(counts: dict[str, Any], op_name: str) -> Any:
        tp, tn, fp, fn = (counts[key] for key in ("tp", "tn", "fp", "fn"))
        specificities = math_ops.divide(tn, tn + fp + _KEPSILON)
        index = math_ops.argmin(math_ops.abs(specificities - specificity), 0)
        index = math_ops.cast(index, dtypes.int32)
        return math_ops.divide(tp[index], tp[index] + fn[index] + _KEPSILON, op_name)

    return _at_cuts(
        "sensitivity_at_specificity", labels, predictions, weights, 1.0 + _KEPSILON,
        num_thresholds, compute, metrics_collections, updates_collections, name,
    )  # fmt: skip


def specificity_at_sensitivity(
    labels: Any,
    predictions: Any,
    sensitivity: float,
    weights: Any = None,
    num_thresholds: int = 200,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: Any = None,
) -> tuple[Any, Any]:
    _check_rate("sensitivity", sensitivity, "is")

    def compute(counts: dict[str, Any], op_name: str) -> Any:
        tp, tn, fp, fn = (counts[key] for key in ("tp", "tn", "fp", "fn"))
        sensitivities = math_ops.divide(tp, tp + fn + _KEPSILON)
        # The last threshold among the nearest ones: argmax of the running count of
        # minima finds its first maximum, which is where the last minimum sits.
        min_val = math_ops.reduce_min(math_ops.abs(sensitivities - sensitivity))
        at_min = math_ops.equal(math_ops.abs(sensitivities - sensitivity), min_val)
        at_min = math_ops.cumsum(math_ops.cast(at_min, dtypes.int64))
        index = math_ops.cast(math_ops.argmax(at_min, 0), dtypes.int32)
        return math_ops.divide(tn[index], tn[index] + fp[index] + _KEPSILON, op_name)

    # TF's last cut is below 1 here.
    return _at_cuts(
        "specificity_at_sensitivity", labels, predictions, weights, 1.0 - _KEPSILON,
        num_thresholds, compute, metrics_collections, updates_collections, name,
    )  # fmt: skip
