"""Client API: tf.keras.activations, each the op tf_keras builds for it in a graph
("Relu", "Sigmoid", "Softmax" ...), so a layer's activation has TensorFlow's node name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client import nn
from client.ops import math_ops, nn_ops


def linear(x: Any) -> Any:
    return x


def relu(x: Any, alpha: float = 0.0, max_value: Any = None, threshold: float = 0.0) -> Any:
    if alpha == 0.0 and threshold == 0.0 and max_value is None:
        return nn_ops.relu(x)
    if alpha == 0.0 and threshold == 0.0 and max_value == 6:
        return nn_ops.relu6(x)
    if threshold == 0.0 and max_value is None:
        return nn_ops.leaky_relu(x, alpha=alpha)
    raise NotImplementedError("relu with a threshold or a max_value other than 6")


def sigmoid(x: Any) -> Any:
    return nn_ops.sigmoid(x)


def tanh(x: Any) -> Any:
    return nn_ops.tanh(x)


def softmax(x: Any, axis: int = -1) -> Any:
    return nn_ops.softmax(x, axis=axis)


def log_softmax(x: Any, axis: int = -1) -> Any:
    return nn_ops.log_softmax(x, axis=axis)


def elu(x: Any, alpha: float = 1.0) -> Any:
    res = nn_ops.elu(x)
    if alpha == 1:
        return res
    from client.ops import array_ops

    return array_ops.where(x > 0, res, alpha * res)


def selu(x: Any) -> Any:
    return nn.selu(x)


def softplus(x: Any) -> Any:
    return nn_ops.softplus(x)


def softsign(x: Any) -> Any:
    return nn.softsign(x)


def swish(x: Any) -> Any:
    return nn.silu(x)


def exponential(x: Any) -> Any:
    return math_ops.exp(x)


def hard_sigmoid(x: Any) -> Any:
    """tf_keras' backend.hard_sigmoid: clip(0.2 * x + 0.5, 0, 1)."""
    from client.framework import op_builder

    x = op_builder.convert_to_tensor(x)
    point_two = op_builder.constant(0.2, dtype=x.dtype.base_dtype)
    point_five = op_builder.constant(0.5, dtype=x.dtype.base_dtype)
    x = math_ops.multiply(x, point_two)
    x = math_ops.add(x, point_five)
    return math_ops.clip_by_value(x, 0.0, 1.0)


_BY_NAME: dict[str, Callable[..., Any]] = {
    f.__name__: f
    for f in (
        linear,
        relu,
        sigmoid,
        tanh,
        softmax,
        log_softmax,
        elu,
        selu,
        softplus,
        softsign,
        swish,
        exponential,
        hard_sigmoid,
    )
}


def serialize(activation: Any) -> str:
    return getattr(activation, "__name__", str(activation))


def deserialize(name: str) -> Callable[..., Any]:
    if name not in _BY_NAME:
        raise ValueError(f"Unknown activation function: '{name}'.")
    return _BY_NAME[name]


def get(identifier: Any) -> Callable[..., Any]:
    """tf.keras.activations.get: None is linear, a name is looked up, a callable kept."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise TypeError(f"Could not interpret activation function identifier: {identifier}")
