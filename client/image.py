"""Client: the tf.image namespace (codecs, dtype conversion, flips, resizing), built by
client.ops.image_ops."""

from __future__ import annotations

from client.ops.image_metrics_ops import (  # noqa: F401
    image_gradients,
    psnr,
    sobel_edges,
    ssim,
    ssim_multiscale,
    total_variation,
)
from client.ops.image_nms_ops import (  # noqa: F401
    combined_non_max_suppression,
    non_max_suppression,
    non_max_suppression_padded,
    non_max_suppression_with_overlaps,
    non_max_suppression_with_scores,
)
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
from client.ops.image_pipeline_ops import (  # noqa: F401
    adjust_brightness,
    adjust_gamma,
    central_crop,
    crop_to_bounding_box,
    decode_and_crop_jpeg,
    draw_bounding_boxes,
    extract_jpeg_shape,
    grayscale_to_rgb,
    pad_to_bounding_box,
    random_brightness,
    random_contrast,
    random_crop,
    random_flip_left_right,
    random_flip_up_down,
    random_hue,
    random_saturation,
    resize_image_with_crop_or_pad,
    rgb_to_grayscale,
    sample_distorted_bounding_box,
    stateless_sample_distorted_bounding_box,
)

non_max_suppression_overlaps = non_max_suppression_with_overlaps

# isort: split
from client.ops.nn_conv_variants import extract_image_patches, extract_patches  # noqa: E402, F401
from client.ops.probe_gaps_data import rot90, transpose_image  # noqa: E402, F401

transpose = transpose_image
