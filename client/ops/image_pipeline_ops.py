"""Client, graph building: the tf.image functions input pipelines use for augmentation
and cropping (random_flip_*, adjust/random_brightness, random_contrast/hue/saturation,
adjust_gamma, rgb_to_grayscale, grayscale_to_rgb, central_crop, crop/pad_to_bounding_box,
resize_image_with_crop_or_pad, random_crop, sample_distorted_bounding_box,
draw_bounding_boxes, decode_and_crop_jpeg, extract_jpeg_shape), as
tensorflow.compat.v1's image_ops_impl.py builds them: the same ops and node names. Crops
and pads also take images whose shape is known only at run time (TF's shape-computing
graph and its Asserts, client.ops.check_ops), as does rgb_to_grayscale. A rank-3 random
flip goes through this client's cond (Switch and Merge where TensorFlow 2.x emits
StatelessIf): the same values, other node names.
Graph building; not thread-safe.
"""

from __future__ import annotations

from typing import Any

from client.framework import dtypes as _dtypes
from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, check_ops, math_ops
from client.ops.control_flow_ops import with_dependencies
from client.ops.image_ops import (
    adjust_contrast,
    adjust_hue,
    adjust_saturation,
    convert_image_dtype,
)
from client.ops.random_ops import get_seed, random_uniform

_FLOAT16_32 = (_dtypes.float16, _dtypes.float32)


def _check(cond: bool, message: str) -> None:
    """image_ops_impl's _assert on static values: raise, or no assert op at all."""
    if not cond:
        raise ValueError(message)


# -- brightness, contrast, hue, saturation, gamma ------------------------------------------------
def adjust_brightness(image: Any, delta: Any) -> _ops.Tensor:
    with _ops.name_scope(None, "adjust_brightness", [image, delta]) as name:
        image = convert_to_tensor(image, name="image")
        original = image.dtype.base_dtype
        flt = image if original in _FLOAT16_32 else convert_image_dtype(image, _dtypes.float32)
        adjusted = math_ops.add(flt, math_ops.cast(delta, flt.dtype), name=name)
        return convert_image_dtype(adjusted, original, saturate=True)


def random_brightness(image: Any, max_delta: float, seed: Any = None) -> _ops.Tensor:
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def random_contrast(image: Any, lower: float, upper: float, seed: Any = None) -> _ops.Tensor:
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_contrast(image, random_uniform([], lower, upper, seed=seed))


def random_hue(image: Any, max_delta: float, seed: Any = None) -> _ops.Tensor:
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_hue(image, random_uniform([], -max_delta, max_delta, seed=seed))


def random_saturation(image: Any, lower: float, upper: float, seed: Any = None) -> _ops.Tensor:
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_saturation(image, random_uniform([], lower, upper, seed=seed))


def adjust_gamma(image: Any, gamma: Any = 1, gain: Any = 1) -> _ops.Tensor:
    with _ops.name_scope(None, "adjust_gamma", [image, gamma, gain]):
        image = convert_to_tensor(image, name="image")
        original = image.dtype.base_dtype
        flt = image if original in _FLOAT16_32 else convert_image_dtype(image, _dtypes.float32)
        if not isinstance(gamma, _ops.Tensor):
            _check(gamma >= 0, "Gamma should be a non-negative real number.")
        adjusted = gain * flt**gamma
        return convert_image_dtype(adjusted, original, saturate=True)


# -- flips ------------------------------------------------------------------------------------
def _random_flip(image: Any, flip_index: int, seed: Any, scope_name: str) -> _ops.Tensor:
    from client.ops.control_flow_ops import cond

    with _ops.name_scope(None, scope_name, [image]) as scope:
        image = convert_to_tensor(image, name="image")
        rank = image.shape.ndims
        if rank is None or rank < 3:
            raise ValueError(f"'image' (shape {image.shape}) must be at least three-dimensional.")
        image = with_dependencies([], image)
        if rank == 3:
            uniform = random_uniform([], minval=0, maxval=1.0, seed=seed)
            mirror = math_ops.less(uniform, 0.5)
            return cond(
                mirror,
                lambda: array_ops.reverse(image, [flip_index]),
                lambda: image,
                name=scope,
            )
        if rank != 4:
            raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")
        batch = array_ops.shape(image)[0]
        with _ops.name_scope(None, "random_uniform") as uniform_scope:
            shape = array_ops.stack([batch], name="shape")
        uniform = random_uniform(shape, minval=0, maxval=1.0, seed=seed, name=uniform_scope)
        with _ops.name_scope(None, "Reshape") as reshape_scope:
            flat_shape = array_ops.stack([batch, 1, 1, 1], name="shape")
        reshaped = apply_op("Reshape", [uniform, flat_shape], {}, reshape_scope).outputs[0]
        flips = math_ops.round(reshaped)
        flips = math_ops.cast(flips, image.dtype)
        flipped = array_ops.reverse(image, [flip_index + 1])
        return flips * flipped + (1 - flips) * image


def random_flip_left_right(image: Any, seed: Any = None) -> _ops.Tensor:
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image: Any, seed: Any = None) -> _ops.Tensor:
    return _random_flip(image, 0, seed, "random_flip_up_down")


# -- grayscale ------------------------------------------------------------------------------
def rgb_to_grayscale(images: Any, name: str | None = None) -> _ops.Tensor:
    """ITU-R 601 luma through tensordot over the last axis (Reshape, MatMul, Reshape), as
    TF builds it: from static dims, or from the image's Shape (and Rank) at run time."""
    with _ops.name_scope(name, "rgb_to_grayscale", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        original = images.dtype.base_dtype
        flt = convert_image_dtype(images, _dtypes.float32)
        with _ops.name_scope(None, "Tensordot") as dot:
            weights = convert_to_tensor([0.2989, 0.5870, 0.1140], _dtypes.float32, name="b")
            gray = _dot_last_axis(flt, weights, dot)
        gray = array_ops.expand_dims(gray, -1)
        return convert_image_dtype(gray, original, name=scope)


def _dot_last_axis(a: Any, b: Any, name: str) -> Any:
    """math_ops.tensordot(a, b, [-1, -1]) for a 1-D constant `b`, with TF's nodes."""
    shape = a.shape
    if shape.is_fully_defined():
        dims = shape.as_list()
        free_dims = dims[:-1]
        pixels = 1
        for d in free_dims:
            pixels *= d
        a_2d = a if dims == [pixels, dims[-1]] else array_ops.reshape(a, [pixels, dims[-1]])
        product = math_ops.matmul(a_2d, array_ops.reshape(b, [int(b.shape[0]), 1]))
        if product.shape.as_list() == free_dims:
            return array_ops.identity(product, name=name)
        return array_ops.reshape(product, free_dims, name=name)
    if shape.ndims is not None:
        rank = shape.ndims
        static_free: Any = shape.as_list()[:-1]
        axes = convert_to_tensor([rank - 1], dtype=_dtypes.int32, name="axes")
        free = convert_to_tensor(list(range(rank - 1)), dtype=_dtypes.int32, name="free")
        shape_a = array_ops.shape(a)
    else:
        static_free = None
        shape_a = array_ops.shape(a)
        rank_a = array_ops.rank(a)
        axes = convert_to_tensor([-1], dtype=_dtypes.int32, name="axes")
        axes = array_ops.where(axes >= 0, axes, axes + rank_a)
        diff = apply_op("ListDiff", [math_ops.range(rank_a), axes], {"out_idx": _dtypes.int32})
        free = diff.outputs[0]
    free_dims = array_ops.gather(shape_a, free)
    axes_dims = array_ops.gather(shape_a, axes)
    prod_free, prod_axes = math_ops.reduce_prod(free_dims), math_ops.reduce_prod(axes_dims)
    perm = array_ops.concat([free, axes], 0)
    new_shape = array_ops.stack([prod_free, prod_axes])
    a_2d = array_ops.reshape(array_ops.transpose(a, perm), new_shape)
    product = math_ops.matmul(a_2d, array_ops.reshape(b, [int(b.shape[0]), 1]))
    out_dims = array_ops.concat([free_dims, convert_to_tensor([], dtype=_dtypes.int32)], 0)
    out = array_ops.reshape(product, out_dims, name=name)
    if static_free is not None:
        out.set_shape(static_free)
    return out


shape_fns.SHAPE_FNS.setdefault("ListDiff", lambda op: [TensorShape([None]), TensorShape([None])])


def grayscale_to_rgb(images: Any, name: str | None = None) -> _ops.Tensor:
    with _ops.name_scope(name, "grayscale_to_rgb", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is None or images.shape.ndims < 2:
            raise ValueError(
                f"A grayscale image (shape {images.shape}) must be at least two-dimensional."
            )
        if images.shape.is_fully_defined() and images.shape[-1] != 1:
            raise ValueError("Last dimension of a grayscale image should be size 1.")
        images = with_dependencies([], images)
        rank_1 = array_ops.expand_dims(array_ops.rank(images) - 1, 0)
        multiples = array_ops.concat(
            [array_ops.ones(rank_1, dtype=_dtypes.int32), array_ops.expand_dims(3, 0)], 0
        )
        return array_ops.tile(images, multiples, name=scope)


# -- crops and pads -------------------------------------------------------------------------
def _is_tensor(x: Any) -> bool:
    return isinstance(x, _ops.Tensor) or hasattr(x, "_as_graph_element")


def _assert(cond: Any, message: str) -> list[Any]:
    """image_ops_impl's _assert: a tensor condition becomes an Assert op, a Python one is
    checked now (ValueError) and builds nothing."""
    if _is_tensor(cond):
        return [check_ops.assert_op(cond, [message])]
    _check(cond, message)
    return []


def _check_at_least_3d(image: Any) -> list[Any]:
    """_CheckAtLeast3DImage(require_static=False): Asserts that the inner three dims are
    positive and the rank at least 3, built only when those dims are not all static."""
    shape = image.shape
    try:
        shape = shape.with_rank(3) if shape.ndims is None else shape.with_rank_at_least(3)
    except ValueError:
        raise ValueError(
            f"'image' (shape {image.shape}) must be at least three-dimensional."
        ) from None
    if any(d == 0 for d in shape[-3:].as_list()):
        raise ValueError(f"inner 3 dims of 'image.shape' must be > 0: {shape}")
    if shape[-3:].is_fully_defined():
        return []
    return [
        check_ops.assert_positive(
            array_ops.shape(image)[-3:], ["inner 3 dims of 'image.shape' must be > 0."]
        ),
        check_ops.assert_greater_equal(
            array_ops.rank(image), 3, message="'image' must be at least three-dimensional."
        ),
    ]


def _image_dims(image: Any, rank: int) -> list[Any]:
    """_ImageDimensions: static dims as ints, the others as scalars of one unstacked
    Shape."""
    if image.shape.is_fully_defined():
        return image.shape.as_list()
    static = image.shape.with_rank(rank).as_list()
    dynamic = array_ops.unstack(array_ops.shape(image), rank)
    return [s if s is not None else d for s, d in zip(static, dynamic)]


def _batched(image: Any) -> tuple[Any, bool]:
    rank = image.shape.ndims
    if rank == 3:
        return array_ops.expand_dims(image, 0), False
    if rank is None:
        image = array_ops.expand_dims(image, 0)
        image.set_shape([None] * 4)
        return image, False
    if rank != 4:
        raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")
    return image, True


def central_crop(image: Any, central_fraction: Any) -> _ops.Tensor:
    """tf.image.central_crop; a tensor `central_fraction` gets TF's (vacuous) range Assert
    and the crop box computed in float64 in the graph."""
    with _ops.name_scope(None, "central_crop", [image]):
        image = convert_to_tensor(image, name="image")
        static: Any = (
            shape_fns.constant_value(central_fraction)
            if _is_tensor(central_fraction)
            else central_fraction
        )
        if static is not None:
            if static <= 0.0 or static > 1.0:
                raise ValueError("central_fraction must be within (0, 1]")
            if static == 1.0:
                return image
        else:
            checks = _assert(
                math_ops.logical_or(central_fraction > 0.0, central_fraction <= 1.0),
                "central_fraction must be within (0, 1]",
            )
            image = with_dependencies(checks, image)
        with_dependencies(_check_at_least_3d(image), image)  # TF builds (and drops) it
        rank = image.shape.ndims
        if rank not in (3, 4):
            raise ValueError(
                f"`image` should either be a Tensor with rank = 3 or rank = 4. Had rank = {rank}."
            )
        first = rank - 3
        dims = image.shape.as_list()

        def dim(i: int) -> tuple[Any, bool]:
            if dims[i] is not None:
                return dims[i], False
            return array_ops.shape(image)[i], True

        def start(size: Any, dynamic: bool) -> Any:
            if dynamic:
                sized = math_ops.cast(size, _dtypes.float64)
                fraction = math_ops.cast(central_fraction, _dtypes.float64)
                return math_ops.cast((sized - sized * fraction) / 2, _dtypes.int32)
            return int((float(size) - float(size) * static) / 2)

        h, dynamic_h = dim(first)
        w, dynamic_w = dim(first + 1)
        dynamic_h = dynamic_h or static is None
        dynamic_w = dynamic_w or static is None
        h_start, w_start = start(h, dynamic_h), start(w, dynamic_w)
        h_size, w_size = h - h_start * 2, w - w_start * 2
        if rank == 3:
            begin, size = [h_start, w_start, 0], [h_size, w_size, -1]
        else:
            begin, size = [0, h_start, w_start, 0], [-1, h_size, w_size, -1]
        cropped = array_ops.slice(image, array_ops.stack(begin), array_ops.stack(size))
        cropped.set_shape(
            [
                *dims[:first],
                None if dynamic_h else h_size,
                None if dynamic_w else w_size,
                dims[-1],
            ]
        )
        return cropped


def crop_to_bounding_box(
    image: Any, offset_height: Any, offset_width: Any, target_height: Any, target_width: Any
) -> _ops.Tensor:
    with _ops.name_scope(None, "crop_to_bounding_box", [image]):
        image = convert_to_tensor(image, name="image")
        image, is_batch = _batched(image)
        checks = _check_at_least_3d(image)
        batch, height, width, depth = _image_dims(image, 4)
        checks += _assert(offset_width >= 0, "offset_width must be >= 0.")
        checks += _assert(offset_height >= 0, "offset_height must be >= 0.")
        checks += _assert(target_width > 0, "target_width must be > 0.")
        checks += _assert(target_height > 0, "target_height must be > 0.")
        checks += _assert(
            width >= (target_width + offset_width), "width must be >= target + offset."
        )
        checks += _assert(
            height >= (target_height + offset_height), "height must be >= target + offset."
        )
        image = with_dependencies(checks, image)
        begin = array_ops.stack([0, offset_height, offset_width, 0])
        size = array_ops.stack(
            [array_ops.shape(image)[0], target_height, target_width, array_ops.shape(image)[3]]
        )
        cropped = array_ops.slice(image, begin, size)
        dims = [batch, target_height, target_width, depth]
        cropped.set_shape([None if _is_tensor(d) else d for d in dims])
        return cropped if is_batch else array_ops.squeeze(cropped, axis=[0])


def pad_to_bounding_box(
    image: Any, offset_height: Any, offset_width: Any, target_height: Any, target_width: Any
) -> _ops.Tensor:
    with _ops.name_scope(None, "pad_to_bounding_box", [image]):
        image = convert_to_tensor(image, name="image")
        image, is_batch = _batched(image)
        batch, height, width, depth = _image_dims(image, 4)
        after_width = target_width - offset_width - width
        after_height = target_height - offset_height - height
        checks = _check_at_least_3d(image)
        checks += _assert(offset_height >= 0, "offset_height must be >= 0")
        checks += _assert(offset_width >= 0, "offset_width must be >= 0")
        checks += _assert(after_width >= 0, "width must be <= target - offset")
        checks += _assert(after_height >= 0, "height must be <= target - offset")
        image = with_dependencies(checks, image)
        paddings = array_ops.reshape(
            array_ops.stack([0, 0, offset_height, after_height, offset_width, after_width, 0, 0]),
            [4, 2],
        )
        padded = array_ops.pad(image, paddings)
        dims = [batch, target_height, target_width, depth]
        padded.set_shape([None if _is_tensor(d) else d for d in dims])
        return padded if is_batch else array_ops.squeeze(padded, axis=[0])


def _max(x: Any, y: Any) -> Any:
    return math_ops.maximum(x, y) if _is_tensor(x) or _is_tensor(y) else max(x, y)


def _min(x: Any, y: Any) -> Any:
    return math_ops.minimum(x, y) if _is_tensor(x) or _is_tensor(y) else min(x, y)


def _equal(x: Any, y: Any) -> Any:
    return math_ops.equal(x, y) if _is_tensor(x) or _is_tensor(y) else x == y


def resize_image_with_crop_or_pad(image: Any, target_height: Any, target_width: Any) -> _ops.Tensor:
    with _ops.name_scope(None, "resize_image_with_crop_or_pad", [image]):
        image = convert_to_tensor(image, name="image")
        image, is_batch = _batched(image)
        checks = _check_at_least_3d(image)
        checks += _assert(target_width > 0, "target_width must be > 0.")
        checks += _assert(target_height > 0, "target_height must be > 0.")
        image = with_dependencies(checks, image)
        if _is_tensor(target_height):
            target_height = with_dependencies(checks, target_height)
        if _is_tensor(target_width):
            target_width = with_dependencies(checks, target_width)
        _, height, width, _ = _image_dims(image, 4)
        width_diff = target_width - width
        offset_crop_width = _max(-width_diff // 2, 0)
        offset_pad_width = _max(width_diff // 2, 0)
        height_diff = target_height - height
        offset_crop_height = _max(-height_diff // 2, 0)
        offset_pad_height = _max(height_diff // 2, 0)
        cropped = crop_to_bounding_box(
            image,
            offset_crop_height,
            offset_crop_width,
            _min(target_height, height),
            _min(target_width, width),
        )
        resized = pad_to_bounding_box(
            cropped, offset_pad_height, offset_pad_width, target_height, target_width
        )
        if resized.shape.ndims is None:
            raise ValueError("resized contains no shape.")
        _, resized_height, resized_width, _ = _image_dims(resized, 4)
        checks = _assert(_equal(resized_height, target_height), "resized height is not correct.")
        checks += _assert(_equal(resized_width, target_width), "resized width is not correct.")
        resized = with_dependencies(checks, resized)
        return resized if is_batch else array_ops.squeeze(resized, axis=[0])


def random_crop(value: Any, size: Any, seed: Any = None, name: str | None = None) -> _ops.Tensor:
    """tf.image.random_crop: a uniformly placed window of `size` (RandomUniformInt
    offsets modulo the room left), after an Assert that it fits."""
    with _ops.name_scope(name, "random_crop", [value, size]) as scope:
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=_dtypes.int32, name="size")
        shape = array_ops.shape(value)
        fits = math_ops.reduce_all(shape >= size)
        message = "Need value.shape >= size, got "
        with _ops.name_scope(None, "Assert"):
            # TF's Assert converts its data once for a dtype check and again as inputs.
            convert_to_tensor(message)
            check = apply_op("Assert", [fits, [message, shape, size]], {"summarize": 1000},
                             "Assert")  # fmt: skip
        shape = with_dependencies([check], shape)
        limit = shape - size + 1
        offset = (
            random_uniform(
                array_ops.shape(shape), dtype=size.dtype, maxval=size.dtype.max, seed=seed
            )
            % limit
        )
        return array_ops.slice(value, offset, size, name=scope)


# -- bounding boxes and JPEG windows ----------------------------------------------------------
def _sampler_attrs(**kw: Any) -> dict:
    return {k: v for k, v in kw.items() if v is not None}


def sample_distorted_bounding_box(
    image_size: Any,
    bounding_boxes: Any,
    seed: Any = None,
    seed2: Any = None,
    min_object_covered: Any = 0.1,
    aspect_ratio_range: Any = None,
    area_range: Any = None,
    max_attempts: Any = None,
    use_image_if_no_bounding_boxes: Any = None,
    name: str | None = None,
) -> list:
    """tf.compat.v1.image.sample_distorted_bounding_box: SampleDistortedBoundingBoxV2
    with the seeds as given (not through the graph seed)."""
    attrs = _sampler_attrs(
        seed=seed or 0,
        seed2=seed2 or 0,
        aspect_ratio_range=aspect_ratio_range,
        area_range=area_range,
        max_attempts=max_attempts,
        use_image_if_no_bounding_boxes=use_image_if_no_bounding_boxes,
    )
    with _ops.name_scope(name, "sample_distorted_bounding_box"):
        op = apply_op(
            "SampleDistortedBoundingBoxV2",
            [image_size, bounding_boxes, min_object_covered],
            attrs,
            name,
        )
        return list(op.outputs)


def sample_distorted_bounding_box_v2(
    image_size: Any,
    bounding_boxes: Any,
    seed: Any = 0,
    min_object_covered: Any = 0.1,
    aspect_ratio_range: Any = None,
    area_range: Any = None,
    max_attempts: Any = None,
    use_image_if_no_bounding_boxes: Any = None,
    name: str | None = None,
) -> list:
    """tf.image.sample_distorted_bounding_box (TF 2.x): the seeds through get_seed."""
    seed1, seed2 = get_seed(seed) if seed else (0, 0)
    return sample_distorted_bounding_box(
        image_size, bounding_boxes, seed1, seed2, min_object_covered, aspect_ratio_range,
        area_range, max_attempts, use_image_if_no_bounding_boxes, name,
    )  # fmt: skip


def stateless_sample_distorted_bounding_box(
    image_size: Any,
    bounding_boxes: Any,
    seed: Any,
    min_object_covered: Any = 0.1,
    aspect_ratio_range: Any = None,
    area_range: Any = None,
    max_attempts: Any = None,
    use_image_if_no_bounding_boxes: Any = None,
    name: str | None = None,
) -> list:
    attrs = _sampler_attrs(
        aspect_ratio_range=aspect_ratio_range,
        area_range=area_range,
        max_attempts=max_attempts,
        use_image_if_no_bounding_boxes=use_image_if_no_bounding_boxes,
    )
    with _ops.name_scope(name, "stateless_sample_distorted_bounding_box"):
        op = apply_op(
            "StatelessSampleDistortedBoundingBox",
            [image_size, bounding_boxes, min_object_covered, seed],
            attrs,
            name,
        )
        return list(op.outputs)


def draw_bounding_boxes(
    images: Any, boxes: Any, name: str | None = None, colors: Any = None
) -> _ops.Tensor:
    if colors is None:
        return apply_op("DrawBoundingBoxes", [images, boxes], {}, name).outputs[0]
    return apply_op("DrawBoundingBoxesV2", [images, boxes, colors], {}, name).outputs[0]


def decode_and_crop_jpeg(
    contents: Any,
    crop_window: Any,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1.0,
    dct_method: str = "",
    name: str | None = None,
) -> _ops.Tensor:
    attrs = {
        "channels": channels,
        "ratio": ratio,
        "fancy_upscaling": fancy_upscaling,
        "try_recover_truncated": try_recover_truncated,
        "acceptable_fraction": acceptable_fraction,
        "dct_method": dct_method,
    }
    return apply_op("DecodeAndCropJpeg", [contents, crop_window], attrs, name).outputs[0]


def extract_jpeg_shape(
    contents: Any, output_type: Any = _dtypes.int32, name: str | None = None
) -> _ops.Tensor:
    attrs = {"output_type": _dtypes.as_dtype(output_type)}
    return apply_op("ExtractJpegShape", [contents], attrs, name).outputs[0]
