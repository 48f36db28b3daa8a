"""tf.losses and tf.metrics through `client` against tensorflow.compat.v1: the same
node names for the loss/metric tensors and variables, the same values step by step."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.tf1_oracle import assert_close, run_both

TF_GRAPH_MODE = True

RNG = np.random.RandomState(7)
LOGITS = RNG.randn(6, 4).astype(np.float32)
LABELS = np.array([0, 3, 1, 1, 2, 0], np.int32)
ONEHOT = np.eye(4, dtype=np.float32)[LABELS]
PRED = RNG.rand(6, 1).astype(np.float32)
TARGET = (RNG.rand(6, 1) > 0.5).astype(np.float32)
WEIGHTS = np.array([[1.0], [0.0], [2.0], [0.5], [0.0], [1.0]], np.float32)


def _losses(tf, weights, reduction):
    logits = tf.placeholder(tf.float32, [6, 4], name="logits")
    labels = tf.placeholder(tf.int32, [6], name="labels")
    pred = tf.placeholder(tf.float32, [6, 1], name="pred")
    target = tf.placeholder(tf.float32, [6, 1], name="target")
    w = weights if weights is not None else 1.0
    wv = w[:, 0] if isinstance(w, np.ndarray) else w
    r = getattr(tf.losses.Reduction, reduction)
    out = {
        "softmax": tf.losses.softmax_cross_entropy(
            tf.one_hot(labels, 4), logits, weights=wv, reduction=r
        ),
        "softmax_smooth": tf.losses.softmax_cross_entropy(
            tf.one_hot(labels, 4), logits, label_smoothing=0.1, reduction=r
        ),
        "sparse": tf.losses.sparse_softmax_cross_entropy(labels, logits, weights=wv, reduction=r),
        "sigmoid": tf.losses.sigmoid_cross_entropy(target, pred * 3.0, weights=w, reduction=r),
        "sigmoid_smooth": tf.losses.sigmoid_cross_entropy(
            target, pred, label_smoothing=0.2, reduction=r
        ),
        "mse": tf.losses.mean_squared_error(target, pred, weights=w, reduction=r),
        "huber": tf.losses.huber_loss(target, pred * 4.0, weights=w, delta=0.5, reduction=r),
        "hinge": tf.losses.hinge_loss(target, pred - 0.5, weights=w, reduction=r),
        "abs": tf.losses.absolute_difference(target, pred, weights=w, reduction=r),
        "log": tf.losses.log_loss(target, pred, weights=w, reduction=r),
    }
    feeds = {logits: LOGITS, labels: LABELS, pred: PRED, target: TARGET}
    return out, feeds


@pytest.mark.parametrize(
    "weights,reduction",
    [
        (None, "SUM_BY_NONZERO_WEIGHTS"),
        (WEIGHTS, "SUM_BY_NONZERO_WEIGHTS"),
        (WEIGHTS, "MEAN"),
        (WEIGHTS, "SUM"),
        (None, "SUM_OVER_BATCH_SIZE"),
        (WEIGHTS, "NONE"),
    ],
)
def test_losses_like_tf(weights, reduction):
    def build(tf):
        out, feeds = _losses(tf, weights, reduction)
        total = tf.constant(0.0)
        if reduction != "NONE":  # per-example losses of different ranks do not add up
            total = tf.losses.get_total_loss(add_regularization_losses=False)
        names = {k: v.name for k, v in out.items()}
        n_coll = len(tf.get_collection(tf.GraphKeys.LOSSES))

        def steps(sess):
            return sess.run(out, feeds), sess.run(total, feeds), names, n_coll

        return steps

    out, want, _, _ = run_both(build)
    assert_close(out, want, rtol=1e-5, atol=1e-6)


def test_regularization_and_total_loss_like_tf():
    def build(tf):
        w = tf.Variable(np.arange(4, dtype=np.float32), name="w")
        tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, 0.1 * tf.nn.l2_loss(w))
        data = tf.losses.mean_squared_error(tf.constant([1.0, 2.0]), tf.constant([0.0, 4.0]))
        reg = tf.losses.get_regularization_loss()
        total = tf.losses.get_total_loss()
        names = [t.name for t in (data, reg, total)]

        def steps(sess):
            return sess.run([data, reg, total]), names, tf.losses.get_losses()[0].name

        return steps

    out, want, _, _ = run_both(build)
    assert_close(out, want)


def test_metrics_like_tf():
    def build(tf):
        labels = tf.placeholder(tf.int64, [None], name="labels")
        scores = tf.placeholder(tf.float32, [None], name="scores")
        w = tf.placeholder(tf.float32, [None], name="w")
        pred = tf.cast(scores > 0.5, tf.int64)
        metrics = {
            "acc": tf.metrics.accuracy(labels, pred),
            "acc_w": tf.metrics.accuracy(labels, pred, weights=w, name="weighted_acc"),
            "mean": tf.metrics.mean(scores),
            "mean_w": tf.metrics.mean(scores, weights=w),
            "prec": tf.metrics.precision(labels, pred),
            "rec": tf.metrics.recall(labels, pred, weights=w),
            "auc": tf.metrics.auc(labels, scores),
            "auc_pr": tf.metrics.auc(labels, scores, curve="PR", num_thresholds=50),
        }
        updates = {k: v[1] for k, v in metrics.items()}
        values = {k: v[0] for k, v in metrics.items()}
        local = sorted(v.op.name for v in tf.local_variables())
        names = {k: (v[0].name, v[1].name) for k, v in metrics.items()}
        rng = np.random.RandomState(3)

        def steps(sess):
            seen = []
            for n in (5, 8, 3):
                feed = {
                    labels: rng.randint(0, 2, n),
                    scores: rng.rand(n).astype(np.float32),
                    w: rng.rand(n).astype(np.float32),
                }
                seen.append(sess.run(updates, feed))
            seen.append(sess.run(values))
            return seen, local, names

        return steps

    out, want, _, _ = run_both(build)
    assert_close(out[0], want[0], rtol=1e-5, atol=1e-6)
    assert out[1] == want[1]
    assert out[2] == want[2]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_auc_asserts_predictions_in_unit_range_like_tf(dtype):
    """TF's auc asserts predictions in [0, 1] (each Assert guarded by a functional If,
    which the runtime lowers to Switch/Merge), but only its casts wait on the asserts: a
    float32 prediction out of range counts (no cast), a float64 one fails the step with
    TF's InvalidArgumentError and updates nothing."""

    def build(tf):
        labels = tf.placeholder(tf.bool, [4], name="labels")
        preds = tf.placeholder(getattr(tf, dtype), [4], name="preds")
        _, update = tf.metrics.auc(labels, preds, num_thresholds=5)

        def steps(sess):
            out = []
            for p in ([0.1, 1.5, 0.3, 0.2], [-0.5, 0.9, 0.3, 0.2], [0.1, 0.5, 0.3, 0.2]):
                feed = {labels: [True, False, True, False], preds: p}
                try:
                    out.append(float(sess.run(update, feed)))
                except tf.errors.InvalidArgumentError as e:
                    lines = [ln for ln in e.message.splitlines() if "assertion failed" in ln]
                    out.append((type(e).__name__, lines))
            return out

        return steps

    out, want, _, _ = run_both(build)
    assert [type(x) for x in out] == [type(x) for x in want]
    assert [x for x in out if isinstance(x, tuple)] == [x for x in want if isinstance(x, tuple)]
    assert_close(
        [x for x in out if isinstance(x, float)], [x for x in want if isinstance(x, float)]
    )
    assert isinstance(out[0], tuple) == (dtype == "float64")


@pytest.mark.parametrize("accidental_hits", [False, True])
def test_sampled_losses_like_tf(accidental_hits):
    """nce_loss and sampled_softmax_loss over TF's own seeded log-uniform sampler: the same
    losses through four training steps (the samples are TensorFlow's)."""

    def build(tf):
        tf.set_random_seed(42)
        rng = np.random.RandomState(0)
        emb = tf.Variable(rng.randn(50, 8).astype(np.float32) * 0.1, name="emb")
        w = tf.Variable(rng.randn(50, 8).astype(np.float32) * 0.1, name="w")
        b = tf.Variable(np.zeros(50, np.float32), name="b")
        x = tf.placeholder(tf.int32, [6])
        y = tf.placeholder(tf.int64, [6, 2])
        e = tf.nn.embedding_lookup(emb, x)
        nce = tf.reduce_mean(
            tf.nn.nce_loss(
                w,
                b,
                y,
                e,
                num_sampled=5,
                num_classes=50,
                num_true=2,
                remove_accidental_hits=accidental_hits,
            )
        )
        ss = tf.reduce_mean(
            tf.nn.sampled_softmax_loss(
                w,
                b,
                y,
                e,
                num_sampled=5,
                num_classes=50,
                num_true=2,
                remove_accidental_hits=accidental_hits,
            )
        )
        train = tf.train.GradientDescentOptimizer(1.0).minimize(nce + ss)
        xs = np.arange(1, 7)
        ys = np.stack([xs + 1, xs + 2], 1)

        def steps(sess):
            return [sess.run([nce, ss, train], {x: xs, y: ys})[:2] for _ in range(4)]

        return steps

    out, want, _, _ = run_both(build)
    assert_close(out, want)


def test_error_class_and_threshold_metrics_like_tf():
    # The rest of tf.metrics: means of errors, per-class and per-threshold metrics, fed
    # three batches of different sizes; every update and the final values compared.
    def build(tf):
        y = tf.placeholder(tf.float32, [None], name="y")
        p = tf.placeholder(tf.float32, [None], name="p")
        w = tf.placeholder(tf.float32, [None], name="w")
        cls = tf.placeholder(tf.int64, [None], name="cls")
        guess = tf.placeholder(tf.int64, [None], name="guess")
        vec_y = tf.placeholder(tf.float32, [None, 3], name="vec_y")
        vec_p = tf.placeholder(tf.float32, [None, 3], name="vec_p")
        m = tf.metrics
        metrics = {
            "mae": m.mean_absolute_error(y, p),
            "mse_w": m.mean_squared_error(y, p, weights=w),
            "rmse": m.root_mean_squared_error(y, p),
            "rel": m.mean_relative_error(y, p, normalizer=y),
            "cos": m.mean_cosine_distance(vec_y, vec_p, dim=1),
            "below": m.percentage_below(p, 0.4),
            "iou": m.mean_iou(cls, guess, num_classes=4),
            "iou_w": m.mean_iou(cls, guess, num_classes=4, weights=w, name="iou_w"),
            "per_class": m.mean_per_class_accuracy(cls, guess, num_classes=4),
            "prec_t": m.precision_at_thresholds(y > 0.5, p, [0.2, 0.5, 0.8]),
            "rec_t": m.recall_at_thresholds(y > 0.5, p, [0.2, 0.5, 0.8], weights=w),
            "tp_t": m.true_positives_at_thresholds(y > 0.5, p, [0.3, 0.7]),
            "fn_t": m.false_negatives_at_thresholds(y > 0.5, p, [0.3, 0.7]),
        }
        fixed = tf.placeholder(tf.float32, [2, 3], name="fixed")  # mean_tensor's state shape
        tensor_value, tensor_update = m.mean_tensor(fixed, weights=fixed)
        updates = {k: v[1] for k, v in metrics.items()}
        updates["tensor"] = tensor_update
        values = {k: v[0] for k, v in metrics.items()}
        values["tensor"] = tensor_value
        local = sorted(v.op.name for v in tf.local_variables())
        rng = np.random.RandomState(5)

        def steps(sess):
            seen = []
            for n in (6, 9, 4):
                feed = {
                    y: rng.rand(n).astype(np.float32),
                    p: rng.rand(n).astype(np.float32),
                    w: rng.rand(n).astype(np.float32),
                    cls: rng.randint(0, 4, n),
                    guess: rng.randint(0, 4, n),
                    vec_y: rng.rand(n, 3).astype(np.float32),
                    vec_p: rng.rand(n, 3).astype(np.float32),
                }
                feed[fixed] = rng.rand(2, 3).astype(np.float32)
                feed[y][0] = 0.0  # a zero normalizer: mean_relative_error counts 0 for it
                seen.append(sess.run(updates, feed))
            seen.append(sess.run(values))
            return seen, local

        return steps

    out, want, _, _ = run_both(build)
    assert_close(out[0], want[0], rtol=1e-5, atol=1e-6)
    assert out[1] == want[1]
