"""Client, graph building: tf.nn's convolution and pooling variants and their kin, built as
tf.compat.v1 builds them (same node names, ops, inputs and attrs): depthwise and separable
convolutions, atrous convolution, conv3d_transpose, space_to_depth / depth_to_space,
max_pool_with_argmax, fractional max/avg pooling, dilation2d, local response
normalization, and image/volume patch extraction."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.ops import (
    nn_ops,
    nn_variant_shapes,  # noqa: F401  (registers the shape functions)
)
from client.ops.nn_space_to_batch import space_to_batch_op, with_space_to_batch


def _out(op: Any, i: int = 0) -> Any:
    return op.outputs[i]


# -- local response normalization, dilation, patches --------------------------------------


def local_response_normalization(
    input: Any,
    depth_radius: int = 5,
    bias: float = 1.0,
    alpha: float = 1.0,
    beta: float = 0.5,
    name: str | None = None,
) -> Any:
    attrs = {"depth_radius": depth_radius, "bias": bias, "alpha": alpha, "beta": beta}
    return _out(apply_op("LRN", [input], attrs, name))


lrn = local_response_normalization


def dilation2d(
    input: Any,
    filter: Any = None,
    strides: Any = None,
    rates: Any = None,
    padding: Any = None,
    name: str | None = None,
    filters: Any = None,
    dilations: Any = None,
) -> Any:
    """tf.compat.v1.nn.dilation2d: one Dilation2D node."""
    filter = filters if filter is None else filter
    rates = dilations if rates is None else rates
    attrs = {"strides": list(strides), "rates": list(rates), "padding": padding}
    return _out(apply_op("Dilation2D", [input, filter], attrs, name))


def extract_image_patches(
    images: Any,
    ksizes: Any = None,
    strides: Any = None,
    rates: Any = None,
    padding: Any = None,
    name: str | None = None,
    sizes: Any = None,
) -> Any:
    """tf.compat.v1.image.extract_image_patches (and tf.compat.v1.extract_image_patches)."""
    ksizes = sizes if ksizes is None else ksizes
    attrs = {
        "ksizes": list(ksizes),
        "strides": list(strides),
        "rates": list(rates),
        "padding": padding,
    }
    return _out(apply_op("ExtractImagePatches", [images], attrs, name))


def extract_patches(
    images: Any, sizes: Any, strides: Any, rates: Any, padding: Any, name: str | None = None
) -> Any:
    """tf.image.extract_patches."""
    return extract_image_patches(images, sizes, strides, rates, padding, name)


def extract_volume_patches(
    input: Any, ksizes: Any, strides: Any, padding: Any, name: str | None = None
) -> Any:
    attrs = {"ksizes": list(ksizes), "strides": list(strides), "padding": padding}
    return _out(apply_op("ExtractVolumePatches", [input], attrs, name))


# -- pooling ------------------------------------------------------------------------------


def _fractional(op_type: str) -> Any:
    def fn(
        value: Any,
        pooling_ratio: Any,
        pseudo_random: bool = False,
        overlapping: bool = False,
        deterministic: bool = False,
        seed: int = 0,
        seed2: int = 0,
        name: str | None = None,
    ) -> tuple[Any, Any, Any]:
        attrs = {
            "pooling_ratio": [float(r) for r in pooling_ratio],
            "pseudo_random": pseudo_random,
            "overlapping": overlapping,
            "deterministic": deterministic,
            "seed": seed,
            "seed2": seed2,
        }
        op = apply_op(op_type, [value], attrs, name)
        return op.outputs[0], op.outputs[1], op.outputs[2]

    return fn


fractional_max_pool = _fractional("FractionalMaxPool")
fractional_max_pool.__name__ = fractional_max_pool.__qualname__ = "fractional_max_pool"
fractional_avg_pool = _fractional("FractionalAvgPool")
fractional_avg_pool.__name__ = fractional_avg_pool.__qualname__ = "fractional_avg_pool"


def max_pool_with_argmax(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    Targmax: Any = None,  # noqa: N803 (TF's argument name)
    name: str | None = None,
    output_dtype: Any = None,
    include_batch_in_index: bool = False,
) -> tuple[Any, Any]:
    """tf.compat.v1.nn.max_pool_with_argmax: (output, argmax), NHWC only."""
    if data_format != "NHWC":
        raise ValueError(
            "`data_format` values other  than 'NHWC' are not supported. "
            f"Received: data_format={data_format}"
        )
    targmax = output_dtype if Targmax is None else Targmax
    attrs = {
        "ksize": list(ksize),
        "strides": list(strides),
        "padding": padding,
        "Targmax": dtypes.as_dtype(targmax) if targmax is not None else dtypes.int64,
        "include_batch_in_index": include_batch_in_index,
    }
    op = apply_op("MaxPoolWithArgmax", [input], attrs, name)
    return op.outputs[0], op.outputs[1]


# -- convolution variants -----------------------------------------------------------------


def depthwise_conv2d_native(
    input: Any,
    filter: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NHWC",
    dilations: Any = (1, 1, 1, 1),
    name: str | None = None,
) -> Any:
    explicit: list[int] = []
    if isinstance(padding, (list, tuple)):  # TF's convert_padding
        explicit = [int(p) for pair in padding for p in pair]
        padding = "EXPLICIT"
    attrs = {
        "strides": list(strides),
        "padding": padding,
        "explicit_paddings": explicit,
        "data_format": data_format,
        "dilations": list(dilations),
    }
    return _out(apply_op("DepthwiseConv2dNative", [input, filter], attrs, name))


def _rate(rate: Any) -> list[int]:
    rate = [1, 1] if rate is None else [int(r) for r in rate]
    if any(r < 1 for r in rate):
        raise ValueError(f"`dilation_rate` must be positive. Received: dilation_rate={rate}")
    return rate


def depthwise_conv2d(
    input: Any,
    filter: Any,
    strides: Any,
    padding: Any,
    rate: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    dilations: Any = None,
) -> Any:
    """tf.compat.v1.nn.depthwise_conv2d: DepthwiseConv2dNative in a "depthwise" scope
    (inputs converted as "tensor_in" and "filter_in") named by the scope, inside TF's
    with_space_to_batch for a rate above 1 (NHWC)."""
    from client.ops import array_ops

    rate = _rate(dilations if dilations is not None else rate)
    with _ops.name_scope(name, "depthwise", [input, filter]) as scope:
        input = convert_to_tensor(input, name="tensor_in")
        filter = convert_to_tensor(filter, name="filter_in")
        fmt = data_format or "NHWC"

        def op(x: Any, _: int, pad: str) -> Any:
            return depthwise_conv2d_native(x, filter, strides, pad, data_format=fmt, name=scope)

        # As TF: the rate's spatial dims are NHWC's whatever the data format.
        return with_space_to_batch(input, rate, padding, op, array_ops.shape(filter))


def separable_conv2d(
    input: Any,
    depthwise_filter: Any,
    pointwise_filter: Any,
    strides: Any,
    padding: Any,
    rate: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    dilations: Any = None,
) -> Any:
    """tf.compat.v1.nn.separable_conv2d: DepthwiseConv2dNative "depthwise" (inside TF's
    with_space_to_batch for a rate above 1), then a 1x1 Conv2D named by the
    "separable_conv2d" scope."""
    from client.ops import array_ops

    rate = _rate(dilations if dilations is not None else rate)
    with _ops.name_scope(
        name, "separable_conv2d", [input, depthwise_filter, pointwise_filter]
    ) as scope:
        input = convert_to_tensor(input, name="tensor_in")
        depthwise_filter = convert_to_tensor(depthwise_filter, name="depthwise_filter")
        pointwise_filter = convert_to_tensor(pointwise_filter, name="pointwise_filter")
        shape = pointwise_filter.shape.with_rank(4)
        for d in shape.as_list()[:2]:
            if d is not None and d != 1:
                raise ValueError(f"Dimensions {d} and 1 are not compatible")
        fmt = data_format or "NHWC"

        def op(x: Any, _: int, pad: str) -> Any:
            return depthwise_conv2d_native(
                x, depthwise_filter, strides, pad, data_format=fmt, name="depthwise"
            )

        depthwise = with_space_to_batch(input, rate, padding, op, array_ops.shape(depthwise_filter))
        return nn_ops.conv2d(
            depthwise, pointwise_filter, [1, 1, 1, 1], padding="VALID", data_format=fmt, name=scope
        )


def atrous_conv2d(
    value: Any, filters: Any, rate: int, padding: str, name: str | None = None
) -> Any:
    """tf.nn.atrous_conv2d: TF's v1 convolution() in a "convolution" scope: a Conv2D named
    by the scope, inside with_space_to_batch for a rate above 1."""
    with _ops.name_scope(name, "convolution", [filters, value]) as scope:
        value = convert_to_tensor(value, name="input")
        filters = convert_to_tensor(filters, name="filter")
        rates = _rate([rate, rate])

        def build_op(_: int, pad: str) -> Any:
            return lambda x, f: nn_ops.conv2d(x, f, [1, 1, 1, 1], pad, name=scope)

        if rate == 1:
            return build_op(2, padding)(value, filters)
        # TF's Convolution: the filter's static shape as a Const (it must be known).
        conv = space_to_batch_op(value.shape, rates, padding, build_op, filters.shape)
        return conv(value, filters)


def conv3d_transpose(
    value: Any,
    filter: Any = None,
    output_shape: Any = None,
    strides: Any = None,
    padding: str = "SAME",
    data_format: str = "NDHWC",
    name: str | None = None,
    input: Any = None,
    filters: Any = None,
    dilations: Any = None,
) -> Any:
    """tf.compat.v1.nn.conv3d_transpose: Conv3DBackpropInputV2 named by its scope."""
    filter = filters if filter is None else filter
    value = input if value is None else value
    with _ops.name_scope(name, "conv3d_transpose", [value, filter, output_shape]) as scope:
        data_format = data_format or "NDHWC"
        channel_index = 1 if data_format.startswith("NC") else 4
        attrs = {
            "strides": nn_ops.get_sequence(strides, 3, channel_index, "strides"),
            "padding": padding,
            "data_format": data_format,
            "dilations": nn_ops.get_sequence(dilations, 3, channel_index, "dilations"),
        }
        return _out(apply_op("Conv3DBackpropInputV2", [output_shape, filter, value], attrs, scope))


def space_to_depth(
    input: Any, block_size: int, name: str | None = None, data_format: str = "NHWC"
) -> Any:
    attrs = {"block_size": block_size, "data_format": data_format}
    return _out(apply_op("SpaceToDepth", [input], attrs, name))


def depth_to_space(
    input: Any, block_size: int, name: str | None = None, data_format: str = "NHWC"
) -> Any:
    attrs = {"block_size": block_size, "data_format": data_format}
    return _out(apply_op("DepthToSpace", [input], attrs, name))


def atrous_conv2d_transpose(
    value: Any, filters: Any, output_shape: Any, rate: int, padding: str, name: str | None = None
) -> Any:
    """tf.nn.atrous_conv2d_transpose: conv2d_transpose at rate 1; above, TF's
    space_to_batch, a VALID Conv2DBackpropInput and batch_to_space. A rate above 1 needs
    a list output_shape and a fully defined filter shape here."""
    from client.ops import array_ops, nn_impl

    with _ops.name_scope(name, "atrous_conv2d_transpose", [value, filters, output_shape]):
        value = convert_to_tensor(value, name="value")
        filters = convert_to_tensor(filters, name="filters")
        v_c, f_c = value.shape.as_list()[3], filters.shape.as_list()[3]
        if v_c is not None and f_c is not None and v_c != f_c:
            raise ValueError(
                "`value` channel count must be compatible with `filters` input channel "
                f"count. Received: value.shape={value.shape} with channel count {v_c} and "
                f"filters.shape={filters.shape} with input channel count {f_c}."
            )
        if rate < 1:
            raise ValueError(f"`rate` cannot be less than one. Received: rate={rate}")
        if rate == 1:
            return nn_impl.conv2d_transpose(
                value,
                filters,
                output_shape,
                strides=[1, 1, 1, 1],
                padding=padding,
                data_format="NHWC",
            )
        convert_to_tensor(output_shape, name="output_shape")
        if isinstance(output_shape, _ops.Tensor) or not filters.shape.is_fully_defined():
            raise NotImplementedError(
                "atrous_conv2d_transpose above rate 1 needs a list output_shape and a known "
                "filter shape"
            )
        output_shape = [int(d) for d in output_shape]
        if padding == "SAME":
            fh, fw = filters.shape.as_list()[:2]
            ph, pw = (fh - 1) * rate, (fw - 1) * rate  # the upsampled filter's size - 1
            top, left = ph // 2, pw // 2
            bottom, right = ph - top, pw - left
        elif padding == "VALID":
            top = bottom = left = right = 0
        else:
            raise ValueError(
                f"`padding` must be either 'VALID' or 'SAME'. Received: padding={padding}"
            )
        in_h = output_shape[1] + top + bottom
        in_w = output_shape[2] + left + right
        extra_b, extra_r = (rate - in_h % rate) % rate, (rate - in_w % rate) % rate
        value = array_ops.space_to_batch(value, [[0, extra_b], [0, extra_r]], block_size=rate)
        sizes = [
            rate * rate * output_shape[0],
            (in_h + extra_b) // rate,
            (in_w + extra_r) // rate,
            output_shape[3],
        ]
        attrs = {
            "strides": [1, 1, 1, 1],
            "padding": "VALID",
            "data_format": "NHWC",
            "dilations": [1, 1, 1, 1],
            "use_cudnn_on_gpu": True,
            "explicit_paddings": [],
        }
        value = _out(apply_op("Conv2DBackpropInput", [sizes, filters, value], attrs))
        crops = [[top, bottom + extra_b], [left, right + extra_r]]
        return array_ops.batch_to_space(value, crops, block_size=rate)
