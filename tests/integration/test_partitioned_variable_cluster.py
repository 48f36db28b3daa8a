"""Integration: a wide-and-deep style model whose embedding table is a partitioned
variable (get_variable with fixed_size_partitioner(3)), its shards placed round-robin over
two ps tasks by replica_device_setter, trained with SGD on a real-process cluster (CLIs on
loopback) through `import client as tf`, then saved by a sharded Saver (one SaveV2 per ps
task, each shard as a slice of "emb"). TensorFlow's local session is the oracle for the
losses and the table; TensorFlow reads the checkpoint."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import client
from deploy.launcher import LocalCluster
from tests.integration.conftest import running

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1

VOCAB, DIM, STEPS = 11, 4, 4
RNG = np.random.RandomState(5)
TABLE = RNG.uniform(-1, 1, (VOCAB, DIM)).astype(np.float32)
IDS = [RNG.randint(0, VOCAB, 6).astype(np.int32) for _ in range(STEPS)]
LABELS = [RNG.randn(6, 1).astype(np.float32) for _ in range(STEPS)]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with running(LocalCluster(jobs={"worker": 1, "ps": 2}).start()) as started:
        yield started


def _program(t: Any, target: str, placed: bool, prefix: str | None) -> dict[str, Any]:
    g = t.Graph()
    with g.as_default():
        device = (
            t.train.replica_device_setter(ps_tasks=2, worker_device="/job:worker/task:0")
            if placed
            else None
        )
        with t.device(device):
            emb = t.get_variable(
                "emb",
                [VOCAB, DIM],
                initializer=TABLE,  # a value: each shard initialized from its slice
                partitioner=t.fixed_size_partitioner(3),
                use_resource=True,
            )
            w = t.get_variable(
                "w", [DIM, 1], initializer=t.constant_initializer(0.3), use_resource=True
            )
            ids = t.placeholder(t.int32, [None], name="ids")
            labels = t.placeholder(t.float32, [None, 1], name="labels")
            logits = t.matmul(t.nn.embedding_lookup(emb, ids, partition_strategy="div"), w)
            loss = t.reduce_mean(t.square(logits - labels))
            train = t.train.GradientDescentOptimizer(0.5).minimize(loss)
        saver = t.train.Saver(sharded=True)
        with t.Session(target, graph=g) as sess:
            sess.run(t.global_variables_initializer())
            losses = [
                float(sess.run([loss, train], {ids: i, labels: y})[0]) for i, y in zip(IDS, LABELS)
            ]
            if prefix is not None:
                saver.save(sess, prefix, write_meta_graph=False)
            return {
                "losses": losses,
                "table": sess.run(t.convert_to_tensor(emb)),
                "devices": [v.device for v in emb],
            }


def test_partitioned_embedding_trains_on_two_ps_tasks_and_saves_slices(cluster, tmp_path):
    prefix = str(tmp_path / "model")
    ours = _program(client, cluster.target, placed=True, prefix=prefix)
    oracle = _program(tf1, "", placed=False, prefix=None)
    assert ours["devices"] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    np.testing.assert_allclose(ours["losses"], oracle["losses"], rtol=1e-5)
    np.testing.assert_allclose(ours["table"], oracle["table"], rtol=1e-5, atol=1e-6)
    assert not np.allclose(ours["table"], TABLE)  # the steps moved the shards
    reader = tf_real.train.load_checkpoint(prefix)
    assert reader.get_variable_to_shape_map()["emb"] == [VOCAB, DIM]
    np.testing.assert_allclose(reader.get_tensor("emb"), oracle["table"], rtol=1e-5, atol=1e-6)
