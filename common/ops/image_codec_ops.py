"""Ops (executor stage), image codecs: DecodePng, DecodeJpeg, DecodeBmp, DecodeGif,
DecodeImage, EncodePng, EncodeJpeg (TensorFlow's decode_image_op.cc, encode_png_op.cc,
encode_jpeg_op.cc).

Decoding uses Pillow: a well-kept binding of libjpeg-turbo (TensorFlow's own JPEG codec),
libpng-compatible zlib inflate and giflib-equivalent GIF decoding, already on most Python
machines. JPEGs decode through common.ops.libjpeg first: the system's libjpeg-turbo with
TensorFlow's settings (JDCT_IFAST by default, which Pillow does not expose; fancy
upsampling as asked), TensorFlow's bytes. Without it (no C compiler or libjpeg headers)
or for CMYK, Pillow decodes with JDCT_ISLOW: exact for dct_method "INTEGER_ACCURATE",
else a few levels off (at most 8 on noisy images, see the tests).
EncodeJpeg is byte-equal (the same libjpeg-turbo settings); EncodePng is written by
common.png, byte-equal to TensorFlow's libpng output. Kernels keep no state; safe from any
thread.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable

import numpy as np

from common import dtypes, png
from common.errors import InvalidArgumentError, UnimplementedError
from common.ops import libjpeg
from common.ops.registry import KernelConstruction, register_kernel, register_op

register_op("DecodePng", inputs=["contents: string"], outputs=["image: dtype"],
            attrs=["channels: int = 0", "dtype: {uint8, uint16} = DT_UINT8"])  # fmt: skip
register_op("DecodeJpeg", inputs=["contents: string"], outputs=["image: uint8"],
            attrs=["channels: int = 0", "ratio: int = 1", "fancy_upscaling: bool = true",
                   "try_recover_truncated: bool = false", "acceptable_fraction: float = 1.0",
                   "dct_method: string = ''"])  # fmt: skip
register_op("DecodeBmp", inputs=["contents: string"], outputs=["image: uint8"],
            attrs=["channels: int = 0"])  # fmt: skip
register_op("DecodeGif", inputs=["contents: string"], outputs=["image: uint8"])
register_op("DecodeImage", inputs=["contents: string"], outputs=["image: dtype"],
            attrs=["channels: int = 0", "dtype: {uint8, uint16, float} = DT_UINT8",
                   "expand_animations: bool = true"])  # fmt: skip
register_op("EncodePng", inputs=["image: T"], outputs=["contents: string"],
            attrs=["compression: int = -1", "T: {uint8, uint16} = DT_UINT8"])  # fmt: skip
register_op("EncodeJpeg", inputs=["image: uint8"], outputs=["contents: string"],
            attrs=["format: {'', 'grayscale', 'rgb'} = ''", "quality: int = 95",
                   "progressive: bool = false", "optimize_size: bool = false",
                   "chroma_downsampling: bool = true", "density_unit: {'in', 'cm'} = 'in'",
                   "x_density: int = 300", "y_density: int = 300",
                   "xmp_metadata: string = ''"])  # fmt: skip

Compute = Callable[..., list]


def _contents(x: np.ndarray, node: str) -> bytes:
    arr = np.asarray(x, dtype=object)
    if arr.ndim != 0:
        raise InvalidArgumentError(f"contents must be scalar, got shape {list(arr.shape)}", node)
    value = arr.item()
    return value if isinstance(value, bytes) else str(value).encode()


def _open(data: bytes, kind: str, node: str):  # -> PIL.Image.Image
    from PIL import Image, UnidentifiedImageError

    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
        message = f"Invalid {kind} data or crop window, data size {len(data)}: {e}"
        raise InvalidArgumentError(message, node) from None
    return image


def _check_channels(channels: int, allowed: tuple[int, ...], node: str) -> None:
    if channels not in allowed:
        names = ", ".join(str(c) for c in allowed[:-1]) + f" or {allowed[-1]}"
        raise InvalidArgumentError(f"channels must be {names}, got {channels}", node)


# -- channel conversions as libpng/libjpeg perform them -----------------------------------
def _rgb_to_gray8(rgb: np.ndarray) -> np.ndarray:
    """libpng's png_set_rgb_to_gray(1, 0.299, 0.587) on 8-bit samples: the weights in
    1/32768ths (truncated), the sum truncated."""
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    return ((9797 * r + 19234 * g + 3737 * b) >> 15).astype(rgb.dtype)


def _set_channels(pixels: np.ndarray, channels: int, node: str) -> np.ndarray:
    """(h, w, c) samples to `channels` (0 keeps c): gray replicated, alpha added opaque or
    dropped, color to gray as libpng does."""
    have = pixels.shape[-1]
    if channels in (0, have):
        return pixels
    opaque = np.iinfo(pixels.dtype).max
    color = pixels[..., :3] if have >= 3 else np.repeat(pixels[..., :1], 3, axis=-1)
    if channels == 1:
        if have >= 3:
            if pixels.dtype != np.uint8:
                raise UnimplementedError("16-bit color to grayscale PNG decoding", node)
            return _rgb_to_gray8(color)[..., None]
        return pixels[..., :1]
    if channels == 3:
        return color
    alpha = pixels[..., -1:] if have in (2, 4) else np.full(pixels.shape[:-1] + (1,), opaque,
                                                            pixels.dtype)  # fmt: skip
    return np.concatenate([color, alpha], axis=-1)


def _pixels(image) -> np.ndarray:  # noqa: ANN001  (a PIL image)
    """A Pillow image's samples as (h, w, c) uint8 or uint16, palette images expanded."""
    mode = image.mode
    if mode == "P" or mode == "PA":
        image = image.convert("RGBA" if "transparency" in image.info or mode == "PA" else "RGB")
    elif mode in ("1", "CMYK", "YCbCr", "LAB", "HSV"):
        image = image.convert("L" if mode == "1" else "RGB")
    elif mode in ("I;16", "I;16B", "I;16L", "I"):
        return np.asarray(image).astype(np.uint16)[..., None]
    arr = np.asarray(image)
    return arr[..., None] if arr.ndim == 2 else arr


# -- PNG -----------------------------------------------------------------------------------
def decode_png(data: bytes, channels: int, dtype: np.dtype, node: str) -> np.ndarray:
    head = png.header(data)
    if head is None:
        raise InvalidArgumentError("Invalid PNG header, data size " + str(len(data)), node)
    if head[2] == 16 and head[3] in (2, 4, 6):
        try:
            pixels = png.decode_16bit(data)  # Pillow reads these as 8-bit
        except (ValueError, zlib.error) as e:
            raise InvalidArgumentError(f"Invalid PNG data, size {len(data)}: {e}", node) from None
    else:
        pixels = _pixels(_open(data, "PNG", node))
    pixels = _set_channels(pixels, channels, node)
    if dtype == np.uint16 and pixels.dtype == np.uint8:
        return pixels.astype(np.uint16) * 257
    if dtype == np.uint8 and pixels.dtype == np.uint16:
        return (pixels >> 8).astype(np.uint8)  # libpng's png_set_strip_16
    return pixels


@register_kernel("DecodePng")
def _decode_png(k: KernelConstruction) -> Compute:
    channels, dtype = k.attrs["channels"], dtypes.as_numpy(k.attrs["dtype"])
    _check_channels(channels, (0, 1, 3, 4), k.node_name)

    def compute(ctx, inputs: list) -> list:
        return [decode_png(_contents(inputs[0], k.node_name), channels, dtype, k.node_name)]

    return compute


@register_kernel("EncodePng")
def _encode_png(k: KernelConstruction) -> Compute:
    compression = k.attrs["compression"]
    if not -1 <= compression <= 9:
        raise InvalidArgumentError(
            f"compression should be in [-1,9], got {compression}", k.node_name
        )

    def compute(ctx, inputs: list) -> list:
        image = np.asarray(inputs[0])
        if image.ndim != 3:
            raise InvalidArgumentError(
                f"image must be 3-dimensional[{','.join(map(str, image.shape))}]", k.node_name
            )
        if not 1 <= image.shape[2] <= 4:
            raise InvalidArgumentError(
                f"image must have 1, 2, 3, or 4 channels, got {image.shape[2]}", k.node_name
            )
        return [np.array(png.encode(image, compression), dtype=object)]

    return compute


# -- JPEG ----------------------------------------------------------------------------------
def decode_jpeg(
    data: bytes, channels: int, ratio: int, node: str, fancy: bool = True, dct_method: str = ""
) -> np.ndarray:
    """As TensorFlow decodes it (libjpeg-turbo through common.ops.libjpeg), else Pillow's
    JDCT_ISLOW decode (then the default dct_method differs by a few levels)."""
    exact = libjpeg.decode_window(
        data, None, channels, ratio, fancy, dct_method != "INTEGER_ACCURATE", node
    )
    if exact is not None:
        return exact
    if not fancy:
        raise UnimplementedError("DecodeJpeg with fancy_upscaling=false", node)
    from PIL import Image, UnidentifiedImageError

    try:
        image = Image.open(io.BytesIO(data))
        if image.format != "JPEG":
            raise InvalidArgumentError("Invalid JPEG data or crop window.", node)
        # draft() makes libjpeg itself scale by 1/ratio and convert to gray (its Y channel),
        # as TensorFlow's decoder asks it to.
        mode = "L" if channels == 1 else image.mode
        w, h = image.size
        image.draft(mode, (max(1, w // ratio), max(1, h // ratio)))
        image.load()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
        raise InvalidArgumentError(f"Invalid JPEG data or crop window: {e}", node) from None
    pixels = _pixels(image)
    if channels == 1 and pixels.shape[-1] != 1:
        pixels = np.asarray(image.convert("L"))[..., None]
    if channels == 3 and pixels.shape[-1] == 1:
        pixels = np.repeat(pixels, 3, axis=-1)
    return pixels


@register_kernel("DecodeJpeg")
def _decode_jpeg(k: KernelConstruction) -> Compute:
    channels, ratio = k.attrs["channels"], k.attrs["ratio"]
    _check_channels(channels, (0, 1, 3), k.node_name)
    if ratio not in (1, 2, 4, 8):
        raise InvalidArgumentError(f"ratio must be 1, 2, 4, or 8, got {ratio}", k.node_name)
    fancy, dct = bool(k.attrs["fancy_upscaling"]), str(k.attrs["dct_method"])

    def compute(ctx, inputs: list) -> list:
        data = _contents(inputs[0], k.node_name)
        return [decode_jpeg(data, channels, ratio, k.node_name, fancy, dct)]

    return compute


def encode_jpeg(image: np.ndarray, attrs: dict, node: str) -> bytes:
    from PIL import Image

    if image.ndim != 3:
        dims = ",".join(map(str, image.shape))
        raise InvalidArgumentError(f"image must be 3-dimensional[{dims}]", node)
    fmt, channels = attrs["format"], image.shape[2]
    want = {"grayscale": 1, "rgb": 3}.get(fmt, channels)
    if channels not in (1, 3) or channels != want:
        raise InvalidArgumentError(
            f"image must have 1 or 3 channels, got {image.shape}" if not fmt
            else f"Invalid format '{fmt}' for {channels} channels",
            node,
        )  # fmt: skip
    quality = attrs["quality"]
    if not 0 <= quality <= 100:
        raise InvalidArgumentError(f"quality must be in [0,100], got {quality}", node)
    picture = Image.fromarray(image[..., 0] if channels == 1 else image)
    options: dict = {
        "quality": quality,
        "progressive": attrs["progressive"],
        "optimize": attrs["optimize_size"],
        "dpi": (attrs["x_density"], attrs["y_density"]),
    }
    if channels == 3:  # libjpeg samples a gray image's one component 1x1 whatever is asked
        options["subsampling"] = 2 if attrs["chroma_downsampling"] else 0  # 4:2:0 or 4:4:4
    if attrs["xmp_metadata"]:
        options["xmp"] = attrs["xmp_metadata"].encode()
    out = io.BytesIO()
    picture.save(out, "JPEG", **options)
    data = out.getvalue()
    if attrs["density_unit"] == "cm":
        # JFIF APP0 right after SOI: units byte at offset 2 (SOI) + 2 + 2 + 5 + 2 = 13.
        data = data[:13] + b"\x02" + data[14:]
    return data


@register_kernel("EncodeJpeg")
def _encode_jpeg(k: KernelConstruction) -> Compute:
    def compute(ctx, inputs: list) -> list:
        data = encode_jpeg(np.asarray(inputs[0]), k.attrs, k.node_name)
        return [np.array(data, dtype=object)]

    return compute


# -- BMP, GIF and the format-sniffing DecodeImage -------------------------------------------
def decode_bmp(data: bytes, channels: int, node: str) -> np.ndarray:
    image = _open(data, "BMP", node)
    pixels = _pixels(image)
    return _set_channels(pixels, channels, node)


def decode_gif(data: bytes, node: str) -> np.ndarray:
    from PIL import ImageSequence

    image = _open(data, "GIF", node)
    frames = [np.asarray(f.convert("RGB")) for f in ImageSequence.Iterator(image)]
    return np.stack(frames)


@register_kernel("DecodeBmp")
def _decode_bmp(k: KernelConstruction) -> Compute:
    channels = k.attrs["channels"]
    _check_channels(channels, (0, 1, 3, 4), k.node_name)

    def compute(ctx, inputs: list) -> list:
        return [decode_bmp(_contents(inputs[0], k.node_name), channels, k.node_name)]

    return compute


@register_kernel("DecodeGif")
def _decode_gif(k: KernelConstruction) -> Compute:
    def compute(ctx, inputs: list) -> list:
        return [decode_gif(_contents(inputs[0], k.node_name), k.node_name)]

    return compute


def _format(data: bytes) -> str:
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data.startswith(png.SIGNATURE):
        return "png"
    if data.startswith(b"GIF"):
        return "gif"
    if data.startswith(b"BM"):
        return "bmp"
    return ""


def _convert_image_dtype(pixels: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """tf.image.convert_image_dtype between the integer sample types and to float32."""
    if pixels.dtype == dtype:
        return pixels
    if dtype == np.float32:
        return pixels.astype(np.float32) * np.float32(1.0 / np.iinfo(pixels.dtype).max)
    if dtype == np.uint16:
        return pixels.astype(np.uint16) << 8
    return (pixels >> 8).astype(np.uint8)


@register_kernel("DecodeImage")
def _decode_image(k: KernelConstruction) -> Compute:
    channels, dtype = k.attrs["channels"], dtypes.as_numpy(k.attrs["dtype"])
    expand = k.attrs["expand_animations"]
    _check_channels(channels, (0, 1, 3, 4), k.node_name)
    node = k.node_name

    def compute(ctx, inputs: list) -> list:
        data = _contents(inputs[0], node)
        kind = _format(data)
        if kind == "jpeg":
            if channels == 4:
                raise InvalidArgumentError("channels must be 0, 1 or 3 for JPEG", node)
            pixels = decode_jpeg(data, channels, 1, node)
        elif kind == "png":
            # TensorFlow decodes a PNG straight to 16 bits for uint16 and float (x257).
            wide = np.uint16 if dtype in (np.uint16, np.float32) else np.uint8
            pixels = decode_png(data, channels, np.dtype(wide), node)
        elif kind == "gif":
            if channels not in (0, 3):
                raise InvalidArgumentError("channels must be 0 or 3 for GIF, got " +
                                           str(channels), node)  # fmt: skip
            pixels = decode_gif(data, node)
            if not expand:
                pixels = pixels[0]
        elif kind == "bmp":
            pixels = decode_bmp(data, channels, node)
        else:
            raise InvalidArgumentError(
                "Unknown image file format. One of JPEG, PNG, GIF, BMP required.", node
            )
        return [_convert_image_dtype(pixels, dtype)]

    return compute
