"""Client, graph building: tf.image — codecs (decode_png/jpeg/bmp/gif/image, encode_png/
jpeg), convert_image_dtype, flips, per_image_standardization, resizing and crop_and_resize
as tensorflow.compat.v1 builds them (its image_ops_impl.py: the same ops and node names).
Graph building; not thread-safe.
"""

from __future__ import annotations

from typing import Any

from client.framework import dtypes as _dtypes
from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape


def _op(op_type: str, inputs: list, attrs: dict, name: str | None) -> _ops.Tensor:
    return apply_op(op_type, inputs, attrs, name).outputs[0]


# -- codecs --------------------------------------------------------------------------------------
def decode_png(contents: Any, channels: int = 0, dtype: Any = _dtypes.uint8,
               name: str | None = None) -> _ops.Tensor:  # fmt: skip
    attrs = {"channels": channels, "dtype": _dtypes.as_dtype(dtype)}
    return _op("DecodePng", [contents], attrs, name)


def decode_jpeg(contents: Any, channels: int = 0, ratio: int = 1, fancy_upscaling: bool = True,
                try_recover_truncated: bool = False, acceptable_fraction: float = 1,
                dct_method: str = "", name: str | None = None) -> _ops.Tensor:  # fmt: skip
    attrs = {"channels": channels, "ratio": ratio, "fancy_upscaling": fancy_upscaling,
             "try_recover_truncated": try_recover_truncated,
             "acceptable_fraction": acceptable_fraction, "dct_method": dct_method}  # fmt: skip
    return _op("DecodeJpeg", [contents], attrs, name)


def decode_bmp(contents: Any, channels: int = 0, name: str | None = None) -> _ops.Tensor:
    return _op("DecodeBmp", [contents], {"channels": channels}, name)


def decode_gif(contents: Any, name: str | None = None) -> _ops.Tensor:
    return _op("DecodeGif", [contents], {}, name)


def decode_image(contents: Any, channels: Any = None, dtype: Any = _dtypes.uint8,
                 name: str | None = None,
                 expand_animations: bool = True) -> _ops.Tensor:  # fmt: skip
    attrs = {"channels": channels or 0, "dtype": _dtypes.as_dtype(dtype),
             "expand_animations": expand_animations}  # fmt: skip
    with _ops.name_scope(name, "decode_image"):
        return _op("DecodeImage", [contents], attrs, None)


def encode_png(image: Any, compression: int = -1, name: str | None = None) -> _ops.Tensor:
    # image_ops_impl.encode_png converts the image first ("Const", not "EncodePng/image").
    return _op("EncodePng", [convert_to_tensor(image)], {"compression": compression}, name)


def encode_jpeg(image: Any, format: str = "", quality: int = 95, progressive: bool = False,  # noqa: A002
                optimize_size: bool = False, chroma_downsampling: bool = True,
                density_unit: str = "in", x_density: int = 300, y_density: int = 300,
                xmp_metadata: str = "", name: str | None = None) -> _ops.Tensor:  # fmt: skip
    attrs = {"format": format, "quality": quality, "progressive": progressive,
             "optimize_size": optimize_size, "chroma_downsampling": chroma_downsampling,
             "density_unit": density_unit, "x_density": x_density, "y_density": y_density,
             "xmp_metadata": xmp_metadata}  # fmt: skip
    return _op("EncodeJpeg", [image], attrs, name)


# -- static shapes ------------------------------------------------------------------------------
def _decoded(op: Any) -> list[Any]:
    channels = shape_fns._attr(op, "channels") or None
    return [TensorShape([None, None, channels])]


for _name in ("DecodePng", "DecodeJpeg", "DecodeBmp"):
    shape_fns.SHAPE_FNS[_name] = _decoded
shape_fns.SHAPE_FNS["DecodeGif"] = lambda op: [TensorShape([None, None, None, 3])]
shape_fns.SHAPE_FNS["DecodeImage"] = lambda op: [TensorShape(None)]
shape_fns.SHAPE_FNS["EncodePng"] = lambda op: [TensorShape([])]
shape_fns.SHAPE_FNS["EncodeJpeg"] = lambda op: [TensorShape([])]


# -- resizing ------------------------------------------------------------------------------------
class ResizeMethod:
    """tf.compat.v1.image.ResizeMethod."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


_RESIZE_OPS = {
    ResizeMethod.BILINEAR: "ResizeBilinear",
    ResizeMethod.NEAREST_NEIGHBOR: "ResizeNearestNeighbor",
    ResizeMethod.BICUBIC: "ResizeBicubic",
    ResizeMethod.AREA: "ResizeArea",
    "bilinear": "ResizeBilinear",
    "nearest": "ResizeNearestNeighbor",
    "bicubic": "ResizeBicubic",
    "area": "ResizeArea",
}


def _resize_op(op_type: str, images: Any, size: Any, align_corners: bool, name: str | None,
               half_pixel_centers: bool = False) -> _ops.Tensor:  # fmt: skip
    attrs: dict[str, Any] = {"align_corners": align_corners}
    if op_type != "ResizeArea":
        attrs["half_pixel_centers"] = half_pixel_centers
    return _op(op_type, [images, size], attrs, name)


def resize_images(images: Any, size: Any, method: Any = ResizeMethod.BILINEAR,
                  align_corners: bool = False, preserve_aspect_ratio: bool = False,
                  name: str | None = None) -> _ops.Tensor:  # fmt: skip
    """tf.compat.v1.image.resize_images (= tf.compat.v1.image.resize): images of rank 3 or
    4 to `size` [height, width] by `method`, under the name scope "resize"; with
    `preserve_aspect_ratio`, scaled by one factor to fit inside `size` (computed in the
    graph from the image's static or dynamic dimensions, as TensorFlow does)."""
    from client.ops import array_ops

    with _ops.name_scope(name, "resize"):
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is None:
            raise ValueError("'images' contains no shape.")
        single = images.shape.ndims == 3
        if single:
            images = array_ops.expand_dims(images, 0)
        elif images.shape.ndims != 4:
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        _, height, width, _ = images.shape.as_list()
        size = convert_to_tensor(size, dtype=_dtypes.int32, name="size")
        if not size.shape.is_compatible_with([2]):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
        if preserve_aspect_ratio:
            size = _aspect_preserving_size(images, size)
        wanted = shape_fns.constant_value(size)  # Python's view, as TF's skip test
        new_h, new_w = (None, None) if wanted is None else (int(wanted[0]), int(wanted[1]))
        if None not in (new_h, new_w, height, width) and (height, width) == (new_h, new_w):
            out = images  # TensorFlow's v1 resize skips a resize to the same size
        else:
            out = _resize_op(_RESIZE_OPS[method], images, size, align_corners, None)
            out.set_shape([None, new_h, new_w, None])
        if single:
            out = array_ops.squeeze(out, axis=[0])
        return out


def _aspect_preserving_size(images: Any, size: Any) -> Any:
    """The largest [h, w] inside `size` with the image's aspect ratio (rounded)."""
    from client.ops import array_ops, math_ops

    dims = images.shape.as_list()
    if not images.shape.is_fully_defined():
        dynamic = array_ops.unstack(array_ops.shape(images), 4)
        dims = [d if d is not None else t for d, t in zip(dims, dynamic)]
    height, width = dims[1], dims[2]
    f32 = _dtypes.float32
    scale_h = math_ops.cast(size[0], f32) / math_ops.cast(height, f32)
    scale_w = math_ops.cast(size[1], f32) / math_ops.cast(width, f32)
    scale = math_ops.minimum(scale_h, scale_w)
    new_h = math_ops.cast(math_ops.round(scale * math_ops.cast(height, f32)), _dtypes.int32)
    new_w = math_ops.cast(math_ops.round(scale * math_ops.cast(width, f32)), _dtypes.int32)
    return convert_to_tensor([new_h, new_w], _dtypes.int32, name="size")


resize = resize_images


def resize_bilinear(images: Any, size: Any, align_corners: bool = False, name: str | None = None,
                    half_pixel_centers: bool = False) -> _ops.Tensor:  # fmt: skip
    return _resize_op("ResizeBilinear", images, size, align_corners, name, half_pixel_centers)


def resize_nearest_neighbor(images: Any, size: Any, align_corners: bool = False,
                            name: str | None = None,
                            half_pixel_centers: bool = False) -> _ops.Tensor:  # fmt: skip
    return _resize_op("ResizeNearestNeighbor", images, size, align_corners, name,
                      half_pixel_centers)  # fmt: skip


def resize_bicubic(images: Any, size: Any, align_corners: bool = False, name: str | None = None,
                   half_pixel_centers: bool = False) -> _ops.Tensor:  # fmt: skip
    return _resize_op("ResizeBicubic", images, size, align_corners, name, half_pixel_centers)


def resize_area(images: Any, size: Any, align_corners: bool = False,
                name: str | None = None) -> _ops.Tensor:  # fmt: skip
    return _resize_op("ResizeArea", images, size, align_corners, name)


def crop_and_resize(image: Any, boxes: Any, box_ind: Any = None, crop_size: Any = None,
                    method: str = "bilinear", extrapolation_value: float = 0.0,
                    name: str | None = None, box_indices: Any = None) -> _ops.Tensor:  # fmt: skip
    indices = box_ind if box_ind is not None else box_indices
    attrs = {"method": method, "extrapolation_value": extrapolation_value}
    return _op("CropAndResize", [image, boxes, indices, crop_size], attrs, name)


# -- dtype conversion, flips, standardization ------------------------------------------
def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False,
                        name: str | None = None) -> _ops.Tensor:  # fmt: skip
    """tf.image.convert_image_dtype: integers scale to [0, 1] floats and back (x max+0.5,
    truncated), floats cast, integers to integers by an integer factor (floordiv down,
    multiply up); `saturate` clamps before a cast that could overflow (saturate_cast).
    The nodes under "convert_image" as TensorFlow names them."""
    from client.ops import math_ops

    image = convert_to_tensor(image, name="image")
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating and not dtype.is_integer:
        raise AttributeError("dtype must be either floating point or integer")
    source = image.dtype.base_dtype
    if not source.is_floating and not source.is_integer:
        raise AttributeError("image dtype must be either floating point or integer")
    if source == dtype:
        return apply_op("Identity", [image], {}, name).outputs[0]
    to = math_ops.saturate_cast if saturate else math_ops.cast
    with _ops.name_scope(name, "convert_image") as scope:
        if source.is_integer and dtype.is_integer:
            scale_in, scale_out = int(source.max), int(dtype.max)
            if scale_in > scale_out:
                # Scale first: in.max lands in [out.max, out.max + 1), then cast.
                scaled = math_ops.floordiv(image, (scale_in + 1) // (scale_out + 1))
                return to(scaled, dtype, name=scope)
            return math_ops.multiply(to(image, dtype), (scale_out + 1) // (scale_in + 1),
                                     name=scope)  # fmt: skip
        if source.is_floating and dtype.is_floating:
            return math_ops.cast(image, dtype, name=scope)
        if source.is_integer:
            cast = math_ops.cast(image, dtype)
            return math_ops.multiply(cast, 1.0 / source.max, name=scope)
        scaled = math_ops.multiply(image, dtype.max + 0.5)
        return to(scaled, dtype, name=scope)


# -- color adjustments -------------------------------------------------------------------
def _adjust(op_type: str, scope_name: str, image: Any, amount: Any, arg: str,
            name: str | None, named_op: bool) -> _ops.Tensor:  # fmt: skip
    """image_ops_impl's adjust_*: float16/32 images as they are, others converted to
    float32 and back; the op under the scope (adjust_contrast's op is the scope itself)."""
    with _ops.name_scope(name, scope_name) as scope:
        image = convert_to_tensor(image, name="image")
        original = image.dtype.base_dtype
        flt = image if original in (_dtypes.float16, _dtypes.float32) else (
            convert_image_dtype(image, _dtypes.float32))  # fmt: skip
        if named_op:
            amount = convert_to_tensor(amount, dtype=_dtypes.float32, name=arg)
            out = apply_op(op_type, [flt, amount], {}, scope).outputs[0]
        else:
            out = apply_op(op_type, [flt, amount], {}, op_type).outputs[0]
        return convert_image_dtype(out, original)


def adjust_hue(image: Any, delta: Any, name: str | None = None) -> _ops.Tensor:
    return _adjust("AdjustHue", "adjust_hue", image, delta, "delta", name, False)


def adjust_saturation(image: Any, saturation_factor: Any, name: str | None = None) -> _ops.Tensor:
    return _adjust("AdjustSaturation", "adjust_saturation", image, saturation_factor, "scale",
                   name, False)  # fmt: skip


def adjust_contrast(images: Any, contrast_factor: Any) -> _ops.Tensor:
    return _adjust("AdjustContrastv2", "adjust_contrast", images, contrast_factor,
                   "contrast_factor", None, True)  # fmt: skip


def rgb_to_hsv(images: Any, name: str | None = None) -> _ops.Tensor:
    return _op("RGBToHSV", [images], {}, name)


def hsv_to_rgb(images: Any, name: str | None = None) -> _ops.Tensor:
    return _op("HSVToRGB", [images], {}, name)


def _flip(image: Any, axis: int, scope_name: str) -> _ops.Tensor:
    with _ops.name_scope(None, scope_name):
        image = convert_to_tensor(image, name="image")
        rank = image.shape.ndims
        if rank is None or rank < 3:
            raise ValueError(f"'image' (shape {image.shape}) must be at least three-dimensional.")
        image = apply_op("Identity", [image], {}, "control_dependency").outputs[0]
        axis = axis if rank == 3 else axis + 1
        return apply_op("ReverseV2", [image, [axis]], {}, "ReverseV2").outputs[0]


def flip_left_right(image: Any) -> _ops.Tensor:
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image: Any) -> _ops.Tensor:
    return _flip(image, 0, "flip_up_down")


def per_image_standardization(image: Any) -> _ops.Tensor:
    """(x - mean) / max(stddev, 1/sqrt(num_pixels)) per image (TF's formula)."""
    from client.ops import array_ops, math_ops

    with _ops.name_scope(None, "per_image_standardization") as scope:
        image = convert_to_tensor(image, name="image")
        image = apply_op("Identity", [image], {}, "control_dependency").outputs[0]
        if image.dtype.base_dtype != _dtypes.float32:
            image = math_ops.cast(image, _dtypes.float32)
        num_pixels = math_ops.reduce_prod(array_ops.shape(image)[-3:])
        mean = math_ops.reduce_mean(image, axis=[-1, -2, -3], keepdims=True)
        with _ops.name_scope(None, "reduce_std"):
            with _ops.name_scope(None, "reduce_variance"):
                mu = math_ops.reduce_mean(image, axis=[-1, -2, -3], keepdims=True)
                variance = math_ops.reduce_mean(
                    math_ops.square(image - mu), axis=[-1, -2, -3], keepdims=True
                )
            stddev = math_ops.sqrt(variance)
        min_stddev = math_ops.rsqrt(math_ops.cast(num_pixels, _dtypes.float32))
        adjusted = math_ops.maximum(stddev, min_stddev)
        centered = image - mean
        return apply_op("RealDiv", [centered, adjusted], {}, scope).outputs[0]


# -- static shapes of resizing -------------------------------------------------------------
def _resized(op: Any) -> list[Any]:
    images = op.inputs[0].shape
    size = shape_fns.evaluated_value(op.inputs[1])
    hw = [None, None] if size is None else [int(v) for v in size]
    batch = images[0] if images.ndims else None
    channels = images[3] if images.ndims else None
    return [TensorShape([batch, *hw, channels])]


for _name in ("ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic", "ResizeArea"):
    shape_fns.SHAPE_FNS[_name] = _resized
shape_fns.SHAPE_FNS["ResizeBilinearGrad"] = lambda op: [op.inputs[1].shape]
shape_fns.SHAPE_FNS["ResizeBicubicGrad"] = lambda op: [op.inputs[1].shape]


def _crop_shape(op: Any) -> list[Any]:
    size = shape_fns.constant_value(op.inputs[3])
    hw = [None, None] if size is None else [int(v) for v in size]
    boxes, image = op.inputs[1].shape, op.inputs[0].shape
    return [TensorShape([boxes[0] if boxes.ndims else None, *hw,
                         image[3] if image.ndims else None])]  # fmt: skip


shape_fns.SHAPE_FNS["CropAndResize"] = _crop_shape


# -- static shapes of color adjustments (image_ops.cc) -------------------------------------
def _rank_at_least(op: Any, rank: int) -> TensorShape:
    shape = op.inputs[0].shape
    if shape.ndims is not None and shape.ndims < rank:
        raise shape_fns.ShapeError(f"Shape must be at least rank {rank} but is rank {shape.ndims}")
    return shape


def _colorspace_shape(op: Any) -> list[Any]:
    """ColorspaceShapeFn: at least rank 1, the last dimension 3."""
    shape = _rank_at_least(op, 1)
    if shape.ndims is None:
        return [shape]
    last = shape.as_list()[-1]
    if last is not None and last != 3:
        raise shape_fns.ShapeError(f"Dimension must be 3 but is {last}")
    return [TensorShape([*shape.as_list()[:-1], 3])]


for _name in ("AdjustContrastv2", "AdjustHue", "AdjustSaturation"):
    shape_fns.SHAPE_FNS[_name] = lambda op: [_rank_at_least(op, 3)]
for _name in ("RGBToHSV", "HSVToRGB"):
    shape_fns.SHAPE_FNS[_name] = _colorspace_shape
