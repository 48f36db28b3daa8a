"""Checkpoint ops (io_ops) and the tensor bundle format (common.checkpoint): bundles our
SaveV2 writes are byte-identical to TensorFlow's and read by it, bundles TensorFlow writes
are read by our RestoreV2, errors carry TensorFlow's codes, merges equal TensorFlow's.
TensorFlow (eager tf.raw_ops, tf.train.load_checkpoint) is the oracle."""

from __future__ import annotations

import io
import os
import pathlib

import ml_dtypes
import numpy as np
import pytest
from google.protobuf import descriptor_pb2

from common.checkpoint import bundle, crc32c, slices, table
from common.dtypes import DataType
from common.errors import (
    DataLossError,
    InvalidArgumentError,
    NotFoundError,
    UnimplementedError,
)
from common.ops import registry
from common.ops.registry import KernelConstruction
from protos import tensor_bundle_pb2, tensor_slice_pb2

from . import DEVICE, run1
from .signatures import assert_signature_matches_tensorflow, module_ops

MY_OPS = module_ops("common.ops.io_ops")
D = DataType


def S(*values) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = [v.encode() if isinstance(v, str) else v for v in values]
    return out


def scalar(value: str | bytes) -> np.ndarray:
    return np.array(value.encode() if isinstance(value, str) else value, dtype=object)


def _kernel(op: str, attrs: dict):
    kc = KernelConstruction(f"save/{op}", op, attrs, (), (), DEVICE)
    return registry.lookup_kernel(op, "CPU", "", kc.node_name).factory(kc)


def save(prefix, tensors: dict[str, tuple[DataType, np.ndarray]], specs=None) -> None:
    """Our SaveV2 kernel on {name: (dtype, value)}."""
    names = list(tensors)
    compute = _kernel("SaveV2", {"dtypes": [t for t, _ in tensors.values()]})
    specs = S(*(specs or [""] * len(names)))
    compute(None, [scalar(str(prefix)), S(*names), specs, *[v for _, v in tensors.values()]])


def restore(prefix, names: list[str], types: list[DataType], specs=None) -> list[np.ndarray]:
    """Our RestoreV2 kernel."""
    compute = _kernel("RestoreV2", {"dtypes": types})
    return compute(None, [scalar(str(prefix)), S(*names), S(*(specs or [""] * len(names)))])


def merge(prefixes: list[str], destination: str, **attrs) -> None:
    compute = _kernel(
        "MergeV2Checkpoints",
        {"delete_old_dirs": True, "allow_missing_files": False, **attrs},
    )
    compute(None, [S(*prefixes), scalar(destination)])


def _strings(*values) -> np.ndarray:
    return S(*values)


def sample_tensors() -> dict[str, tuple[DataType, np.ndarray]]:
    """One tensor of every dtype we save, with 0-d, empty and > 1 MB shapes."""
    rng = np.random.default_rng(7)
    return {
        "f16": (D.DT_HALF, rng.standard_normal((3, 4)).astype(np.float16)),
        "f32": (D.DT_FLOAT, rng.standard_normal((2, 3)).astype(np.float32)),
        "f64": (D.DT_DOUBLE, np.array([np.pi, -0.0, np.inf, np.nan])),
        "bf16": (D.DT_BFLOAT16, rng.standard_normal(5).astype(ml_dtypes.bfloat16)),
        "i8": (D.DT_INT8, np.array([-128, 0, 127], np.int8)),
        "i16": (D.DT_INT16, np.array([[-3], [4]], np.int16)),
        "i32": (D.DT_INT32, np.array(-7, np.int32)),
        "i64": (D.DT_INT64, np.array([2**62, -(2**40)], np.int64)),
        "u8": (D.DT_UINT8, np.arange(256, dtype=np.uint8)),
        "u16": (D.DT_UINT16, np.array([65535], np.uint16)),
        "u32": (D.DT_UINT32, np.array([2**32 - 1], np.uint32)),
        "u64": (D.DT_UINT64, np.array([2**64 - 1], np.uint64)),
        "bool": (D.DT_BOOL, np.array([[True, False], [False, True]])),
        "c64": (D.DT_COMPLEX64, np.array([1 + 2j, -3.5j], np.complex64)),
        "c128": (D.DT_COMPLEX128, np.array([[1e300 - 1j]], np.complex128)),
        "str": (D.DT_STRING, _strings("", "ascii", "ünïcødé ✓".encode(), b"\x00\xff" * 100)),
        "str0d": (D.DT_STRING, np.array(b"scalar", dtype=object)),
        "str_empty": (D.DT_STRING, np.empty((0, 3), dtype=object)),
        "empty": (D.DT_FLOAT, np.zeros((2, 0, 5), np.float32)),
        "scalar": (D.DT_DOUBLE, np.array(2.5)),
        "outer/inner/big": (D.DT_FLOAT, rng.standard_normal((600, 1000)).astype(np.float32)),
        "big_strings": (D.DT_STRING, _strings(*[b"x" * (i % 700) for i in range(3000)])),
    }


def assert_equal_value(got: np.ndarray, want: np.ndarray, what: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, what
    if want.dtype == object:  # TensorFlow gives a 0-d string as numpy bytes, not object
        assert np.asarray(got, dtype=object).tolist() == want.tolist(), what
    else:
        assert got.dtype == want.dtype, what
        assert got.tobytes() == want.tobytes(), what  # bit-exact, NaN and -0.0 included


# ---------------------------------------------------------------------------------------
# Signatures and protos
# ---------------------------------------------------------------------------------------


def test_registered_the_whole_family():
    assert MY_OPS == [
        "MergeV2Checkpoints",
        "RestoreV2",
        "SaveV2",
        "ShardedFilename",
        "ShardedFilespec",
    ]


@pytest.mark.parametrize("name", [*MY_OPS, "StaticRegexFullMatch"])
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)
    op_def_registry = pytest.importorskip("tensorflow.python.framework.op_def_registry")
    assert registry.lookup_op(name).is_stateful == op_def_registry.get(name).is_stateful


def _fields(descriptor) -> list[tuple]:
    proto = descriptor_pb2.DescriptorProto()
    descriptor.CopyToProto(proto)
    return [
        (f.name, f.number, f.type, f.label, f.type_name.split(".")[-1], f.HasField("oneof_index"))
        for f in proto.field
    ]


def test_bundle_protos_mirror_tensorflow():
    tf_bundle = pytest.importorskip("tensorflow.core.protobuf.tensor_bundle_pb2")
    tf_slice = pytest.importorskip("tensorflow.core.framework.tensor_slice_pb2")
    for ours, theirs in [
        (tensor_bundle_pb2.BundleHeaderProto, tf_bundle.BundleHeaderProto),
        (tensor_bundle_pb2.BundleEntryProto, tf_bundle.BundleEntryProto),
        (tensor_slice_pb2.TensorSliceProto, tf_slice.TensorSliceProto),
        (tensor_slice_pb2.TensorSliceProto.Extent, tf_slice.TensorSliceProto.Extent),
    ]:
        assert _fields(ours.DESCRIPTOR) == _fields(theirs.DESCRIPTOR), ours.DESCRIPTOR.name
    endianness = tensor_bundle_pb2.BundleHeaderProto.Endianness
    assert dict(endianness.items()) == dict(tf_bundle.BundleHeaderProto.Endianness.items())


# ---------------------------------------------------------------------------------------
# CRC32C and the table format
# ---------------------------------------------------------------------------------------


def test_crc32c_and_mask():
    assert crc32c.crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert crc32c.crc32c(b"6789", crc32c.crc32c(b"12345")) == 0xE3069283
    for crc in (0, 1, 0xE3069283, 0xFFFFFFFF):
        assert crc32c.unmask(crc32c.mask(crc)) == crc
    assert crc32c.mask(0) == 0xA282EAD8


def test_table_round_trip_across_blocks(tmp_path):
    entries = [(b"", b"header")] + [
        (b"key/%06d" % i, bytes([i % 256]) * (i % 97)) for i in range(20000)
    ]
    path = tmp_path / "t.table"
    with open(path, "wb") as f:
        builder = table.TableBuilder(f)
        for k, v in entries:
            builder.add(k, v)
        builder.finish()
    data = path.read_bytes()
    assert data[-8:] == bytes.fromhex("57fb808b247547db")
    assert table.read_table(data, str(path)) == entries
    builder = table.TableBuilder(io.BytesIO())
    builder.add(b"b", b"")
    with pytest.raises(InvalidArgumentError, match="out of order"):
        builder.add(b"a", b"")


# ---------------------------------------------------------------------------------------
# Ours -> TensorFlow
# ---------------------------------------------------------------------------------------


def test_tensorflow_reads_every_dtype_we_save(tmp_path):
    tf = pytest.importorskip("tensorflow")
    tensors = sample_tensors()
    prefix = str(tmp_path / "ckpt" / "model")  # the directory is created by SaveV2
    save(prefix, tensors)
    assert sorted(os.listdir(tmp_path / "ckpt")) == ["model.data-00000-of-00001", "model.index"]
    reader = tf.train.load_checkpoint(prefix)
    shapes, types = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
    assert sorted(shapes) == sorted(tensors)
    for name, (dtype, value) in tensors.items():
        assert types[name].as_datatype_enum == dtype, name
        assert tuple(shapes[name]) == value.shape, name
        assert_equal_value(reader.get_tensor(name), value, name)
    names = list(tensors)
    restored = tf.raw_ops.RestoreV2(
        prefix=prefix,
        tensor_names=names,
        shape_and_slices=[""] * len(names),
        dtypes=[tf.dtypes.as_dtype(int(t)) for t, _ in tensors.values()],
    )
    for name, got in zip(names, restored):
        assert_equal_value(got.numpy(), tensors[name][1], name)


def _tf_save(prefix: str, tensors: dict[str, tuple[DataType, np.ndarray]]) -> None:
    tf = pytest.importorskip("tensorflow")
    names = list(tensors)
    tf.raw_ops.SaveV2(
        prefix=prefix,
        tensor_names=names,
        shape_and_slices=[""] * len(names),
        tensors=[tf.constant(v, dtype=tf.dtypes.as_dtype(int(t))) for t, v in tensors.values()],
    )


def test_bundle_bytes_equal_tensorflows(tmp_path):
    tensors = sample_tensors()
    _tf_save(str(tmp_path / "tf"), tensors)
    save(tmp_path / "ours", tensors)
    for suffix in (".index", ".data-00000-of-00001"):
        theirs = (tmp_path / f"tf{suffix}").read_bytes()
        assert (tmp_path / f"ours{suffix}").read_bytes() == theirs, suffix


def test_many_tensors_index_spans_blocks_byte_identical(tmp_path):
    # 12k entries make a ~390 KB index: two data blocks, restart points, separators.
    rng = np.random.default_rng(3)
    tensors = {
        f"layer_{i % 37}/block{i}/kernel": (D.DT_FLOAT, rng.standard_normal(3).astype(np.float32))
        for i in range(12000)
    }
    tensors["\xff\xffz"] = (D.DT_INT32, np.array([1], np.int32))
    _tf_save(str(tmp_path / "tf"), tensors)
    save(tmp_path / "ours", tensors)
    ours = (tmp_path / "ours.index").read_bytes()
    assert len(ours) > table.BLOCK_SIZE
    assert ours == (tmp_path / "tf.index").read_bytes()


# ---------------------------------------------------------------------------------------
# TensorFlow -> ours
# ---------------------------------------------------------------------------------------


def test_restore_reads_every_dtype_tensorflow_saves(tmp_path):
    tensors = sample_tensors()
    prefix = str(tmp_path / "model")
    _tf_save(prefix, tensors)
    names = list(tensors)
    got = restore(prefix, names, [t for t, _ in tensors.values()])
    assert len(got) == len(names)
    for name, value in zip(names, got):
        assert_equal_value(value, tensors[name][1], name)
        assert value.dtype == tensors[name][1].dtype, name
        if value.dtype != object:
            assert not value.flags.writeable, name  # values are read-only arrays
    # A subset in another order, and a name twice.
    got = restore(prefix, ["i8", "f32", "i8"], [D.DT_INT8, D.DT_FLOAT, D.DT_INT8])
    assert got[0].tolist() == [-128, 0, 127] and got[2].tolist() == [-128, 0, 127]


def test_restore_slice_of_full_tensor_as_tensorflow(tmp_path):
    tf = pytest.importorskip("tensorflow")
    prefix = str(tmp_path / "model")
    value = np.arange(20, dtype=np.float32).reshape(4, 5)
    _tf_save(prefix, {"v": (D.DT_FLOAT, value)})
    spec = "4 5 1,2:-"
    (got,) = restore(prefix, ["v"], [D.DT_FLOAT], [spec])
    (theirs,) = tf.raw_ops.RestoreV2(
        prefix=prefix, tensor_names=["v"], shape_and_slices=[spec], dtypes=[tf.float32]
    )
    assert got.tolist() == theirs.numpy().tolist() == value[1:3].tolist()
    with pytest.raises(InvalidArgumentError, match=r"does not match the shape stored.*\[4,5\]"):
        restore(prefix, ["v"], [D.DT_FLOAT], ["4 6 -:-"])


def _save_list(saver, prefix, items: list[tuple[str, str, DataType, np.ndarray]]) -> None:
    """Save (name, spec, dtype, value) items, names repeated for slices, with `saver`."""
    if saver == "tf":
        tf = pytest.importorskip("tensorflow")
        tf.raw_ops.SaveV2(
            prefix=str(prefix),
            tensor_names=[n for n, _, _, _ in items],
            shape_and_slices=[spec for _, spec, _, _ in items],
            tensors=[tf.constant(v, dtype=tf.dtypes.as_dtype(int(t))) for _, _, t, v in items],
        )
        return
    compute = _kernel("SaveV2", {"dtypes": [t for _, _, t, _ in items]})
    names, specs = S(*[n for n, *_ in items]), S(*[spec for _, spec, _, _ in items])
    compute(None, [scalar(str(prefix)), names, specs, *[v for *_, v in items]])


PARTITIONED = np.arange(40, dtype=np.float32).reshape(8, 5)
WORDS = S(*[f"w{i}" for i in range(6)]).reshape(6, 1)


def _partitions(part: int) -> list[tuple[str, str, DataType, np.ndarray]]:
    """Rows 0-2 / 3-7 of "emb" in shard 0, rows 3-7 in shard 1 (part -1: both)."""
    pieces = [
        [
            ("emb", "8 5 0,3:-", D.DT_FLOAT, PARTITIONED[0:3]),
            ("words", "6 1 0,4:-", D.DT_STRING, WORDS[0:4]),
            ("plain", "", D.DT_INT32, np.array([7], np.int32)),
        ],
        [
            ("emb", "8 5 3,5:-", D.DT_FLOAT, PARTITIONED[3:8]),
            ("words", "6 1 4,2:0,1", D.DT_STRING, WORDS[4:6]),
        ],
    ]
    return pieces[0] + pieces[1] if part < 0 else pieces[part]


def test_partitioned_save_byte_identical_and_read_by_tensorflow(tmp_path):
    tf = pytest.importorskip("tensorflow")
    _save_list("tf", tmp_path / "tf", _partitions(-1))
    _save_list("ours", tmp_path / "ours", _partitions(-1))
    for suffix in (".index", ".data-00000-of-00001"):
        theirs = (tmp_path / f"tf{suffix}").read_bytes()
        assert (tmp_path / f"ours{suffix}").read_bytes() == theirs, suffix
    reader = tf.train.load_checkpoint(str(tmp_path / "ours"))
    assert reader.get_tensor("emb").tolist() == PARTITIONED.tolist()
    # (TensorFlow cannot put a partitioned string tensor back together; we can.)
    assert restore(tmp_path / "tf", ["words"], [D.DT_STRING])[0].tolist() == WORDS.tolist()


@pytest.mark.parametrize(
    "spec",
    ["8 5 0,3:-", "8 5 3,5:-", "8 5 2,4:1,3", "8 5 -:-", "8 5 0,8:0,5", "8 5 7,1:4,1"],
)
def test_restore_any_slice_of_partitioned_tensor_as_tensorflow(tmp_path, spec):
    tf = pytest.importorskip("tensorflow")
    prefix = tmp_path / "model"
    _save_list("tf", prefix, _partitions(-1))
    (ours,) = restore(prefix, ["emb"], [D.DT_FLOAT], [spec])
    (theirs,) = tf.raw_ops.RestoreV2(
        prefix=str(prefix), tensor_names=["emb"], shape_and_slices=[spec], dtypes=[tf.float32]
    )
    assert ours.dtype == np.float32 and ours.tolist() == theirs.numpy().tolist()
    (whole,) = restore(prefix, ["words"], [D.DT_STRING])
    assert whole.tolist() == WORDS.tolist()


def test_insufficient_slices_is_invalid_argument(tmp_path):
    prefix = tmp_path / "model"
    _save_list("ours", prefix, _partitions(0))  # rows 0-2 only
    with pytest.raises(
        InvalidArgumentError,
        match="Does not have sufficient slices for partitioned tensor emb to restore in "
        "slice_spec: 2,2:-",
    ):
        restore(prefix, ["emb"], [D.DT_FLOAT], ["8 5 2,2:-"])
    assert restore(prefix, ["emb"], [D.DT_FLOAT], ["8 5 1,2:-"])[0].tolist() == (
        PARTITIONED[1:3].tolist()
    )


def test_slice_spec_must_match_tensor_shape(tmp_path):
    value = np.ones((2, 3), np.float32)
    save(tmp_path / "a", {"v": (D.DT_FLOAT, value)}, ["2 3 -:0,3"])  # a full slice
    assert bundle.BundleReader(str(tmp_path / "a")).keys() == [b"v"]
    with pytest.raises(InvalidArgumentError, match="does not match the shape of the tensor"):
        save(tmp_path / "c", {"v": (D.DT_FLOAT, value)}, ["4 3 0,1:-"])
    assert not list(tmp_path.glob("c*"))


def test_slice_keys_are_tensorflows_ordered_code():
    key = slices.encode_tensor_name_slice(b"a\x00\xff", [(3, 5), (0, None), (-70, 9000)])
    # 0; "a" with 00/ff escaped then 00 01; 3 dims; (3,5) (0,-1) (-70,9000) signed-increasing.
    expected = b"\x00" + b"a\x00\xff\xff\x00\x00\x01" + b"\x01\x03"
    expected += b"\x83\x85" + b"\x80\x7f" + bytes([0x3F, 0xBA]) + bytes([0xE0, 0x23, 0x28])
    assert key == expected


# ---------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------


def test_missing_tensor_is_not_found_naming_tensor_and_checkpoint(tmp_path):
    prefix = str(tmp_path / "model")
    save(prefix, {"present": (D.DT_FLOAT, np.zeros(2, np.float32))})
    with pytest.raises(NotFoundError) as e:
        restore(prefix, ["present", "absent/w"], [D.DT_FLOAT, D.DT_FLOAT])
    assert str(e.value) == f"Key absent/w not found in checkpoint {prefix}"
    with pytest.raises(NotFoundError) as e:
        restore(str(tmp_path / "nope"), ["present"], [D.DT_FLOAT])
    assert str(e.value) == (
        "Unsuccessful TensorSliceReader constructor: Failed to find any matching files for "
        f"{tmp_path / 'nope'}"
    )


def test_dtype_mismatch_is_invalid_argument_as_tensorflow(tmp_path):
    tf = pytest.importorskip("tensorflow")
    prefix = str(tmp_path / "model")
    save(prefix, {"b": (D.DT_FLOAT, np.zeros(2, np.float32))})
    with pytest.raises(InvalidArgumentError) as ours:
        restore(prefix, ["b"], [D.DT_INT32])
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        tf.raw_ops.RestoreV2(
            prefix=prefix, tensor_names=["b"], shape_and_slices=[""], dtypes=[tf.int32]
        )
    assert (
        str(ours.value)
        == "tensor_name = b; expected dtype int32 does not equal original dtype float"
    )
    assert str(ours.value) in theirs.value.message


def test_input_checks(tmp_path):
    with pytest.raises(InvalidArgumentError, match="Got 2 tensor names, but 1 expected dtypes."):
        restore(tmp_path / "m", ["a", "b"], [D.DT_FLOAT])
    compute = _kernel("SaveV2", {"dtypes": [D.DT_FLOAT]})
    with pytest.raises(InvalidArgumentError, match="Got 2 tensor names but 1 tensors."):
        compute(None, [scalar("p"), S("a", "b"), S("", ""), np.zeros(1, np.float32)])
    with pytest.raises(InvalidArgumentError, match="different number of elements: 1 vs. 2"):
        compute(None, [scalar("p"), S("a"), S("", ""), np.zeros(1, np.float32)])
    with pytest.raises(InvalidArgumentError, match="single element, got 2 instead"):
        compute(None, [S("p", "q"), S("a"), S(""), np.zeros(1, np.float32)])


def _corrupt(path: pathlib.Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name", ["f32", "str", "outer/inner/big"])
def test_flipped_data_bit_is_data_loss_for_us_and_tensorflow(tmp_path, name):
    tf = pytest.importorskip("tensorflow")
    tensors = sample_tensors()
    prefix = str(tmp_path / "model")
    save(prefix, tensors)
    entry = bundle.BundleReader(prefix).entry(name)
    _corrupt(tmp_path / "model.data-00000-of-00001", entry.offset + entry.size - 1)
    dtype = tensors[name][0]
    with pytest.raises(DataLossError, match=f"Checksum does not match.*tensor {name}"):
        restore(prefix, [name], [dtype])
    with pytest.raises(tf.errors.DataLossError, match="Checksum does not match"):
        tf.raw_ops.RestoreV2(
            prefix=prefix,
            tensor_names=[name],
            shape_and_slices=[""],
            dtypes=[tf.dtypes.as_dtype(int(dtype))],
        )
    assert restore(prefix, ["i64"], [D.DT_INT64])[0].tolist() == [2**62, -(2**40)]


def test_corrupt_string_lengths_and_index_are_data_loss(tmp_path):
    prefix = str(tmp_path / "model")
    save(prefix, {"s": (D.DT_STRING, S("ab", "cde"))})
    _corrupt(tmp_path / "model.data-00000-of-00001", 0)  # a varint length
    with pytest.raises(DataLossError, match="length checksum does not match"):
        restore(prefix, ["s"], [D.DT_STRING])
    _corrupt(tmp_path / "model.index", 5)
    with pytest.raises(DataLossError, match="Block checksum mismatch in .*model.index"):
        restore(prefix, ["s"], [D.DT_STRING])
    (tmp_path / "model.index").write_bytes(b"short")
    with pytest.raises(DataLossError, match="too short to be an sstable"):
        restore(prefix, ["s"], [D.DT_STRING])


# ---------------------------------------------------------------------------------------
# Crash safety
# ---------------------------------------------------------------------------------------


def test_failed_save_leaves_previous_checkpoint_and_no_temp_files(tmp_path):
    prefix = str(tmp_path / "model")
    save(prefix, {"v": (D.DT_FLOAT, np.ones(3, np.float32))})
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    handle = np.empty((), dtype=object)
    handle[()] = object()
    with pytest.raises(UnimplementedError, match=r"Saving a resource tensor \(h\)"):
        save(prefix, {"v": (D.DT_FLOAT, np.zeros(3, np.float32)), "h": (D.DT_RESOURCE, handle)})
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert restore(prefix, ["v"], [D.DT_FLOAT])[0].tolist() == [1.0, 1.0, 1.0]


def test_save_writes_temp_files_then_renames(tmp_path, monkeypatch):
    # Pure logic: observe the names files are opened under and the renames, in order.
    events: list[str] = []
    real_replace = os.replace

    def spy(src, dst):
        events.append(f"{os.path.basename(src)} -> {os.path.basename(dst)}")
        real_replace(src, dst)

    monkeypatch.setattr(bundle.os, "replace", spy)
    save(tmp_path / "m", {"v": (D.DT_FLOAT, np.ones(3, np.float32))})
    assert [e.split(".tempstate")[0] for e in events] == ["m.data-00000-of-00001", "m.index"]
    assert events[0].endswith("-> m.data-00000-of-00001") and events[1].endswith("-> m.index")


# ---------------------------------------------------------------------------------------
# Sharded saves: file names and MergeV2Checkpoints
# ---------------------------------------------------------------------------------------


def test_sharded_filename_and_filespec_as_tensorflow():
    tf = pytest.importorskip("tensorflow")
    got = run1("ShardedFilename", scalar("dir/model_temp/part"), np.int32(1), np.int32(3))
    assert got == b"dir/model_temp/part-00001-of-00003"
    theirs = tf.raw_ops.ShardedFilename(basename="dir/model_temp/part", shard=1, num_shards=3)
    assert theirs.numpy() == got
    spec = run1("ShardedFilespec", scalar("m"), np.int32(12))
    assert spec == b"m-?????-of-00012" == tf.raw_ops.ShardedFilespec(basename="m", num_shards=12)


def _two_shards(root: pathlib.Path, writer) -> list[str]:
    parts = [str(root / "model_temp" / f"part-0000{i}-of-00002") for i in range(2)]
    (root / "model_temp").mkdir(parents=True)  # TensorFlow's SaveV2 makes one level only
    writer(parts[0], {"b": (D.DT_FLOAT, np.arange(3, dtype=np.float32))})
    writer(parts[1], {"a": (D.DT_STRING, S("x", "")), "c": (D.DT_INT64, np.array(5))})
    return parts


def test_merge_of_two_shards_equals_tensorflows(tmp_path):
    tf = pytest.importorskip("tensorflow")
    ours_root, tf_root = tmp_path / "ours", tmp_path / "tf"
    merge(_two_shards(ours_root, save), str(ours_root / "model"))
    tf.raw_ops.MergeV2Checkpoints(
        checkpoint_prefixes=_two_shards(tf_root, _tf_save),
        destination_prefix=str(tf_root / "model"),
    )
    names = ["model.data-00000-of-00002", "model.data-00001-of-00002", "model.index"]
    assert sorted(os.listdir(ours_root)) == sorted(os.listdir(tf_root)) == names  # _temp gone
    for name in names:
        assert (ours_root / name).read_bytes() == (tf_root / name).read_bytes(), name
    got = restore(ours_root / "model", ["a", "b", "c"], [D.DT_STRING, D.DT_FLOAT, D.DT_INT64])
    assert [g.tolist() for g in got] == [[b"x", b""], [0.0, 1.0, 2.0], 5]
    reader = tf.train.load_checkpoint(str(ours_root / "model"))
    assert reader.get_tensor("c") == 5


def test_merge_errors_and_missing_files(tmp_path):
    parts = _two_shards(tmp_path, save)
    with pytest.raises(NotFoundError, match=r"part-00009-of-00002.index; No such file"):
        merge([parts[0], str(tmp_path / "model_temp" / "part-00009-of-00002")], str(tmp_path / "m"))
    merge(
        [parts[1], str(tmp_path / "missing")],
        str(tmp_path / "m"),
        allow_missing_files=True,
        delete_old_dirs=False,
    )
    assert restore(tmp_path / "m", ["c"], [D.DT_INT64])[0] == 5
    assert sorted(os.listdir(tmp_path / "model_temp")) == [
        "part-00000-of-00002.data-00000-of-00001",
        "part-00000-of-00002.index",
    ]
    save(tmp_path / "dup", {"b": (D.DT_FLOAT, np.zeros(1, np.float32))})
    with pytest.raises(InvalidArgumentError, match="Duplicate tensor keyed by b"):
        merge([parts[0], str(tmp_path / "dup")], str(tmp_path / "m2"))


def test_merge_of_partitioned_shards_equals_tensorflows(tmp_path):
    tf = pytest.importorskip("tensorflow")
    roots = {}
    for who in ("ours", "tf"):
        root = tmp_path / who
        (root / "model_temp").mkdir(parents=True)
        parts = [str(root / "model_temp" / f"part-0000{i}-of-00002") for i in range(2)]
        for i, part in enumerate(parts):
            _save_list(who, part, _partitions(i))
        if who == "ours":
            merge(parts, str(root / "model"))
        else:
            tf.raw_ops.MergeV2Checkpoints(
                checkpoint_prefixes=parts, destination_prefix=str(root / "model")
            )
        roots[who] = root
    names = ["model.data-00000-of-00002", "model.data-00001-of-00002", "model.index"]
    assert sorted(os.listdir(roots["ours"])) == sorted(os.listdir(roots["tf"])) == names
    for name in names:
        assert (roots["ours"] / name).read_bytes() == (roots["tf"] / name).read_bytes(), name
    (emb,) = restore(roots["ours"] / "model", ["emb"], [D.DT_FLOAT])
    assert emb.tolist() == PARTITIONED.tolist()
    got = tf.train.load_checkpoint(str(roots["ours"] / "model")).get_tensor("emb")
    assert got.tolist() == PARTITIONED.tolist()
