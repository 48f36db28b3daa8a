"""Client: the tf.image namespace (codecs, dtype conversion, flips, resizing), built by
client.ops.image_ops."""

from __future__ import annotations

from client.ops.image_ops import (  # noqa: F401
    ResizeMethod,
    adjust_contrast,
    adjust_hue,
    adjust_saturation,
    convert_image_dtype,
    crop_and_resize,
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
    flip_left_right,
    flip_up_down,
    hsv_to_rgb,
    per_image_standardization,
    resize,
    resize_area,
    resize_bicubic,
    resize_bilinear,
    resize_images,
    resize_nearest_neighbor,
    rgb_to_hsv,
)
