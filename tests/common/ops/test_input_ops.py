"""Input kernels against TensorFlow, on graphs built by tensorflow.compat.v1 and run by both
sessions: ReadFile/WriteFile/MatchingFiles, TFRecord/TextLine/FixedLengthRecord datasets
with "", ZLIB and GZIP files, ParseExampleV2/ParseSingleExample, DecodeRaw, DecodeCSV."""

from __future__ import annotations

import gzip
import zlib

import numpy as np
import pytest

from common import record_io
from common.errors import DataLossError, InvalidArgumentError, NotFoundError
from common.session import Session

from .signatures import assert_signature_matches_tensorflow, module_ops
from .tf_graphs import assert_values_equal, drain_both, run_both

tf1 = pytest.importorskip("tensorflow.compat.v1")
MY_OPS = module_ops(
    "common.ops.file_ops",
    "common.ops.parsing_ops",
    "common.ops.data.readers",
    "common.ops.reader_ops",
)


@pytest.mark.parametrize("op", MY_OPS)
def test_signature_matches_tensorflow(op):
    assert_signature_matches_tensorflow(op)


def _same(theirs, ours):
    assert len(theirs) == len(ours)
    for t_step, o_step in zip(theirs, ours):
        for t, o in zip(t_step, o_step):
            assert_values_equal(o, t)


def test_read_write_matching_files(tmp_path):
    (tmp_path / "b.txt").write_bytes(b"bee")
    (tmp_path / "a.txt").write_bytes(b"\x00ay\n")
    (tmp_path / "c.dat").write_bytes(b"")
    d = str(tmp_path)

    def build(tf):
        write = tf.io.write_file(d + "/sub/new.txt", "written")
        with tf.control_dependencies([write]):
            back = tf.io.read_file(d + "/sub/new.txt")
        return [
            tf.io.matching_files(d + "/*.txt"),
            tf.io.matching_files([d + "/?.dat", d + "/[ab].txt", d + "/none*"]),
            tf.io.read_file(d + "/a.txt"),
            back,
        ]

    _same(*run_both(build))


def test_read_file_missing_is_not_found(tmp_path):
    with tf1.Graph().as_default() as g:
        tf1.io.read_file(str(tmp_path / "missing"), name="read")
    with Session(g.as_graph_def().SerializeToString()) as sess, pytest.raises(NotFoundError) as e:
        sess.run(["read:0"], {})
    assert e.value.node_name == "read" or "read" in str(e.value)


def _records(n: int) -> list[bytes]:
    return [bytes(range(i % 7)) * i + b"record %d" % i for i in range(n)]


@pytest.mark.parametrize("compression", ["", "ZLIB", "GZIP"])
def test_tfrecord_dataset_reads_tensorflow_files(tmp_path, compression):
    paths = []
    for f in range(3):
        path = str(tmp_path / f"f{f}.tfrecord")
        options = tf1.io.TFRecordOptions(compression_type=compression)
        with tf1.io.TFRecordWriter(path, options) as w:
            for r in _records(4 + f):
                w.write(r)
        paths.append(path)

    def build(tf):
        ds = tf.data.TFRecordDataset(paths, compression_type=compression)
        return [tf.data.make_one_shot_iterator(ds).get_next()]

    theirs, ours = drain_both(build)
    assert len(theirs) == 15
    _same(theirs, ours)


@pytest.mark.parametrize("compression", ["", "ZLIB", "GZIP"])
def test_our_record_writer_is_read_by_tensorflow(tmp_path, compression):
    path = str(tmp_path / "ours.tfrecord")
    writer = record_io.RecordWriter(path, compression)
    for r in _records(50):
        writer.write(r)
    writer.close()
    read = list(tf1.io.tf_record_iterator(path, tf1.io.TFRecordOptions(compression)))
    assert read == _records(50)
    assert list(record_io.RecordReader(path, compression)) == _records(50)


def test_corrupt_record_is_data_loss(tmp_path):
    path = tmp_path / "bad.tfrecord"
    with tf1.io.TFRecordWriter(str(path)) as w:
        w.write(b"hello")
    data = bytearray(path.read_bytes())
    data[14] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(DataLossError):
        list(record_io.RecordReader(str(path)))


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_text_line_dataset(tmp_path, compression):
    text = b"first\nsecond\r\n\nlast without newline"
    path = tmp_path / "t.txt"
    packed = {"": text, "GZIP": gzip.compress(text), "ZLIB": zlib.compress(text)}[compression]
    path.write_bytes(packed)

    def build(tf):
        ds = tf.data.TextLineDataset([str(path), str(path)], compression_type=compression)
        return [tf.data.make_one_shot_iterator(ds).get_next()]

    theirs, ours = drain_both(build)
    assert len(theirs) == 8
    _same(theirs, ours)


def test_fixed_length_record_dataset(tmp_path):
    path = tmp_path / "fixed.bin"
    path.write_bytes(b"HEAD" + bytes(range(30)) + b"FT")

    def build(tf):
        ds = tf.data.FixedLengthRecordDataset(str(path), 6, header_bytes=4, footer_bytes=2)
        return [tf.data.make_one_shot_iterator(ds).get_next()]

    theirs, ours = drain_both(build)
    assert len(theirs) == 5
    _same(theirs, ours)


def _example(i: int):
    f = tf1.train
    return f.Example(features=f.Features(feature={
        "label": f.Feature(int64_list=f.Int64List(value=[i])),
        "pixels": f.Feature(float_list=f.FloatList(value=[i * 0.5, -i, 1e-3 * i])),
        "name": f.Feature(bytes_list=f.BytesList(value=[b"n%d" % i])),
        "tags": f.Feature(int64_list=f.Int64List(value=list(range(i % 3)))),
        "seq": f.Feature(float_list=f.FloatList(value=[0.25] * (2 * (i % 3)))),
    })).SerializeToString()  # fmt: skip


def test_parse_example_equals_tensorflow():
    serialized = [_example(i) for i in range(5)]

    def build(tf):
        features = {
            "label": tf.io.FixedLenFeature([], tf.int64),
            "pixels": tf.io.FixedLenFeature([3], tf.float32),
            "name": tf.io.FixedLenFeature([1], tf.string),
            "missing": tf.io.FixedLenFeature([2], tf.float32, default_value=[7.0, 8.0]),
            "tags": tf.io.VarLenFeature(tf.int64),
            "seq": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
        }
        parsed = tf.io.parse_example(tf.constant(serialized), features)
        single = tf.io.parse_single_example(tf.constant(serialized[2]), features)
        out = []
        for p in (parsed, single):
            for key in sorted(p):
                v = p[key]
                out += [v.indices, v.values, v.dense_shape] if hasattr(v, "indices") else [v]
        return out

    _same(*run_both(build))


def test_parse_example_errors_are_invalid_argument():
    with tf1.Graph().as_default() as g:
        absent = tf1.io.parse_example(
            tf1.constant([_example(1)]), {"absent": tf1.io.FixedLenFeature([], tf1.int64)}
        )["absent"]
        wrong = tf1.io.parse_example(
            tf1.constant([_example(1)]), {"label": tf1.io.FixedLenFeature([], tf1.float32)}
        )["label"]
    with Session(g.as_graph_def().SerializeToString()) as sess:
        with pytest.raises(InvalidArgumentError, match="absent.*required") as e:
            sess.run([absent.name], {})
        assert e.value.node_name == absent.op.name
        with pytest.raises(InvalidArgumentError, match="Data types don't match"):
            sess.run([wrong.name], {})


def test_decode_raw_equals_tensorflow():
    data = [
        np.arange(6, dtype=np.float32).tobytes(),
        (np.arange(6) * -2.5).astype(np.float32).tobytes(),
    ]

    def build(tf):
        s = tf.constant(data)
        return [
            tf.io.decode_raw(s, tf.float32),
            tf.io.decode_raw(s, tf.int16, little_endian=False),
            tf.io.decode_raw(s[0], tf.uint8),
            tf.io.decode_raw(tf.constant([b"", b""]), tf.int32),
        ]

    _same(*run_both(build))


def test_decode_csv_equals_tensorflow():
    records = ['1,2.5,"a,""b""",7', ",,plain,", "-3,1e3,,NA"]

    def build(tf):
        defaults = [[0], [1.5], ["dflt"], tf.constant([9], tf.int64)]
        out = tf.io.decode_csv(records, defaults, na_value="NA")
        picked = tf.io.decode_csv(records, [[0.0], ["x"]], select_cols=[1, 2])
        tabs = tf.io.decode_csv(["x\ty"], [["a"], ["b"]], field_delim="\t", use_quote_delim=False)
        return [*out, *picked, *tabs]

    _same(*run_both(build))


def test_decode_csv_errors():
    with tf1.Graph().as_default() as g:
        tf1.io.decode_csv(["1,2"], [[0], [0], [0]], name="few")
        tf1.io.decode_csv(["x"], [[0]], name="bad_int")
        tf1.io.decode_csv([","], [tf1.constant([], tf1.int32), [0]], name="required")
    with Session(g.as_graph_def().SerializeToString()) as sess:
        with pytest.raises(InvalidArgumentError, match="Expect 3 fields but have 2 in record 0"):
            sess.run(["few:0"], {})
        with pytest.raises(InvalidArgumentError, match="not a valid int32: x"):
            sess.run(["bad_int:0"], {})
        with pytest.raises(InvalidArgumentError, match="Field 0 is required but missing"):
            sess.run(["required:0"], {})


def _sequence_example(i: int) -> bytes:
    t = tf1.train
    tokens = [t.Feature(int64_list=t.Int64List(value=[j, j + 1])) for j in range(i)]
    weights = [t.Feature(float_list=t.FloatList(value=[0.5] * j)) for j in range(i)]
    return t.SequenceExample(
        context=t.Features(feature={"len": t.Feature(int64_list=t.Int64List(value=[i]))}),
        feature_lists=t.FeatureLists(feature_list={
            "tok": t.FeatureList(feature=tokens), "w": t.FeatureList(feature=weights),
        }),
    ).SerializeToString()  # fmt: skip


def test_parse_sequence_example_equals_tensorflow():
    def build(tf):
        context = {
            "len": tf.io.FixedLenFeature([], tf.int64),
            "miss": tf.io.FixedLenFeature([], tf.int64, default_value=4),
            "ctx_sparse": tf.io.VarLenFeature(tf.string),
        }
        lists = {
            "tok": tf.io.FixedLenSequenceFeature([2], tf.int64),
            "w": tf.io.VarLenFeature(tf.float32),
            "absent": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True),
        }
        batch = tf.io.parse_sequence_example(
            tf.constant([_sequence_example(i) for i in (1, 3, 0)]), context, lists
        )
        single = tf.io.parse_single_sequence_example(_sequence_example(2), context, lists)
        out = []
        for part in (*batch, *single):
            for key in sorted(part):
                v = part[key]
                out += [v.indices, v.values, v.dense_shape] if hasattr(v, "indices") else [v]
        return out

    _same(*run_both(build))


def test_parse_sequence_example_missing_list_is_invalid_argument():
    with tf1.Graph().as_default() as g:
        _, lists, _ = tf1.io.parse_sequence_example(
            tf1.constant([_sequence_example(1)]),
            sequence_features={"nope": tf1.io.FixedLenSequenceFeature([], tf1.int64)},
        )
    graph = g.as_graph_def().SerializeToString()
    with Session(graph) as sess, pytest.raises(InvalidArgumentError, match="'nope' is required"):
        sess.run([lists["nope"].name], {})
