"""tf.io.RaggedFeature in the client against tensorflow.compat.v1: ParseExampleV2 with
ragged keys builds TensorFlow's nodes, and the fetched RaggedTensorValues (values, row
splits) are TensorFlow's, batched and single, beside dense and sparse features."""

from __future__ import annotations

import numpy as np
import pytest

import client

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True


def _example(i: int) -> bytes:
    t = tf_real.train
    feature = {
        "ids": t.Feature(int64_list=t.Int64List(value=list(range(i)))),
        "w": t.Feature(float_list=t.FloatList(value=[0.5 * i] * (3 - i % 3))),
        "tag": t.Feature(bytes_list=t.BytesList(value=[b"x%d" % j for j in range(i % 2 + 1)])),
        "label": t.Feature(int64_list=t.Int64List(value=[i])),
    }
    return t.Example(features=t.Features(feature=feature)).SerializeToString()


SERIALIZED = [_example(i) for i in range(5)]


def _both(body):
    results, graphs = [], []
    for tf in (client, tf1):
        g = tf.Graph()
        with g.as_default():
            fetches = body(tf)
            with tf.Session(graph=g) as sess:
                results.append(sess.run(fetches))
        graphs.append([(n.name, n.op) for n in g.as_graph_def().node])
    return results, graphs


def _assert_ragged_equal(ours, theirs) -> None:
    assert type(ours).__name__ == "RaggedTensorValue"
    for part in ("values", "row_splits"):
        a, b = np.asarray(getattr(ours, part)), np.asarray(getattr(theirs, part))
        assert (a.dtype, a.shape) == (b.dtype, b.shape), part
        assert a.tolist() == b.tolist(), part
    assert ours.to_list() == theirs.to_list()


def test_ragged_features_names_and_values():
    def body(tf):
        return tf.io.parse_example(
            tf.constant(SERIALIZED),
            {
                "ids": tf.io.RaggedFeature(tf.int64),
                "weights": tf.io.RaggedFeature(tf.float32, value_key="w",
                                               row_splits_dtype=tf.int64),
                "tag": tf.io.RaggedFeature(tf.string),
                "label": tf.io.FixedLenFeature([], tf.int64),
                "sparse_ids": tf.io.VarLenFeature(tf.int64),
            },
        )  # fmt: skip

    (ours, theirs), (g_ours, g_theirs) = _both(body)
    assert g_ours == g_theirs
    assert sorted(ours) == sorted(theirs)
    for key in ("ids", "weights", "tag"):
        _assert_ragged_equal(ours[key], theirs[key])
    np.testing.assert_array_equal(ours["label"], theirs["label"])


def test_a_single_example_gives_its_values():
    def body(tf):
        return tf.io.parse_single_example(
            tf.constant(SERIALIZED[3]), {"ids": tf.io.RaggedFeature(tf.int64)}
        )

    (ours, theirs), (g_ours, g_theirs) = _both(body)
    assert g_ours == g_theirs
    np.testing.assert_array_equal(ours["ids"], theirs["ids"])
    assert ours["ids"].dtype == theirs["ids"].dtype


def test_partitions_are_refused_plainly():
    g = client.Graph()
    with g.as_default(), pytest.raises(NotImplementedError, match="partitions"):
        client.io.parse_example(
            client.constant(SERIALIZED),
            {"ids": client.io.RaggedFeature(client.int64, partitions=(object(),))},
        )


def _sequence_example(i: int) -> bytes:
    t = tf_real.train
    context = t.Features(feature={"ids": t.Feature(int64_list=t.Int64List(value=list(range(i))))})
    lists = {
        "w": t.FeatureList(
            feature=[
                t.Feature(float_list=t.FloatList(value=[0.5 * j] * (j % 3))) for j in range(i + 1)
            ]
        )
    }
    return t.SequenceExample(
        context=context, feature_lists=t.FeatureLists(feature_list=lists)
    ).SerializeToString()


def test_ragged_sequence_features_names_and_values():
    data = [_sequence_example(i) for i in range(4)]

    def body(tf):
        ctx, lists, _ = tf.io.parse_sequence_example(
            tf.constant(data),
            context_features={"ids": tf.io.RaggedFeature(tf.int64)},
            sequence_features={"w": tf.io.RaggedFeature(tf.float32, row_splits_dtype=tf.int64)},
        )
        one_ctx, one_lists = tf.io.parse_single_sequence_example(
            tf.constant(data[3]),
            context_features={"ids": tf.io.RaggedFeature(tf.int64)},
            sequence_features={"w": tf.io.RaggedFeature(tf.float32)},
        )
        return [ctx["ids"], lists["w"], one_ctx["ids"], one_lists["w"]]

    (ours, theirs), (g_ours, g_theirs) = _both(body)
    assert g_ours == g_theirs
    _assert_ragged_equal(ours[0], theirs[0])
    assert ours[1].to_list() == theirs[1].to_list()
    np.testing.assert_array_equal(ours[1].row_splits, theirs[1].row_splits)
    _assert_ragged_equal(ours[1].values, theirs[1].values)
    np.testing.assert_array_equal(ours[2], theirs[2])
    _assert_ragged_equal(ours[3], theirs[3])
