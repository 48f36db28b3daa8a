"""RaggedTensors in the client: tf.strings.unicode_decode(_with_offsets), unicode_split,
unicode_encode, bytes_split, strings.split(result_type="RaggedTensor") and the
RaggedTensor factories and views (from_value_rowids / from_row_lengths / from_row_splits,
to_tensor, to_sparse, nrows, row_lengths), fetched value for value against
tensorflow.compat.v1 (a RaggedTensorValue's to_list(), splits and values)."""

from __future__ import annotations

import numpy as np
import pytest

import client

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

WORDS = ["héllo", "ab", "", "😀x\x01"]


def _decode(tf):
    rt = tf.strings.unicode_decode(WORDS, "UTF-8", replace_control_characters=True)
    return [rt, rt.to_tensor(), rt.to_tensor(default_value=-1), rt.to_sparse(), rt.nrows(),
            rt.row_lengths(), tf.strings.unicode_decode("héllo", "UTF-8")]  # fmt: skip


def _decode_with_offsets(tf):
    chars, starts = tf.strings.unicode_decode_with_offsets(
        [b"a\xffb", "é😀".encode()], "UTF-8", errors="ignore"
    )
    return [chars, starts, tf.strings.unicode_decode_with_offsets("é😀", "UTF-8")]


def _split_and_encode(tf):
    rt = tf.strings.unicode_decode(WORDS, "UTF-8")
    return [
        tf.strings.unicode_split(WORDS, "UTF-8"),
        tf.strings.unicode_split("añ", "UTF-8"),
        tf.strings.unicode_encode(rt, "UTF-16-BE"),
        tf.strings.unicode_encode(tf.constant([104, 0x110000, 233]), "UTF-8"),
    ]


def _bytes_and_split(tf):
    return [
        tf.strings.bytes_split(["abc", "", "de"]),
        tf.strings.bytes_split("xyz"),
        tf.strings.split(["a b  c", "", "d"], result_type="RaggedTensor"),
        tf.strings.split(["a,b", "c"], sep=",", result_type="RaggedTensor").to_tensor("-"),
    ]


def _factories(tf):
    v = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])
    by_ids = tf.RaggedTensor.from_value_rowids(v, [0, 0, 2, 2, 3], nrows=5)
    by_lengths = tf.RaggedTensor.from_row_lengths(v, [2, 0, 3])
    nested = tf.RaggedTensor.from_row_splits(by_lengths, [0, 1, 3])
    inner = tf.RaggedTensor.from_row_splits(tf.reshape(tf.range(10), [5, 2]), [0, 3, 5])
    return [
        by_ids, by_ids.to_tensor(), by_ids.row_lengths(), by_ids.nrows(),
        by_lengths.to_tensor(default_value=9.0), by_lengths.to_sparse(),
        nested, nested.to_tensor(), nested.to_sparse(), inner.to_tensor(), inner.to_sparse(),
        tf.RaggedTensor.from_value_rowids(v, [0, 1, 1, 3, 3]).row_splits,
    ]  # fmt: skip


def _plain(value):
    """A fetched structure as lists and arrays (RaggedTensorValue as its rows and splits)."""
    if hasattr(value, "to_list") and hasattr(value, "row_splits"):
        return ("ragged", value.to_list(), [np.asarray(s) for s in value.nested_row_splits])
    if hasattr(value, "dense_shape"):
        return (
            "sparse",
            *(np.asarray(x) for x in (value.indices, value.values, value.dense_shape)),
        )
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return np.asarray(value)


def _assert_same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and a[0] == b[0] and len(a) == len(b), (a, b)
        for x, y in zip(a[1:], b[1:]):
            _assert_same(x, y)
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    else:
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and (a.dtype == b.dtype or a.dtype.kind in "OSU"), (a, b)
        np.testing.assert_array_equal(a, b)


def _run(tf, build):
    with tf.Graph().as_default() as g:
        fetches = build(tf)
        with tf.Session(graph=g) as sess:
            return _plain(sess.run(fetches))


@pytest.mark.parametrize(
    "build", [_decode, _decode_with_offsets, _split_and_encode, _bytes_and_split, _factories]
)
def test_values_as_tensorflow(build):
    _assert_same(_run(client, build), _run(tf1, build))


def test_higher_rank_strings_are_refused_plainly():
    with client.Graph().as_default(), pytest.raises(ValueError, match="rank 0 or 1"):
        client.strings.unicode_decode([["a"]], "UTF-8")
