"""Client API: tf.compat.v1.layers core layers: Dense, Dropout, Flatten."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import ops as _ops
from client.framework.op_builder import constant, convert_to_tensor
from client.layers.base import Layer
from client.ops import array_ops, math_ops, nn_ops


class Dense(Layer):
    """outputs = activation(inputs @ kernel + bias), kernel "<scope>/kernel"."""

    def __init__(
        self,
        units: int,
        activation: Any = None,
        use_bias: bool = True,
        kernel_initializer: Any = None,
        bias_initializer: Any = None,
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        activity_regularizer: Any = None,
        kernel_constraint: Any = None,
        bias_constraint: Any = None,
        trainable: bool = True,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(trainable=trainable, name=name, **kwargs)
        self.units = int(units)
        self._kernel_and_bias_args(
            activation,
            use_bias,
            kernel_initializer,
            bias_initializer,
            kernel_regularizer,
            bias_regularizer,
        )

    def build(self, input_shape: Any) -> None:
        in_dim = input_shape[-1] if input_shape.ndims is not None else None
        if in_dim is None:
            raise ValueError(
                "The last dimension of the inputs to `Dense` should be defined. Found `None`."
            )
        self._add_kernel_and_bias([int(in_dim), self.units], [self.units])

    def call(self, inputs: Any) -> Any:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is not None and rank > 2:
            # TF's core_ops.dense: Tensordot over the last axis.
            outputs = _tensordot_last(inputs, self.kernel)
        else:
            outputs = math_ops.matmul(inputs, self.kernel)
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        return self._activate(outputs)


def _tensordot_last(a: Any, b: Any) -> Any:
    with _ops.name_scope(None, "Tensordot", [a, b]):
        flat = array_ops.reshape(a, [-1, int(a.shape[-1])])
        out = math_ops.matmul(flat, b)
        shape = array_ops.concat([array_ops.shape(a)[:-1], [int(b.shape[-1])]], 0)
        result = array_ops.reshape(out, shape)
        result.set_shape(a.shape[:-1].concatenate([int(b.shape[-1])]))
        return result


def dense(
    inputs: Any,
    units: int,
    activation: Any = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = None,
    kernel_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    kernel_constraint: Any = None,
    bias_constraint: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> Any:
    """tf.compat.v1.layers.dense."""
    layer = Dense(
        units,
        activation=activation,
        use_bias=use_bias,
        kernel_initializer=kernel_initializer,
        bias_initializer=bias_initializer,
        kernel_regularizer=kernel_regularizer,
        bias_regularizer=bias_regularizer,
        trainable=trainable,
        name=name,
        _reuse=reuse,
        _scope=name,
    )
    return layer(inputs)


class Dropout(Layer):
    """Dropout applied only when `training` is true (a Python bool or a bool tensor)."""

    def __init__(
        self,
        rate: float = 0.5,
        noise_shape: Any = None,
        seed: Any = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, **kwargs)
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def call(self, inputs: Any, training: Any = False) -> Any:
        from client.ops import control_flow_ops

        def dropped() -> Any:
            return nn_ops.dropout(
                inputs, noise_shape=self.noise_shape, seed=self.seed, rate=self.rate
            )

        if isinstance(training, (bool, np.bool_)):
            return dropped() if training else array_ops.identity(inputs)
        return control_flow_ops.cond(training, dropped, lambda: array_ops.identity(inputs))


def dropout(
    inputs: Any,
    rate: float = 0.5,
    noise_shape: Any = None,
    seed: Any = None,
    training: Any = False,
    name: str | None = None,
) -> Any:
    return Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)(inputs, training=training)


class Flatten(Layer):
    """[batch, ...] -> [batch, prod(...)]."""

    def __init__(
        self, data_format: str | None = None, name: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(name=name, **kwargs)
        self.data_format = data_format

    def call(self, inputs: Any) -> Any:
        inputs = convert_to_tensor(inputs)
        if self.data_format == "channels_first" and inputs.shape.ndims and inputs.shape.ndims > 2:
            perm = [0, *range(2, inputs.shape.ndims), 1]
            inputs = array_ops.transpose(inputs, perm)
        dims = inputs.shape.as_list() if inputs.shape.ndims is not None else None
        if dims is not None and len(dims) == 1:
            return array_ops.expand_dims(inputs, 1)
        # tf_keras' Flatten: the new shape as a Const when static enough.
        if dims is not None and all(d is not None for d in dims[1:]):
            flat = int(np.prod(dims[1:]))
            return array_ops.reshape(inputs, constant([-1, flat]))
        if dims is not None and dims[0] is not None:
            return array_ops.reshape(inputs, constant([int(dims[0]), -1]))
        return array_ops.reshape(inputs, [array_ops.shape(inputs)[0], -1])


def flatten(inputs: Any, name: str | None = None, data_format: str = "channels_last") -> Any:
    return Flatten(data_format=data_format, name=name)(inputs)
