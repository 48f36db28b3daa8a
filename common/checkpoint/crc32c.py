"""Checkpoint format: CRC32C (Castagnoli), masked as LevelDB and TensorFlow store it
(core/lib/hash/crc32c.h). Pure functions, safe to call from any thread."""

from __future__ import annotations

import google_crc32c


def crc32c(data: bytes, crc: int = 0) -> int:
    """`crc` extended over `data` (bytes: the C library takes no other buffer)."""
    return int(google_crc32c.extend(crc, data))


def mask(crc: int) -> int:
    """LevelDB's masked CRC: rotate right 15 bits and add a constant, so the CRC of data
    that embeds CRCs stays well distributed."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    rot = (masked - 0xA282EAD8) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF
