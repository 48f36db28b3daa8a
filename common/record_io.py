"""TFRecord files (TensorFlow's io/record_reader.cc, record_writer.cc) and the compressed
input streams the file readers share: what TFRecordDataset, TFRecordReader, the event
files of client.summary and tf.io.TFRecordWriter read and write.

A record is: length (uint64 little-endian), masked CRC32C of the length, the data, masked
CRC32C of the data. A file is records back to back, optionally compressed as a whole:
compression "ZLIB" is one zlib stream, "GZIP" one gzip stream (TensorFlow's
ZlibCompressionOptions: default level, memory level 9). Readers and writers are plain
objects owned by one thread at a time (an iterator, a reader resource under its lock).
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterator
from typing import IO

from common import file_access
from common.checkpoint.crc32c import crc32c, mask, unmask
from common.errors import DataLossError, InvalidArgumentError, NotFoundError

COMPRESSIONS = ("", "ZLIB", "GZIP")
_CHUNK = 256 * 1024


def _wbits(compression: str) -> int:
    if compression not in COMPRESSIONS:
        raise InvalidArgumentError(f"Unsupported compression_type: {compression}.")
    return {"ZLIB": zlib.MAX_WBITS, "GZIP": zlib.MAX_WBITS + 16}.get(compression, 0)


def encode_record(data: bytes) -> bytes:
    header = struct.pack("<Q", len(data))
    header_crc = struct.pack("<I", mask(crc32c(header)))
    return b"".join([header, header_crc, data, struct.pack("<I", mask(crc32c(data)))])


def open_file(path: str, mode: str = "rb") -> IO[bytes]:
    """A file of the local filesystem, with TensorFlow's NotFound for a missing one."""
    path = file_access.resolve(path)
    try:
        return open(path, mode)  # noqa: SIM115  (the caller owns it)
    except FileNotFoundError:
        raise NotFoundError(f"{path}; No such file or directory") from None
    except IsADirectoryError:
        raise InvalidArgumentError(f"{path} is a directory") from None


class InputStream:
    """Bytes of a file, inflated when it is ZLIB or GZIP compressed; read(n) returns fewer
    than n bytes only at the end."""

    def __init__(self, f: IO[bytes], compression: str = "") -> None:
        wbits = _wbits(compression)
        self.f = f
        self.inflater = zlib.decompressobj(wbits) if wbits else None
        self.buffer = b""
        self.offset = 0  # bytes handed out so far (of the decompressed stream)

    def _fill(self, n: int) -> None:
        while len(self.buffer) < n:
            raw = self.f.read(_CHUNK)
            if self.inflater is None:
                if not raw:
                    return
                self.buffer += raw
                continue
            try:
                if raw:
                    self.buffer += self.inflater.decompress(raw)
                else:
                    self.buffer += self.inflater.flush()
                    return
            except zlib.error as e:
                raise DataLossError(f"corrupted compressed stream: {e}") from None

    def read(self, n: int) -> bytes:
        self._fill(n)
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        self.offset += len(out)
        return out

    def readline(self) -> bytes | None:
        """The next line without its "\\n" (a final line may lack one); None at the end."""
        while True:
            i = self.buffer.find(b"\n")
            if i >= 0:
                line = self.read(i + 1)
                return line[:-1]
            before = len(self.buffer)
            self._fill(before + _CHUNK)
            if len(self.buffer) == before:
                return self.read(before) if before else None

    def close(self) -> None:
        self.f.close()


class RecordReader:
    """The records of one TFRecord stream, in order (next() None at the end). A corrupt
    record is DataLoss naming the file and offset; a truncated last record too, as
    TensorFlow's reader reports it."""

    def __init__(self, path: str, compression: str = "") -> None:
        self.path = path
        self.stream = InputStream(open_file(path), compression)

    def next(self) -> bytes | None:
        start = self.stream.offset
        header = self.stream.read(12)
        if not header:
            return None
        if len(header) < 12:
            raise DataLossError(f"truncated record at {start} in {self.path}")
        length, length_crc = struct.unpack("<QI", header)
        if unmask(length_crc) != crc32c(header[:8]):
            raise DataLossError(f"corrupted record at {start} in {self.path}")
        body = self.stream.read(length + 4)
        if len(body) < length + 4:
            raise DataLossError(f"truncated record at {start} in {self.path}")
        data = body[:length]
        if unmask(struct.unpack("<I", body[length:])[0]) != crc32c(data):
            raise DataLossError(f"corrupted record at {start} in {self.path}")
        return data

    def __iter__(self) -> Iterator[bytes]:
        while (record := self.next()) is not None:
            yield record

    def close(self) -> None:
        self.stream.close()


class RecordWriter:
    """Writes TFRecords to a file (tf.io.TFRecordWriter); compressed as a whole stream."""

    def __init__(self, path: str | os.PathLike[str], compression: str = "") -> None:
        wbits = _wbits(compression)
        self.f = open_file(os.fspath(path), "wb")
        self.deflater = zlib.compressobj(-1, zlib.DEFLATED, wbits, 9) if wbits else None

    def write(self, data: bytes) -> None:
        record = encode_record(bytes(data))
        self.f.write(self.deflater.compress(record) if self.deflater else record)

    def flush(self) -> None:
        if self.deflater is not None:
            self.f.write(self.deflater.flush(zlib.Z_SYNC_FLUSH))
        self.f.flush()

    def close(self) -> None:
        if self.f.closed:
            return
        if self.deflater is not None:
            self.f.write(self.deflater.flush())
        self.f.close()
