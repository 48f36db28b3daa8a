"""ParseSequenceExampleV2 with ragged keys against TensorFlow 2.21: context RaggedFeatures
(values, row splits) and feature-list RaggedFeatures (values, inner and outer splits,
missing lists as no steps), batched and single, beside dense and sparse features, through
a graph TensorFlow's tf.io.parse_sequence_example builds. Skipped without TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

from .tf_graphs import run_both

tf = pytest.importorskip("tensorflow")
train = tf.train


def _sequence_example(i: int) -> bytes:
    context = train.Features(
        feature={
            "ids": train.Feature(int64_list=train.Int64List(value=list(range(i)))),
            "len": train.Feature(int64_list=train.Int64List(value=[i])),
        }
    )
    lists = {
        "tok": train.FeatureList(
            feature=[
                train.Feature(bytes_list=train.BytesList(value=[b"t%d" % j] * (j + 1)))
                for j in range(i)
            ]
        ),
        "w": train.FeatureList(
            feature=[
                train.Feature(float_list=train.FloatList(value=[0.5 * j] * (j % 3)))
                for j in range(i + 1)
            ]
        ),
    }
    if i == 2:
        del lists["tok"]  # a missing ragged feature list: no steps
    return train.SequenceExample(
        context=context, feature_lists=train.FeatureLists(feature_list=lists)
    ).SerializeToString()


DATA = [_sequence_example(i) for i in range(4)]


def test_ragged_context_and_feature_lists_match_tensorflow():
    def build(tf1):
        ctx, fl, _ = tf.io.parse_sequence_example(
            tf.constant(DATA),
            context_features={
                "ids": tf.io.RaggedFeature(tf.int64),
                "len": tf.io.FixedLenFeature([], tf.int64),
            },
            sequence_features={
                "tok": tf.io.RaggedFeature(tf.string),
                "w": tf.io.RaggedFeature(tf.float32, row_splits_dtype=tf.int64),
                "d": tf.io.VarLenFeature(tf.float32),
            },
        )
        out = [ctx["ids"].values, ctx["ids"].row_splits, ctx["len"]]
        for key in ("tok", "w"):
            out += [fl[key].values.values, fl[key].values.row_splits, fl[key].row_splits]
        c1, f1 = tf.io.parse_single_sequence_example(
            tf.constant(DATA[3]),
            context_features={"ids": tf.io.RaggedFeature(tf.int64)},
            sequence_features={"w": tf.io.RaggedFeature(tf.float32)},
        )
        return [*out, c1["ids"], f1["w"].values, f1["w"].row_splits]

    theirs, ours = run_both(build)
    for i, (t, o) in enumerate(zip(theirs[0], ours[0])):
        t, o = np.asarray(t), np.asarray(o)
        assert (o.dtype, o.shape) == (t.dtype, t.shape), i
        assert o.tolist() == t.tolist(), i
