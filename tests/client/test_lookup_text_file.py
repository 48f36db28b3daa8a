"""Client graph building: vocabulary tables — tf.lookup.TextFileInitializer and
lookup_ops' index_table_from_file / index_to_string_table_from_file /
index_table_from_tensor / index_to_string_table_from_tensor — and
tf.lookup.experimental.DenseHashTable build the GraphDef tensorflow.compat.v1 builds and
look up TensorFlow's values."""

from __future__ import annotations

import numpy as np
import pytest

import client
from client.ops import lookup_ops as ours_lookup
from tests.client.tf1_oracle import run_both

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
from tensorflow.core.framework import graph_pb2  # noqa: E402
from tensorflow.python.ops import lookup_ops as tf_lookup  # noqa: E402

WORDS = ["the", "cat", "sat", "on", "mat"]


@pytest.fixture()
def vocab(tmp_path) -> str:
    path = tmp_path / "vocab.txt"
    path.write_text("".join(f"{w}\t{i * 10}\n" for i, w in enumerate(WORDS)))
    return str(path)


def _lk(api):
    return ours_lookup if api is client else tf_lookup


def _cases(vocab: str) -> dict:
    def text_file(api):
        init = api.lookup.TextFileInitializer(
            vocab, api.string, 0, api.int64, 1, vocab_size=4, delimiter="\t"
        )
        table = api.lookup.StaticHashTable(init, default_value=-1)
        return [table.initializer], [table.lookup(api.constant(["cat", "mat", "dog"]))]

    def from_file(api):
        table = _lk(api).index_table_from_file(vocab, key_column_index=0)
        back = _lk(api).index_to_string_table_from_file(vocab, key_column_index=-1,
                                                        value_column_index=0)  # fmt: skip
        ids = table.lookup(api.constant(["sat", "dog", "the"]))
        return [table.initializer, back.initializer], [ids, back.lookup(ids)]

    def from_tensor(api):
        table = _lk(api).index_table_from_tensor(api.constant(WORDS))
        back = _lk(api).index_to_string_table_from_tensor(WORDS, default_value="?")
        ids = table.lookup(api.constant(["on", "zebra"]))
        return [table.initializer, back.initializer], [ids, back.lookup(ids), back.size()]

    def dense_table(api):
        t = api.lookup.experimental.DenseHashTable(
            api.int64, api.float32, -1.0, empty_key=0, deleted_key=-1, initial_num_buckets=8
        )
        insert = t.insert(api.constant([4, 8], api.int64), api.constant([0.5, 2.0]))
        remove = t.remove(api.constant([4], api.int64))
        return [insert, remove], [t.lookup(api.constant([4, 8, 9], api.int64)), t.size()]

    return {
        "text_file": text_file,
        "from_file": from_file,
        "from_tensor": from_tensor,
        "dense_table": dense_table,
    }


CASES = ["text_file", "from_file", "from_tensor", "dense_table"]


def _graph_def(api, build) -> graph_pb2.GraphDef:
    with api.Graph().as_default() as g:
        build(api)
        out = graph_pb2.GraphDef()
        out.ParseFromString(g.as_graph_def().SerializeToString())
        return out


@pytest.mark.parametrize("case", CASES)
def test_graph_matches_tensorflow(case: str, vocab: str) -> None:
    build = _cases(vocab)[case]
    ours, theirs = (_graph_def(api, build) for api in (client, tf1))
    assert [n.name for n in ours.node] == [n.name for n in theirs.node]
    for a, b in zip(ours.node, theirs.node, strict=True):
        assert (a.op, list(a.input)) == (b.op, list(b.input)), a.name
        if a.op in ("HashTableV2",):  # shared_name carries a fresh uuid for tensor tables
            continue
        assert dict(a.attr) == dict(b.attr), a.name


@pytest.mark.parametrize("case", CASES)
def test_values_match_tensorflow(case: str, vocab: str) -> None:
    def build(api):
        init, fetches = _cases(vocab)[case](api)

        def steps(sess):
            for op in init:
                sess.run(op)
            return [sess.run(f) for f in fetches]

        return steps

    ours, theirs, _, _ = run_both(build)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_oov_buckets_give_tensorflows_ids(vocab: str) -> None:
    """TF builds an IdTableWithHashBuckets, we a StaticVocabularyTable: same ids."""

    def build(api):
        table = _lk(api).index_table_from_file(vocab, num_oov_buckets=3, key_column_index=0)
        ids = table.lookup(api.constant(["cat", "zebra", "yak", "mat"]))
        return lambda sess: (sess.run(table.initializer), sess.run(ids))[1]

    ours, theirs, _, _ = run_both(build)
    np.testing.assert_array_equal(ours, theirs)


def test_bad_arguments_raise_tensorflows_errors(vocab: str) -> None:
    for api in (client, tf1):
        for kwargs, error in (
            (dict(key_index=-1), "`key_dtype` must be int64 if `key_index` is -1, received"),
            (dict(value_index=-3), "`value_index` should be >= -2, received: -3"),
            (dict(vocab_size=0), "`vocab_size` should be > 0, received: 0"),
        ):
            args = dict(filename=vocab, key_dtype=api.string, key_index=0,
                        value_dtype=api.int64, value_index=-1)  # fmt: skip
            args.update(kwargs)
            with pytest.raises(ValueError, match=error.replace("`", ".")):
                api.lookup.TextFileInitializer(**args)
