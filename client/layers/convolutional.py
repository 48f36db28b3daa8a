"""Client API: tf.compat.v1.layers convolution and pooling layers (Conv1D/2D,
Conv2DTranspose, Max/AveragePooling 1D/2D) over Conv2D, Conv2DBackpropInput, MaxPool and
AvgPool, with tf_keras's variable names ("conv2d/kernel", "conv2d/bias") and op layout
(1-D layers expand to 2-D and squeeze back)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.layers.base import Layer
from client.ops import array_ops, nn_ops
from client.ops.nn_space_to_batch import space_to_batch_op

# conv(input, kernel, padding, name) -> output: a layer's op at a dilation rate of 1s.
ConvFn = Callable[[Any, Any, str, str], Any]


def _tuple(v: Any, n: int) -> tuple[int, ...]:
    if isinstance(v, int):
        return (v,) * n
    v = tuple(int(x) for x in v)
    if len(v) != n:
        raise ValueError(f"The argument must be a tuple of {n} integers. Received: {v}")
    return v


def _padding(p: str) -> str:
    p = p.upper()
    if p not in ("VALID", "SAME"):
        raise ValueError(f"The `padding` argument must be one of 'valid', 'same'. Received: {p}")
    return p


def _channels_last(data_format: str | None) -> bool:
    if data_format in (None, "channels_last"):
        return True
    if data_format == "channels_first":
        return False
    raise ValueError(
        "The `data_format` argument must be one of 'channels_first', 'channels_last'. "
        f"Received: {data_format}"
    )


def _deconv_length(n: Any, k: int, s: int, padding: str) -> Any:
    """tf_keras's deconv_output_length without output padding: of a static size (None
    stays None) or of a dynamic one (a tensor)."""
    if n is None:
        return None
    return n * s + max(k - s, 0) if padding == "VALID" else n * s


class _Conv(Layer):
    rank = 2

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str = "channels_last",
        dilation_rate: Any = 1,
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
        self.filters = int(filters)
        self.kernel_size = _tuple(kernel_size, self.rank)
        self.strides = _tuple(strides, self.rank)
        self.padding = _padding(padding)
        self.channels_last = _channels_last(data_format)
        self.dilation_rate = _tuple(dilation_rate, self.rank)
        self._kernel_and_bias_args(
            activation,
            use_bias,
            kernel_initializer,
            bias_initializer,
            kernel_regularizer,
            bias_regularizer,
        )

    def _in_channels(self, input_shape: Any) -> int:
        c = input_shape[-1] if self.channels_last else input_shape[1]
        if c is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        return int(c)

    def _kernel_shape(self, in_channels: int) -> list[int]:
        return [*self.kernel_size, in_channels, self.filters]

    def build(self, input_shape: Any) -> None:
        self._add_kernel_and_bias(
            self._kernel_shape(self._in_channels(input_shape)), [self.filters]
        )

    def _nn_args(self, strides: tuple, dilations: tuple) -> tuple[str, list[int], list[int]]:
        """The data format, strides and dilations as the 2-D nn ops take them."""
        if self.channels_last:
            return "NHWC", [1, *strides, 1], [1, *dilations, 1]
        return "NCHW", [1, 1, *strides], [1, 1, *dilations]

    def _conv2d(
        self,
        x: Any,
        kernel: Any,
        strides: tuple,
        dilations: tuple,
        name: Any,
        padding: str | None = None,
    ) -> Any:
        fmt, s, d = self._nn_args(strides, dilations)
        padding = padding or self.padding
        return nn_ops.conv2d(x, kernel, s, padding, data_format=fmt, dilations=d, name=name)

    def _convolution(self, inputs: Any, op_name: str, conv: ConvFn) -> Any:
        """tf.nn.convolution as tf_keras calls it, in a scope named `op_name`: the op
        alone at a dilation rate of 1s, else inside TF's with_space_to_batch (the op with
        VALID padding and no dilation on the space-to-batch view)."""
        with _ops.name_scope(None, op_name, [inputs, self.kernel]) as scope:
            if all(d == 1 for d in self.dilation_rate):
                return conv(inputs, self.kernel, self.padding, scope)

            def build_op(_: int, padding: str) -> Any:
                return lambda x, kernel: conv(x, kernel, padding, scope)

            fmt = "NHWC" if self.channels_last else "NCHW"  # only "NC" or not matters
            run = space_to_batch_op(
                inputs.shape,
                list(self.dilation_rate),
                self.padding,
                build_op,
                filter_shape=self.kernel.shape,
                data_format=fmt,
            )
            return run(inputs, self.kernel)

    def _biased(self, outputs: Any) -> Any:
        if self.use_bias:
            fmt = "NHWC" if self.channels_last else "NCHW"
            outputs = nn_ops.bias_add(outputs, self.bias, data_format=fmt)
        return outputs

    def _finish(self, outputs: Any) -> Any:
        return self._activate(self._biased(outputs))

    def call(self, inputs: Any) -> Any:
        def conv(x: Any, kernel: Any, padding: str, name: str) -> Any:
            return self._conv2d(x, kernel, self.strides, (1, 1), name, padding)

        return self._finish(self._convolution(convert_to_tensor(inputs), "Conv2D", conv))


class Conv2D(_Conv):
    rank = 2


class Conv3D(_Conv):
    """A 3-D convolution (Conv3D): kernel [kd, kh, kw, in, filters]. channels_first builds
    TF's NCDHW graph, which TF's CPU kernel (and ours) refuses at run time."""

    rank = 3

    def _nn_args(self, strides: tuple, dilations: tuple) -> tuple[str, list[int], list[int]]:
        if self.channels_last:
            return "NDHWC", [1, *strides, 1], [1, *dilations, 1]
        return "NCDHW", [1, 1, *strides], [1, 1, *dilations]

    def call(self, inputs: Any) -> Any:
        fmt, strides, dilations = self._nn_args(self.strides, (1, 1, 1))

        def conv(x: Any, kernel: Any, padding: str, name: str) -> Any:
            attrs = {
                "strides": strides,
                "padding": padding,
                "data_format": fmt,
                "dilations": dilations,
            }
            return apply_op("Conv3D", [x, kernel], attrs, name).outputs[0]

        return self._finish(self._convolution(convert_to_tensor(inputs), "Conv3D", conv))


class Conv1D(_Conv):
    """A 1-D convolution as TF builds it (nn_ops.conv1d under the layer's "Conv1D"
    scope): ExpandDims at the negative spatial axis, the Conv2D named after the scope,
    Squeeze."""

    rank = 1

    def call(self, inputs: Any) -> Any:
        spatial = -3 if self.channels_last else -2

        def conv(x: Any, kernel: Any, padding: str, name: str) -> Any:
            x = array_ops.expand_dims(x, spatial)
            k = array_ops.expand_dims(kernel, 0)
            y = self._conv2d(x, k, (1, *self.strides), (1, 1), name, padding)
            return array_ops.squeeze(y, [spatial])

        outputs = self._convolution(convert_to_tensor(inputs), "Conv1D", conv)
        if self.use_bias and not self.channels_last:  # tf_keras: Reshape and add, no BiasAdd
            outputs = outputs + array_ops.reshape(self.bias, (1, self.filters, 1))
            return self._activate(outputs)
        return self._finish(outputs)


class Conv2DTranspose(Conv2D):
    """The gradient of a convolution as a layer (Conv2DBackpropInput); kernel is
    [kh, kw, filters, in_channels]."""

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = (1, 1),
        padding: str = "valid",
        data_format: str = "channels_last",
        **kwargs: Any,
    ) -> None:
        super().__init__(filters, kernel_size, strides, padding, data_format, **kwargs)

    def _kernel_shape(self, in_channels: int) -> list[int]:
        return [*self.kernel_size, self.filters, in_channels]

    def call(self, inputs: Any) -> Any:
        inputs = convert_to_tensor(inputs)
        shape = array_ops.shape(inputs)
        h_axis, w_axis = (1, 2) if self.channels_last else (2, 3)
        batch = shape[0]
        # As tf_keras: the static height and width when known, else the dynamic ones.
        dims = inputs.shape.as_list() if inputs.shape.ndims is not None else [None] * 4
        h = dims[h_axis] if dims[h_axis] is not None else shape[h_axis]
        w = dims[w_axis] if dims[w_axis] is not None else shape[w_axis]
        (kh, kw), (sh, sw) = self.kernel_size, self.strides

        oh, ow = _deconv_length(h, kh, sh, self.padding), _deconv_length(w, kw, sw, self.padding)
        if self.channels_last:
            out_shape = array_ops.stack([batch, oh, ow, self.filters])
            strides = [1, sh, sw, 1]
        else:
            out_shape = array_ops.stack([batch, self.filters, oh, ow])
            strides = [1, 1, sh, sw]
        _ = out_shape[0]  # tf_keras takes the batch size from the packed shape too (unused)
        outputs = apply_op(
            "Conv2DBackpropInput",
            [out_shape, self.kernel, inputs],
            {
                "strides": strides,
                "padding": self.padding,
                "data_format": "NHWC" if self.channels_last else "NCHW",
                "dilations": [1, 1, 1, 1],
            },
            "conv2d_transpose",
        ).outputs[0]
        static = inputs.shape
        if static.ndims == 4:
            dims = static.as_list()
            oh_s = _deconv_length(dims[h_axis], kh, sh, self.padding)
            ow_s = _deconv_length(dims[w_axis], kw, sw, self.padding)
            full = (
                [dims[0], oh_s, ow_s, self.filters]
                if self.channels_last
                else [dims[0], self.filters, oh_s, ow_s]
            )
            outputs.set_shape(full)
        return self._finish(outputs)


def _conv_fn(cls: type) -> Any:
    def fn(
        inputs: Any,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str = "channels_last",
        dilation_rate: Any = 1,
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
        kwargs: dict[str, Any] = {}
        if cls is not Conv2DTranspose:
            kwargs["dilation_rate"] = dilation_rate
        layer = cls(
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
            **kwargs,
        )
        return layer(inputs)

    return fn


conv1d = _conv_fn(Conv1D)
conv2d = _conv_fn(Conv2D)
conv3d = _conv_fn(Conv3D)
conv2d_transpose = _conv_fn(Conv2DTranspose)


class _Pooling(Layer):
    rank = 2
    op_type = "MaxPool"

    def __init__(
        self,
        pool_size: Any,
        strides: Any,
        padding: str = "valid",
        data_format: str = "channels_last",
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, **kwargs)
        self.pool_size = _tuple(pool_size, self.rank)
        self.strides = _tuple(strides if strides is not None else pool_size, self.rank)
        self.padding = _padding(padding)
        self.channels_last = _channels_last(data_format)

    def _pool2d(self, x: Any, pool: tuple, strides: tuple) -> Any:
        fmt = "NHWC" if self.channels_last else "NCHW"
        if self.channels_last:
            k, s = [1, *pool, 1], [1, *strides, 1]
        else:
            k, s = [1, 1, *pool], [1, 1, *strides]
        return apply_op(
            self.op_type,
            [x],
            {"ksize": k, "strides": s, "padding": self.padding, "data_format": fmt},
            self.op_type,
        ).outputs[0]

    def _pool3d(self, x: Any) -> Any:
        """tf_keras's Pooling3D: NDHWC pooling; channels_first inputs are transposed to
        channels_last and back (TF's CPU 3-D pooling kernels take NDHWC only)."""
        if not self.channels_last:
            x = array_ops.transpose(x, (0, 2, 3, 4, 1))
        op_type = self.op_type + "3D"
        attrs = {
            "ksize": [1, *self.pool_size, 1],
            "strides": [1, *self.strides, 1],
            "padding": self.padding,
            "data_format": "NDHWC",
        }
        y = apply_op(op_type, [x], attrs, op_type).outputs[0]
        if not self.channels_last:
            y = array_ops.transpose(y, (0, 4, 1, 2, 3))
        return y

    def call(self, inputs: Any) -> Any:
        inputs = convert_to_tensor(inputs)
        if self.rank == 3:
            return self._pool3d(inputs)
        if self.rank == 2:
            return self._pool2d(inputs, self.pool_size, self.strides)
        axis = 2 if self.channels_last else 3
        x = array_ops.expand_dims(inputs, axis)
        y = (
            self._pool2d(x, (*self.pool_size, 1), (*self.strides, 1))
            if self.channels_last
            else self._pool2d(x, (*self.pool_size, 1), (*self.strides, 1))
        )
        return array_ops.squeeze(y, [axis])


class MaxPooling2D(_Pooling):
    pass


class AveragePooling2D(_Pooling):
    op_type = "AvgPool"


class MaxPooling3D(_Pooling):
    rank = 3


class AveragePooling3D(_Pooling):
    rank = 3
    op_type = "AvgPool"


class MaxPooling1D(_Pooling):
    rank = 1


class AveragePooling1D(_Pooling):
    rank = 1
    op_type = "AvgPool"


def _pool_fn(cls: type) -> Any:
    def fn(
        inputs: Any,
        pool_size: Any,
        strides: Any,
        padding: str = "valid",
        data_format: str = "channels_last",
        name: str | None = None,
    ) -> Any:
        return cls(pool_size, strides, padding=padding, data_format=data_format, name=name)(inputs)

    return fn


max_pooling1d = _pool_fn(MaxPooling1D)
max_pooling2d = _pool_fn(MaxPooling2D)
average_pooling1d = _pool_fn(AveragePooling1D)
average_pooling2d = _pool_fn(AveragePooling2D)
max_pooling3d = _pool_fn(MaxPooling3D)
average_pooling3d = _pool_fn(AveragePooling3D)
