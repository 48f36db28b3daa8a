"""Client API: tf.compat.v1.losses (losses_impl): per-example losses reduced by
compute_weighted_loss and added to the LOSSES collection, with TF's name scopes
("softmax_cross_entropy_loss/value", ...). Graph building only; not thread-safe (the
default graph is not)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import constant, convert_to_tensor
from client.ops import array_ops, control_flow_ops, math_ops, nn_ops


class Reduction:
    """tf.compat.v1.losses.Reduction."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple[str, ...]:
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key: str) -> None:
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}.")


# -- weights: broadcast checks (weights_broadcast_ops) --------------------------------
def _static_shape(t: Any) -> list[int] | None:
    shape = t.shape
    if shape.ndims is None or not shape.is_fully_defined():
        return None
    return [int(d) for d in shape.as_list()]


def assert_broadcastable(weights: Any, values: Any) -> Any:
    """TF's weights_broadcast_ops.assert_broadcastable for statically known shapes (a
    no_op, or ValueError), with its weights/values Shape and Rank nodes; with unknown
    shapes the check is left to the kernels."""
    with _ops.name_scope(None, "assert_broadcastable", [weights, values]):
        with _ops.name_scope(None, "weights", [weights]) as scope:
            weights = convert_to_tensor(weights, name=scope)
            array_ops.shape(weights, name="shape")
            array_ops.rank(weights, name="rank")
        with _ops.name_scope(None, "values", [values]) as scope:
            values = convert_to_tensor(values, name=scope)
            array_ops.shape(values, name="shape")
            array_ops.rank(values, name="rank")
        w_rank, v_rank = weights.shape.ndims, values.shape.ndims
        if w_rank == 0:
            return control_flow_ops.no_op(name="static_scalar_check_success")
        if w_rank is not None and v_rank is not None and w_rank != v_rank:
            raise ValueError(
                f"weights can not be broadcast to values. values.rank={v_rank}. "
                f"weights.rank={w_rank}. values.shape={values.shape}. "
                f"weights.shape={weights.shape}."
            )
        w_shape, v_shape = _static_shape(weights), _static_shape(values)
        if w_shape is not None and v_shape is not None:
            for w, v in zip(w_shape, v_shape):
                if w not in (1, v):
                    raise ValueError(
                        f"weights can not be broadcast to values. values.shape={v_shape}. "
                        f"weights.shape={w_shape}."
                    )
        return control_flow_ops.no_op(name="static_dims_check_success")


def broadcast_weights(weights: Any, values: Any) -> Any:
    with _ops.name_scope(None, "broadcast_weights", [weights, values]) as scope:
        values = convert_to_tensor(values, name="values")
        with _ops.name_scope(None, "weights", [weights]) as weights_scope:
            weights = convert_to_tensor(weights, dtype=values.dtype.base_dtype, name=weights_scope)
        if (
            weights.shape.is_fully_defined()
            and values.shape.is_fully_defined()
            and weights.shape.is_compatible_with(values.shape)
        ):
            return weights
        with _ops.control_dependencies([assert_broadcastable(weights, values)]):
            return math_ops.multiply(weights, array_ops.ones_like(values), name=scope)


# -- reduction ------------------------------------------------------------------------
def _safe_mean(numerator: Any, num_present: Any) -> Any:
    total = math_ops.reduce_sum(numerator)  # TF sums again (a scalar: Rank + Range)
    return math_ops.div_no_nan(total, num_present, name="value")


def _num_present(losses: Any, weights: Any) -> Any:
    with _ops.name_scope(None, "num_present", [losses, weights]) as scope:
        weights = math_ops.cast(weights, dtypes.float32)
        present = array_ops.where(
            math_ops.equal(weights, 0.0),
            array_ops.zeros_like(weights),
            array_ops.ones_like(weights),
        )
        present = broadcast_weights(present, losses)
        return math_ops.reduce_sum(present, name=scope)


def _num_elements(losses: Any) -> Any:
    with _ops.name_scope(None, "num_elements", [losses]) as scope:
        return math_ops.cast(array_ops.size(losses, name=scope), losses.dtype)


def add_loss(loss: Any, loss_collection: Any = _ops.GraphKeys.LOSSES) -> None:
    if loss_collection:
        _ops.add_to_collection(loss_collection, loss)


def compute_weighted_loss(
    losses: Any,
    weights: Any = 1.0,
    scope: Any = None,
    loss_collection: Any = _ops.GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Any:
    Reduction.validate(reduction)
    with (
        _ops.name_scope(scope, "weighted_loss", [losses, weights]),
        _ops.control_dependencies([assert_broadcastable(weights, losses)]),
    ):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype
        losses = math_ops.cast(losses, dtypes.float32)
        weights = math_ops.cast(weights, dtypes.float32)
        weighted = math_ops.multiply(losses, weights)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = math_ops.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = _safe_mean(loss, math_ops.reduce_sum(array_ops.ones_like(losses) * weights))
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _safe_mean(loss, _num_present(losses, weights))
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_mean(loss, _num_elements(losses))
        loss = math_ops.cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


def _float_pair(labels: Any, predictions: Any) -> tuple[Any, Any]:
    predictions = math_ops.cast(predictions, dtypes.float32)
    labels = math_ops.cast(labels, dtypes.float32)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return labels, predictions


def _check_args(labels: Any, predictions: Any, what: str = "predictions") -> None:
    if labels is None:
        raise ValueError("Argument `labels` must not be None.")
    if predictions is None:
        raise ValueError(f"Argument `{what}` must not be None.")


def _float_loss(
    default_name: str,
    labels: Any,
    predictions: Any,
    weights: Any,
    scope: Any,
    loss_collection: Any,
    reduction: str,
    losses_of: Callable[[Any, Any], Any],
    what: str = "predictions",
) -> Any:
    """The body TF's losses share: check the arguments, then under the loss's name scope
    cast labels and `what` to float32, and weigh `losses_of(labels, predictions)`."""
    _check_args(labels, predictions, what)
    with _ops.name_scope(scope, default_name, [predictions, labels, weights]) as s:
        labels, predictions = _float_pair(labels, predictions)
        losses = losses_of(labels, predictions)
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def _logits_and_labels(logits: Any, labels: Any) -> tuple[Any, Any]:
    """logits as a tensor, labels cast to their dtype, shapes checked compatible."""
    logits = convert_to_tensor(logits)
    labels = math_ops.cast(labels, logits.dtype)
    logits.shape.assert_is_compatible_with(labels.shape)
    return logits, labels


# -- the losses -----------------------------------------------------------------------
def absolute_difference(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    scope: Any = None,
    loss_collection: Any = _ops.GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Any:
    return _float_loss(
        "absolute_difference",
        labels,
        predictions,
        weights,
        scope,
        loss_collection,
        reduction,
        lambda y, p: math_ops.abs(math_ops.subtract(p, y)),
    )


def mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    scope: Any = None,
    loss_collection: Any = _ops.GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Any:
    return _float_loss(
        "mean_squared_error",
        labels,
        predictions,
        weights,
        scope,
        loss_collection,
        reduction,
        lambda y, p: math_ops.squared_difference(p, y),
    )


def huber_loss(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    delta: float = 1.0,
    scope: Any = None,
    loss_collection: Any = _ops.GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Any:

    def huber(labels: Any, predictions: Any) -> Any:
        abs_error = math_ops.abs(math_ops.subtract(predictions, labels))
        quadratic = math_ops.minimum(abs_error, delta)
        linear = math_ops.subtract(abs_error, quadratic)
        return math_ops.add(
            math_ops.multiply(
                convert_to_tensor(0.5, dtype=quadratic.dtype),
                math_ops.multiply(quadratic, quadratic),
            ),
            math_ops.multiply(delta, linear),
        )

    return _float_loss(
        "huber_loss", labels, predictions, weights, scope, loss_collection, reduction, huber
    )


def hinge_loss(
    labels: Any,
    logits: Any,
    weights: Any = 1.0,
    scope: Any = None,
    loss_collection: Any = _ops.GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Any:

    def hinge(labels: Any, logits: Any) -> Any:
        all_ones = array_ops.ones_like(labels)
        labels = math_ops.subtract(2 * labels, all_ones)
        return nn_ops.relu(math_ops.subtract(all_ones, math_ops.multiply(labels, logits)))

    return _float_loss(
        "hinge_loss", labels, logits, weights, scope, loss_collection, reduction, hinge, "logits"
    )


def log_loss(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    epsilon: float = 1e-7,
    scope: Any = None,
    loss_collection: Any = _ops.GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Any:
    return _float_loss(
        "log_loss",
        labels,
        predictions,
        weights,
        scope,
        loss_collection,
        reduction,
        lambda y, p: (
            -math_ops.multiply(y, math_ops.log(p + epsilon))
            - math_ops.multiply((1 - y), math_ops.log(1 - p + epsilon))
        ),
    )


def sigmoid_cross_entropy(
    multi_class_labels: Any,
    logits: Any,
    weights: Any = 1.0,
    label_smoothing: float = 0,
    scope: Any = None,
    loss_collection: Any = _ops.GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Any:
    _check_args(multi_class_labels, logits, "logits")
    with _ops.name_scope(
        scope, "sigmoid_cross_entropy_loss", [logits, multi_class_labels, weights]
    ) as s:
        logits, labels = _logits_and_labels(logits, multi_class_labels)
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = nn_ops.sigmoid_cross_entropy_with_logits(
            labels=labels, logits=logits, name="xentropy"
        )
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def softmax_cross_entropy(
    onehot_labels: Any,
    logits: Any,
    weights: Any = 1.0,
    label_smoothing: float = 0,
    scope: Any = None,
    loss_collection: Any = _ops.GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Any:
    _check_args(onehot_labels, logits, "logits")
    with _ops.name_scope(
        scope, "softmax_cross_entropy_loss", [logits, onehot_labels, weights]
    ) as s:
        logits, labels = _logits_and_labels(logits, onehot_labels)
        if label_smoothing > 0:
            num_classes = math_ops.cast(array_ops.shape(labels)[-1], logits.dtype)
            smooth_negatives = label_smoothing / num_classes  # built first, as TF's
            labels = labels * (1.0 - label_smoothing) + smooth_negatives
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(
            labels=labels, logits=logits, name="xentropy"
        )
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def remove_squeezable_dimensions(
    labels: Any, predictions: Any, weights: Any = None, expected_rank_diff: int = 0
) -> tuple[Any, Any, Any]:
    """TF's _remove_squeezable_dimensions, static ranks: a trailing size-1 dimension is
    squeezed from predictions or labels so their ranks differ by `expected_rank_diff`;
    weights are squeezed or expanded to the predictions' rank."""
    with _ops.name_scope(None, "remove_squeezable_dimensions", [labels, predictions]):
        predictions = convert_to_tensor(predictions)
        if labels is not None:
            labels = convert_to_tensor(labels)
            lr, pr = labels.shape.ndims, predictions.shape.ndims
            if lr is not None and pr is not None:
                if pr - lr == expected_rank_diff + 1 and predictions.shape[-1] in (1, None):
                    predictions = array_ops.squeeze(predictions, [-1])
                elif pr - lr == expected_rank_diff - 1 and labels.shape[-1] in (1, None):
                    labels = array_ops.squeeze(labels, [-1])
    if weights is None:
        return labels, predictions, None
    weights = convert_to_tensor(weights)
    wr, pr = weights.shape.ndims, predictions.shape.ndims
    if wr == 0 or wr is None or pr is None:
        return labels, predictions, weights
    if wr - pr == 1:
        weights = array_ops.squeeze(weights, [-1])
    elif pr - wr == 1:
        weights = array_ops.expand_dims(weights, [-1])
    return labels, predictions, weights


def sparse_softmax_cross_entropy(
    labels: Any,
    logits: Any,
    weights: Any = 1.0,
    scope: Any = None,
    loss_collection: Any = _ops.GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Any:
    _check_args(labels, logits, "logits")
    with _ops.name_scope(
        scope, "sparse_softmax_cross_entropy_loss", [logits, labels, weights]
    ) as s:
        labels, logits = remove_squeezable_dimensions(labels, logits, None, 1)[:2]
        weights = convert_to_tensor(weights)
        if labels.shape.ndims is not None and weights.shape.ndims == labels.shape.ndims + 1:
            weights = array_ops.squeeze(weights, [-1])  # losses_impl compares with labels
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits, name="xentropy"
        )
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def cosine_distance(
    labels: Any,
    predictions: Any,
    axis: Any = None,
    weights: Any = 1.0,
    scope: Any = None,
    loss_collection: Any = _ops.GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
    dim: Any = None,
) -> Any:
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    with _ops.name_scope(scope, "cosine_distance_loss", [predictions, labels, weights]) as s:
        labels, predictions = _float_pair(labels, predictions)
        radial = math_ops.multiply(predictions, labels)
        losses = 1 - math_ops.reduce_sum(radial, axis=[axis], keepdims=True)
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


# -- the collection -------------------------------------------------------------------
def get_losses(scope: Any = None, loss_collection: Any = _ops.GraphKeys.LOSSES) -> list[Any]:
    return _ops.get_collection(loss_collection, scope)


def get_regularization_losses(scope: Any = None) -> list[Any]:
    return _ops.get_collection(_ops.GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope: Any = None, name: str = "total_regularization_loss") -> Any:
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return constant(0.0)


def get_total_loss(
    add_regularization_losses: bool = True, name: str = "total_loss", scope: Any = None
) -> Any:
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    return math_ops.add_n(losses, name=name)
