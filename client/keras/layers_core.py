"""Client API: tf.keras.layers core and merge layers (Dense, Dropout, Flatten, Activation,
Reshape, Embedding, Lambda, Concatenate, Add, Multiply) as tf_keras builds them in a graph.
Dense, Dropout and Flatten are the tf.compat.v1.layers ones (in TensorFlow those are thin
subclasses of these) under the Keras naming of client.keras.engine."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework.op_builder import convert_to_tensor
from client.keras import activations, initializers
from client.keras.engine import Layer, _training
from client.layers import core as _v1
from client.ops import array_ops, embedding_ops, math_ops, nn_ops, tensordot


class Dense(Layer, _v1.Dense):
    def __init__(
        self,
        units: int,
        activation: Any = None,
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        activity_regularizer: Any = None,
        kernel_constraint: Any = None,
        bias_constraint: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            units,
            activation=activations.get(activation),
            use_bias=use_bias,
            kernel_initializer=initializers.get(kernel_initializer),
            bias_initializer=initializers.get(bias_initializer),
            kernel_regularizer=kernel_regularizer,
            bias_regularizer=bias_regularizer,
            **kwargs,
        )

    def call(self, inputs: Any) -> Any:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is None or rank <= 2:
            return _v1.Dense.call(self, inputs)
        # tf_keras' Dense: a full tensordot over the last axis (the v1 layer reshapes).
        outputs = tensordot.tensordot(inputs, self.kernel, [[rank - 1], [0]])
        outputs.set_shape(inputs.shape[:-1].concatenate([self.units]))
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        return self._activate(outputs)


class Dropout(Layer, _v1.Dropout):
    """Dropout in training (the argument, else the learning phase): a cond on a tensor,
    the branch itself on a Python value, as tf_keras' smart_cond."""

    def call(self, inputs: Any, training: Any = None) -> Any:
        if isinstance(self.rate, (int, float)) and self.rate == 0:
            return array_ops.identity(inputs)
        training = _training(training)
        if isinstance(training, (bool, int, np.bool_, np.integer)):
            training = bool(training)
        return _v1.Dropout.call(self, inputs, training=training)


class Flatten(Layer, _v1.Flatten):
    pass


class Activation(Layer):
    def __init__(self, activation: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs: Any) -> Any:
        return self.activation(inputs)


class Reshape(Layer):
    """inputs reshaped to [batch, *target_shape] (the batch size read at run time)."""

    def __init__(self, target_shape: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)

    def call(self, inputs: Any) -> Any:
        inputs = convert_to_tensor(inputs)
        result = array_ops.reshape(inputs, (array_ops.shape(inputs)[0], *self.target_shape))
        if -1 not in self.target_shape:
            result.set_shape(inputs.shape[:1].concatenate(self.target_shape))
        return result


class Embedding(Layer):
    """embeddings[ids] (ids cast to int32 unless int32/int64), weight "embeddings"."""

    def __init__(
        self,
        input_dim: int,
        output_dim: int,
        embeddings_initializer: Any = "uniform",
        embeddings_regularizer: Any = None,
        activity_regularizer: Any = None,
        embeddings_constraint: Any = None,
        mask_zero: bool = False,
        input_length: Any = None,
        **kwargs: Any,
    ) -> None:
        if input_length is not None and "input_shape" not in kwargs:
            kwargs["input_shape"] = (input_length,)
        super().__init__(**kwargs)
        if input_dim <= 0 or output_dim <= 0:
            raise ValueError(
                "Both `input_dim` and `output_dim` should be positive, "
                f"Received input_dim = {input_dim} and output_dim = {output_dim}"
            )
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = embeddings_regularizer

    def build(self, input_shape: Any) -> None:
        self.embeddings = self.add_weight(
            "embeddings",
            (self.input_dim, self.output_dim),
            initializer=self.embeddings_initializer,
            regularizer=self.embeddings_regularizer,
        )

    def call(self, inputs: Any) -> Any:
        inputs = convert_to_tensor(inputs)
        if inputs.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            inputs = math_ops.cast(inputs, dtypes.int32)
        return embedding_ops.embedding_lookup(self.embeddings, inputs)


class Lambda(Layer):
    def __init__(self, function: Any, output_shape: Any = None, arguments: Any = None, **kwargs):
        super().__init__(**kwargs)
        self.function = function
        self.arguments = dict(arguments or {})

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        return self.function(inputs, **self.arguments, **kwargs)


class _Merge(Layer):
    def _merge(self, inputs: list[Any]) -> Any:
        raise NotImplementedError

    def call(self, inputs: Any) -> Any:
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 1:
            raise ValueError(
                f"A merge layer should be called on a list of inputs. Received: inputs={inputs}"
            )
        return self._merge([convert_to_tensor(x) for x in inputs])


class Add(_Merge):
    def _merge(self, inputs: list[Any]) -> Any:
        output = inputs[0]
        for x in inputs[1:]:
            output = output + x
        return output


class Multiply(_Merge):
    def _merge(self, inputs: list[Any]) -> Any:
        output = inputs[0]
        for x in inputs[1:]:
            output = output * x
        return output


class Concatenate(_Merge):
    def __init__(self, axis: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = axis

    def _merge(self, inputs: list[Any]) -> Any:
        axis = self.axis
        if axis < 0:  # tf_keras' backend.concatenate makes the axis non-negative
            rank = inputs[0].shape.ndims
            axis = axis % rank if rank else 0
        return array_ops.concat(inputs, axis)


def add(inputs: list[Any], **kwargs: Any) -> Any:
    return Add(**kwargs)(inputs)


def multiply(inputs: list[Any], **kwargs: Any) -> Any:
    return Multiply(**kwargs)(inputs)


def concatenate(inputs: list[Any], axis: int = -1, **kwargs: Any) -> Any:
    return Concatenate(axis=axis, **kwargs)(inputs)
