"""Client, graph building: tf.compat.v1.nn.convolution and tf.nn.pool (and their v2 forms),
built as TensorFlow's nn_ops builds them (same node names, ops, inputs and attrs).

convolution is TF's convolution_internal: with no dilation one conv1d / Conv2D / Conv3D
named by the "convolution" scope; with a dilation rate above 1 TF's Convolution, the
non-atrous convolution on a space-to-batch view of the input (nn_space_to_batch). pool is
MaxPool / AvgPool (ExpandDims/Squeeze around a 2-D one for 1-D windows, MaxPool3D /
AvgPool3D for 3-D) inside with_space_to_batch for dilated windows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.framework.tensor_shape import TensorShape, as_shape
from client.ops import array_ops, nn_impl, nn_ops
from client.ops.nn_space_to_batch import space_to_batch_op, with_space_to_batch
from client.ops.probe_gaps_data import conv1d

_CHANNELS_LAST = frozenset({"NWC", "NHC", "NHWC", "NWHC", "NDHWC", "NDWHC", "NHDWC", "NHWDC"})


def strides_and_dilation_rate(
    num_spatial_dims: int, strides: Any, dilation_rate: Any
) -> tuple[np.ndarray, np.ndarray]:
    """TF's _get_strides_and_dilation_rate: both as int32 arrays of num_spatial_dims, all
    positive, and not a stride above 1 together with a rate above 1."""
    if dilation_rate is None:
        dilation_rate = [1] * num_spatial_dims
    elif len(dilation_rate) != num_spatial_dims:
        raise ValueError(
            f"`len(dilation_rate)` should be {num_spatial_dims}. Received: "
            f"dilation_rate={dilation_rate} of length {len(dilation_rate)}"
        )
    rate = np.array(dilation_rate, dtype=np.int32)
    if np.any(rate < 1):
        raise ValueError(
            f"all values of `dilation_rate` must be positive. Received: dilation_rate={rate}"
        )
    if strides is None:
        strides = [1] * num_spatial_dims
    elif len(strides) != num_spatial_dims:
        raise ValueError(
            f"`len(strides)` should be {num_spatial_dims}. Received: strides={strides} of "
            f"length {len(strides)}"
        )
    stride = np.array(strides, dtype=np.int32)
    if np.any(stride < 1):
        raise ValueError(f"all values of `strides` must be positive. Received: strides={stride}")
    if np.any(stride > 1) and np.any(rate > 1):
        raise ValueError(
            "`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
            f"Received: strides={stride} and dilation_rate={rate}"
        )
    return stride, rate


def _conv_nd(
    input: Any,
    filters: Any,
    strides: list[int],
    padding: Any,
    data_format: str | None,
    dilations: list[int] | None,
    name: str,
) -> Any:
    """The undilated convolution: conv1d, or one Conv2D / Conv3D named `name`, by the
    filter's spatial rank (TF's _conv2d_expanded_batch / _conv3d_expanded_batch for
    inputs of one batch dimension)."""
    n = len(strides) - 2
    rank = input.shape.ndims
    if rank is not None and rank > n + 2:
        # TF reshapes extra batch dims away (squeeze_batch_dims): not built here.
        raise NotImplementedError("convolution over more than one batch dimension")
    dilations = dilations or [1] * (n + 2)
    if n == 1:
        return conv1d(
            input, filters, strides, padding, data_format=data_format, name=name,
            dilations=dilations,
        )  # fmt: skip
    if n == 2:
        return nn_ops.conv2d(
            input, filters, strides, padding, data_format=data_format or "NHWC",
            dilations=dilations, name=name,
        )  # fmt: skip
    return nn_impl.conv3d(
        input, filters, strides, padding, data_format=data_format or "NDHWC",
        dilations=dilations, name=name,
    )  # fmt: skip


def _num_spatial_dims(input: Any, filters: Any) -> int:
    filters_rank, inputs_rank = filters.shape.ndims, input.shape.ndims
    if filters_rank:
        return int(filters_rank) - 2
    if inputs_rank:
        return int(inputs_rank) - 2
    raise ValueError(
        "When `num_spatial_dims` is not set, one of `input.shape.rank` or "
        "`filters.shape.rank` must be known. "
        f"Received: input.shape={input.shape} of rank {inputs_rank} and "
        f"filters.shape={filters.shape} of rank {filters_rank}"
    )


def convolution_internal(
    input: Any,
    filters: Any,
    strides: Any = None,
    padding: Any = "VALID",
    data_format: str | None = None,
    dilations: Any = None,
    name: str | None = None,
) -> Any:
    """TF's nn_ops.convolution_internal (outside a TPU context)."""
    if not isinstance(filters, _ops.Tensor) and not hasattr(filters, "_as_graph_element"):
        with _ops.name_scope("convolution_internal", None, [filters, input]):
            filters = convert_to_tensor(filters, name="filters")
    if not isinstance(input, _ops.Tensor):
        with _ops.name_scope("convolution_internal", None, [filters, input]):
            input = convert_to_tensor(input, name="input")
    n = _num_spatial_dims(input, filters)
    inputs_rank = input.shape.ndims
    num_batch_dims = inputs_rank - n - 1 if inputs_rank else 1
    if n not in (1, 2, 3):
        raise ValueError(f"`num_spatial_dims` must be 1, 2, or 3. Received: num_spatial_dims={n}.")
    channels_last = data_format is None or data_format in _CHANNELS_LAST
    channel_index = num_batch_dims + n if channels_last else num_batch_dims
    is_dilated = dilations is not None
    dilations = nn_ops.get_sequence(dilations, n, channel_index, "dilations")
    is_dilated = is_dilated and any(d != 1 for d in dilations)
    strides = nn_ops.get_sequence(strides, n, channel_index, "strides")
    with _ops.name_scope(name, None if name else "convolution", [input, filters]) as scope:
        if not is_dilated:
            return _conv_nd(input, filters, strides, padding, data_format, dilations, scope)
        inner = slice(2, None) if channel_index == 1 else slice(1, -1)
        conv = Convolution(
            input.shape,
            filters.shape,
            padding,
            strides=strides[inner],
            dilation_rate=dilations[inner],
            name=scope,
            data_format=data_format,
            num_spatial_dims=n,
        )
        return conv(input, filters)


class Convolution:
    """TF's nn_ops.Convolution: fn(input, filter) for a dilated convolution, the
    non-atrous one on SpaceToBatchND of the input by the rate, then BatchToSpaceND."""

    def __init__(
        self,
        input_shape: Any,
        filter_shape: Any,
        padding: str,
        strides: Any = None,
        dilation_rate: Any = None,
        name: str | None = None,
        data_format: str | None = None,
        num_spatial_dims: int | None = None,
    ) -> None:
        filter_shape, input_shape = as_shape(filter_shape), as_shape(input_shape)
        n = num_spatial_dims
        if filter_shape.ndims is not None:
            if n is not None and filter_shape.ndims != n + 2:
                raise ValueError(
                    "`filters.shape.rank` must be `num_spatial_dims + 2`. Received: "
                    f"filters.shape={filter_shape} of rank {filter_shape.ndims} and "
                    f"num_spatial_dims={n}"
                )
            n = filter_shape.ndims - 2
        if n is None:
            if input_shape.ndims is None:
                raise ValueError(
                    "When `num_spatial_dims` is not set, one of `input.shape.rank` or "
                    "`filters.shape.rank` must be known. "
                    f"Received: input.shape={input_shape} of rank {input_shape.ndims} and "
                    f"`filters.shape={filter_shape}` of rank {filter_shape.ndims}"
                )
            n = input_shape.ndims - 2
        elif input_shape.ndims is not None and input_shape.ndims < n + 2:
            raise ValueError(
                "`input.shape.rank` must be >= than `num_spatial_dims + 2`. "
                f"Received: input.shape={input_shape} of rank {input_shape.ndims} "
                f"and num_spatial_dims={n}"
            )
        num_batch_dims = 1 if input_shape.ndims is None else input_shape.ndims - n - 1
        first = num_batch_dims + (
            0 if data_format is None or not data_format.startswith("NC") else 1
        )
        channel_at = num_batch_dims + n if first == num_batch_dims else num_batch_dims
        in_channels = _dim(input_shape, channel_at)
        out_filters = _dim(filter_shape, n)
        if in_channels is not None and out_filters and in_channels % out_filters:
            raise ValueError(
                "The number of input channels is not divisible by the corresponding "
                f"number of output filters. Received: input.shape={input_shape} with "
                f"{in_channels} channels and filters.shape={filter_shape} "
                f"with {out_filters} output filters."
            )
        stride, rate = strides_and_dilation_rate(n, strides, dilation_rate)
        self.input_shape, self.filter_shape = input_shape, filter_shape
        self.data_format, self.strides, self.padding, self.name = data_format, stride, padding, name
        self.dilation_rate, self.num_spatial_dims = rate, n
        self.conv_op = space_to_batch_op(
            input_shape,
            rate,
            padding,
            self._build_op,
            filter_shape=filter_shape,
            spatial_dims=range(first, first + n),
            data_format=data_format,
            num_batch_dims=num_batch_dims,
        )

    def _build_op(self, n: int, padding: str) -> Callable[[Any, Any], Any]:
        """TF's _NonAtrousConvolution with the data format's own stride layout."""
        fmt = self.data_format
        s = [int(x) for x in self.strides]
        if n == 2 and fmt not in (None, "NHWC", "NCHW"):
            raise ValueError(f"`data_format` must be 'NHWC' or 'NCHW'. Received: data_format={fmt}")
        if n == 3 and fmt not in (None, "NDHWC", "NCDHW"):
            raise ValueError(
                f"`data_format` must be 'NDHWC' or 'NCDHW'. Received: data_format={fmt}"
            )
        if n == 1:
            if fmt is not None and fmt not in ("NCW", "NWC", "NCHW", "NHWC"):
                raise ValueError(
                    f"`data_format` must be 'NWC' or 'NCW'. Received: data_format={fmt}"
                )
            return lambda x, f: conv1d(
                x, f, s[0], padding, data_format=fmt or "NWC", name=self.name
            )
        full = [1, 1, *s] if fmt is not None and fmt.startswith("NC") else [1, *s, 1]
        return lambda x, f: _conv_nd(x, f, full, padding, fmt, None, str(self.name))

    def __call__(self, inp: Any, filter: Any) -> Any:
        return self.conv_op(inp, filter)


def _dim(shape: TensorShape, i: int) -> int | None:
    if shape.ndims is None or i >= shape.ndims:
        return None
    d = shape.as_list()[i]
    return None if d is None else int(d)


def convolution(
    input: Any,
    filter: Any = None,
    padding: Any = None,
    strides: Any = None,
    dilation_rate: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    filters: Any = None,
    dilations: Any = None,
) -> Any:
    """tf.compat.v1.nn.convolution."""
    filter = filters if filter is None else filter
    dilation_rate = dilations if dilation_rate is None else dilation_rate
    return convolution_internal(
        input, filter, strides=strides, padding=padding, data_format=data_format,
        dilations=dilation_rate, name=name,
    )  # fmt: skip


def convolution_v2(
    input: Any,
    filters: Any,
    strides: Any = None,
    padding: Any = "VALID",
    data_format: str | None = None,
    dilations: Any = None,
    name: str | None = None,
) -> Any:
    """tf.nn.convolution (TF2's argument order)."""
    return convolution_internal(input, filters, strides, padding, data_format, dilations, name)


_POOL_3D = {"MAX": nn_impl.max_pool3d, "AVG": nn_impl.avg_pool3d}
_POOL_2D = {"MAX": nn_ops.max_pool, "AVG": nn_ops.avg_pool}


def pool(
    input: Any,
    window_shape: Any,
    pooling_type: str,
    padding: str,
    dilation_rate: Any = None,
    strides: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    dilations: Any = None,
) -> Any:
    """tf.compat.v1.nn.pool: MAX or AVG pooling over 1-3 spatial dims, dilated windows by
    with_space_to_batch (VALID padding only, as TF)."""
    dilation_rate = dilations if dilation_rate is None else dilation_rate
    with _ops.name_scope(name, f"{pooling_type.lower()}_pool", [input]) as scope:
        input = convert_to_tensor(input, name="input")
        n = len(window_shape)
        if n < 1 or n > 3:
            raise ValueError(
                "`len(window_shape)` must be 1, 2, or 3. Received: "
                f"window_shape={window_shape} of length {len(window_shape)}"
            )
        input.shape.with_rank(n + 2)
        stride, rate = strides_and_dilation_rate(n, strides, dilation_rate)
        if padding == "SAME" and np.any(rate > 1):
            raise ValueError(
                "pooling with 'SAME' padding is not implemented for "
                f"`dilation_rate` > 1. Received: padding={padding} and dilation_rate={rate}"
            )
        if np.any(stride > window_shape):
            raise ValueError(
                "`strides` > `window_shape` not supported due to inconsistency "
                f"between CPU and GPU implementations. Received: strides={stride} "
                f"and window_shape={window_shape}"
            )
        if pooling_type not in _POOL_2D:
            raise ValueError(f"{n}-D {pooling_type} pooling is not supported.")
        window, steps = [int(w) for w in window_shape], [int(s) for s in stride]
        if data_format is None or not data_format.startswith("NC"):
            ksize, kstrides, spatial = [1, *window, 1], [1, *steps, 1], range(1, n + 1)
        else:
            ksize, kstrides, spatial = [1, 1, *window], [1, 1, *steps], range(2, n + 2)
        fmt = data_format
        if n == 1:
            if data_format is None or data_format == "NWC":
                fmt = "NHWC"
            elif data_format == "NCW":
                fmt = "NCHW"
            else:
                raise ValueError(
                    "data_format must be either 'NWC' or 'NCW'. "
                    f"Received: data_format={data_format}"
                )
            ksize, kstrides = [1, *ksize], [1, *kstrides]

        def op(converted: Any, _: int, converted_padding: str) -> Any:
            if n == 1:
                converted = array_ops.expand_dims(converted, spatial[0])
            if n == 3:
                result = _POOL_3D[pooling_type](
                    converted, ksize, kstrides, converted_padding,
                    data_format=fmt or "NDHWC", name=scope,
                )  # fmt: skip
            else:
                result = _POOL_2D[pooling_type](
                    converted, ksize, kstrides, converted_padding,
                    data_format=fmt or "NHWC", name=scope,
                )  # fmt: skip
            if n == 1:
                result = array_ops.squeeze(result, [spatial[0]])
            return result

        return with_space_to_batch(
            input, rate, padding, op, filter_shape=window_shape, spatial_dims=spatial
        )


def pool_v2(
    input: Any,
    window_shape: Any,
    pooling_type: str,
    strides: Any = None,
    padding: str = "VALID",
    data_format: str | None = None,
    dilations: Any = None,
    name: str | None = None,
) -> Any:
    """tf.nn.pool (TF2's argument order)."""
    return pool(input, window_shape, pooling_type, padding, dilations, strides, name, data_format)
