"""Tests (ops stage): MutableDenseHashTableV2 (tf.lookup.experimental.DenseHashTable) —
its OpDef, and the same programs run by TensorFlow and by our session: lookups, sizes
and the errors for reserved keys and bad bucket counts."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import OpError
from common.session import Session
from tests.common.ops.signatures import assert_signature_matches_tensorflow


def test_signature_matches_tensorflow() -> None:
    assert_signature_matches_tensorflow("MutableDenseHashTableV2")


def _programs(tf) -> dict:
    dense = tf.lookup.experimental.DenseHashTable

    def basic():
        t = dense(tf.int64, tf.float32, -1.0, empty_key=0, deleted_key=-1, initial_num_buckets=8)
        keys = tf.constant([5, 7, 9], tf.int64)
        return [t.insert(keys, tf.constant([1.0, 2, 3])), t.remove(tf.constant([7], tf.int64)),
                [t.lookup(tf.constant([5, 7, 9, 4], tf.int64)), t.size()]]  # fmt: skip

    def strings_grow():
        t = dense(tf.string, tf.int64, -1, empty_key="", deleted_key="$", initial_num_buckets=4)
        keys = tf.constant(["a", "b", "c", "d", "e"])
        return [t.insert(keys, tf.constant([1, 2, 3, 4, 5], tf.int64)),
                [t.lookup(tf.constant(["c", "z"])), t.size()]]  # fmt: skip

    def vectors():
        t = dense(tf.int64, tf.float32, [0.0, 0.0], empty_key=0, deleted_key=-1)
        return [t.insert(tf.constant([3], tf.int64), tf.constant([[1.0, 2]])),
                [t.lookup(tf.constant([3, 4], tf.int64))]]  # fmt: skip

    def reserved(op: str, key: int):
        def build():
            t = dense(tf.int64, tf.float32, -1.0, empty_key=0, deleted_key=-1)
            keys = tf.constant([key], tf.int64)
            if op == "insert":
                return [t.insert(keys, tf.constant([1.0]))]
            return [t.lookup(keys)] if op == "lookup" else [t.remove(keys)]

        return build

    def export_layout(key_dtype, keys, removed, more, value_shape=()):
        """Inserts growing the table past its load factor, removals, inserts reusing freed
        buckets, then the export: every bucket where TensorFlow has it."""

        def build():
            default = np.zeros(value_shape, np.float32)
            empty, deleted = ("", "$") if key_dtype == tf.string else (-5, -6)
            t = dense(key_dtype, tf.float32, default, empty, deleted, initial_num_buckets=4)
            ks = tf.constant(keys, key_dtype)
            vs = np.arange(len(keys) * max(1, int(np.prod(value_shape))), dtype=np.float32)
            extra = np.full((len(more), *value_shape), 9.5, np.float32)
            return [t.insert(ks, tf.constant(vs.reshape((len(keys), *value_shape)))),
                    t.remove(tf.constant(removed, key_dtype)),
                    t.insert(tf.constant(more, key_dtype), tf.constant(extra)),
                    [*t.export(), t.size(), t.lookup(ks)]]  # fmt: skip

        return build

    def imported():
        """A table importing another's export (a checkpoint restore) finds its entries."""
        a = dense(tf.int64, tf.int64, -1, empty_key=0, deleted_key=-1, initial_num_buckets=8)
        b = dense(tf.int64, tf.int64, -1, empty_key=0, deleted_key=-1, initial_num_buckets=4)
        keys = tf.constant([4, 12, 20, 7, -3], tf.int64)
        exported = a.export()
        with tf.control_dependencies(exported):
            restore = tf.raw_ops.LookupTableImportV2(
                table_handle=b.resource_handle, keys=exported[0], values=exported[1]
            )
        return [a.insert(keys, keys * 10), a.remove(tf.constant([12], tf.int64)), restore,
                [b.lookup(keys), b.size(), *b.export()]]  # fmt: skip

    return {
        "export_ints": export_layout(tf.int64, [3, 11, 19, 27, 2, 100, -1, 8], [11, 2], [35, 11]),
        "export_int32_vectors": export_layout(tf.int32, [1, 5, 9, 13], [5], [17], (2,)),
        "export_strings": export_layout(tf.string, ["a", "bc", "x", "yy", "q"], ["x"], ["z"]),
        "imported": imported,
        "basic": basic,
        "strings_grow": strings_grow,
        "vectors": vectors,
        "equal_keys": lambda: [dense(tf.int64, tf.float32, -1.0, 0, 0).size()],
        "bad_buckets": lambda: [dense(tf.int64, tf.float32, -1.0, 0, -1, 6).size()],
        "insert_empty": reserved("insert", 0),
        "insert_deleted": reserved("insert", -1),
        "lookup_empty": reserved("lookup", 0),
        "remove_deleted": reserved("remove", -1),
    }


NAMES = ["export_ints", "export_int32_vectors", "export_strings", "imported", "basic", "strings_grow", "vectors", "equal_keys", "bad_buckets", "insert_empty",
         "insert_deleted", "lookup_empty", "remove_deleted"]  # fmt: skip


def _fetches(x) -> list:
    return x if isinstance(x, list) else [x]


@pytest.mark.parametrize("name", NAMES)
def test_matches_tensorflow(name: str) -> None:
    tf = pytest.importorskip("tensorflow.compat.v1")
    g = tf.Graph()
    with g.as_default():
        steps = _programs(tf)[name]()
    with tf.Session(graph=g) as sess:
        try:
            theirs: object = [sess.run(s) for s in steps][-1]
        except tf.errors.OpError as e:
            lines = [ln for ln in e.message.split("\n") if ln.strip() and "[[" not in ln]
            theirs = (type(e).__name__, lines[-1])
    with Session(g.as_graph_def().SerializeToString()) as sess:
        try:
            ours: object = None
            for s in steps:
                fetch = _fetches(s)
                tensors = [t.name for t in fetch if not isinstance(t, tf.Operation)]
                ops = [t.name for t in fetch if isinstance(t, tf.Operation)]
                ours = sess.run(tensors, targets=ops)
        except OpError as e:
            ours = (type(e).__name__, e.message.split("\n")[0])
    if isinstance(theirs, tuple):
        assert ours == theirs
        return
    theirs_list = _fetches(theirs)
    assert isinstance(ours, list) and len(ours) == len(theirs_list)
    for a, b in zip(ours, theirs_list, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
