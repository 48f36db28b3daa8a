"""Client API: tf.keras.losses, the function forms (per-sample losses, the mean over the
last axis) and the class forms (called on tensors: per-sample losses times the sample
weight, summed and divided by their count, "sum over batch size"), as tf_keras builds
them. A probability made by a Softmax or Sigmoid op is traced back to its logits, as
tf_keras does, so the cross-entropies use the with-logits ops."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.keras import backend
from client.ops import array_ops, math_ops, nn_ops


def _pair(y_true: Any, y_pred: Any) -> tuple[Any, Any]:
    y_pred = convert_to_tensor(y_pred)
    return math_ops.cast(y_true, y_pred.dtype), y_pred


def _logits(output: Any, from_logits: bool, op_type: str) -> tuple[Any, bool]:
    """tf_keras' _get_logits: the input of the activation that made `output` (even with
    from_logits, where tf_keras warns and does the same)."""
    op = getattr(output, "op", None)
    if op is not None and op.type == op_type and len(op.inputs) == 1:
        return op.inputs[0], True
    return output, from_logits


def _epsilon(dtype: Any) -> Any:
    return convert_to_tensor(backend.epsilon(), dtype=dtype)


def _smoothing(y_true: Any, y_pred: Any, label_smoothing: float, num_classes: Any) -> Any:
    """tf_keras' smart_cond on the label smoothing, a Const: smoothed labels only when it
    is non-zero, y * (1 - s) + s / classes (num_classes() built first), or + 0.5 * s for
    binary labels (num_classes None)."""
    s = convert_to_tensor(label_smoothing, dtype=y_pred.dtype)
    if not label_smoothing:
        return y_true
    if num_classes is None:
        return y_true * (1.0 - s) + 0.5 * s
    n = num_classes()
    return y_true * (1.0 - s) + s / n


def mean_squared_error(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.squared_difference(y_pred, y_true), axis=-1)


def mean_absolute_error(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.abs(y_pred - y_true), axis=-1)


def binary_crossentropy(
    y_true: Any, y_pred: Any, from_logits: bool = False, label_smoothing: float = 0.0, axis=-1
) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _smoothing(y_true, y_pred, label_smoothing, None)
    output, from_logits = _logits(y_pred, from_logits, "Sigmoid")
    if from_logits:
        bce = nn_ops.sigmoid_cross_entropy_with_logits(labels=y_true, logits=output)
    else:
        eps = _epsilon(output.dtype)
        output = math_ops.clip_by_value(output, eps, 1.0 - eps)
        bce = y_true * math_ops.log(output + backend.epsilon())
        bce += (1 - y_true) * math_ops.log(1 - output + backend.epsilon())
        bce = -bce
    return math_ops.reduce_mean(bce, axis=axis)


def categorical_crossentropy(
    y_true: Any, y_pred: Any, from_logits: bool = False, label_smoothing: float = 0.0, axis=-1
) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)

    def num_classes() -> Any:
        return math_ops.cast(array_ops.shape(y_true)[-1], y_pred.dtype)

    y_true = _smoothing(y_true, y_pred, label_smoothing, num_classes)
    output, from_logits = _logits(y_pred, from_logits, "Softmax")
    if from_logits:
        return nn_ops.softmax_cross_entropy_with_logits_v2(labels=y_true, logits=output, axis=axis)
    output = output / math_ops.reduce_sum(output, axis, True)
    eps = _epsilon(output.dtype)
    output = math_ops.clip_by_value(output, eps, 1.0 - eps)
    return -math_ops.reduce_sum(y_true * math_ops.log(output), axis)


def sparse_categorical_crossentropy(
    y_true: Any, y_pred: Any, from_logits: bool = False, axis: int = -1
) -> Any:
    y_pred = convert_to_tensor(y_pred)
    target = math_ops.cast(convert_to_tensor(y_true), dtypes.int64)
    output, from_logits = _logits(y_pred, from_logits, "Softmax")
    if not from_logits:
        eps = _epsilon(output.dtype)
        output = math_ops.log(math_ops.clip_by_value(output, eps, 1 - eps))
    rank = output.shape.ndims
    if rank is not None and axis % rank != rank - 1:
        raise NotImplementedError("sparse_categorical_crossentropy over a non-last axis")
    output_shape = array_ops.shape(output)
    target_rank = target.shape.ndims
    update_shape = target_rank is not None and rank is not None and target_rank != rank - 1
    if update_shape:
        target = array_ops.reshape(target, [-1])
        output = array_ops.reshape(output, [-1, output_shape[-1]])
    res = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)
    if update_shape and rank is not None and rank >= 3:
        res = array_ops.reshape(res, output_shape[:-1])
    return res


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error


class Reduction:
    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"


class Loss:
    """tf.keras.losses.Loss: __call__(y_true, y_pred, sample_weight) reduces call()."""

    def __init__(self, reduction: str = Reduction.AUTO, name: str | None = None) -> None:
        self.reduction = reduction
        self.name = name

    def call(self, y_true: Any, y_pred: Any) -> Any:
        raise NotImplementedError

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        with _ops.name_scope(self.name or "loss"):
            losses = self.call(y_true, y_pred)
            return self._weighted(losses, 1.0 if sample_weight is None else sample_weight)

    def _weighted(self, losses: Any, sample_weight: Any) -> Any:
        """tf_keras' compute_weighted_loss: losses * weight, then summed, then over the
        number of elements (divide_no_nan, "value")."""
        with _ops.name_scope("weighted_loss"):
            weight = convert_to_tensor(sample_weight)
            if weight.dtype != losses.dtype:
                weight = math_ops.cast(weight, losses.dtype)
            if weight.shape.ndims is not None and losses.shape.ndims is not None:
                while weight.shape.ndims > losses.shape.ndims:
                    weight = array_ops.squeeze(weight, [-1])
            weighted = math_ops.multiply(losses, weight)
            if self.reduction == Reduction.NONE:
                return weighted
            total = math_ops.reduce_sum(weighted)
            if self.reduction == Reduction.SUM:
                return total
            with _ops.name_scope("num_elements") as scope:
                count = math_ops.cast(array_ops.size(weighted, name=scope), weighted.dtype)
            return math_ops.div_no_nan(math_ops.reduce_sum(total), count, name="value")

    def get_config(self) -> dict:
        return {"reduction": self.reduction, "name": self.name}


class LossFunctionWrapper(Loss):
    def __init__(self, fn: Any, reduction: str = Reduction.AUTO, name: str | None = None, **kw):
        super().__init__(reduction=reduction, name=name)
        self.fn, self._fn_kwargs = fn, kw

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return self.fn(y_true, y_pred, **self._fn_kwargs)


def _wrapper(cls_name: str, fn: Any, default_name: str, **defaults: Any) -> type:
    def __init__(self: Any, reduction: str = Reduction.AUTO, name: str = default_name, **kw):
        LossFunctionWrapper.__init__(self, fn, reduction, name, **{**defaults, **kw})

    return type(cls_name, (LossFunctionWrapper,), {"__init__": __init__})


MeanSquaredError = _wrapper("MeanSquaredError", mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error")
BinaryCrossentropy = _wrapper(
    "BinaryCrossentropy", binary_crossentropy, "binary_crossentropy", from_logits=False
)
CategoricalCrossentropy = _wrapper(
    "CategoricalCrossentropy",
    categorical_crossentropy,
    "categorical_crossentropy",
    from_logits=False,
)
SparseCategoricalCrossentropy = _wrapper(
    "SparseCategoricalCrossentropy",
    sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy",
    from_logits=False,
)

_BY_NAME = {
    f.__name__: f
    for f in (
        mean_squared_error,
        mean_absolute_error,
        binary_crossentropy,
        categorical_crossentropy,
        sparse_categorical_crossentropy,
    )
}
_BY_NAME.update({"mse": mean_squared_error, "mae": mean_absolute_error})


def get(identifier: Any) -> Any:
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]
    raise ValueError(f"Could not interpret loss function identifier: {identifier}")
