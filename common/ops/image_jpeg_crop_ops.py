"""Ops (executor stage), JPEG helpers of input pipelines: DecodeAndCropJpeg (decode a
window of a JPEG, as tf.image.decode_and_crop_jpeg) and ExtractJpegShape (the
[height, width, channels] from the header, without decoding), as TensorFlow's
decode_image_op.cc and extract_jpeg_shape_op.cc.

TensorFlow decodes a window with libjpeg-turbo's jpeg_crop_scanline (the columns widened
leftwards to an iMCU boundary, chroma upsampled within that region only, so its edge
columns replicate instead of blending with their outer neighbours) and
jpeg_skip_scanlines, with JDCT_IFAST unless dct_method is INTEGER_ACCURATE. jpeg_shim.c
drives the system's libjpeg-turbo the same way (built on first use, common.ops.c_shim):
equal to TensorFlow's bytes. Without it (no compiler or libjpeg headers), or for CMYK
JPEGs, the window is cut out of the whole image decoded by Pillow with JDCT_ISLOW: then
chroma-subsampled JPEGs differ near the window's left and right edges, and every pixel
may differ by a few levels unless dct_method is INTEGER_ACCURATE. Kernels keep no state;
safe from any thread.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError, UnimplementedError
from common.ops import libjpeg
from common.ops import math_util as mu
from common.ops.image_codec_ops import decode_jpeg
from common.ops.registry import KernelConstruction, register_kernel, register_op


def _contents(x, node: str) -> bytes:
    arr = np.asarray(x, dtype=object)
    if arr.ndim != 0:
        raise InvalidArgumentError(
            f"contents must be scalar, got shape {mu.shape_str(arr.shape)}", node
        )
    value = arr.item()
    return value if isinstance(value, bytes) else str(value).encode()


def decode_and_crop_jpeg(
    data: bytes, window, channels: int, ratio: int, node: str,
    fancy: bool = True, dct_method: str = "",
):  # fmt: skip
    w = np.asarray(window)
    if w.ndim != 1 or w.shape[0] != 4:
        raise InvalidArgumentError(
            f"crop_window must be 1-D with 4 elements, got shape {mu.shape_str(w.shape)}", node
        )
    y, x, h, wd = (int(v) for v in w)
    exact = libjpeg.decode_window(data, (y, x, h, wd), channels, ratio, fancy,
                         dct_method != "INTEGER_ACCURATE", node)  # fmt: skip
    if exact is not None:
        return exact
    if not fancy:
        raise UnimplementedError("DecodeAndCropJpeg with fancy_upscaling=false", node)
    pixels = decode_jpeg(data, channels, ratio, node)
    height, width = pixels.shape[:2]
    if h <= 0 or wd <= 0 or y < 0 or x < 0 or y + h > height or x + wd > width:
        raise InvalidArgumentError(libjpeg.BAD_WINDOW, node)
    return np.ascontiguousarray(pixels[y : y + h, x : x + wd])


def _decode_and_crop(kc: KernelConstruction) -> Callable:
    channels, ratio = int(kc.attrs["channels"]), int(kc.attrs["ratio"])
    if channels not in (0, 1, 3):
        raise InvalidArgumentError(f"channels must be 0, 1, or 3, got {channels}", kc.node_name)
    if ratio not in (1, 2, 4, 8):
        raise InvalidArgumentError(f"ratio must be 1, 2, 4, or 8, got {ratio}", kc.node_name)
    fancy, dct = bool(kc.attrs["fancy_upscaling"]), str(kc.attrs["dct_method"])
    if dct not in ("", "INTEGER_FAST", "INTEGER_ACCURATE"):
        raise InvalidArgumentError(
            f"dct_method must be one of {{'', 'INTEGER_FAST', 'INTEGER_ACCURATE'}}, got {dct}",
            kc.node_name,
        )

    def compute(ctx, inputs: list) -> list:
        data = _contents(inputs[0], kc.node_name)
        return [decode_and_crop_jpeg(data, inputs[1], channels, ratio, kc.node_name, fancy, dct)]

    return compute


def jpeg_shape(data: bytes, node: str) -> tuple[int, int, int]:
    from PIL import Image, UnidentifiedImageError

    try:
        image = Image.open(io.BytesIO(data))  # reads the header only
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
        raise InvalidArgumentError("Invalid JPEG data, size " + str(len(data)), node) from None
    if image.format != "JPEG":
        raise InvalidArgumentError("Invalid JPEG data, size " + str(len(data)), node)
    width, height = image.size
    return height, width, len(image.getbands())


def _extract_shape(kc: KernelConstruction) -> Callable:
    out = mu.np_type(kc.attr("output_type"))

    def compute(ctx, inputs: list) -> list:
        return [np.array(jpeg_shape(_contents(inputs[0], kc.node_name), kc.node_name), out)]

    return compute


def _register() -> None:
    register_op(
        "DecodeAndCropJpeg",
        ["contents: string", "crop_window: int32"],
        ["image: uint8"],
        [
            "channels: int = 0",
            "ratio: int = 1",
            "fancy_upscaling: bool = true",
            "try_recover_truncated: bool = false",
            "acceptable_fraction: float = 1.0",
            "dct_method: string = ''",
        ],
    )
    register_kernel("DecodeAndCropJpeg", host_memory=("crop_window",))(_decode_and_crop)
    register_op(
        "ExtractJpegShape",
        ["contents: string"],
        ["image_shape: output_type"],
        ["output_type: {int32, int64} = DT_INT32"],
    )
    register_kernel("ExtractJpegShape")(_extract_shape)


_register()
