"""tf.lookup against tensorflow.compat.v1: StaticHashTable, KeyValueTensorInitializer,
StaticVocabularyTable, experimental.MutableHashTable and tables_initializer build TF's nodes
(graph_diff, with a static table's random "hash_table_<uuid>" shared_name normalised) and
give TF's values."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, run_both, tf_real

WORDS = np.array([[b"good", b"fun"], [b"bad", b"unknown"], [b"", b"good"]], dtype=object)


def _tables(api):
    x = api.placeholder(api.string, [None, 2], name="x")
    n = api.placeholder(api.int64, [None], name="n")
    vocab = ["good", "fun", "bad"]
    table = api.lookup.StaticHashTable(
        api.lookup.KeyValueTensorInitializer(api.constant(vocab), api.range(3, dtype=api.int64)),
        default_value=-1,
    )
    vocab_table = api.lookup.StaticVocabularyTable(
        api.lookup.KeyValueTensorInitializer(vocab, [0, 1, 2], value_dtype=api.int64),
        num_oov_buckets=4,
    )
    int_table = api.lookup.StaticVocabularyTable(
        api.lookup.KeyValueTensorInitializer([7, 3], [0, 1], api.int64, api.int64),
        num_oov_buckets=2,
        name="ids",
    )
    floats = api.lookup.StaticHashTable(
        api.lookup.KeyValueTensorInitializer([1, 2], [0.5, 2.5], api.int64, api.float32),
        0.0,
        name="floats",
    )
    sp = api.SparseTensor([[0, 0], [1, 1]], ["fun", "nope"], [2, 2])
    sp_ids = vocab_table.lookup(sp)
    counts = api.lookup.experimental.MutableHashTable(api.string, api.int64, default_value=0)
    flat = api.reshape(x, [-1])
    insert = counts.insert(flat, counts.lookup(flat) + 1)
    outs = [
        table.lookup(x),
        table.size(),
        vocab_table.lookup(x),
        vocab_table.size(),
        int_table.lookup(n),
        floats.lookup(n),
        floats.export(),
        sp_ids.indices,
        sp_ids.values,
        table[x],
    ]
    return x, n, insert, counts, outs


def _normalised(graph_def):
    for node in graph_def.node:
        shared = node.attr["shared_name"].s if "shared_name" in node.attr else b""
        if shared.startswith(b"hash_table_"):
            node.attr["shared_name"].s = b"hash_table_<uuid>"
    return graph_def


def test_lookup_tables_build_tensorflows_nodes():
    def build(api):
        _, _, _, counts, _ = _tables(api)
        counts.remove(api.constant(["good"]))
        counts.export()
        counts.size()
        api.tables_initializer()

    ours, theirs = build_both(build)
    assert graph_diff(_normalised(ours), _normalised(theirs)) == []
    colocated = {n.name: list(n.attr["_class"].list.s) for n in ours.node if "_class" in n.attr}
    assert colocated == {
        n.name: list(n.attr["_class"].list.s) for n in theirs.node if "_class" in n.attr
    }


def test_static_hash_tables_get_random_shared_names():
    import client

    with client.Graph().as_default():
        init = client.lookup.KeyValueTensorInitializer(["a"], [1])
        a = client.lookup.StaticHashTable(init, -1)
        b = client.lookup.StaticHashTable(init, -1)
    names = [t.resource_handle.op.get_attr("shared_name") for t in (a, b)]
    assert names[0] != names[1]
    assert all(n.startswith(b"hash_table_") and len(n) == len("hash_table_") + 36 for n in names)


def test_lookup_values_match_tensorflow():
    def build(api):
        x, n, insert, counts, outs = _tables(api)
        init = api.tables_initializer()

        def steps(sess):
            sess.run(init)
            got = sess.run(outs, {x: WORDS, n: [7, 3, 1, 2, 99, -5]})
            exported_keys, exported_values = got[6]  # in the table's own (unspecified) order
            got[6] = sorted(zip(exported_keys.tolist(), exported_values.tolist()))
            for _ in range(2):
                sess.run(insert, {x: WORDS})
            keys, values = sess.run(counts.export())
            order = np.argsort(keys)
            return got, keys[order], values[order], sess.run(counts.size())

        return steps

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs)
    got, keys, values, size = ours
    assert got[0].tolist() == [[0, 1], [2, -1], [-1, 0]]
    assert got[3] == 3 + 4 and got[2][1, 1] >= 3  # an OOV key lands in a bucket after the ids
    # Two steps; a key twice in one insert ("good") counts once a step, as in TensorFlow.
    assert dict(zip(keys, values)) == {k: 2 for k in (b"good", b"fun", b"bad", b"unknown", b"")}
    assert size == 5


def test_mutable_hash_table_remove_and_vector_values_match_tensorflow():
    def build(api):
        table = api.lookup.experimental.MutableHashTable(
            api.int64, api.float32, default_value=[-1.0, -1.0]
        )
        keys = api.constant([1, 2, 3], api.int64)
        insert = table.insert(keys, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        remove = table.remove(api.constant([2, 9], api.int64))
        found = table.lookup(api.constant([1, 2, 3, 4], api.int64))
        return lambda sess: [
            sess.run(insert),
            sess.run(remove),
            sess.run(found),
            sess.run(table.size()),
        ][2:]

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs)
    assert ours[0].tolist() == [[1.0, 2.0], [-1.0, -1.0], [5.0, 6.0], [-1.0, -1.0]]
    assert ours[1] == 2


def test_lookup_before_tables_initializer_fails_as_in_tensorflow():
    import client

    def run(api, errors):
        with api.Graph().as_default():
            init = api.lookup.KeyValueTensorInitializer(["a"], [1])
            out = api.lookup.StaticHashTable(init, -1).lookup(api.constant(["a"]))
            with api.Session() as sess, pytest.raises(errors.FailedPreconditionError) as e:
                sess.run(out)
        return e.value

    ours = run(client, client.errors)
    theirs = run(tf_real.compat.v1, tf_real.errors)
    # TF's session prefixes where the node was defined; the kernel's message and the node
    # come last.
    kernel_message = theirs.message.split("\n")[-2]
    assert ours.message == kernel_message == "Table not initialized."
    assert ours.node_name == theirs.op.name == "hash_table_Lookup/LookupTableFindV2"


def test_lookup_rejects_keys_of_the_wrong_dtype_as_tensorflow():
    import client

    def message(api):
        with api.Graph().as_default():
            init = api.lookup.KeyValueTensorInitializer(["a"], [1])
            table = api.lookup.StaticHashTable(init, -1)
            with pytest.raises(TypeError) as e:
                table.lookup(api.constant([1]))
        return str(e.value)

    assert message(client) == message(tf_real.compat.v1)
    with pytest.raises(ValueError, match="must be > 0"):
        client.lookup.StaticVocabularyTable(None, 0)


def test_lookup_static_shapes_match_tensorflow():
    import client

    def shapes(api):
        with api.Graph().as_default() as g:
            _tables(api)
            return {
                op.name: [
                    t.shape.as_list() if t.shape.ndims is not None else None for t in op.outputs
                ]
                for op in g.get_operations()
            }

    assert shapes(client) == shapes(tf_real.compat.v1)
