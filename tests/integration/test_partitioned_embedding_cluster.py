"""Integration: a word2vec-style skip-gram model whose embedding table and NCE weights
are each split into two shards, one per ps task ("div" and "mod" partitioning), with
the model on /job:worker/task:1, trained with SGD on a real-process cluster (CLIs on
loopback). Driven by `import client as tf` and by an unmodified tensorflow.compat.v1
client; TensorFlow's local session is the oracle for the losses and the final shards."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import client
from deploy.launcher import LocalCluster
from tests.integration.conftest import running

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True

VOCAB, DIM, BATCH, NEG, STEPS = 20, 4, 8, 5, 5
RNG = np.random.RandomState(11)
EMBEDDINGS = RNG.uniform(-1, 1, (VOCAB, DIM)).astype(np.float32)
NCE_W = (RNG.randn(VOCAB, DIM) * 0.5).astype(np.float32)
CENTER = [RNG.randint(0, VOCAB, BATCH).astype(np.int32) for _ in range(STEPS)]
CONTEXT = [RNG.randint(0, VOCAB, (BATCH, 1)).astype(np.int64) for _ in range(STEPS)]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with running(LocalCluster(jobs={"worker": 2, "ps": 2}).start()) as started:
        yield started


def _device(tf, name: str | None):
    return tf.device(name) if name else tf.device(None)


def _program(tf, target: str, placed: bool) -> tuple[list[float], list[np.ndarray]]:
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(7)
        emb, nce = [], []
        for i in range(2):
            with _device(tf, f"/job:ps/task:{i}" if placed else None):
                # "div": shard 0 holds ids 0..9, shard 1 ids 10..19.
                emb.append(tf.Variable(EMBEDDINGS[10 * i : 10 * (i + 1)], name=f"emb_{i}"))
                # "mod" (nce_loss's default): shard i holds the ids i, i + 2, ...
                nce.append(tf.Variable(NCE_W[i::2], name=f"nce_w_{i}"))
        with _device(tf, "/job:ps/task:0" if placed else None):
            nce_b = tf.Variable(np.zeros(VOCAB, np.float32), name="nce_b")
        with _device(tf, "/job:worker/task:1" if placed else None):
            center = tf.placeholder(tf.int32, [BATCH], name="center")
            context = tf.placeholder(tf.int64, [BATCH, 1], name="context")
            embed = tf.nn.embedding_lookup(emb, center, partition_strategy="div")
            loss = tf.reduce_mean(
                tf.nn.nce_loss(nce, nce_b, context, embed, NEG, VOCAB, partition_strategy="mod")
            )
            train = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
        with tf.Session(target, graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [
                float(sess.run([loss, train], {center: c, context: x})[0])
                for c, x in zip(CENTER, CONTEXT)
            ]
            return losses, sess.run(emb + nce)


@pytest.fixture(scope="module")
def oracle() -> tuple[list[float], list[np.ndarray]]:
    return _program(tf1, "", placed=False)


def _assert_like_oracle(got, oracle) -> None:
    np.testing.assert_allclose(got[0], oracle[0], rtol=1e-5)
    for a, b in zip(got[1], oracle[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert got[0][-1] < got[0][0]


def test_sharded_word2vec_through_our_client(cluster, oracle):
    _assert_like_oracle(_program(client, cluster.target, placed=True), oracle)


def test_sharded_word2vec_through_tensorflow_client(cluster, oracle):
    _assert_like_oracle(_program(tf1, cluster.target, placed=True), oracle)
