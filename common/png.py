"""PNG encoding as TensorFlow writes it (its png_io.cc over libpng 1.6), byte for byte.

TensorFlow's EncodePng hands whole rows to libpng with its defaults, so the file is:
signature, IHDR, IDAT chunks of at most 8192 bytes (libpng's zlib buffer), IEND. libpng
picks each row's filter by the minimum sum of absolute (signed) filtered bytes over all five
filters, earliest filter on ties (none for fewer than 8 bits per sample, which TensorFlow
never writes), and deflates with zlib's Z_FILTERED strategy, memory level 9 and a window
shrunk to the smallest that still covers small images (the zlib header then names the
smallest window that covers the data). Not byte-equal: compression 0 on images over 8 KiB
(libpng's stored blocks follow its output buffer). Decoding is Pillow's
(common.ops.image_codec_ops) except 16-bit PNGs with color or alpha, which Pillow narrows
to 8 bits: decode_16bit reads those.
Pure functions; safe from any thread.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_IDAT_SIZE = 8192  # libpng's PNG_ZBUF_SIZE: each IDAT holds one full zlib output buffer
_COLOR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> gray, gray+alpha, RGB, RGBA


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _signed_cost(rows: np.ndarray) -> np.ndarray:
    """libpng's filter heuristic per row: sum of min(v, 256 - v) over the filtered bytes."""
    v = rows.astype(np.int64)
    return np.minimum(v, 256 - v).sum(axis=-1)


def _paeth(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    a, b, c = (x.astype(np.int16) for x in (a, b, c))
    p = a + b - c
    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
    out = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))
    return out.astype(np.uint8)


def filter_rows(raw: np.ndarray, bpp: int) -> bytes:
    """Rows of raw bytes (h, rowbytes) filtered as libpng's adaptive choice does: each row
    prefixed by its filter type byte. As png_write_start_row, an image of one row tries
    none and sub only, one of one pixel column none and up only."""
    h, width = raw.shape
    up = np.zeros_like(raw)
    up[1:] = raw[:-1]
    left = np.zeros_like(raw)
    left[:, bpp:] = raw[:, :-bpp]
    upleft = np.zeros_like(raw)
    upleft[1:, bpp:] = raw[:-1, :-bpp]
    average = ((left.astype(np.uint16) + up) >> 1).astype(np.uint8)
    candidates = np.stack(
        [raw, raw - left, raw - up, raw - average, raw - _paeth(left, up, upleft)]
    )  # uint8 arithmetic wraps mod 256, as the PNG filters do
    cost = _signed_cost(candidates)
    if h == 1:
        cost[[2, 3, 4]] = np.iinfo(np.int64).max
    if width == bpp:
        cost[[1, 3, 4]] = np.iinfo(np.int64).max
    choice = np.argmin(cost, axis=0)  # first minimum: libpng's tie rule
    out = np.empty((h, width + 1), np.uint8)
    out[:, 0] = choice
    out[:, 1:] = candidates[choice, np.arange(h)]
    return out.tobytes()


def _window_bits(data_size: int) -> int:
    """libpng's png_deflate_claim: for up to 16 KiB of data, the smallest window with room
    for it (and zlib's 262-byte lookahead), at least 2**9 (zlib refuses 2**8)."""
    bits = 15
    if data_size <= 16384:
        half = 1 << (bits - 1)
        while data_size + 262 <= half:
            half >>= 1
            bits -= 1
    return max(bits, 9)


def _optimize_cmf(stream: bytes, data_size: int) -> bytes:
    """libpng's optimize_cmf: the zlib header of a small image names the smallest window
    that covers the data (the header check bits recomputed)."""
    cmf = stream[0]
    if data_size > 16384 or (cmf & 0x0F) != 8 or (cmf & 0xF0) > 0x70:
        return stream
    cinfo = cmf >> 4
    half = 1 << (cinfo + 7)
    if data_size > half:
        return stream
    while True:
        half >>= 1
        cinfo -= 1
        if not (cinfo > 0 and data_size <= half):
            break
    cmf = (cmf & 0x0F) | (cinfo << 4)
    flg = stream[1] & 0xE0
    flg += 0x1F - ((cmf << 8) + flg) % 0x1F
    return bytes([cmf, flg]) + stream[2:]


def encode(image: np.ndarray, compression: int = -1) -> bytes:
    """An (h, w, c) uint8 or uint16 array, c in 1..4, as TensorFlow's EncodePng bytes."""
    h, w, channels = image.shape
    depth = 16 if image.dtype == np.uint16 else 8
    raw = image.astype(">u2") if depth == 16 else image
    bpp = channels * depth // 8
    rows = np.ascontiguousarray(raw).view(np.uint8).reshape(h, w * bpp)
    data = filter_rows(rows, bpp) if h and w else b"\0" * h
    # libpng deflates filtered rows with Z_FILTERED, unfiltered ones (1x1) with the default.
    strategy = zlib.Z_DEFAULT_STRATEGY if h <= 1 and w <= 1 else zlib.Z_FILTERED
    comp = zlib.compressobj(compression, zlib.DEFLATED, _window_bits(len(data)), 9, strategy)
    stream = _optimize_cmf(comp.compress(data) + comp.flush(), len(data))
    ihdr = struct.pack(">IIBBBBB", w, h, depth, _COLOR_TYPE[channels], 0, 0, 0)
    idats = b"".join(
        _chunk(b"IDAT", stream[i : i + _IDAT_SIZE]) for i in range(0, len(stream), _IDAT_SIZE)
    )
    return SIGNATURE + _chunk(b"IHDR", ihdr) + idats + _chunk(b"IEND", b"")


def header(contents: bytes) -> tuple[int, int, int, int] | None:
    """(width, height, bit depth, color type) from a PNG's IHDR, None when not a PNG."""
    if len(contents) < 29 or not contents.startswith(SIGNATURE) or contents[12:16] != b"IHDR":
        return None
    w, h, depth, color = struct.unpack(">IIBB", contents[16:26])
    return w, h, depth, color


def _chunks(contents: bytes):  # -> Iterator[tuple[bytes, bytes]]
    pos = len(SIGNATURE)
    while pos + 8 <= len(contents):
        (length,) = struct.unpack(">I", contents[pos : pos + 4])
        yield contents[pos + 4 : pos + 8], contents[pos + 8 : pos + 8 + length]
        pos += 12 + length


def _unfilter(data: bytes, h: int, rowbytes: int, bpp: int) -> np.ndarray:
    """Undo the per-row PNG filters (the sequential ones pixel by pixel)."""
    rows = np.frombuffer(data, np.uint8)[: h * (rowbytes + 1)].reshape(h, rowbytes + 1)
    out = np.zeros((h, rowbytes), np.uint8)
    prior = np.zeros(rowbytes, np.uint8)
    for y in range(h):
        kind, line = rows[y, 0], rows[y, 1:].copy()
        if kind == 2:
            line += prior
        elif kind in (1, 3, 4):
            px = line.reshape(-1, bpp).astype(np.int16)
            up = prior.reshape(-1, bpp).astype(np.int16)
            left = np.zeros(bpp, np.int16)
            upleft = np.zeros(bpp, np.int16)
            for x in range(px.shape[0]):
                if kind == 1:
                    pred = left
                elif kind == 3:
                    pred = (left + up[x]) >> 1
                else:
                    pred = _paeth(left, up[x], upleft).astype(np.int16)
                px[x] = (px[x] + pred) & 0xFF
                left, upleft = px[x], up[x]
            line = px.astype(np.uint8).reshape(-1)
        out[y] = line
        prior = out[y]
    return out


def decode_16bit(contents: bytes) -> np.ndarray:
    """A non-interlaced 16-bit PNG with color or alpha as (h, w, c) uint16 (Pillow reads
    these as 8-bit)."""
    w, h, _, color = struct.unpack(">IIBB", contents[16:26])
    if contents[28] != 0:
        raise ValueError("interlaced 16-bit PNGs with color or alpha are not supported")
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[color]
    stream = b"".join(data for kind, data in _chunks(contents) if kind == b"IDAT")
    raw = _unfilter(zlib.decompress(stream), h, w * channels * 2, channels * 2)
    return raw.view(">u2").astype(np.uint16).reshape(h, w, channels)
