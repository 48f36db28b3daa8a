"""Integration, TensorFlow client, lookup tables and sparse tensors: an unmodified
tf.compat.v1.Session("grpc://...") trains a bag-of-words text classifier through OUR
master (real processes started through the CLIs). The vocabulary is a StaticHashTable on
the ps, initialized by tables_initializer; a worker maps tokens through it, builds a
SparseTensor of token counts and trains with sparse_tensor_dense_matmul. A
MutableHashTable counts tokens across steps on the ps. Compared with TensorFlow's own local
session."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

W0, PS = "/job:worker/task:0", "/job:ps/task:0"
VOCAB = ["good", "great", "fun", "bad", "awful", "boring", "movie", "the"]
DOCS = [
    "the movie good fun",
    "great fun great",
    "bad movie",
    "awful boring the movie",
    "good good unknown",
    "boring bad bad",
]
LABELS = np.array([1, 1, 0, 0, 1, 0], np.int32)
STEPS = 12


def _no_device(name):
    return contextlib.nullcontext()  # the local oracle has only /job:localhost


def _tokens() -> np.ndarray:
    split = [d.split() for d in DOCS]
    width = max(len(s) for s in split)
    return np.array([s + [""] * (width - len(s)) for s in split], object)


def _build(dev):
    with dev(PS):
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(VOCAB), tf.range(len(VOCAB), dtype=tf.int64)
            ),
            default_value=-1,
        )
        counts = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, default_value=0)
        w = tf1.get_variable("w", [len(VOCAB), 2], initializer=tf1.zeros_initializer())
    with dev(W0):
        tokens = tf1.placeholder(tf.string, [None, None], name="tokens")
        labels = tf1.placeholder(tf.int32, [None], name="labels")
        ids = table.lookup(tokens)
        where = tf.where(ids >= 0)
        cols = tf.gather_nd(ids, where)
        sp = tf.SparseTensor(
            tf.stack([where[:, 0], cols], axis=1),
            tf.ones_like(cols, tf.float32),
            tf.stack([tf.shape(ids, out_type=tf.int64)[0], len(VOCAB)]),
        )
        logits = tf1.sparse_tensor_dense_matmul(sp, w)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )
        train = tf1.train.GradientDescentOptimizer(1.0).minimize(loss)
        known = tf.gather_nd(tokens, where)
        count = counts.insert(known, counts.lookup(known) + 1)
    return (tokens, labels), loss, train, count, counts, table


def _train(target: str, dev):
    g = tf.Graph()
    with g.as_default():
        (tokens, labels), loss, train, count, counts, table = _build(dev)
        init = [tf1.global_variables_initializer(), tf1.tables_initializer()]
        exported = counts.export()
        size = table.size()
    ops = {op.type for op in g.get_operations()}
    assert {"HashTableV2", "LookupTableImportV2", "LookupTableFindV2"} <= ops
    assert {"SparseTensorDenseMatMul", "MutableHashTableV2", "LookupTableInsertV2"} <= ops
    feed = {tokens: _tokens(), labels: LABELS}
    with tf1.Session(target, graph=g) as sess:
        sess.run(init)
        losses = [float(sess.run([loss, train, count], feed)[0]) for _ in range(STEPS)]
        keys, values = sess.run(exported)
        return losses, dict(zip(keys, values)), sess.run(size)


def test_bag_of_words_with_vocabulary_table_trains_through_our_master(shared_cluster):
    remote_losses, remote_counts, remote_size = _train(shared_cluster.target, tf.device)
    local_losses, local_counts, local_size = _train("", _no_device)

    np.testing.assert_allclose(remote_losses, local_losses, rtol=1e-5, atol=1e-6)
    assert remote_losses[-1] < 0.5 * remote_losses[0]
    assert remote_counts == local_counts
    # Duplicate keys in one insert count once a step, as in TensorFlow.
    assert remote_counts[b"bad"] == STEPS and b"unknown" not in remote_counts
    assert remote_size == local_size == len(VOCAB)


def _sparse_model(api, dev):
    """Token-count features fed as a SparseTensor's components, one linear layer trained
    through sparse_tensor_dense_matmul; the same code builds with `client` and tf.compat.v1."""
    with dev(PS):
        w = api.get_variable("w", [len(VOCAB), 2], initializer=api.zeros_initializer())
    with dev(W0):
        indices = api.placeholder(api.int64, [None, 2], name="indices")
        values = api.placeholder(api.float32, [None], name="values")
        labels = api.placeholder(api.int32, [None], name="labels")
        sp = api.SparseTensor(indices, values, [len(DOCS), len(VOCAB)])
        logits = api.sparse_tensor_dense_matmul(sp, w)
        loss = api.reduce_mean(
            api.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )
        train = api.train.GradientDescentOptimizer(1.0).minimize(loss)
        dense = api.sparse_tensor_to_dense(sp)
    return (indices, values, labels), loss, train, dense


def _sparse_feed() -> tuple[np.ndarray, np.ndarray]:
    ids = {t: i for i, t in enumerate(VOCAB)}
    pairs = [(r, ids[t]) for r, d in enumerate(DOCS) for t in d.split() if t in ids]
    return np.array(sorted(set(pairs)), np.int64), np.array(
        [sum(p == q for p in pairs) for q in sorted(set(pairs))], np.float32
    )


def _train_sparse(api, target: str, dev):
    g = api.Graph()
    with g.as_default():
        (indices, values, labels), loss, train, dense = _sparse_model(api, dev)
        init = api.global_variables_initializer()
    idx, vals = _sparse_feed()
    feed = {indices: idx, values: vals, labels: LABELS}
    with api.Session(target, graph=g) as sess:
        sess.run(init)
        losses = [float(sess.run([loss, train], feed)[0]) for _ in range(STEPS)]
        return losses, sess.run(dense, feed)


def test_our_client_trains_through_sparse_tensor_dense_matmul(shared_cluster):
    import client

    ours, ours_dense = _train_sparse(client, shared_cluster.target, client.device)
    theirs, their_dense = _train_sparse(tf1, "", _no_device)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert ours[-1] < 0.5 * ours[0]
    np.testing.assert_array_equal(ours_dense, their_dense)
    assert their_dense[4, VOCAB.index("good")] == 2


OOV_BUCKETS = 2


def _vocab_model(api, dev, counts_name: str):
    """Bag of words over a StaticVocabularyTable (out-of-vocabulary tokens hashed into
    OOV_BUCKETS extra ids) on the ps, with a MutableHashTable counting ids there; the same
    code builds with `client` and tf.compat.v1."""
    width = len(VOCAB) + OOV_BUCKETS
    with dev(PS):
        table = api.lookup.StaticVocabularyTable(
            api.lookup.KeyValueTensorInitializer(
                VOCAB, list(range(len(VOCAB))), api.string, api.int64
            ),
            num_oov_buckets=OOV_BUCKETS,
        )
        # A name per run: a MutableHashTable is shared by node name on the server and
        # outlives the session, so runs on one cluster must not meet their counts.
        counts = api.lookup.experimental.MutableHashTable(
            api.int64, api.int64, default_value=0, name=counts_name
        )
        w = api.get_variable("w", [width, 2], initializer=api.zeros_initializer())
    with dev(W0):
        tokens = api.placeholder(api.string, [None, None], name="tokens")
        labels = api.placeholder(api.int32, [None], name="labels")
        where = api.where(api.not_equal(tokens, ""))
        ids = table.lookup(api.gather_nd(tokens, where))
        sp = api.SparseTensor(
            api.stack([where[:, 0], ids], axis=1),
            api.ones_like(ids, api.float32),
            api.stack([api.shape(tokens, out_type=api.int64)[0], width]),
        )
        logits = api.sparse_tensor_dense_matmul(sp, w)
        loss = api.reduce_mean(
            api.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )
        train = api.train.GradientDescentOptimizer(1.0).minimize(loss)
        count = counts.insert(ids, counts.lookup(ids) + 1)
    return (tokens, labels), loss, train, count, counts, table


def _train_vocab(api, target: str, dev, counts_name: str = "id_counts"):
    g = api.Graph()
    with g.as_default():
        (tokens, labels), loss, train, count, counts, table = _vocab_model(api, dev, counts_name)
        init = [api.global_variables_initializer(), api.tables_initializer()]
        exported = counts.export()
        size = table.size()
    feed = {tokens: _tokens(), labels: LABELS}
    with api.Session(target, graph=g) as sess:
        sess.run(init)
        losses = [float(sess.run([loss, train, count], feed)[0]) for _ in range(STEPS)]
        keys, values = sess.run(exported)
        return losses, dict(zip(keys.tolist(), values.tolist())), int(sess.run(size))


def test_vocabulary_table_trains_through_our_master_with_both_clients(shared_cluster):
    import client

    ours = _train_vocab(client, shared_cluster.target, client.device, "ours_counts")
    theirs = _train_vocab(tf1, shared_cluster.target, tf.device, "their_counts")
    local = _train_vocab(tf1, "", _no_device)

    for losses, counts, size in (ours, theirs):
        np.testing.assert_allclose(losses, local[0], rtol=1e-5, atol=1e-6)
        assert counts == local[1]
        assert size == local[2] == len(VOCAB) + OOV_BUCKETS
    assert ours[0][-1] < 0.5 * ours[0][0]
    # "unknown" is the one out-of-vocabulary token: its bucket id follows the vocabulary.
    assert len(VOCAB) <= max(ours[1]) < len(VOCAB) + OOV_BUCKETS
