"""Checkpoint format (executor stage, file I/O): the bundle: TensorFlow's tensor bundle, the V2
checkpoint that SaveV2 writes and RestoreV2 reads, byte for byte as TensorFlow's
tensor_bundle.cc does.

A bundle under `prefix` is two kinds of file:

- `<prefix>.data-NNNNN-of-MMMMM`: each tensor's bytes, one after the other, unpadded.
  Numeric tensors are their raw little-endian bytes; a string tensor is the varint64
  length of every element, a 4-byte masked CRC32C of those lengths, then the bytes.
- `<prefix>.index`: a LevelDB-format table (`TableBuilder` / `read_table` in table.py) whose key
  "" holds a BundleHeaderProto and whose other keys, in byte order, are tensor names
  holding BundleEntryProtos (dtype, shape, shard, offset, size, masked CRC32C).

A partitioned variable's pieces are slices: the full tensor's entry lists the slices
(TensorSliceProtos) and each slice is an entry of its own under a key that encodes the
name and extents in TensorFlow's OrderedCode (`encode_tensor_name_slice` in slices.py).

Writers write temporary files and rename them into place, data file first, so a crash
never leaves an index naming missing or partial data. Nothing here registers ops (the
kernels are in common.ops.io_ops); a writer or reader is used by one thread at a time.
"""

from __future__ import annotations

import os
import secrets
import struct
from collections.abc import Sequence
from typing import BinaryIO

import numpy as np

from common import dtypes, file_access
from common.checkpoint.crc32c import crc32c, mask, unmask
from common.checkpoint.slices import (
    Extent,
    bounds,
    encode_tensor_name_slice,
    extents_of,
    extents_str,
    is_full_slice,
    slice_proto,
)
from common.checkpoint.table import TableBuilder, get_varint, put_varint, read_table
from common.dtypes import DataType
from common.errors import (
    DataLossError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    UnimplementedError,
)
from common.tensor_shape import shape_string
from protos import tensor_bundle_pb2, tensor_shape_pb2

HEADER_KEY = b""
BUNDLE_VERSION = 1  # kTensorBundleVersion: the producer version we write and can read
_CHUNK = 8 << 20  # bytes copied, checksummed and written at a time
_U32 = struct.Struct("<I")


# ---------------------------------------------------------------------------------------
# File names (tensor_bundle/naming.cc)
# ---------------------------------------------------------------------------------------


def meta_filename(prefix: str) -> str:
    return f"{prefix}.index"


def data_filename(prefix: str, shard_id: int, num_shards: int) -> str:
    return f"{prefix}.data-{shard_id:05d}-of-{num_shards:05d}"


def _temp_name(path: str) -> str:
    return f"{path}.tempstate{secrets.randbits(64)}"


def _makedirs(prefix: str) -> None:
    directory = os.path.dirname(prefix)
    if directory:
        os.makedirs(directory, exist_ok=True)


# ---------------------------------------------------------------------------------------
# Tensor encoding
# ---------------------------------------------------------------------------------------


def _as_bytes(value: object) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return bytes(value)  # type: ignore[call-overload]


def _write_numeric(out: BinaryIO, array: np.ndarray) -> tuple[int, int]:
    """Append the array's bytes; returns (size, unmasked crc)."""
    flat = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    crc = 0
    for start in range(0, flat.size, _CHUNK):
        chunk = flat[start : start + _CHUNK].tobytes()
        crc = crc32c(chunk, crc)
        out.write(chunk)
    return flat.size, crc


def _write_string(out: BinaryIO, array: np.ndarray) -> tuple[int, int]:
    """Varint64 lengths, their masked checksum, then the bytes. The checksum covers each
    length as a little-endian uint32 (uint64 past 4 GiB), the stored length checksum,
    then the bytes (WriteStringTensor)."""
    values = [_as_bytes(v) for v in array.reshape(-1).tolist()]
    lengths = bytearray()
    fixed = bytearray()
    for v in values:
        put_varint(lengths, len(v))
        fixed += struct.pack("<I" if len(v) <= 0xFFFFFFFF else "<Q", len(v))
    crc = crc32c(bytes(fixed))
    length_checksum = _U32.pack(mask(crc))
    crc = crc32c(length_checksum, crc)
    body = b"".join(values)
    crc = crc32c(body, crc)
    out.write(bytes(lengths) + length_checksum)
    out.write(body)
    return len(lengths) + 4 + len(body), crc


def _shape_proto(shape: Sequence[int]) -> tensor_shape_pb2.TensorShapeProto:
    proto = tensor_shape_pb2.TensorShapeProto()
    for d in shape:
        proto.dim.add(size=int(d))
    return proto


# ---------------------------------------------------------------------------------------
# Writer
# ---------------------------------------------------------------------------------------


class BundleWriter:
    """Writes one single-shard bundle at `prefix` (BundleWriter): `add` each tensor, then
    `finish`, which renames the temporary files into place. On error call `abort`."""

    def __init__(self, prefix: str) -> None:
        prefix = file_access.resolve(prefix, "checkpoint")
        self.prefix = prefix
        _makedirs(prefix)
        self.data_path = _temp_name(data_filename(prefix, 0, 1))
        self.out: BinaryIO | None = open(self.data_path, "wb")  # noqa: SIM115 (kept open)
        self.size = 0
        self.entries: dict[bytes, tensor_bundle_pb2.BundleEntryProto] = {}

    def add(self, name: str | bytes, dtype: DataType, array: np.ndarray) -> None:
        key = _as_bytes(name)
        if key == HEADER_KEY:
            raise InvalidArgumentError("A tensor can not be saved under the empty name")
        if key in self.entries:
            raise InvalidArgumentError(f"Adding duplicate key: {key.decode(errors='replace')}")
        assert self.out is not None, "BundleWriter is closed"
        if dtype == DataType.DT_STRING:
            size, crc = _write_string(self.out, np.asarray(array, dtype=object))
        elif dtypes.is_memcpy(dtype):
            size, crc = _write_numeric(self.out, np.asarray(array, dtype=dtypes.as_numpy(dtype)))
        else:
            raise UnimplementedError(f"Saving a {dtypes.tf_name(dtype)} tensor ({key.decode()})")
        self.entries[key] = tensor_bundle_pb2.BundleEntryProto(
            dtype=int(dtype),  # type: ignore[arg-type]
            shape=_shape_proto(np.shape(array)),
            shard_id=0,
            offset=self.size,
            size=size,
            crc32c=mask(crc),
        )
        self.size += size

    def add_slice(
        self,
        name: str | bytes,
        dtype: DataType,
        full_shape: Sequence[int],
        extents: Sequence[Extent],
        array: np.ndarray,
    ) -> None:
        """One slice of a partitioned tensor (AddSlice): the full tensor's entry gains the
        slice, whose bytes go under their own key. A full slice is a plain `add`."""
        if is_full_slice(extents, full_shape):
            self.add(name, dtype, array)
            return
        key = _as_bytes(name)
        full = self.entries.get(key)
        if full is None:
            full = self.entries[key] = tensor_bundle_pb2.BundleEntryProto(
                dtype=int(dtype),  # type: ignore[arg-type]
                shape=_shape_proto(full_shape),
            )
        elif not full.slices or full.dtype != dtype or full.shape != _shape_proto(full_shape):
            raise InvalidArgumentError(
                f"Adding a slice of {key.decode(errors='replace')} that does not match the "
                "tensor saved under that name"
            )
        full.slices.append(slice_proto(extents))
        self.add(encode_tensor_name_slice(key, extents), dtype, array)

    def finish(self) -> None:
        assert self.out is not None, "BundleWriter is closed"
        self.out.close()
        self.out = None
        os.replace(self.data_path, data_filename(self.prefix, 0, 1))
        header = tensor_bundle_pb2.BundleHeaderProto(num_shards=1)
        header.version.producer = BUNDLE_VERSION
        write_index(meta_filename(self.prefix), header, self.entries)

    def abort(self) -> None:
        """Close and delete the temporary data file (after a failed add)."""
        if self.out is not None:
            self.out.close()
            self.out = None
            _remove_quietly(self.data_path)


def write_index(
    path: str,
    header: tensor_bundle_pb2.BundleHeaderProto,
    entries: dict[bytes, tensor_bundle_pb2.BundleEntryProto],
) -> None:
    """The `.index` table at `path`: the header under "", then entries in key order;
    written to a temporary file renamed into place."""
    temp = _temp_name(path)
    try:
        with open(temp, "wb") as f:
            builder = TableBuilder(f)
            builder.add(HEADER_KEY, header.SerializeToString())
            for key in sorted(entries):
                builder.add(key, entries[key].SerializeToString())
            builder.finish()
        os.replace(temp, path)
    except BaseException:
        _remove_quietly(temp)
        raise


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


# ---------------------------------------------------------------------------------------
# Reader
# ---------------------------------------------------------------------------------------


class BundleReader:
    """Reads a bundle at `prefix` (BundleReader). The index is read whole at construction;
    tensor bytes are read on `lookup`."""

    def __init__(self, prefix: str) -> None:
        prefix = file_access.resolve(prefix, "checkpoint")
        self.prefix = prefix
        filename = meta_filename(prefix)
        try:
            with open(filename, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise NotFoundError(
                "Unsuccessful TensorSliceReader constructor: Failed to find any matching "
                f"files for {prefix}"
            ) from None
        table = read_table(data, filename)
        if not table or table[0][0] != HEADER_KEY:
            raise DataLossError(
                f"Unable to read file ({filename}). Perhaps the file is corrupt or was "
                "produced by a newer version of TensorFlow with format changes (failed to "
                "seek to header entry)"
            )
        self.header = _parse(tensor_bundle_pb2.BundleHeaderProto, table[0][1], filename, "")
        _check_version(self.header, filename)
        self.byteswap = self.header.endianness == tensor_bundle_pb2.BundleHeaderProto.BIG
        self.raw_entries = dict(table[1:])

    def keys(self) -> list[bytes]:
        return list(self.raw_entries)

    def entry(self, name: str | bytes) -> tensor_bundle_pb2.BundleEntryProto:
        key = _as_bytes(name)
        raw = self.raw_entries.get(key)
        if raw is None:
            raise NotFoundError(
                f"Key {key.decode(errors='replace')} not found in checkpoint {self.prefix}"
            )
        return _parse(tensor_bundle_pb2.BundleEntryProto, raw, self.prefix, key)

    def lookup(self, name: str | bytes) -> tuple[DataType, np.ndarray]:
        """The tensor stored under `name`: its dtype and value (a read-only array)."""
        entry = self.entry(name)
        key = _as_bytes(name).decode(errors="replace")
        dtype = DataType(entry.dtype)
        shape = self.shape_of(entry, key)
        if entry.slices:
            return dtype, self.lookup_slice(name, [(0, None)] * len(shape))
        data = self._read(entry)
        crc = 0
        if dtype == DataType.DT_STRING:
            value, crc = _decode_string(data, shape, key, self.prefix)
        elif dtypes.is_memcpy(dtype):
            value, crc = self._decode_numeric(data, dtype, shape, entry, key)
        else:
            raise UnimplementedError(f"Restoring a {dtypes.tf_name(dtype)} tensor ({key})")
        if unmask(entry.crc32c) != crc:
            raise DataLossError(
                f"TensorBundle at {self.prefix} shard {entry.shard_id} ({entry.size} bytes): "
                f"Checksum does not match: stored {unmask(entry.crc32c):08d} vs. calculated "
                f"on the restored bytes {crc} (tensor {key})"
            )
        return dtype, value

    @staticmethod
    def shape_of(entry: tensor_bundle_pb2.BundleEntryProto, key: str) -> tuple[int, ...]:
        shape = tuple(d.size for d in entry.shape.dim)
        if any(d < 0 for d in shape) or entry.shape.unknown_rank:
            raise DataLossError(f"Invalid tensor shape: {key} {shape_string(shape)}")
        return shape

    def lookup_slice(self, name: str | bytes, extents: Sequence[Extent]) -> np.ndarray:
        """The slice `extents` of tensor `name`, whether it was saved whole or in slices
        (GetSliceValue): copied together from every stored slice that overlaps it."""
        key = _as_bytes(name)
        entry = self.entry(key)
        shape = self.shape_of(entry, key.decode(errors="replace"))
        want = bounds(extents, shape)
        if not entry.slices:
            _, value = self.lookup(key)
            return value[tuple(slice(lo, hi) for lo, hi in want)]
        out = np.empty([hi - lo for lo, hi in want], dtype=_numpy_dtype(entry.dtype))
        covered = np.zeros(out.shape, dtype=bool)
        for stored_proto in entry.slices:
            stored = extents_of(stored_proto)
            have = bounds(stored, shape)
            if have == want:
                return self.lookup(encode_tensor_name_slice(key, stored))[1]
            common = [(max(a, c), min(b, d)) for (a, b), (c, d) in zip(want, have)]
            if any(lo >= hi for lo, hi in common):
                continue
            _, value = self.lookup(encode_tensor_name_slice(key, stored))
            dst = tuple(slice(lo - w, hi - w) for (lo, hi), (w, _) in zip(common, want))
            src = tuple(slice(lo - h, hi - h) for (lo, hi), (h, _) in zip(common, have))
            out[dst] = value[src]
            covered[dst] = True
        if not covered.all():
            raise InvalidArgumentError(
                f"Does not have sufficient slices for partitioned tensor "
                f"{key.decode(errors='replace')} to restore in slice_spec: "
                f"{extents_str(extents)}"
            )
        return out

    def _read(self, entry: tensor_bundle_pb2.BundleEntryProto) -> bytes:
        path = data_filename(self.prefix, entry.shard_id, self.header.num_shards)
        try:
            with open(path, "rb") as f:
                f.seek(entry.offset)
                data = f.read(entry.size)
        except FileNotFoundError:
            raise NotFoundError(f"{path}; No such file or directory") from None
        if len(data) != entry.size:
            raise DataLossError(
                f"Reading {entry.size} bytes at offset {entry.offset} of {path}: file too short"
            )
        return data

    def _decode_numeric(
        self,
        data: bytes,
        dtype: DataType,
        shape: tuple[int, ...],
        entry: tensor_bundle_pb2.BundleEntryProto,
        key: str,
    ) -> tuple[np.ndarray, int]:
        np_dtype = dtypes.as_numpy(dtype)
        expected = int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize
        if entry.size != expected:
            raise DataLossError(
                f"Invalid size in bundle entry: key {key}; stored size {entry.size}; "
                f"expected size {expected}"
            )
        crc = crc32c(data)  # on the bytes as stored, before any byte swap
        value = np.frombuffer(data, dtype=np_dtype).reshape(shape)
        if self.byteswap and np_dtype.itemsize > 1:
            value = _swapped(value)
        return value, crc


def _numpy_dtype(dtype: int) -> np.dtype:
    return np.dtype(object) if dtype == DataType.DT_STRING else dtypes.as_numpy(dtype)


def _swapped(value: np.ndarray) -> np.ndarray:
    if value.dtype.kind == "c":  # swap each half of a complex number on its own
        half = np.dtype(f"f{value.dtype.itemsize // 2}")
        return value.view(half).byteswap().view(value.dtype)
    return value.byteswap()


def _decode_string(
    data: bytes, shape: tuple[int, ...], key: str, prefix: str
) -> tuple[np.ndarray, int]:
    n = int(np.prod(shape, dtype=np.int64))
    out = np.empty(n, dtype=object)
    if not data:
        out[:] = [b""] * n
        return out.reshape(shape), 0
    pos, lengths, fixed = 0, [], bytearray()
    where = f"string tensor {key} of {prefix}"
    for _ in range(n):
        length, pos = get_varint(data, pos, where)
        lengths.append(length)
        fixed += struct.pack("<I" if length <= 0xFFFFFFFF else "<Q", length)
    crc = crc32c(bytes(fixed))
    if pos + 4 > len(data):
        raise DataLossError(f"String lengths longer than expected in {where}")
    stored = _U32.unpack_from(data, pos)[0]
    if unmask(stored) != crc:
        raise DataLossError(
            f"The length checksum does not match: expected {unmask(stored):08d} but actual is "
            f"{crc:08d} ({where})"
        )
    crc = crc32c(data[pos : pos + 4], crc)
    pos += 4
    if pos + sum(lengths) != len(data):
        raise DataLossError(f"String bytes do not match the stored size in {where}")
    crc = crc32c(data[pos:], crc)
    values = []
    for length in lengths:
        values.append(data[pos : pos + length])
        pos += length
    out[:] = values
    return out.reshape(shape), crc


def _parse(cls, raw: bytes, filename: str, key: bytes | str):
    message = cls()
    try:
        message.ParseFromString(raw)
    except Exception:
        name = key.decode(errors="replace") if isinstance(key, bytes) else key
        raise DataLossError(f"Entry for key {name} not parseable ({filename}).") from None
    return message


def _check_version(header: tensor_bundle_pb2.BundleHeaderProto, filename: str) -> None:
    """CheckVersions(header.version, kTensorBundleVersion, kTensorBundleMinProducer)."""
    version = header.version
    if version.producer < 0:
        raise InvalidArgumentError(
            f"Checkpoint producer version {version.producer} below min producer 0 supported "
            f"by TensorFlow; {filename}"
        )
    if version.min_consumer > BUNDLE_VERSION:
        raise InvalidArgumentError(
            f"Checkpoint min consumer version {version.min_consumer} above current version "
            f"{BUNDLE_VERSION} for TensorFlow; {filename}"
        )
    if BUNDLE_VERSION in version.bad_consumers:
        raise InvalidArgumentError(
            f"Checkpoint disallows consumer version {BUNDLE_VERSION}. Please upgrade "
            f"TensorFlow: this version is likely buggy; {filename}"
        )


# ---------------------------------------------------------------------------------------
# Merging the shards of a sharded save (MergeBundles)
# ---------------------------------------------------------------------------------------


def merge_bundles(
    prefixes: Sequence[str], merged_prefix: str, allow_missing_files: bool = False
) -> None:
    """Merge the bundles at `prefixes` into one at `merged_prefix`: their data files are
    renamed to the merged shard names, one index is written, the old indexes deleted."""
    prefixes = [file_access.resolve(p, "checkpoint") for p in prefixes]
    merged_prefix = file_access.resolve(merged_prefix, "checkpoint")
    _makedirs(merged_prefix)
    header = tensor_bundle_pb2.BundleHeaderProto()
    entries: dict[bytes, tensor_bundle_pb2.BundleEntryProto] = {}
    shard_ids: dict[str, int] = {}  # old data file -> new shard id, in first-seen order
    merged_any = False
    for prefix in prefixes:
        if allow_missing_files and not os.path.exists(meta_filename(prefix)):
            continue
        _merge_one(prefix, header, entries, shard_ids, first=not merged_any)
        merged_any = True
    if not merged_any:
        raise InvalidArgumentError("Merge failed: none of the checkpoint prefixes has an index")
    for old, shard in shard_ids.items():
        os.replace(old, data_filename(merged_prefix, shard, len(shard_ids)))
    write_index(meta_filename(merged_prefix), header, entries)
    for prefix in prefixes:
        _remove_quietly(meta_filename(prefix))


def _merge_one(
    prefix: str,
    merged: tensor_bundle_pb2.BundleHeaderProto,
    entries: dict[bytes, tensor_bundle_pb2.BundleEntryProto],
    shard_ids: dict[str, int],
    first: bool,
) -> None:
    if not os.path.exists(meta_filename(prefix)):
        raise NotFoundError(f"{meta_filename(prefix)}; No such file or directory")
    reader = BundleReader(prefix)
    merged.num_shards += reader.header.num_shards  # TensorFlow sums the headers' counts
    if first:
        merged.endianness = reader.header.endianness
        merged.version.CopyFrom(reader.header.version)
    elif merged.endianness != reader.header.endianness:
        raise InvalidArgumentError("Merging bundles with conflicting endianness; inputs corrupted?")
    elif merged.version != reader.header.version:
        raise InvalidArgumentError(
            f"Merging bundles with different format versions: merged {merged.version} vs. "
            f"curr {reader.header.version}"
        )
    for key in reader.raw_entries:
        name = key.decode(errors="replace")
        existing = entries.get(key)
        if existing is not None and not existing.slices:
            raise InvalidArgumentError(
                f"Duplicate tensor keyed by {name} encountered, when merging prefix: {prefix}"
            )
        entry = reader.entry(key)
        if existing is not None:  # a partitioned tensor: its slices add up
            if not entry.slices:
                raise InternalError(
                    f"Duplicate tensor keyed by {name}; attempting to merge in a non-slice "
                    "bundle entry"
                )
            if existing.dtype != entry.dtype or existing.shape != entry.shape:
                raise InvalidArgumentError(f"Slices of {name} disagree on dtype or shape")
            existing.slices.extend(entry.slices)
            continue
        old = data_filename(prefix, entry.shard_id, reader.header.num_shards)
        entry.shard_id = shard_ids.setdefault(old, len(shard_ids))
        entries[key] = entry
