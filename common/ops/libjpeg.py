"""JPEG decoding as TensorFlow's jpeg::Uncompress drives libjpeg-turbo: jpeg_shim.c calls
the system's libjpeg-turbo (built on first use, common.ops.c_shim) with TF's settings
(JDCT_IFAST unless INTEGER_ACCURATE, fancy upsampling as asked, scale 1/ratio) and, for a
window, jpeg_crop_scanline + jpeg_skip_scanlines: the columns widened leftwards to an
iMCU boundary and chroma upsampled within that region only, so a window's edge columns
replicate instead of blending with their outer neighbours, as in TensorFlow. Used by
DecodeJpeg, DecodeImage and DecodeAndCropJpeg; None where it cannot decode (no compiler
or libjpeg headers, CMYK, not a JPEG), and the callers then use Pillow. Thread-safe.
"""

from __future__ import annotations

import ctypes
import io
import threading
from pathlib import Path

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import c_shim

_SHIM_SOURCE = Path(__file__).with_name("jpeg_shim.c")
_shim_lock = threading.Lock()
_shim: list[ctypes.CDLL | None] = []  # [library or None] once tried
BAD_WINDOW = "jpeg::Uncompress failed. Invalid JPEG data or crop window."


def library() -> ctypes.CDLL | None:
    with _shim_lock:
        if not _shim:
            lib = c_shim.build(_SHIM_SOURCE, ["-Wall"], ["-ljpeg"])
            if lib is not None:
                lib.flowrt_jpeg_decode_crop.restype = ctypes.c_int
            _shim.append(lib)
        return _shim[0]


def decode_window(
    data: bytes, window: tuple[int, int, int, int] | None, channels: int, ratio: int,
    fancy: bool, fast_dct: bool, node: str,
) -> np.ndarray | None:  # fmt: skip
    """The window (y, x, h, w; None: the whole image) decoded as TensorFlow's
    jpeg::Uncompress decodes it, or None where jpeg_shim.c cannot (no library; CMYK or
    not a JPEG: Pillow's path)."""
    lib = library()
    if lib is None:
        return None
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as probe:  # the header only
            if probe.format != "JPEG" or probe.mode not in ("L", "RGB"):
                return None
            have = 1 if probe.mode == "L" else 3
            width, height = probe.size
    except Exception:
        return None
    components = channels or have
    if components not in (1, 3):
        return None
    # libjpeg scales to ceil(size / ratio).
    y, x, h, w = window or (0, 0, -(-height // ratio), -(-width // ratio))
    if h <= 0 or w <= 0:
        raise InvalidArgumentError(BAD_WINDOW, node)
    out = np.empty((h, w, components), np.uint8)
    message = ctypes.create_string_buffer(256)
    dims = (ctypes.c_int * 2)()
    rc = lib.flowrt_jpeg_decode_crop(
        data, ctypes.c_ulong(len(data)), components, ratio, int(fancy), int(fast_dct),
        x, y, w, h, out.ctypes.data_as(ctypes.c_void_p), message, dims,
    )  # fmt: skip
    if rc == -2:
        raise InvalidArgumentError(BAD_WINDOW, node)
    if rc != 0:
        detail = message.value.decode(errors="replace")
        raise InvalidArgumentError(f"Invalid JPEG data or crop window: {detail}", node)
    return out
