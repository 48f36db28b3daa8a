"""Client API: tf.compat.v1.metrics (metrics_impl): streaming metrics whose state lives
in local variables (LOCAL_VARIABLES and METRIC_VARIABLES collections) and whose update
ops accumulate it; (value, update_op) pairs with TF's scopes ("accuracy/total",
"auc/true_positives", ...). Graph building only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.losses import broadcast_weights, remove_squeezable_dimensions
from client.ops import array_ops, check_ops, math_ops
from client.ops import variable_scope as vs
from client.ops.variables import Variable, VariableAggregation, VariableSynchronization


class _UnreadVariable:
    """TF's _UnreadVariable (what assign_add returns): the value after an update, read
    after it by each consumer, under the consumer's own scope."""

    def __init__(self, var: Variable, update: Any, element: Any) -> None:
        self._var, self.op, self._element = var, update, element
        self.dtype, self.shape, self.graph = var.dtype, var.shape, var.graph

    def _as_graph_element(self) -> Any:
        """What Session.run fetches: the read made with the update (as TF's)."""
        return self._element

    def read(self) -> Any:
        with _ops.control_dependencies([self.op]):
            return self._var._lazy_read()

    value = read  # operators read the value first, in the caller's scope, as a Variable's


for _name in Variable._OPERATORS:
    setattr(_UnreadVariable, _name, getattr(Variable, _name))
_ops.register_tensor_conversion_function(_UnreadVariable, lambda v, dtype=None, name=None: v.read())


def _unread(var: Variable, update: Any) -> Any:
    """`var` after `update`, as TF's state ops return it: on a reference variable the
    update's output (the ref itself)."""
    if not var._is_resource_variable:
        return update.outputs[0] if isinstance(update, _ops.Operation) else update
    with _ops.control_dependencies([update]):
        element = var._lazy_read()  # TF's graph-mode _UnreadVariable reads once where made
    return _UnreadVariable(var, update, element)


def _assign_add(var: Variable, delta: Any) -> _UnreadVariable:
    return _unread(var, var.assign_add(delta, read_value=False))


def metric_variable(shape: Any, dtype: Any, validate_shape: bool = True, name: Any = None) -> Any:
    """A zero-initialized, non-trainable local variable holding a metric's state."""
    return Variable(
        lambda: array_ops.zeros(shape, dtype),
        trainable=False,
        collections=[_ops.GraphKeys.LOCAL_VARIABLES, _ops.GraphKeys.METRIC_VARIABLES],
        validate_shape=validate_shape,
        synchronization=VariableSynchronization.ON_READ,
        aggregation=VariableAggregation.SUM,
        name=name,
    )


def _collect(collections: Any, value: Any) -> None:
    for key in collections or ():
        _ops.add_to_collection(key, value)


def _collected(
    metrics_collections: Any, updates_collections: Any, value: Any, update_op: Any
) -> tuple[Any, Any]:
    """TF's tail of every metric: the value and the update op each added to its
    collections, then returned as the pair."""
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op


def _metric_pair(
    compute: Callable[[Any, str], Any],
    state: Any,
    updates: Any,
    metrics_collections: Any,
    updates_collections: Any,
) -> tuple[Any, Any]:
    """The value, `compute` over the metric's variables, and the update op, the same
    over their updates (value first: TF builds them in this order), collected."""
    value = compute(state, "value")
    update_op = compute(updates, "update_op")
    return _collected(metrics_collections, updates_collections, value, update_op)


def _safe_mean(total_count: tuple[Any, Any], op_name: str | None) -> Any:
    """total / count, 0 where count is 0 (TF's _safe_div)."""
    total, count = total_count
    return math_ops.div_no_nan(total, math_ops.maximum(count, 0), name=op_name)


def _weighted_values(values: Any, weights: Any) -> tuple[Any, Any]:
    """`values` times `weights` broadcast to them (after squeezing), and those weights."""
    _, values, weights = remove_squeezable_dimensions(None, values, weights)
    weights = broadcast_weights(math_ops.cast(weights, dtypes.float32), values)
    return math_ops.multiply(values, weights), weights


def _streaming_mean(
    values: Any,
    weights: Any,
    metrics_collections: Any,
    updates_collections: Any,
    name: Any,
    per_element: bool,
) -> tuple[Any, Any]:
    """TF's mean (one total and count) and mean_tensor (per_element: a total and count of
    the values' shape, "total_tensor"/"count_tensor"): total += the (weighted) values,
    then, after them, count += their number (or weight); the metric is total / count."""
    with vs.variable_scope(name, "mean", [values, weights]):
        values = math_ops.cast(values, dtypes.float32)
        shape, suffix = (values.shape, "_tensor") if per_element else ([], "")
        total = metric_variable(shape, dtypes.float32, name=f"total{suffix}")
        count = metric_variable(shape, dtypes.float32, name=f"count{suffix}")
        # mean_tensor counts each element (ones made before the weights, as TF makes them).
        num_values = array_ops.ones_like(values) if per_element else None
        if weights is not None:
            values, weights = _weighted_values(values, weights)
            num_values = (
                math_ops.multiply(num_values, weights)
                if per_element
                else math_ops.reduce_sum(weights)
            )
        elif not per_element:
            num_values = math_ops.cast(array_ops.size(values), dtypes.float32)
        batch_total = values if per_element else math_ops.reduce_sum(values)
        update_total = _assign_add(total, batch_total)
        with _ops.control_dependencies([values]):
            update_count = _assign_add(count, num_values)
        return _metric_pair(
            _safe_mean,
            (total, count),
            (update_total, update_count),
            metrics_collections,
            updates_collections,
        )


def mean(
    values: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: Any = None,
) -> tuple[Any, Any]:
    return _streaming_mean(values, weights, metrics_collections, updates_collections, name, False)


def _mean_of(default_name: str, per_element: Callable[[Any, Any], Any]):
    """A metric that is the streaming mean of `per_element(labels, predictions)`, after
    TF's squeeze of labels, predictions and weights (accuracy, the mean errors)."""

    def fn(
        labels: Any,
        predictions: Any,
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: Any = None,
    ) -> tuple[Any, Any]:
        labels, predictions, weights = remove_squeezable_dimensions(labels, predictions, weights)
        values = per_element(labels, predictions)
        return mean(values, weights, metrics_collections, updates_collections, name or default_name)

    fn.__name__ = default_name
    return fn


def _is_correct(labels: Any, predictions: Any) -> Any:
    predictions.shape.assert_is_compatible_with(labels.shape)
    if labels.dtype != predictions.dtype:
        predictions = math_ops.cast(predictions, labels.dtype)
    return math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)


accuracy = _mean_of("accuracy", _is_correct)


def _count_condition(values: Any, weights: Any, metrics_collections: Any, updates: Any) -> Any:
    count = metric_variable([], dtypes.float32, name="count")
    values = math_ops.cast(values, dtypes.float32)
    if weights is not None:
        values = math_ops.multiply(values, math_ops.cast(weights, dtypes.float32))
    update_op = count.assign_add(math_ops.reduce_sum(values))
    return _collected(metrics_collections, updates, count, update_op)


def _bool_inputs(labels: Any, predictions: Any, weights: Any) -> tuple[Any, Any, Any]:
    return remove_squeezable_dimensions(
        math_ops.cast(labels, dtypes.bool), math_ops.cast(predictions, dtypes.bool), weights
    )


_BoolBody = Callable[[Any, Any, Any, Any, Any], tuple[Any, Any]]


def _bool_metric(default_name: str, body: _BoolBody):
    """A metric of boolean labels and predictions: `body(labels, predictions, weights,
    metrics_collections, updates_collections)` under the metric's variable scope."""

    def fn(
        labels: Any,
        predictions: Any,
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: Any = None,
    ) -> tuple[Any, Any]:
        with vs.variable_scope(name, default_name, [predictions, labels, weights]):
            labels, predictions, weights = _bool_inputs(labels, predictions, weights)
            return body(labels, predictions, weights, metrics_collections, updates_collections)

    fn.__name__ = default_name
    return fn


def _counter(default_name: str, label_value: bool, prediction_value: bool):
    def body(labels: Any, predictions: Any, weights: Any, mc: Any, uc: Any) -> tuple[Any, Any]:
        hit = math_ops.logical_and(
            math_ops.equal(labels, label_value), math_ops.equal(predictions, prediction_value)
        )
        return _count_condition(hit, weights, mc, uc)

    return _bool_metric(default_name, body)


true_positives = _counter("true_positives", True, True)
false_positives = _counter("false_positives", False, True)
false_negatives = _counter("false_negatives", True, False)
true_negatives = _counter("true_negatives", False, False)


def _ratio(default_name: str, other: Any):
    """precision = tp / (tp + fp), recall = tp / (tp + fn); 0 while the denominator is 0."""

    def compute(counts: tuple[Any, Any], op_name: str) -> Any:
        a, b = counts
        return array_ops.where(math_ops.greater(a + b, 0), math_ops.divide(a, a + b), 0, op_name)

    def body(labels: Any, predictions: Any, weights: Any, mc: Any, uc: Any) -> tuple[Any, Any]:
        tp, tp_update = true_positives(labels, predictions, weights)
        x, x_update = other(labels, predictions, weights)
        return _metric_pair(compute, (tp, x), (tp_update, x_update), mc, uc)

    return _bool_metric(default_name, body)


precision = _ratio("precision", false_positives)
recall = _ratio("recall", false_negatives)


_ALL_COUNTS = ("tp", "fn", "tn", "fp")


def _confusion_matrix_at_thresholds(
    labels: Any,
    predictions: Any,
    thresholds: list[float],
    weights: Any,
    includes: tuple[str, ...] = _ALL_COUNTS,
) -> tuple[dict[str, Any], dict[str, Any]]:
    predictions = convert_to_tensor(predictions)
    message = "predictions must be in [0, 1]"
    with _ops.control_dependencies(
        [
            check_ops.assert_greater_equal(
                predictions, math_ops.cast(0.0, predictions.dtype), message=message
            ),
            check_ops.assert_less_equal(
                predictions, math_ops.cast(1.0, predictions.dtype), message=message
            ),
        ]
    ):  # guards only the casts below: none when the dtypes already match, as in TF
        predictions = math_ops.cast(predictions, dtypes.float32)  # cast first, as TF
        labels, predictions, weights = remove_squeezable_dimensions(
            math_ops.cast(labels, dtypes.bool), predictions, weights
        )
    n = len(thresholds)
    predictions_2d = array_ops.reshape(predictions, [-1, 1])
    labels_2d = array_ops.reshape(math_ops.cast(labels, dtypes.bool), [1, -1])
    num_predictions = predictions_2d.shape[0]
    if num_predictions is None:
        num_predictions = array_ops.shape(predictions_2d)[0]
    thresh_tiled = array_ops.tile(
        array_ops.expand_dims(convert_to_tensor(thresholds, dtype=dtypes.float32), [1]),
        array_ops.stack([1, num_predictions]),
    )
    pred_is_pos = math_ops.greater(
        array_ops.tile(array_ops.transpose(predictions_2d), [n, 1]), thresh_tiled
    )
    # Only the comparisons the wanted counts read, as TF builds them.
    if "fn" in includes or "tn" in includes:
        pred_is_neg = math_ops.logical_not(pred_is_pos)
    label_is_pos = array_ops.tile(labels_2d, [n, 1])
    if "fp" in includes or "tn" in includes:
        label_is_neg = math_ops.logical_not(label_is_pos)
    weights_tiled = None
    if weights is not None:
        weights = broadcast_weights(math_ops.cast(weights, dtypes.float32), predictions)
        weights_tiled = array_ops.tile(array_ops.reshape(weights, [1, -1]), [n, 1])
    values, updates = {}, {}
    for key, var_name, label_pos, pred_pos in (
        ("tp", "true_positives", True, True),
        ("fn", "false_negatives", True, False),
        ("tn", "true_negatives", False, False),
        ("fp", "false_positives", False, True),
    ):
        if key not in includes:
            continue
        a = label_is_pos if label_pos else label_is_neg
        b = pred_is_pos if pred_pos else pred_is_neg
        var = metric_variable([n], dtypes.float32, name=var_name)
        hit = math_ops.cast(math_ops.logical_and(a, b), dtypes.float32)
        if weights_tiled is not None:
            hit *= weights_tiled
        updates[key] = _assign_add(var, math_ops.reduce_sum(hit, 1))
        values[key] = var
    return values, updates


def _interpolate_pr_auc(tp: Any, fp: Any, fn: Any, k: int) -> Any:
    """TF's PR-AUC with precision interpolated between thresholds (Davis et al. 2006):
    tp, fp and p = tp + fp linear in each interval, the area is
    slope * (dtp + intercept * log(p_a / p_b)) / positives."""
    dtp = tp[:k] - tp[1:]
    p = tp + fp
    prec_slope = math_ops.div_no_nan(dtp, math_ops.maximum(p[:k] - p[1:], 0), name="prec_slope")
    intercept = tp[1:] - math_ops.multiply(prec_slope, p[1:])
    safe_p_ratio = array_ops.where(
        math_ops.logical_and(p[:k] > 0, p[1:] > 0),
        math_ops.div_no_nan(p[:k], math_ops.maximum(p[1:], 0), name="recall_relative_ratio"),
        array_ops.ones_like(p[1:]),
    )
    return math_ops.reduce_sum(
        math_ops.div_no_nan(
            prec_slope * (dtp + intercept * math_ops.log(safe_p_ratio)),
            math_ops.maximum(tp[1:] + fn[1:], 0),
            name="pr_auc_increment",
        ),
        name="interpolate_pr_auc",
    )


def auc(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    num_thresholds: int = 200,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    curve: str = "ROC",
    name: Any = None,
    summation_method: str = "trapezoidal",
    thresholds: Any = None,
) -> tuple[Any, Any]:
    """Area under the ROC or PR curve over `num_thresholds` thresholds, summed by
    trapezoids, lower ('minoring') or upper ('majoring') rectangles, or, for PR,
    'careful_interpolation' (TF's interpolated precision)."""
    with vs.variable_scope(name, "auc", [labels, predictions, weights]):
        if curve not in ("ROC", "PR"):
            raise ValueError(f"Curve must be either ROC or PR. Curve {curve} is unknown.")
        if thresholds is not None:
            thresholds = sorted(thresholds)
            num_thresholds = len(thresholds) + 2
            cuts = [float(t) for t in thresholds]
        else:
            cuts = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        kepsilon = 1e-7
        cuts = [0.0 - kepsilon, *cuts, 1.0 + kepsilon]
        values, updates = _confusion_matrix_at_thresholds(labels, predictions, cuts, weights)
        epsilon = 1.0e-6
        k = num_thresholds - 1

        def compute_auc(counts: dict[str, Any], op_name: str) -> Any:
            tp, fn, tn, fp = (counts[key] for key in _ALL_COUNTS)
            if curve == "PR" and summation_method == "careful_interpolation":
                return _interpolate_pr_auc(tp, fp, fn, k)
            rec = math_ops.divide(tp + epsilon, tp + fn + epsilon)
            if curve == "ROC":
                x, y = math_ops.divide(fp, fp + tn + epsilon), rec
            else:
                x, y = rec, math_ops.divide(tp + epsilon, tp + fp + epsilon)
            width = x[:k] - x[1:]  # sliced before y, as TF names its slices
            if summation_method in ("trapezoidal", "careful_interpolation"):
                height = (y[:k] + y[1:]) / 2.0
            elif summation_method == "minoring":
                height = math_ops.minimum(y[:k], y[1:])
            elif summation_method == "majoring":
                height = math_ops.maximum(y[:k], y[1:])
            else:
                raise ValueError(
                    f"Invalid summation_method: {summation_method} summation_method should "
                    "be 'trapezoidal', 'careful_interpolation', 'minoring', or 'majoring'."
                )
            return math_ops.reduce_sum(math_ops.multiply(width, height), name=op_name)

        return _metric_pair(compute_auc, values, updates, metrics_collections, updates_collections)
