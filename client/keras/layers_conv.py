"""Client API: tf.keras.layers convolution and pooling layers: the tf.compat.v1.layers
ones (in TensorFlow thin subclasses of these) with Keras's defaults ("glorot_uniform"
kernels, "zeros" biases, strides defaulting to the pool size) and naming; the global
poolings reduce the spatial axes (Mean / Max)."""

from __future__ import annotations

from typing import Any

from client.framework.op_builder import convert_to_tensor
from client.keras import activations, initializers
from client.keras.engine import Layer
from client.layers import convolutional as _v1
from client.ops import math_ops


class _ConvArgs:
    """Keras's conv defaults and identifiers (strings) resolved for the v1 layer."""

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        *args: Any,
        activation: Any = None,
        kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        data_format: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(  # type: ignore[call-arg]
            filters,
            kernel_size,
            *args,
            activation=activations.get(activation),
            kernel_initializer=initializers.get(kernel_initializer),
            bias_initializer=initializers.get(bias_initializer),
            data_format=data_format or "channels_last",
            **kwargs,
        )


class Conv1D(_ConvArgs, Layer, _v1.Conv1D):
    pass


class Conv2D(_ConvArgs, Layer, _v1.Conv2D):
    pass


class Conv3D(_ConvArgs, Layer, _v1.Conv3D):
    pass


class Conv2DTranspose(_ConvArgs, Layer, _v1.Conv2DTranspose):
    pass


class _PoolArgs:
    def __init__(
        self,
        pool_size: Any = 2,
        strides: Any = None,
        padding: str = "valid",
        data_format: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(  # type: ignore[call-arg]
            pool_size, strides, padding, data_format or "channels_last", **kwargs
        )


class MaxPooling1D(_PoolArgs, Layer, _v1.MaxPooling1D):
    pass


class AveragePooling1D(_PoolArgs, Layer, _v1.AveragePooling1D):
    pass


class MaxPooling2D(_PoolArgs, Layer, _v1.MaxPooling2D):
    pass


class AveragePooling2D(_PoolArgs, Layer, _v1.AveragePooling2D):
    pass


class _GlobalPooling2D(Layer):
    def __init__(self, data_format: Any = None, keepdims: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.channels_last = (data_format or "channels_last") == "channels_last"
        self.keepdims = keepdims

    def _reduce(self, x: Any, axis: list[int]) -> Any:
        raise NotImplementedError

    def call(self, inputs: Any) -> Any:
        return self._reduce(convert_to_tensor(inputs), [1, 2] if self.channels_last else [2, 3])


class GlobalAveragePooling2D(_GlobalPooling2D):
    def _reduce(self, x: Any, axis: list[int]) -> Any:
        return math_ops.reduce_mean(x, axis=axis, keepdims=self.keepdims)


class GlobalMaxPooling2D(_GlobalPooling2D):
    def _reduce(self, x: Any, axis: list[int]) -> Any:
        return math_ops.reduce_max(x, axis=axis, keepdims=self.keepdims)


MaxPool1D, MaxPool2D, AvgPool1D, AvgPool2D = (
    MaxPooling1D,
    MaxPooling2D,
    AveragePooling1D,
    AveragePooling2D,
)
GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D
Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D
