"""Client, checkpoints of mutable lookup tables: MutableHashTable, its tensor-valued form
and DenseHashTable are saved by tf.train.Saver as TensorFlow saves them (their export as
`<name>-keys` / `<name>-values`, restored by LookupTableImportV2 under
`save/<name>_table_restore`); the save/restore graph is TensorFlow's, and checkpoints go
both ways between TensorFlow and this client, also through our master with the tables on
/job:ps/task:0 and a sharded Saver."""

from __future__ import annotations

import os

import numpy as np
import pytest

import client
from tests.in_process import in_process_cluster

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

WORDS = np.array([b"a", b"bc", b"zz"], dtype=object)
IDS = np.array([3, -7, 11], np.int64)
VECS = np.array([[1.5, 2.0], [-1.0, 0.25], [8.0, 9.0]], np.float32)
QUERY_WORDS = np.array([b"bc", b"missing", b"a", b"zz"], dtype=object)
QUERY_IDS = np.array([11, 5, 3, -7], np.int64)


def _build(tf, devices=None, fill=True, dense=True, **saver_kwargs):
    """A variable and the three tables (the DenseHashTable only if `dense`, placed per
    `devices`), filled with the values above when `fill`; a Saver over all; ops inserting
    the values and looking them up."""
    devices = devices or {}
    with tf.device(devices.get("v", "")):
        v = tf.Variable(np.float32(2.5) if fill else np.float32(0.0), name="v")
    with tf.device(devices.get("tables", "")):
        words = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
        vecs = tf.lookup.experimental.MutableHashTable(
            tf.int64, tf.float32, [0.0, 0.0], name="vecs"
        )
        tables = [words, vecs]
        if dense:
            tables.append(
                tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, -1, -2, name="dense")
            )
    values = [tf.constant(IDS), tf.constant(VECS), tf.constant(IDS * 10)]
    keys = [tf.constant(WORDS), tf.constant(IDS), tf.constant(IDS)]
    inserts = tf.group(*[t.insert(k, x) for t, k, x in zip(tables, keys, values)])
    queries = [tf.constant(QUERY_WORDS), tf.constant(QUERY_IDS), tf.constant(QUERY_IDS)]
    lookups = (v, *[t.lookup(q) for t, q in zip(tables, queries)], *[t.size() for t in tables])
    return inserts, lookups, tf.train.Saver(**saver_kwargs)


def _save_nodes(tf, **saver_kwargs):
    g = tf.Graph()
    with g.as_default():
        _build(tf, {"v": "/job:worker/task:0", "tables": "/job:ps/task:0"}, **saver_kwargs)
        gd = g.as_graph_def()
    return {
        n.name: (n.op, [i for i in n.input if not i.startswith("^")], n.device)
        for n in gd.node
        if n.name.startswith("save/") or "lookup_table_export" in n.name
    }


@pytest.mark.parametrize("sharded", [False, True])
def test_save_restore_graph_is_tensorflows(sharded):
    ours = _save_nodes(client, sharded=sharded)
    theirs = _save_nodes(tf1, sharded=sharded)
    assert ours == theirs
    assert "save/vecs_table_restore/LookupTableImportV2" in ours


def test_saveables_are_in_the_collection_and_named_as_tensorflows():
    g = client.Graph()
    with g.as_default():
        _build(client)
        saveables = client.get_collection(client.GraphKeys.SAVEABLE_OBJECTS)
    assert [s.name for s in saveables] == ["MutableHashTable", "vecs", "dense"]
    assert [spec.name for s in saveables for spec in s.specs] == [
        "MutableHashTable-keys",
        "MutableHashTable-values",
        "vecs-keys",
        "vecs-values",
        "dense-keys",
        "dense-values",
    ]


def _save(tf, prefix, target="", devices=None, **saver_kwargs):
    os.makedirs(os.path.dirname(prefix), exist_ok=True)  # TensorFlow's sharded save needs it
    g = tf.Graph()
    with g.as_default():
        inserts, lookups, saver = _build(tf, devices, **saver_kwargs)
        with tf.Session(target, graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(inserts)
            saved = saver.save(sess, prefix, write_meta_graph=False)
            return saved, sess.run(lookups)


def _restore(tf, prefix, target="", devices=None, **saver_kwargs):
    g = tf.Graph()
    with g.as_default():
        _, lookups, saver = _build(tf, devices, fill=False, **saver_kwargs)
        with tf.Session(target, graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            saver.restore(sess, prefix)
            return sess.run(lookups)


def _assert_same(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
        assert np.asarray(a).dtype == np.asarray(b).dtype


def _expected(dense=True):
    found = [
        np.array([-7, -1, 3, 11], np.int64),
        np.array([[8.0, 9.0], [0.0, 0.0], [1.5, 2.0], [-1.0, 0.25]], np.float32),
        np.array([110, -1, 30, -70], np.int64),
    ]
    n = 3 if dense else 2
    return (np.float32(2.5), *found[:n], *[np.int64(3)] * n)


@pytest.mark.parametrize("sharded", [False, True])
def test_checkpoints_go_both_ways(tmp_path, sharded):
    ours_prefix, ours_before = _save(client, str(tmp_path / "ours" / "m"), sharded=sharded)
    tf_prefix, tf_before = _save(tf1, str(tmp_path / "tf" / "m"), sharded=sharded)
    _assert_same(ours_before, _expected())
    _assert_same(tf_before, _expected())
    _assert_same(_restore(client, tf_prefix, sharded=sharded), _expected())
    _assert_same(_restore(tf1, ours_prefix, sharded=sharded), _expected())
    hash_prefix, _ = _save(client, str(tmp_path / "ours2" / "m"), sharded=sharded, dense=False)
    restored = _restore(tf1, hash_prefix, sharded=sharded, dense=False)
    _assert_same(restored, _expected(dense=False))
    reader = tf_real.train.load_checkpoint(ours_prefix)
    assert sorted(reader.get_variable_to_shape_map()) == sorted(
        tf_real.train.load_checkpoint(tf_prefix).get_variable_to_shape_map()
    )
    keys, values = reader.get_tensor("vecs-keys"), reader.get_tensor("vecs-values")
    got = {int(k): v.tolist() for k, v in zip(keys, values)}
    assert got == {int(k): v.tolist() for k, v in zip(IDS, VECS)}
    theirs = tf_real.train.load_checkpoint(tf_prefix)
    for name in ("dense-keys", "dense-values"):  # every bucket, where TensorFlow has it
        np.testing.assert_array_equal(reader.get_tensor(name), theirs.get_tensor(name))


def test_cluster_tables_on_ps_restore_tensorflows_and_tensorflow_restores_ours(tmp_path):
    """Tables on /job:ps/task:0, the variable on the worker, a sharded Saver: our client
    through our master restores TensorFlow's checkpoint and saves one TensorFlow restores;
    TensorFlow's client through our master saves one our local session restores."""
    devices = {"v": "/job:worker/task:0", "tables": "/job:ps/task:0"}
    tf_prefix, _ = _save(tf1, str(tmp_path / "tf" / "m"), sharded=True)
    with in_process_cluster({"worker": 1, "ps": 1}) as master:
        got = _restore(client, tf_prefix, master.target, devices, sharded=True)
        ours_prefix, _ = _save(
            client, str(tmp_path / "ours" / "m"), master.target, devices, sharded=True
        )
        via_tf_prefix, _ = _save(
            tf1, str(tmp_path / "tf_cluster" / "m"), master.target, devices, sharded=True
        )
    _assert_same(got, _expected())
    _assert_same(_restore(tf1, ours_prefix), _expected())
    _assert_same(_restore(client, via_tf_prefix), _expected())


def _var_list_graph(tf, as_dict):
    g = tf.Graph()
    with g.as_default():
        t = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1, name="tab")
        tf.train.Saver({"renamed": t} if as_dict else [t])
        gd = g.as_graph_def()
    names = [n for n in gd.node if n.name == "save/SaveV2/tensor_names"][0]
    nodes = [(n.name, n.op, list(n.input)) for n in gd.node]
    return nodes, list(names.attr["value"].tensor.string_val)


@pytest.mark.parametrize("as_dict", [False, True])
def test_table_in_var_list_is_saved_as_tensorflow_names_it(as_dict):
    """A table in a list is saved as "-keys"/"-values" (TensorFlow 2.21's empty name); in
    a dict under its key; either way through a second export and `<table>_table_restore`."""
    ours, theirs = _var_list_graph(client, as_dict), _var_list_graph(tf1, as_dict)
    assert ours == theirs
    assert ours[1] == ([b"renamed-keys", b"renamed-values"] if as_dict else [b"-keys", b"-values"])


def test_renamed_table_round_trips_with_tensorflow(tmp_path):
    def run(tf, prefix, save):
        g = tf.Graph()
        with g.as_default():
            t = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1, name="tab")
            insert = t.insert(tf.constant(WORDS), tf.constant(IDS))
            saver = tf.train.Saver({"renamed": t})
            found = t.lookup(tf.constant(QUERY_WORDS))
            with tf.Session(graph=g) as sess:
                if save:
                    sess.run(insert)
                    saver.save(sess, prefix, write_meta_graph=False)
                else:
                    saver.restore(sess, prefix)
                return sess.run(found)

    want = np.array([-7, -1, 3, 11], np.int64)
    np.testing.assert_array_equal(run(client, str(tmp_path / "a"), True), want)
    np.testing.assert_array_equal(run(tf1, str(tmp_path / "a"), False), want)
    np.testing.assert_array_equal(run(tf1, str(tmp_path / "b"), True), want)
    np.testing.assert_array_equal(run(client, str(tmp_path / "b"), False), want)
