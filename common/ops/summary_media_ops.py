"""Ops (executor stage), ImageSummary (TensorFlow's summary_image_op.cc; what
tf.compat.v1.summary.image emits). The Summary proto is byte-equal to TensorFlow's: float
images rescaled as TensorFlow does (by 255/max when no value is negative, else by
127/max|v| around 128, truncated to uint8, non-finite pixels in bad_color) and PNG-encoded
by common.png. Audio summaries are AudioSummaryV2 in common.ops.logging_ops (AudioSummary,
V1, is refused by TensorFlow itself since GraphDef version 15). The kernel keeps no state;
safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common import png
from common.errors import InvalidArgumentError
from common.ops.registry import KernelConstruction, register_kernel, register_op
from protos import summary_pb2

F32 = np.float32
register_op("ImageSummary", inputs=["tag: string", "tensor: T"], outputs=["summary: string"],
            attrs=["max_images: int >= 1 = 3", "T: {uint8, float, half, double} = DT_FLOAT",
                   "bad_color: tensor = DT_UINT8 [255, 0, 0, 255]"])  # fmt: skip

Compute = Callable[..., list]


def _tag(value: np.ndarray, node: str) -> str:
    arr = np.asarray(value, dtype=object)
    if arr.ndim != 0:
        raise InvalidArgumentError(f"Tags must be a scalar: {list(arr.shape)}", node)
    item = arr.item()
    return item.decode("utf-8", "surrogateescape") if isinstance(item, bytes) else str(item)


def normalize_image(image: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """NormalizeFloatImage: an (h, w, depth) float image as uint8."""
    h, w, depth = image.shape
    pixels = image.reshape(h * w, depth)
    finite = np.isfinite(pixels).all(axis=1)
    good = pixels[finite].astype(F32)
    image_min = F32(good.min()) if good.size else F32(np.inf)
    image_max = F32(good.max()) if good.size else F32(-np.inf)
    t = image.dtype.type
    if image_min < 0:
        max_val = max(abs(image_min), abs(image_max))
        scale, offset = t(0.0 if max_val < 1e-6 else F32(127.0) / max_val), t(128.0)
    else:
        scale, offset = t(0.0 if image_max < 1e-6 else F32(255.0) / image_max), t(0.0)
    out = np.empty((h * w, depth), np.uint8)
    with np.errstate(invalid="ignore"):
        out[finite] = (pixels[finite] * scale + offset).astype(np.uint8)
    out[~finite] = bad_color[:depth]
    return out.reshape(h, w, depth)


def image_summary(tag: str, images: np.ndarray, max_images: int, bad_color: np.ndarray,
                  node: str) -> bytes:  # fmt: skip
    if images.ndim != 4 or images.shape[3] not in (1, 3, 4):
        raise InvalidArgumentError(
            f"Tensor must be 4-D with last dim 1, 3, or 4, not {list(images.shape)}", node
        )
    batch, h, w, depth = images.shape
    if h * w * depth > np.iinfo(np.int32).max:
        raise InvalidArgumentError("Tensor too large for summary", node)
    n = min(max_images, batch)
    summary = summary_pb2.Summary()
    for i in range(n):
        image = images[i]
        if image.dtype != np.uint8:
            image = normalize_image(image, bad_color)
        value = summary.value.add(tag=f"{tag}/image/{i}" if max_images > 1 else f"{tag}/image")
        value.image.height, value.image.width, value.image.colorspace = h, w, depth
        value.image.encoded_image_string = png.encode(np.ascontiguousarray(image), -1)
    return summary.SerializeToString()


@register_kernel("ImageSummary")
def _image_summary(k: KernelConstruction) -> Compute:
    max_images = k.attrs["max_images"]
    bad_color = np.asarray(k.attrs["bad_color"], np.uint8).reshape(-1)

    def compute(ctx, inputs: list) -> list:
        data = image_summary(_tag(inputs[0], k.node_name), np.asarray(inputs[1]), max_images,
                             bad_color, k.node_name)  # fmt: skip
        return [np.array(data, dtype=object)]

    return compute
