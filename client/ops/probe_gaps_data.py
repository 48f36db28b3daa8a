"""Client API: tf.nn.conv1d, tf.image.rot90 / transpose_image and tf.reduce_join, built
as TensorFlow's nn_ops.py, image_ops_impl.py and string_ops.py build them (node names
included). Not thread-safe (graph building)."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.ops import array_ops, math_ops
from client.ops.control_flow_case import case
from client.ops.nn_ops import get_sequence


def conv1d(
    value: Any = None,
    filters: Any = None,
    stride: Any = None,
    padding: Any = None,
    use_cudnn_on_gpu: Any = None,
    data_format: Any = None,
    name: str | None = None,
    input: Any = None,  # noqa: A002  (TF1's alias of value)
    dilations: Any = None,
) -> Any:
    """tf.nn.conv1d: a Conv2D over a height-1 image (ExpandDims, Conv2D, Squeeze)."""
    value = input if value is None else value
    with _ops.name_scope(name, "conv1d", [value, filters]) as scope:
        if data_format in (None, "NHWC", "NWC"):
            data_format, spatial_start_dim, channel_index = "NHWC", -3, 2
        elif data_format in ("NCHW", "NCW"):
            data_format, spatial_start_dim, channel_index = "NCHW", -2, 1
        else:
            raise ValueError(
                f"`data_format` must be 'NWC' or 'NCW'. Received: data_format={data_format}"
            )
        strides = [1] + get_sequence(stride, 1, channel_index, "stride")
        dilation = [1] + get_sequence(dilations, 1, channel_index, "dilations")
        value = array_ops.expand_dims(value, spatial_start_dim)
        filters = array_ops.expand_dims(filters, 0)
        if value.shape.ndims not in (4, None):
            # TF reshapes extra batch dims away (squeeze_batch_dims): not built here.
            raise NotImplementedError("conv1d over more than one batch dimension")
        attrs = {
            "strides": strides,
            "padding": padding,
            "data_format": data_format,
            "dilations": dilation,
            "use_cudnn_on_gpu": True if use_cudnn_on_gpu is None else use_cudnn_on_gpu,
        }
        result = apply_op("Conv2D", [value, filters], attrs, scope).outputs[0]
        return array_ops.squeeze(result, [spatial_start_dim])


def _at_least_3d(image: Any) -> Any:
    """TF's _AssertAtLeast3DImage for a statically known rank: an Identity named
    control_dependency (the rank check happens here, at graph building)."""
    rank = image.shape.ndims
    if rank is None or rank < 3:
        raise ValueError(f"'image' (shape {image.shape}) must be at least three-dimensional.")
    if any(d == 0 for d in image.shape.as_list()[-3:]):
        raise ValueError(f"inner 3 dims of 'image.shape' must be > 0: {image.shape}")
    if not image.shape[-3:].is_fully_defined():
        # TF adds run-time assert_positive / assert_greater_equal checks here.
        raise NotImplementedError("image ops need the inner 3 dims known statically")
    with _ops.name_scope(None, "control_dependency", [image]) as scope:
        return apply_op("Identity", [image], {}, scope).outputs[0]


def _rank_3_or_4(image: Any) -> int:
    rank = image.shape.ndims
    if rank not in (3, 4):
        raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")
    return int(rank)


def rot90(image: Any, k: Any = 1, name: str | None = None) -> Any:
    """tf.image.rot90: a case over k mod 4 (reverse and transpose branches)."""
    with _ops.name_scope(name, "rot90", [image, k]) as scope:
        image = _at_least_3d(convert_to_tensor(image, name="image"))
        k = convert_to_tensor(k, dtype=dtypes.int32, name="k")
        k.shape.assert_has_rank(0)
        k = math_ops.floormod(k, 4, name="mod")
        rank = _rank_3_or_4(image)
        h, w = (0, 1) if rank == 3 else (1, 2)
        perm = [1, 0, 2] if rank == 3 else [0, 2, 1, 3]

        def _rot90() -> Any:
            return array_ops.transpose(array_ops.reverse_v2(image, [w]), perm)

        def _rot180() -> Any:
            return array_ops.reverse_v2(image, [h, w])

        def _rot270() -> Any:
            return array_ops.reverse_v2(array_ops.transpose(image, perm), [w])

        cases = [
            (math_ops.equal(k, 1), _rot90),
            (math_ops.equal(k, 2), _rot180),
            (math_ops.equal(k, 3), _rot270),
        ]
        result = case(cases, default=lambda: image, exclusive=True, name=scope)
        dims = image.shape.as_list()
        result.set_shape([None, None, dims[2]] if rank == 3 else [dims[0], None, None, dims[3]])
        return result


def transpose_image(image: Any, name: str | None = None) -> Any:
    """tf.image.transpose(_image): height and width swapped, one Transpose."""
    with _ops.name_scope(name, "transpose", [image]):
        image = _at_least_3d(convert_to_tensor(image, name="image"))
        perm = [1, 0, 2] if _rank_3_or_4(image) == 3 else [0, 2, 1, 3]
        return array_ops.transpose(image, perm, name=name or "transpose")


def reduce_join(
    inputs: Any,
    axis: Any = None,
    keep_dims: Any = None,
    separator: str = "",
    name: str | None = None,
    reduction_indices: Any = None,
    keepdims: Any = None,
) -> Any:
    """TF1's tf.reduce_join / tf.strings.reduce_join: one ReduceJoin (all axes, last
    first, when axis is None)."""
    keepdims = keep_dims if keepdims is None else keepdims
    axis = reduction_indices if axis is None else axis
    return reduce_join_v2(inputs, axis, keepdims, separator, name)


def reduce_join_v2(
    inputs: Any, axis: Any = None, keepdims: Any = False, separator: str = "", name: Any = None
) -> Any:
    """tf.strings.reduce_join (v2 signature)."""
    with _ops.name_scope(None, "ReduceJoin", [inputs]):
        inputs_t = convert_to_tensor(inputs)
        if axis is None:
            rank = inputs_t.shape.ndims
            if rank is not None:
                axis = constant(np.arange(rank - 1, -1, -1), dtype=dtypes.int32)
            else:
                axis = math_ops.range(array_ops.rank(inputs_t) - 1, -1, -1)
        attrs = {"keep_dims": bool(keepdims), "separator": separator}
        return apply_op("ReduceJoin", [inputs_t, axis], attrs, name).outputs[0]
