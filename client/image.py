"""Client: the tf.image namespace (codecs, dtype conversion, flips, resizing), built by
client.ops.image_ops."""

from __future__ import annotations

from client.ops.image_ops import (  # noqa: F401
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
)
