"""Client, graph building: TF's with_space_to_batch (nn_ops._WithSpaceToBatch), the way
tf.compat.v1 runs an op with a dilation rate as that op on a space-to-batch view of its
input: SpaceToBatchND by the rate, the op with VALID padding, BatchToSpaceND. The paddings
and crops come from required_space_to_batch_paddings: numpy values folded into Consts when
the input's spatial sizes and the filter's shape are known while building, else ops that
compute them at run time (from Shape), node for node as TF builds them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.framework.shape_fns import constant_value
from client.ops import array_ops

# build_op(num_spatial_dims, padding) -> fn(input, filter) -> output
BuildOp = Callable[[int, str], Callable[[Any, Any], Any]]


def base_paddings(filter_shape: Any, num_spatial_dims: int, rate: Any) -> Any:
    """TF's _with_space_to_batch_base_paddings: the SAME padding of the upsampled filter
    (the odd one more at the end), numpy or tensor as `filter_shape` is."""
    pad_extra = (filter_shape[:num_spatial_dims] - 1) * rate
    start = pad_extra // 2
    end = pad_extra - start
    return array_ops.stack([[start[i], end[i]] for i in range(num_spatial_dims)])


def required_space_to_batch_paddings(
    input_shape: Any, block_shape: Any, base_paddings: Any = None, name: str | None = None
) -> tuple[Any, Any]:
    """tf.required_space_to_batch_paddings: (paddings, crops) that make the padded spatial
    sizes multiples of block_shape. Folded to numpy when every input is constant."""
    with _ops.name_scope(name, "required_space_to_batch_paddings", [input_shape, block_shape]):
        input_shape = convert_to_tensor(input_shape, dtype=dtypes.int32, name="input_shape")
        block_shape = convert_to_tensor(block_shape, dtype=dtypes.int32, name="block_shape")
        n = int(block_shape.shape[0])
        if base_paddings is not None:
            base_paddings = convert_to_tensor(
                base_paddings, dtype=dtypes.int32, name="base_paddings"
            )
        else:
            base_paddings = array_ops.zeros([n, 2], dtypes.int32)
        consts = [constant_value(t) for t in (block_shape, input_shape, base_paddings)]
        if all(c is not None for c in consts):
            block_shape, input_shape, base_paddings = consts
        pad_start = base_paddings[:, 0]
        orig_pad_end = base_paddings[:, 1]
        full_input_shape = input_shape + pad_start + orig_pad_end
        pad_end_extra = (block_shape - full_input_shape % block_shape) % block_shape
        pad_end = orig_pad_end + pad_end_extra
        paddings = array_ops.stack([[pad_start[i], pad_end[i]] for i in range(n)], name="paddings")
        crops = array_ops.stack([[0, pad_end_extra[i]] for i in range(n)], name="crops")
        return paddings, crops


def _adjust(orig: Any, fill_value: int, spatial_dims: list[int]) -> Any:
    """TF's _with_space_to_batch_adjust: `orig`'s rows at spatial_dims - 1, `fill_value`
    rows in the gaps (the channel dimension of NC* formats)."""
    const: np.ndarray | None
    if isinstance(orig, np.ndarray):
        const, fill_dims = orig, list(orig.shape[1:])
    else:
        const, fill_dims = constant_value(orig), orig.shape.as_list()[1:]
    source = const if const is not None else orig
    parts: list[Any] = []
    prev, i = 0, 0
    while i < len(spatial_dims):
        start_i, start_dim = i, spatial_dims[i]
        if start_dim > 1:
            parts.append(np.full([start_dim - 1 - prev, *fill_dims], fill_value, dtype=np.int32))
        while i + 1 < len(spatial_dims) and spatial_dims[i + 1] == spatial_dims[i] + 1:
            i += 1
        parts.append(source[start_i : i + 1])
        prev = spatial_dims[i]
        i += 1
    if const is not None:
        return np.concatenate(parts)
    return array_ops.concat(parts, 0)


def space_to_batch_op(
    input_shape: Any,
    dilation_rate: Any,
    padding: str,
    build_op: BuildOp,
    filter_shape: Any = None,
    spatial_dims: Any = None,
    data_format: str | None = None,
    num_batch_dims: int = 1,
) -> Callable[[Any, Any], Any]:
    """TF's _WithSpaceToBatch: returns fn(input, filter). A rate of all 1s is the op
    itself; the SAME padding's base is folded now when the filter's shape is known."""
    dilation_rate = convert_to_tensor(dilation_rate, dtype=dtypes.int32, name="dilation_rate")
    if dilation_rate.shape.ndims not in (None, 1):
        raise ValueError(
            "`dilation_rate.shape.rank` must be 1. Received: "
            f"dilation_rate={dilation_rate} of rank {dilation_rate.shape.ndims}"
        )
    n = int(dilation_rate.shape[0])
    first = num_batch_dims + (1 if data_format is not None and data_format.startswith("NC") else 0)
    spatial = list(range(first, first + n)) if spatial_dims is None else list(spatial_dims)
    if spatial != sorted(set(int(x) for x in spatial)) or any(x < 1 for x in spatial):
        raise ValueError(
            "`spatial_dims` must be a monotonically increasing sequence of "
            f"positive integers. Received: spatial_dims={spatial}"
        )
    rate: Any = dilation_rate
    const_rate = constant_value(dilation_rate)
    if const_rate is not None:
        rate = const_rate
        if np.any(const_rate < 1):
            raise ValueError(f"`dilation_rate` must be positive. Received: dilation_rate={rate}")
        if np.all(const_rate == 1):
            return build_op(n, padding)
    base: Any
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError(
                "`filter_shape` must be specified for `padding='SAME'`. "
                f"Received: filter_shape={filter_shape} and padding={padding}"
            )
        const_filter = constant_value(convert_to_tensor(filter_shape, name="filter_shape"))
        base = None if const_filter is None else base_paddings(const_filter, n, rate)
    elif padding == "VALID":
        base = np.zeros([n, 2], np.int32)
    else:
        raise ValueError(f"`padding` must be one of 'SAME' or 'VALID'. Received: padding={padding}")
    op = build_op(n, "VALID")

    def call(inp: Any, filter: Any) -> Any:
        dims = input_shape.as_list() if input_shape.ndims is not None else None
        in_spatial: Any = None if dims is None else [dims[i] for i in spatial]
        if in_spatial is None or None in in_spatial:
            shape = array_ops.shape(inp)
            in_spatial = array_ops.stack([shape[i] for i in spatial])
        paddings_base = base
        if paddings_base is None:  # the filter's shape is known only at run time
            if filter is None:  # tf.nn.with_space_to_batch has none: TF's convert error
                raise ValueError("None values not supported.")
            paddings_base = base_paddings(array_ops.shape(filter), n, rate)
        paddings, crops = required_space_to_batch_paddings(
            in_spatial, dilation_rate, base_paddings=paddings_base
        )
        block = _adjust(dilation_rate, 1, spatial)
        paddings, crops = _adjust(paddings, 0, spatial), _adjust(crops, 0, spatial)
        converted = array_ops.space_to_batch_nd(inp, block, paddings)
        result = array_ops.batch_to_space_nd(op(converted, filter), block, crops)
        if data_format is not None and data_format.startswith("NC"):
            out = result.shape.as_list() if result.shape.ndims is not None else None
            if out is not None and not out[1] and filter is not None:
                out[1] = filter.shape[-1]
                result.set_shape(out)
        return result

    return call


def with_space_to_batch(
    input: Any,
    dilation_rate: Any,
    padding: str,
    op: Callable[[Any, int, str], Any],
    filter_shape: Any = None,
    spatial_dims: Any = None,
    data_format: str | None = None,
) -> Any:
    """tf.nn.with_space_to_batch: op(converted_input, num_spatial_dims, padding)."""
    input = convert_to_tensor(input, name="input")

    def build_op(num_spatial_dims: int, pad: str) -> Callable[[Any, Any], Any]:
        return lambda inp, _: op(inp, num_spatial_dims, pad)

    fn = space_to_batch_op(
        input.shape,
        dilation_rate,
        padding,
        build_op,
        filter_shape=filter_shape,
        spatial_dims=spatial_dims,
        data_format=data_format,
    )
    return fn(input, None)
