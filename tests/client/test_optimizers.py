"""tf.train optimizers (RMSProp, Adadelta, AdagradDA, Ftrl, ProximalGradientDescent,
ProximalAdagrad) against tensorflow.compat.v1: the same graph node names, slot variables
and values after every step, for dense and sparse (embedding) gradients; and their
slots and updates colocated with a variable on another task than the device scope of
minimize()."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.tf1_oracle import assert_close, run_both

STEPS = 6


def _optimizers(tf, gs):
    t = tf.train if tf is not None else None
    return {
        "rmsprop": lambda: t.RMSPropOptimizer(0.05),
        "rmsprop_momentum": lambda: t.RMSPropOptimizer(0.05, momentum=0.5, epsilon=1e-6),
        "rmsprop_centered": lambda: t.RMSPropOptimizer(0.05, momentum=0.5, centered=True),
        "adadelta": lambda: t.AdadeltaOptimizer(1.0),
        "adagrad_da": lambda: t.AdagradDAOptimizer(0.1, gs, l1_regularization_strength=0.01),
        "adagrad_da_l2": lambda: t.AdagradDAOptimizer(0.1, gs, l2_regularization_strength=0.1),
        "ftrl": lambda: t.FtrlOptimizer(0.1, l1_regularization_strength=0.01),
        "ftrl_power": lambda: t.FtrlOptimizer(0.1, learning_rate_power=-0.6, beta=0.5),
        "ftrl_v2": lambda: t.FtrlOptimizer(0.1, l2_shrinkage_regularization_strength=0.05),
        "proximal_gd": lambda: t.ProximalGradientDescentOptimizer(
            0.1, l1_regularization_strength=0.01, l2_regularization_strength=0.02
        ),
        "proximal_adagrad": lambda: t.ProximalAdagradOptimizer(
            0.1, l1_regularization_strength=0.01, l2_regularization_strength=0.02
        ),
    }


def _model(which: str, sparse: bool):
    rng = np.random.RandomState(3)
    xs = rng.rand(8, 4).astype(np.float32)
    ids = np.array([0, 2, 2, 5, 1, 0, 4, 2], np.int32)
    ys = rng.rand(8, 1).astype(np.float32)

    def build(tf):
        gs = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.get_variable("w", initializer=rng.randn(4, 1).astype(np.float32), use_resource=True)
        features = x
        if sparse:
            emb = tf.get_variable(
                "emb", initializer=rng.randn(6, 4).astype(np.float32), use_resource=True
            )
            features = x + tf.nn.embedding_lookup(emb, ids)
        loss = tf.reduce_mean(tf.square(tf.matmul(features, w) - y))
        opt = _optimizers(tf, gs)[which]()
        train = opt.minimize(loss, global_step=gs)
        slots = sorted(opt.get_slot_names())

        def steps(sess):
            out = [sess.run([loss, train], {x: xs, y: ys})[0] for _ in range(STEPS)]
            values = {v.op.name: sess.run(v) for v in tf.global_variables()}
            return out, values, slots

        return steps

    return build


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("which", sorted(_optimizers(None, None)))
def test_same_nodes_slots_and_values_as_tensorflow(which, sparse):
    ours, theirs, names, tf_names = run_both(_model(which, sparse))
    assert sorted(ours[1]) == sorted(theirs[1])  # slot variables named as TF's
    assert ours[2] == theirs[2]
    assert_close(ours[0], theirs[0], rtol=2e-5, atol=1e-6)
    assert_close(ours[1], theirs[1], rtol=2e-5, atol=1e-6)
    missing = {n for n in tf_names if "Initializer" not in n and not n.startswith("gradients")}
    missing -= set(names)
    assert not missing, sorted(missing)


def _placed(tf, which: str) -> dict[str, str]:
    """{node: device} of a model whose variables are on ps and whose minimize() runs
    under worker 1's device scope."""
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            gs = tf.train.get_or_create_global_step()
            w = tf.get_variable("w", initializer=np.ones((4, 1), np.float32), use_resource=True)
            emb = tf.get_variable("emb", initializer=np.ones((6, 4), np.float32), use_resource=True)
        with tf.device("/job:worker/task:1"):
            x = tf.placeholder(tf.float32, [None, 4], name="x")
            feats = x + tf.nn.embedding_lookup(emb, [0, 2])
            loss = tf.reduce_sum(tf.matmul(feats, w))
            opts = {
                **_optimizers(tf, gs),
                "adam": lambda: tf.train.AdamOptimizer(0.1),
                "momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
            }
            opts[which]().minimize(loss, global_step=gs)
    return {n.name: n.device for n in g.as_graph_def().node}


@pytest.mark.parametrize("which", ["adam", "momentum", "rmsprop_centered", "adagrad_da", "ftrl"])
def test_slots_and_updates_colocate_with_the_variable_as_tensorflow(which):
    import client
    from tests.client.tf1_oracle import tf1

    ours, theirs = _placed(client, which), _placed(tf1, which)
    for name in ("w/Adam", "beta1_power", "w/Momentum", "w/RMSProp_2", "w/AdagradDA_1", "w/Ftrl"):
        if name in theirs:
            assert theirs[name] == "/job:ps/task:0" and ours[name] == theirs[name], name
    updates = [n for n in theirs if "/update_" in n and n in ours]
    assert updates
    # TF leaves a variable's reads and initial values unplaced ('' : the placer colocates
    # them with the handle); so does the client.
    differ = {n: (ours[n], d) for n, d in theirs.items() if n in ours and ours[n] != d}
    assert not differ
