"""Image codecs (common.ops.image_codec_ops, common.png) against TensorFlow's kernels:
PNG bytes equal TensorFlow's encoder's, decoded values equal its decoder's; JPEG encodes
byte-equal, decodes exactly with dct_method INTEGER_ACCURATE and within the measured
IFAST bound otherwise; BMP, GIF and DecodeImage's sniffing as TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import InvalidArgumentError

from . import run1
from .signatures import assert_signature_matches_tensorflow, module_ops

tf = pytest.importorskip("tensorflow")
MY_OPS = module_ops("common.ops.image_codec_ops")


def _b(x) -> np.ndarray:
    return np.array(bytes(x), dtype=object)


def _images(dtype) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    top = np.iinfo(dtype).max
    out = []
    for h, w, c in [(1, 1, 3), (1, 9, 1), (7, 1, 2), (5, 7, 3), (33, 20, 4), (130, 70, 3)]:
        out.append(rng.integers(0, top + 1, (h, w, c)).astype(dtype))
        ramp = np.add.outer(np.arange(h), 3 * np.arange(w))[..., None] * np.arange(1, c + 1)
        out.append((ramp % top).astype(dtype))
    return out


@pytest.mark.parametrize("op", MY_OPS)
def test_signature_matches_tensorflow(op):
    assert_signature_matches_tensorflow(op)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("compression", [-1, 1, 9])
def test_encode_png_bytes_equal_tensorflow(dtype, compression):
    for image in _images(dtype):
        ours = run1("EncodePng", image, compression=compression)
        theirs = tf.io.encode_png(image, compression=compression).numpy()
        assert ours.item() == theirs, (image.shape, dtype)


def test_encode_png_uncompressed_small_images_equal_tensorflow():
    # compression=0 on images over one 8 KiB zlib buffer is not byte-equal: libpng's
    # stored blocks follow its output buffer; the values still round-trip.
    for image in _images(np.uint8)[:8]:
        assert run1("EncodePng", image, compression=0).item() == tf.io.encode_png(image, 0).numpy()


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("out", [np.uint8, np.uint16])
@pytest.mark.parametrize("channels", [0, 1, 3, 4])
def test_decode_png_equals_tensorflow(dtype, out, channels):
    for image in _images(dtype):
        if dtype == np.uint16 and channels == 1 and image.shape[2] >= 3:
            continue  # 16-bit color to gray: Unimplemented (below)
        data = tf.io.encode_png(image).numpy()
        theirs = tf.io.decode_png(data, channels=channels, dtype=tf.as_dtype(out)).numpy()
        ours = run1(
            "DecodePng", _b(data), channels=channels, dtype=tf.as_dtype(out).as_datatype_enum
        )
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_array_equal(ours, theirs)


def test_decode_png_palette_and_pillow_files(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(1)
    rgb = Image.fromarray(rng.integers(0, 256, (12, 9, 3)).astype(np.uint8))
    for image in (rgb.convert("P"), rgb.convert("L"), rgb.convert("LA"), rgb.convert("RGBA")):
        path = tmp_path / "x.png"
        image.save(path, optimize=True)
        data = path.read_bytes()
        for channels in (0, 1, 3, 4):
            theirs = tf.io.decode_png(data, channels=channels).numpy()
            np.testing.assert_array_equal(run1("DecodePng", _b(data), channels=channels), theirs)


def test_decode_png_rejects_garbage_with_invalid_argument():
    with pytest.raises(InvalidArgumentError):
        run1("DecodePng", _b(b"not a png"))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.io.decode_png(b"not a png")


@pytest.mark.parametrize("quality", [95, 50])
@pytest.mark.parametrize("chroma", [True, False])
def test_encode_jpeg_bytes_equal_tensorflow(quality, chroma):
    for image in _images(np.uint8):
        if image.shape[2] not in (1, 3):
            continue
        kwargs = {"quality": quality, "chroma_downsampling": chroma}
        theirs = tf.io.encode_jpeg(image, **kwargs).numpy()
        assert run1("EncodeJpeg", image, **kwargs).item() == theirs, image.shape


def test_encode_jpeg_options_equal_tensorflow():
    image = _images(np.uint8)[10]
    for kwargs in (
        {"progressive": True},
        {"optimize_size": True},
        {"density_unit": "cm", "x_density": 72, "y_density": 96},
        {"format": "rgb"},
    ):
        theirs = tf.io.encode_jpeg(image, **kwargs).numpy()
        assert run1("EncodeJpeg", image, **kwargs).item() == theirs, kwargs


def _libjpeg() -> bool:
    from common.ops import libjpeg

    return libjpeg.library() is not None


def test_decode_jpeg_accurate_dct_is_exact_fast_within_bound():
    """Through libjpeg-turbo (jpeg_shim.c built) every decode is exact; with Pillow only
    the default (IFAST) DCT is a few levels off."""
    worst = 0
    for image in _images(np.uint8):
        if image.shape[2] not in (1, 3):
            continue
        data = tf.io.encode_jpeg(image).numpy()
        for channels in (0, 1, 3):
            exact = tf.io.decode_jpeg(data, channels=channels, dct_method="INTEGER_ACCURATE")
            ours = run1("DecodeJpeg", _b(data), channels=channels, dct_method="INTEGER_ACCURATE")
            np.testing.assert_array_equal(ours, exact.numpy())
            fast = tf.io.decode_jpeg(data, channels=channels).numpy()
            ours = run1("DecodeJpeg", _b(data), channels=channels)
            assert ours.shape == fast.shape
            worst = max(worst, int(np.abs(ours.astype(int) - fast).max()))
    # TensorFlow's default DCT is libjpeg's IFAST; Pillow decodes with ISLOW (measured: at
    # most 20 levels on these images, most pixels equal).
    assert worst == 0 if _libjpeg() else worst <= 20


@pytest.mark.parametrize("ratio", [1, 2, 8])
@pytest.mark.parametrize("fancy", [True, False])
def test_decode_jpeg_default_dct_and_plain_upsampling_equal_tensorflow(ratio, fancy):
    if not _libjpeg():
        pytest.skip("no C compiler or libjpeg headers: jpeg_shim.c not built")
    image = _images(np.uint8)[11]
    data = tf.io.encode_jpeg(image, chroma_downsampling=True).numpy()
    theirs = tf.io.decode_jpeg(data, ratio=ratio, fancy_upscaling=fancy).numpy()
    ours = run1("DecodeJpeg", _b(data), ratio=ratio, fancy_upscaling=fancy)
    np.testing.assert_array_equal(ours, theirs)


def test_decode_jpeg_ratio_equals_tensorflow():
    image = _images(np.uint8)[11]
    data = tf.io.encode_jpeg(image).numpy()
    for ratio in (2, 4, 8):
        theirs = tf.io.decode_jpeg(data, ratio=ratio, dct_method="INTEGER_ACCURATE").numpy()
        ours = run1("DecodeJpeg", _b(data), ratio=ratio, dct_method="INTEGER_ACCURATE")
        np.testing.assert_array_equal(ours, theirs)


def test_decode_bmp_gif_and_image_equal_tensorflow(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(2)
    rgb = rng.integers(0, 256, (6, 10, 3)).astype(np.uint8)
    Image.fromarray(rgb).save(tmp_path / "a.bmp")
    frames = [
        Image.fromarray(rng.integers(0, 4, (6, 10, 3)).astype(np.uint8) * 60) for _ in range(3)
    ]
    frames[0].save(tmp_path / "a.gif", save_all=True, append_images=frames[1:])
    bmp, gif = (tmp_path / "a.bmp").read_bytes(), (tmp_path / "a.gif").read_bytes()
    np.testing.assert_array_equal(run1("DecodeBmp", _b(bmp)), tf.io.decode_bmp(bmp).numpy())
    np.testing.assert_array_equal(run1("DecodeGif", _b(gif)), tf.io.decode_gif(gif).numpy())
    png16 = tf.io.encode_png(_images(np.uint16)[9]).numpy()
    jpeg = tf.io.encode_jpeg(rgb).numpy()
    for data in (bmp, gif, png16, tf.io.encode_png(rgb).numpy()):
        for dtype in (tf.uint8, tf.uint16, tf.float32):
            for expand in (True, False):
                theirs = tf.raw_ops.DecodeImage(
                    contents=data, dtype=dtype, expand_animations=expand
                )
                ours = run1(
                    "DecodeImage", _b(data), dtype=dtype.as_datatype_enum, expand_animations=expand
                )
                assert ours.dtype == theirs.numpy().dtype
                np.testing.assert_array_equal(ours, theirs.numpy())
    theirs = tf.io.decode_image(jpeg, dtype=tf.float32).numpy()
    ours = run1("DecodeImage", _b(jpeg), dtype=tf.float32.as_datatype_enum)
    assert ours.shape == theirs.shape and np.abs(ours - theirs).max() <= 8 / 255 + 1e-6
    if _libjpeg():
        np.testing.assert_array_equal(ours, theirs)
