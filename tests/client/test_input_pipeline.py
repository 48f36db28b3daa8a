"""Client input pipelines against tensorflow.compat.v1: the same script bodies build graphs
with the same node names and op types and fetch the same values — tf.data file datasets,
tf.io parsing and files, tf.train.Example, tf.io.TFRecordWriter, tf.gfile, tf.image codecs."""

from __future__ import annotations

import numpy as np
import pytest

import client

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module


def _nodes(graph) -> list[tuple[str, str]]:
    return [(n.name, n.op) for n in graph.as_graph_def().node]


def _function_nodes(graph) -> list[list[tuple[str, str]]]:
    lib = graph.as_graph_def().library.function
    return sorted(sorted((n.name, n.op) for n in f.node_def if n.op != "NoOp") for f in lib)


def _fetch_all(sess, fetches, limit=100):
    out = []
    try:
        while len(out) < limit:
            out.append(sess.run(fetches))
    except (tf1.errors.OutOfRangeError, client.errors.OutOfRangeError):
        pass
    return out


def _both(body, drain=False):
    """(ours, theirs): graphs built by body(tf) and what running them fetched."""
    results, graphs = [], []
    for tf in (client, tf1):
        g = tf.Graph()
        with g.as_default():
            fetches = body(tf)
            with tf.Session(graph=g) as sess:
                results.append(_fetch_all(sess, fetches) if drain else sess.run(fetches))
        graphs.append(g)
    return results, graphs


def _assert_same(ours, theirs):
    if isinstance(theirs, dict):
        assert sorted(ours) == sorted(theirs)
        for k in theirs:
            _assert_same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b)
    else:
        a, b = np.asarray(ours), np.asarray(theirs)
        assert a.shape == b.shape
        if b.dtype == object:
            assert a.tolist() == b.tolist()
        else:
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)


def _example(tf, i):
    t = tf.train
    return t.Example(features=t.Features(feature={
        "image": t.Feature(float_list=t.FloatList(value=list(np.arange(4, dtype=np.float32) * i))),
        "label": t.Feature(int64_list=t.Int64List(value=[i % 3])),
        "name": t.Feature(bytes_list=t.BytesList(value=[b"ex%d" % i])),
    })).SerializeToString()  # fmt: skip


def test_example_protos_serialize_as_tensorflow():
    for i in range(4):
        assert _example(client, i) == _example(tf1, i)
    parsed = client.train.Example.FromString(_example(tf1, 2))
    assert list(parsed.features.feature["label"].int64_list.value) == [2]


@pytest.fixture
def record_files(tmp_path):
    paths = []
    for f, compression in enumerate(["", "GZIP"]):
        path = str(tmp_path / f"part{f}.tfrecord")
        with client.io.TFRecordWriter(path, compression) as w:
            for i in range(5 * f, 5 * f + 5):
                w.write(_example(client, i))
        paths.append(path)
    return paths


def test_tfrecord_writer_files_read_by_tensorflow(record_files):
    read = list(tf1.io.tf_record_iterator(record_files[1], options="GZIP"))
    assert read == [_example(tf1, i) for i in range(5, 10)]
    assert list(client.python_io.tf_record_iterator(record_files[0])) == [
        _example(tf1, i) for i in range(5)
    ]


def test_tfrecord_dataset_parse_batch_names_and_values(record_files):
    def body(tf):
        def parse(record):
            features = tf.parse_single_example(record, {
                "image": tf.FixedLenFeature([4], tf.float32),
                "label": tf.FixedLenFeature([], tf.int64),
                "name": tf.VarLenFeature(tf.string),
            })  # fmt: skip
            return features["image"], features["label"]

        ds = tf.data.TFRecordDataset(record_files[:1]).map(parse).batch(2)
        gz = tf.data.TFRecordDataset(record_files[1], compression_type="GZIP")
        return [tf.data.make_one_shot_iterator(ds).get_next(),
                tf.data.make_one_shot_iterator(gz).get_next()]  # fmt: skip

    (ours, theirs), (g_ours, g_theirs) = _both(body, drain=True)
    _assert_same(ours, theirs)
    assert len(theirs) == 3
    assert _nodes(g_ours) == _nodes(g_theirs)
    assert _function_nodes(g_ours) == _function_nodes(g_theirs)


def test_text_and_fixed_length_datasets(tmp_path):
    text = tmp_path / "t.csv"
    text.write_text("1,2.5,a\n3,,b\n")
    binary = tmp_path / "b.bin"
    binary.write_bytes(bytes(range(24)))

    def body(tf):
        lines = tf.data.TextLineDataset(str(text)).map(
            lambda line: tf.decode_csv(line, [[0], [9.0], ["x"]])
        )
        fixed = tf.data.FixedLengthRecordDataset([str(binary)], 8, header_bytes=4, footer_bytes=4)
        raw = fixed.map(lambda r: tf.decode_raw(r, tf.uint16))
        return [tf.data.make_one_shot_iterator(lines).get_next(),
                tf.data.make_one_shot_iterator(raw).get_next()]  # fmt: skip

    (ours, theirs), (g_ours, g_theirs) = _both(body, drain=True)
    _assert_same(ours, theirs)
    assert _nodes(g_ours) == _nodes(g_theirs)
    assert _function_nodes(g_ours) == _function_nodes(g_theirs)


def test_parse_example_names_and_values():
    serialized = [_example(tf1, i) for i in range(3)]

    def body(tf):
        parsed = tf.io.parse_example(tf.constant(serialized), {
            "image": tf.io.FixedLenFeature([2, 2], tf.float32),
            "label": tf.io.FixedLenFeature([1], tf.int64, default_value=[7]),
            "missing": tf.io.FixedLenFeature([], tf.float32, default_value=-1.0),
            "name": tf.io.VarLenFeature(tf.string),
            "seq": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True),
        })  # fmt: skip
        single = tf.io.parse_single_example(serialized[1], {"label": tf.io.VarLenFeature(tf.int64)})
        return [parsed, single]

    (ours, theirs), (g_ours, g_theirs) = _both(body)
    _assert_same(ours, theirs)
    assert type(ours[0]["name"]).__name__ == "SparseTensorValue"
    assert _nodes(g_ours) == _nodes(g_theirs)


def test_files_and_image_codecs(tmp_path):
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (6, 5, 3)).astype(np.uint8)
    out = str(tmp_path / "x.png")

    def body(tf):
        png = tf.image.encode_png(img)
        write = tf.io.write_file(out, png)
        with tf.control_dependencies([write]):
            back = tf.io.read_file(out)
            found = tf.matching_files(str(tmp_path / "*.png"))
        decoded = tf.image.decode_png(back, channels=1)
        jpeg = tf.io.encode_jpeg(img, quality=90)
        return [png, decoded, jpeg, tf.io.decode_jpeg(jpeg, dct_method="INTEGER_ACCURATE"),
                found]  # fmt: skip

    (ours, theirs), (g_ours, g_theirs) = _both(body)
    _assert_same(ours, theirs)
    assert _nodes(g_ours) == _nodes(g_theirs)
    g = client.Graph()
    with g.as_default():
        assert client.image.decode_png(b"x", channels=3).shape.as_list() == [None, None, 3]


def test_gfile_functions(tmp_path):
    d = str(tmp_path / "a" / "b")
    for gf, io_gf in ((client.gfile, client.io.gfile), (tf1.gfile, tf1.io.gfile)):
        io_gf.makedirs(d)
        with gf.GFile(d + "/f.txt", "w") as f:
            f.write("hello\nworld\n")
        assert gf.Exists(d + "/f.txt") and io_gf.exists(d) and io_gf.isdir(d)
        with io_gf.GFile(d + "/f.txt") as f:
            assert f.readlines() == ["hello\n", "world\n"]
        with gf.GFile(d + "/f.txt", "rb") as f:
            assert f.read() == b"hello\nworld\n" and f.size() == 12
        assert io_gf.glob(str(tmp_path / "a" / "*")) == [d]
        assert gf.ListDirectory(d) == ["f.txt"]
        io_gf.remove(d + "/f.txt")
        assert not io_gf.exists(d + "/f.txt")
        with pytest.raises(
            client.errors.NotFoundError if gf is client.gfile else tf1.errors.NotFoundError
        ):
            io_gf.remove(d + "/f.txt")
        io_gf.rmtree(str(tmp_path / "a"))


def test_one_shot_iterator_uses_an_op_seed_as_tensorflow():
    # make_one_shot_iterator takes get_seed(None) for its factory: the next seeded op
    # without an op seed gets seed2 1, not 0 (a CNN's initial weights depended on it).
    seeds = []
    for tf in (client, tf1):
        with tf.Graph().as_default() as g:
            tf.set_random_seed(7)
            tf.data.make_one_shot_iterator(tf.data.Dataset.range(3)).get_next()
            tf.truncated_normal([2])
            seeds.append([(o.get_attr("seed"), o.get_attr("seed2"))
                          for o in g.get_operations() if o.type == "TruncatedNormal"])  # fmt: skip
    assert seeds[0] == seeds[1] == [(7, 1)]


def test_v1_readers_from_a_string_queue(tmp_path):
    records = tmp_path / "r.tfrecord"
    with tf1.io.TFRecordWriter(str(records)) as w:
        for i in range(5):
            w.write(b"rec%d" % i)
    text = tmp_path / "t.csv"
    text.write_bytes(b"header\nl1\nl2\r\n")
    binary = tmp_path / "b.bin"
    binary.write_bytes(bytes(range(14)))

    def body(tf):
        out = []
        for reader, files, kind in (
            (tf.TFRecordReader(), [str(records)], "read"),
            (tf.TextLineReader(skip_header_lines=1), [str(text)] * 2, "read"),
            (tf.WholeFileReader(), [str(text), str(binary)], "read"),
            (tf.FixedLengthRecordReader(4, header_bytes=1, footer_bytes=1), [str(binary)], "up_to"),
        ):
            queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
            if kind == "read":
                out.append(reader.read(queue))
            else:
                out.append(reader.read_up_to(queue, 2))
            out.append(reader.num_records_produced())
        return out

    results, graphs = [], []
    for tf in (client, tf1):
        g = tf.Graph()
        with g.as_default():
            fetches = body(tf)
            init = [tf.local_variables_initializer(), tf.global_variables_initializer()]
            with tf.Session(graph=g) as sess:
                sess.run(init)
                coord = tf.train.Coordinator()
                threads = tf.train.start_queue_runners(sess, coord)
                seen = []
                for i in range(0, len(fetches), 2):
                    seen.append(_fetch_all(sess, fetches[i]))
                    seen.append(sess.run(fetches[i + 1]))
                coord.request_stop()
                coord.join(threads)
        results.append(seen)
        graphs.append(g)
    _assert_same(results[0], results[1])
    assert len(results[1][0]) == 5 and len(results[1][2]) == 4
    # The readers' nodes; string_input_producer's own are the queue runners' tests' concern.
    ours, theirs = ([n for n in _nodes(g) if not n[0].startswith("input_producer")]
                    for g in graphs)  # fmt: skip
    assert ours == theirs


def test_image_functions_names_and_values():
    rng = np.random.default_rng(3)
    batch = rng.uniform(0, 255, (2, 6, 5, 3)).astype(np.float32)
    pixels = rng.integers(0, 256, (6, 5, 3)).astype(np.uint8)

    def body(tf):
        x = tf.constant(batch)
        return [
            tf.image.resize_images(x, [9, 4]),
            tf.image.resize_images(
                x, [3, 7], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR, align_corners=True
            ),  # fmt: skip
            tf.image.resize_images(x, [4, 4], method=tf.image.ResizeMethod.BICUBIC),
            tf.image.resize_images(x, [6, 5]),
            tf.image.resize_bilinear(x, [5, 5], half_pixel_centers=True),
            tf.image.resize_nearest_neighbor(x, [12, 10]),
            tf.image.crop_and_resize(x, [[0.1, 0.0, 0.9, 1.0]], [1], [3, 3]),
            tf.image.convert_image_dtype(pixels, tf.float32),
            tf.image.convert_image_dtype(x / 255.0, tf.uint8, saturate=True),
            tf.image.convert_image_dtype(x / 300.0, tf.uint8),
            tf.image.flip_left_right(x[0]),
            tf.image.flip_up_down(x),
            tf.image.per_image_standardization(x[1]),
        ]

    (ours, theirs), (g_ours, g_theirs) = _both(body)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
        assert a.dtype == b.dtype and a.shape == b.shape
    assert _nodes(g_ours) == _nodes(g_theirs)


def test_resize_gradients_equal_tensorflow():
    batch = np.random.default_rng(4).standard_normal((1, 5, 4, 2)).astype(np.float32)

    def body(tf):
        x = tf.constant(batch)
        ys = [tf.image.resize_bilinear(x, [7, 3]), tf.image.resize_nearest_neighbor(x, [8, 8]),
              tf.image.resize_bicubic(x, [3, 6], half_pixel_centers=True)]  # fmt: skip
        weights = [tf.constant(np.arange(np.prod(y.shape.as_list()), dtype=np.float32)
                               .reshape(y.shape.as_list())) for y in ys]  # fmt: skip
        return [tf.gradients(tf.reduce_sum(y * w), x)[0] for y, w in zip(ys, weights)]

    (ours, theirs), _ = _both(body)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-4)


def test_image_and_audio_summaries_names_and_bytes():
    rng = np.random.default_rng(11)
    images = rng.uniform(-1, 1, (3, 4, 5, 3)).astype(np.float32)
    sound = rng.uniform(-1, 1, (2, 30)).astype(np.float32)

    def body(tf):
        return [
            tf.summary.image("pics", tf.constant(images), max_outputs=2),
            tf.summary.image("one", tf.constant(images[:1]), max_outputs=1, family="fam"),
            tf.summary.audio("sound", tf.constant(sound), 8000, max_outputs=2),
        ]

    (ours, theirs), (g_ours, g_theirs) = _both(body)
    assert ours == theirs
    assert _nodes(g_ours) == _nodes(g_theirs)


def test_color_adjustments_names_and_values():
    pixels = np.random.default_rng(12).uniform(0, 1, (2, 4, 5, 3)).astype(np.float32)

    def body(tf):
        x = tf.constant(pixels)
        u8 = tf.constant((pixels * 255).astype(np.uint8))
        return [
            tf.image.adjust_hue(x, 0.2),
            tf.image.adjust_saturation(u8, 1.7),
            tf.image.adjust_contrast(x, 0.6),
            tf.image.rgb_to_hsv(x),
            tf.image.hsv_to_rgb(x),
        ]

    (ours, theirs), (g_ours, g_theirs) = _both(body)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    assert _nodes(g_ours) == _nodes(g_theirs)


def test_parse_sequence_example_names_and_values():
    t = tf1.train

    def seq(i):
        return t.SequenceExample(
            context=t.Features(feature={"len": t.Feature(int64_list=t.Int64List(value=[i]))}),
            feature_lists=t.FeatureLists(feature_list={"tok": t.FeatureList(feature=[
                t.Feature(int64_list=t.Int64List(value=[j, j + 1])) for j in range(i)])}),
        ).SerializeToString()  # fmt: skip

    def body(tf):
        context = {"len": tf.io.FixedLenFeature([], tf.int64),
                   "miss": tf.io.FixedLenFeature([], tf.int64, default_value=4)}  # fmt: skip
        lists = {"tok": tf.io.FixedLenSequenceFeature([2], tf.int64),
                 "w": tf.io.VarLenFeature(tf.float32)}  # fmt: skip
        batch = tf.io.parse_sequence_example(tf.constant([seq(1), seq(3)]), context, lists)
        single = tf.io.parse_single_sequence_example(seq(2), context, lists)
        return [*batch, *single]

    (ours, theirs), (g_ours, g_theirs) = _both(body)
    _assert_same(ours, theirs)
    assert _nodes(g_ours) == _nodes(g_theirs)
