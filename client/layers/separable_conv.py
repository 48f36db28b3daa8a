"""Client API: tf.compat.v1.layers SeparableConv1D / SeparableConv2D (a depthwise then a
pointwise convolution, tf.nn.separable_conv2d) and Conv3DTranspose
(Conv3DBackpropInputV2), with tf_keras's variable names ("separable_conv2d/
depthwise_kernel", ".../pointwise_kernel", ".../bias") and op layout."""

from __future__ import annotations

from typing import Any

from client.framework.op_builder import convert_to_tensor
from client.layers.convolutional import Conv3D, _Conv, _deconv_length
from client.ops import array_ops, nn_conv_variants


class _SeparableConv(_Conv):
    """tf_keras's SeparableConv: a convolution whose kernel is a depthwise one
    ("depthwise_kernel") then a pointwise one ("pointwise_kernel")."""

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str = "channels_last",
        dilation_rate: Any = 1,
        depth_multiplier: int = 1,
        activation: Any = None,
        use_bias: bool = True,
        depthwise_initializer: Any = None,
        pointwise_initializer: Any = None,
        bias_initializer: Any = None,
        depthwise_regularizer: Any = None,
        pointwise_regularizer: Any = None,
        bias_regularizer: Any = None,
        activity_regularizer: Any = None,
        depthwise_constraint: Any = None,
        pointwise_constraint: Any = None,
        bias_constraint: Any = None,
        trainable: bool = True,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            filters,
            kernel_size,
            strides,
            padding,
            data_format,
            dilation_rate,
            activation,
            use_bias,
            bias_initializer=bias_initializer,
            bias_regularizer=bias_regularizer,
            trainable=trainable,
            name=name,
            **kwargs,
        )
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = depthwise_initializer
        self.pointwise_initializer = pointwise_initializer
        self.depthwise_regularizer = depthwise_regularizer
        self.pointwise_regularizer = pointwise_regularizer
        self.depthwise_kernel: Any = None
        self.pointwise_kernel: Any = None

    def build(self, input_shape: Any) -> None:
        c = self._in_channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel",
            [*self.kernel_size, c, self.depth_multiplier],
            initializer=self.depthwise_initializer,
            regularizer=self.depthwise_regularizer,
        )
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel",
            [1] * self.rank + [self.depth_multiplier * c, self.filters],
            initializer=self.pointwise_initializer,
            regularizer=self.pointwise_regularizer,
        )
        self._add_bias([self.filters])

    def _separable(self, x: Any, dk: Any, pk: Any, strides: tuple, rate: tuple) -> Any:
        """The 2-D separable convolution, then the bias (before any squeeze, as tf_keras)."""
        fmt, s, _ = self._nn_args(strides, rate)
        out = nn_conv_variants.separable_conv2d(
            x, dk, pk, s, self.padding, rate=list(rate), data_format=fmt
        )
        return self._biased(out)


class SeparableConv2D(_SeparableConv):
    rank = 2

    def call(self, inputs: Any) -> Any:
        out = self._separable(
            convert_to_tensor(inputs),
            self.depthwise_kernel,
            self.pointwise_kernel,
            self.strides,
            self.dilation_rate,
        )
        return self._activate(out)


class SeparableConv1D(_SeparableConv):
    """tf_keras's: the input, kernels expanded to 2-D (ExpandDims), the 2-D separable
    convolution and bias, then Squeeze."""

    rank = 1

    def call(self, inputs: Any) -> Any:
        spatial = 1 if self.channels_last else 2
        x = array_ops.expand_dims(convert_to_tensor(inputs), spatial)
        dk = array_ops.expand_dims(self.depthwise_kernel, 0)
        pk = array_ops.expand_dims(self.pointwise_kernel, 0)
        out = self._separable(x, dk, pk, self.strides * 2, (1, *self.dilation_rate))
        return self._activate(array_ops.squeeze(out, [spatial]))


class Conv3DTranspose(Conv3D):
    """tf_keras's Conv3DTranspose: the output size from the input's dynamic shape
    (deconv_output_length), Conv3DBackpropInputV2, the static shape set, BiasAdd.
    Kernel is [kd, kh, kw, filters, in_channels]."""

    def _kernel_shape(self, in_channels: int) -> list[int]:
        return [*self.kernel_size, self.filters, in_channels]

    def call(self, inputs: Any) -> Any:
        inputs = convert_to_tensor(inputs)
        shape = array_ops.shape(inputs)
        first = 1 if self.channels_last else 2  # the first spatial axis
        batch, spatial = shape[0], [shape[first + i] for i in range(3)]

        def out_lengths(sizes: list[Any]) -> list[Any]:
            return [
                _deconv_length(n, k, s, self.padding)
                for n, k, s in zip(sizes, self.kernel_size, self.strides)
            ]

        def layout(batch: Any, lengths: list[Any]) -> list[Any]:
            if self.channels_last:
                return [batch, *lengths, self.filters]
            return [batch, self.filters, *lengths]

        fmt, strides, _ = self._nn_args(self.strides, self.dilation_rate)
        out_shape = array_ops.stack(layout(batch, out_lengths(spatial)))
        outputs = nn_conv_variants.conv3d_transpose(
            inputs, self.kernel, out_shape, strides, padding=self.padding, data_format=fmt
        )
        if inputs.shape.ndims:
            dims = inputs.shape.as_list()
            outputs.set_shape(layout(dims[0], out_lengths(dims[first : first + 3])))
        return self._finish(outputs)


def _separable_fn(cls: type) -> Any:
    def fn(
        inputs: Any,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str = "channels_last",
        dilation_rate: Any = 1,
        depth_multiplier: int = 1,
        activation: Any = None,
        use_bias: bool = True,
        depthwise_initializer: Any = None,
        pointwise_initializer: Any = None,
        bias_initializer: Any = None,
        depthwise_regularizer: Any = None,
        pointwise_regularizer: Any = None,
        bias_regularizer: Any = None,
        activity_regularizer: Any = None,
        depthwise_constraint: Any = None,
        pointwise_constraint: Any = None,
        bias_constraint: Any = None,
        trainable: bool = True,
        name: str | None = None,
        reuse: Any = None,
    ) -> Any:
        layer = cls(
            filters,
            kernel_size,
            strides=strides,
            padding=padding,
            data_format=data_format,
            dilation_rate=dilation_rate,
            depth_multiplier=depth_multiplier,
            activation=activation,
            use_bias=use_bias,
            depthwise_initializer=depthwise_initializer,
            pointwise_initializer=pointwise_initializer,
            bias_initializer=bias_initializer,
            depthwise_regularizer=depthwise_regularizer,
            pointwise_regularizer=pointwise_regularizer,
            bias_regularizer=bias_regularizer,
            trainable=trainable,
            name=name,
            _reuse=reuse,
            _scope=name,
        )
        return layer(inputs)

    return fn


separable_conv1d = _separable_fn(SeparableConv1D)
separable_conv2d = _separable_fn(SeparableConv2D)


def conv3d_transpose(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = (1, 1, 1),
    padding: str = "valid",
    data_format: str = "channels_last",
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
    layer = Conv3DTranspose(
        filters,
        kernel_size,
        strides=strides,
        padding=padding,
        data_format=data_format,
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
