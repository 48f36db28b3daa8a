"""tf.metrics auc (every summation method), sensitivity_at_specificity and
specificity_at_sensitivity through `client` against tensorflow.compat.v1: the same
values after each of several batches and at the end, and the same argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.tf1_oracle import assert_close, run_both

TF_GRAPH_MODE = True


def _build(tf):
    y = tf.placeholder(tf.bool, [None], name="y")
    p = tf.placeholder(tf.float32, [None], name="p")
    w = tf.placeholder(tf.float32, [None], name="w")
    m = tf.metrics
    metrics = {}
    for curve in ("ROC", "PR"):
        for method in ("trapezoidal", "careful_interpolation", "minoring", "majoring"):
            key = f"{curve}_{method}"
            metrics[key] = m.auc(
                y, p, num_thresholds=9, curve=curve, summation_method=method, name=key
            )
            metrics[key + "_w"] = m.auc(
                y, p, w, curve=curve, summation_method=method, name=key + "_w"
            )
    metrics["auc_given_thresholds"] = m.auc(
        y, p, curve="PR", summation_method="careful_interpolation", thresholds=[0.7, 0.1, 0.4]
    )
    for rate in (0.0, 0.3, 0.75, 1.0):
        metrics[f"sens_{rate}"] = m.sensitivity_at_specificity(y, p, rate, num_thresholds=11)
        metrics[f"spec_{rate}"] = m.specificity_at_sensitivity(y, p, rate, num_thresholds=11)
        metrics[f"sens_w_{rate}"] = m.sensitivity_at_specificity(y, p, rate, weights=w)
        metrics[f"spec_w_{rate}"] = m.specificity_at_sensitivity(y, p, rate, weights=w)
    updates = {k: v[1] for k, v in metrics.items()}
    values = {k: v[0] for k, v in metrics.items()}
    local = sorted(v.op.name for v in tf.local_variables())
    rng = np.random.RandomState(11)

    def steps(sess):
        seen = []
        for n in (7, 12, 5):
            scores = rng.rand(n).astype(np.float32)
            scores[:2] = np.round(scores[:2] * 4) / 4  # on thresholds: ties at the cuts
            feed = {y: rng.rand(n) > 0.4, p: scores, w: rng.rand(n).astype(np.float32)}
            seen.append(sess.run(updates, feed))
        seen.append(sess.run(values))
        return seen, local

    return steps


def test_auc_methods_and_rate_metrics_like_tf():
    out, want, _, _ = run_both(_build)
    assert_close(out[0], want[0], rtol=1e-5, atol=1e-6)
    assert out[1] == want[1]


def test_no_positive_batch_like_tf():
    # Only negatives: the careful PR interpolation divides 0 by 0 (div_no_nan gives 0),
    # the rates take the first (last) threshold among equal ones.
    def build(tf):
        y = tf.placeholder(tf.bool, [None], name="y")
        p = tf.placeholder(tf.float32, [None], name="p")
        m = tf.metrics
        updates = [
            m.auc(y, p, curve="PR", summation_method="careful_interpolation")[1],
            m.auc(y, p, summation_method="minoring")[1],
            m.sensitivity_at_specificity(y, p, 0.5)[1],
            m.specificity_at_sensitivity(y, p, 0.5)[1],
        ]
        return lambda sess: sess.run(updates, {y: [False] * 3, p: [0.2, 0.5, 0.9]})

    out, want, _, _ = run_both(build)
    assert_close(out, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda m, y, p: m.auc(y, p, summation_method="simpson"), "Invalid summation_method"),
        (lambda m, y, p: m.auc(y, p, curve="DET"), "Curve must be either ROC or PR"),
        (lambda m, y, p: m.sensitivity_at_specificity(y, p, 1.5), "`specificity` must be"),
        (lambda m, y, p: m.specificity_at_sensitivity(y, p, -0.1), "`sensitivity` must be"),
    ],
)
def test_argument_errors_like_tf(call, message):
    from tests.client.tf1_oracle import tf1

    errors = []
    for api in (client, tf1):
        g = api.Graph()
        with g.as_default():
            y = api.placeholder(api.bool, [3])
            p = api.placeholder(api.float32, [3])
            with pytest.raises(ValueError, match=message) as info:
                call(api.metrics, y, p)
            errors.append(str(info.value))
    assert errors[0] == errors[1]
