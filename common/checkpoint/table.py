"""Checkpoint format: the LevelDB-format table a bundle's index is (TensorFlow's
core/lib/io/table_builder.cc, block_builder.cc, format.cc) and the varints it and the
bundle's string encoding use. A TableBuilder is used by one thread at a time."""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import BinaryIO

from common.checkpoint.crc32c import crc32c, mask, unmask
from common.errors import (
    DataLossError,
    InvalidArgumentError,
    UnimplementedError,
)

TABLE_MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48  # two BlockHandles padded to 40 bytes, then the 8-byte magic
BLOCK_TRAILER_SIZE = 5  # compression type byte + masked CRC32C
BLOCK_SIZE = 256 * 1024  # table::Options defaults TensorFlow writes with
RESTART_INTERVAL = 16
NO_COMPRESSION = 0
_U32 = struct.Struct("<I")


# ---------------------------------------------------------------------------------------
# Varints
# ---------------------------------------------------------------------------------------


def put_varint(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def get_varint(data: bytes | memoryview, pos: int, where: str) -> tuple[int, int]:
    """(value, position after it); DataLoss naming `where` if the data ends first."""
    result = shift = 0
    while pos < len(data) and shift <= 63:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
    raise DataLossError(f"Bad varint in {where}")


# ---------------------------------------------------------------------------------------
# Writing (table_builder.cc, block_builder.cc, format.cc)
# ---------------------------------------------------------------------------------------


class _BlockBuilder:
    """Entries with keys prefix-compressed against the previous one, a restart point
    (a full key) every `restart_interval` entries, then the restart offsets."""

    def __init__(self, restart_interval: int) -> None:
        self.restart_interval = restart_interval
        self.reset()

    def reset(self) -> None:
        self.buffer = bytearray()
        self.restarts = [0]
        self.counter = 0
        self.last_key = b""

    def add(self, key: bytes, value: bytes) -> None:
        shared = 0
        if self.counter < self.restart_interval:
            limit = min(len(self.last_key), len(key))
            while shared < limit and self.last_key[shared] == key[shared]:
                shared += 1
        else:
            self.restarts.append(len(self.buffer))
            self.counter = 0
        put_varint(self.buffer, shared)
        put_varint(self.buffer, len(key) - shared)
        put_varint(self.buffer, len(value))
        self.buffer += key[shared:]
        self.buffer += value
        self.last_key = key
        self.counter += 1

    def size_estimate(self) -> int:
        return len(self.buffer) + 4 * len(self.restarts) + 4

    def empty(self) -> bool:
        return not self.buffer

    def finish(self) -> bytes:
        tail = b"".join(_U32.pack(r) for r in self.restarts) + _U32.pack(len(self.restarts))
        return bytes(self.buffer) + tail


def _shortest_separator(start: bytes, limit: bytes) -> bytes:
    """A short key >= start and < limit (BytewiseComparator::FindShortestSeparator)."""
    n = min(len(start), len(limit))
    i = 0
    while i < n and start[i] == limit[i]:
        i += 1
    if i < n and start[i] < 0xFF and start[i] + 1 < limit[i]:
        return start[:i] + bytes([start[i] + 1])
    return start


def _short_successor(key: bytes) -> bytes:
    """A short key >= key (BytewiseComparator::FindShortSuccessor)."""
    for i, byte in enumerate(key):
        if byte != 0xFF:
            return key[:i] + bytes([byte + 1])
    return key


def _block_handle(offset: int, size: int) -> bytes:
    out = bytearray()
    put_varint(out, offset)
    put_varint(out, size)
    return bytes(out)


class TableBuilder:
    """Writes a LevelDB-format table of (key, value) added in strictly increasing key
    order to `out`, uncompressed, laid out exactly as TensorFlow's TableBuilder does."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.offset = 0
        self.data_block = _BlockBuilder(RESTART_INTERVAL)
        self.index_block = _BlockBuilder(1)
        self.last_key: bytes | None = None
        self.pending_handle: bytes | None = None  # of the last data block, not yet indexed

    def add(self, key: bytes, value: bytes) -> None:
        if self.last_key is not None and key <= self.last_key:
            raise InvalidArgumentError(f"Table keys out of order: {key!r} after {self.last_key!r}")
        if self.pending_handle is not None:
            assert self.last_key is not None
            self.index_block.add(_shortest_separator(self.last_key, key), self.pending_handle)
            self.pending_handle = None
        self.data_block.add(key, value)
        self.last_key = key
        if self.data_block.size_estimate() >= BLOCK_SIZE:
            self._flush()

    def _flush(self) -> None:
        if self.data_block.empty():
            return
        self.pending_handle = self._write_block(self.data_block)

    def _write_block(self, block: _BlockBuilder) -> bytes:
        contents = block.finish()
        block.reset()
        handle = _block_handle(self.offset, len(contents))
        kind = bytes([NO_COMPRESSION])
        self.out.write(contents)
        self.out.write(kind + _U32.pack(mask(crc32c(kind, crc32c(contents)))))
        self.offset += len(contents) + BLOCK_TRAILER_SIZE
        return handle

    def finish(self) -> None:
        self._flush()
        metaindex_handle = self._write_block(_BlockBuilder(RESTART_INTERVAL))
        if self.pending_handle is not None:
            assert self.last_key is not None
            self.index_block.add(_short_successor(self.last_key), self.pending_handle)
            self.pending_handle = None
        index_handle = self._write_block(self.index_block)
        footer = (metaindex_handle + index_handle).ljust(FOOTER_SIZE - 8, b"\0")
        self.out.write(footer + struct.pack("<Q", TABLE_MAGIC))
        self.offset += FOOTER_SIZE


# ---------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------


def _read_block(data: bytes, handle: bytes, pos: int, filename: str) -> tuple[bytes, int]:
    """The contents of the block `handle` (at `pos` in it) points to, checksum verified."""
    offset, pos = get_varint(handle, pos, filename)
    size, pos = get_varint(handle, pos, filename)
    end = offset + size
    if end + BLOCK_TRAILER_SIZE > len(data):
        raise DataLossError(f"Truncated block read in {filename}")
    contents, kind = data[offset:end], data[end]
    stored = _U32.unpack_from(data, end + 1)[0]
    if unmask(stored) != crc32c(data[end : end + 1], crc32c(contents)):
        raise DataLossError(f"Block checksum mismatch in {filename}")
    if kind != NO_COMPRESSION:
        raise UnimplementedError(f"Compressed table blocks (type {kind}) in {filename}")
    return contents, pos


def _block_entries(block: bytes, filename: str) -> Iterable[tuple[bytes, bytes]]:
    if len(block) < 4:
        raise DataLossError(f"Bad block contents in {filename}")
    num_restarts = _U32.unpack_from(block, len(block) - 4)[0]
    limit = len(block) - 4 - 4 * num_restarts
    if limit < 0:
        raise DataLossError(f"Bad block contents in {filename}")
    pos, key = 0, b""
    while pos < limit:
        shared, pos = get_varint(block, pos, filename)
        non_shared, pos = get_varint(block, pos, filename)
        value_len, pos = get_varint(block, pos, filename)
        if shared > len(key) or pos + non_shared + value_len > limit:
            raise DataLossError(f"Bad entry in block of {filename}")
        key = key[:shared] + block[pos : pos + non_shared]
        pos += non_shared
        yield key, block[pos : pos + value_len]
        pos += value_len


def read_table(data: bytes, filename: str) -> list[tuple[bytes, bytes]]:
    """Every (key, value) of a LevelDB-format table held in `data`, in key order."""
    if len(data) < FOOTER_SIZE:
        raise DataLossError(f"{filename}: file is too short to be an sstable")
    footer = data[len(data) - FOOTER_SIZE :]
    if struct.unpack_from("<Q", footer, FOOTER_SIZE - 8)[0] != TABLE_MAGIC:
        raise DataLossError(f"{filename}: not an sstable (bad magic number)")
    _, pos = _read_block(data, footer, 0, filename)  # the metaindex: checked, unused
    index, _ = _read_block(data, footer, pos, filename)
    entries: list[tuple[bytes, bytes]] = []
    for _, handle in _block_entries(index, filename):
        block, _ = _read_block(data, handle, 0, filename)
        entries.extend(_block_entries(block, filename))
    return entries
