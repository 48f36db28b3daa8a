"""tf.train.SyncReplicasOptimizer in one process against tensorflow.compat.v1: the same
node names for its accumulators, token queue and init ops, and the same values after every
step for dense and sparse (embedding, SparseConditionalAccumulator) gradients, one replica
driving the chief's queue runner as a MonitoredSession hook would.

The value tests start with no token on the queue (`get_init_tokens_op(num_tokens=0)`): each
train op then returns only once the chief's queue runner has applied that step's update
and put the next token on the queue. With the default first token a replica runs one step
ahead of the update (`test_first_token_lets_the_replica_run_ahead`), so what the next
`sess.run` reads, and whether a later gradient is dropped as stale, depend on when the
queue runner's thread gets to run: in TensorFlow as here."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.tf1_oracle import assert_close, run_both

STEPS = 5
SYNC_NODES = [
    "sync_replicas/conditional_accumulator",
    "sync_replicas/ResourceAccumulatorApplyGradient",
    "sync_replicas/ResourceAccumulatorTakeGradient",
    "sync_token_q",
    "sync_token_q_Dequeue",
    "sync_token_q_EnqueueMany",
    "sync_replicas/SetGlobalStep",
    "sync_replicas/group_deps",
    "sync_rep_local_step",
]


def _model(sparse: bool):
    rng = np.random.RandomState(5)
    xs = rng.rand(8, 4).astype(np.float32)
    ids = np.array([0, 2, 2, 5, 1, 0, 4, 2], np.int32)
    ys = rng.rand(8, 1).astype(np.float32)

    def build(tf):
        gs = tf.train.get_or_create_global_step()
        w = tf.get_variable("w", initializer=rng.randn(4, 1).astype(np.float32), use_resource=True)
        features = tf.constant(xs)
        if sparse:
            emb = tf.get_variable(
                "emb", initializer=rng.randn(6, 4).astype(np.float32), use_resource=True
            )
            features = features + tf.nn.embedding_lookup(emb, ids)
        loss = tf.reduce_mean(tf.square(tf.matmul(features, w) - ys))
        opt = tf.train.SyncReplicasOptimizer(
            tf.train.GradientDescentOptimizer(0.1), replicas_to_aggregate=1
        )
        train = opt.minimize(loss, global_step=gs)
        init_tokens = opt.get_init_tokens_op(num_tokens=0)
        runner = opt.get_chief_queue_runner()

        def steps(sess):
            coord = tf.train.Coordinator()
            sess.run(opt.chief_init_op)
            sess.run(init_tokens)
            threads = runner.create_threads(sess, coord=coord, daemon=True, start=True)
            out = []
            for _ in range(STEPS):
                out.append(sess.run([loss, train]))
                out.append(sess.run(gs))
            values = {v.op.name: sess.run(v) for v in tf.global_variables()}
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=1, ignore_live_threads=True)
            return out, values

        return steps

    return build


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_same_nodes_and_values_as_tensorflow(sparse):
    ours, theirs, names, tf_names = run_both(_model(sparse))
    assert_close(ours[0], theirs[0], rtol=2e-6, atol=1e-7)
    assert_close(ours[1], theirs[1], rtol=2e-6, atol=1e-7)
    wanted = SYNC_NODES
    if sparse:
        wanted = [n for n in wanted if "Resource" not in n and "conditional" not in n]
        wanted += ["sync_replicas/sparse_conditional_accumulator",
                   "sync_replicas/SparseAccumulatorApplyGradient",
                   "sync_replicas/SparseAccumulatorTakeGradient"]  # fmt: skip
    for name in wanted:
        assert name in tf_names, name
        assert name in names, name


def test_first_token_lets_the_replica_run_ahead():
    """With the default first token and no queue runner, the train op returns before any
    update: the global step and the weights are unchanged, the local step is the token's."""

    def build(tf):
        gs = tf.train.get_or_create_global_step()
        w = tf.get_variable("w", initializer=np.ones([2, 1], np.float32), use_resource=True)
        loss = tf.reduce_sum(tf.matmul(tf.constant([[1.0, 2.0]]), w))
        opt = tf.train.SyncReplicasOptimizer(
            tf.train.GradientDescentOptimizer(0.1), replicas_to_aggregate=1
        )
        train = opt.minimize(loss, global_step=gs)
        init_tokens = opt.get_init_tokens_op()
        local_step = [v for v in tf.local_variables() if "sync_rep_local_step" in v.op.name]

        def steps(sess):
            sess.run(opt.chief_init_op)
            sess.run(init_tokens)
            sess.run(train)
            return sess.run([gs, w, local_step[0]])

        return steps

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs)
    assert ours[0] == 0
    np.testing.assert_array_equal(ours[1], np.ones([2, 1], np.float32))
