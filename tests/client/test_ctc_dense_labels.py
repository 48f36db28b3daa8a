"""tf.compat.v1.nn.ctc_loss_v2 with dense labels and label_length through `client`
against tensorflow.compat.v1: the loss and its gradient w.r.t. the logits equal TF's
(TF computes them with ctc_loss_dense's log-space scans, the client with CTCLoss on the
labels made sparse, so float32 values agree to rounding), for time- and batch-major
logits and several blank indices."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.tf1_oracle import run_both

pytest.importorskip("tensorflow")

T, B, C = 7, 3, 5
BASE = np.array([[1, 2, 0, 0], [3, 3, 1, 0], [2, 0, 0, 1]], np.int32)  # 0..C-2
LABEL_LENGTH = np.array([2, 3, 4], np.int32)
LOGIT_LENGTH = np.array([7, 6, 7], np.int32)
X = np.random.default_rng(6).standard_normal((T, B, C)).astype(np.float32)


@pytest.mark.parametrize("blank_index", [None, 0, 2, -1])
@pytest.mark.parametrize("time_major", [True, False])
def test_dense_labels_loss_and_gradient_like_tf(blank_index, time_major):
    blank = {None: 0, -1: C - 1}.get(blank_index, blank_index)
    labels_in = np.where(np.less(BASE, blank), BASE, BASE + 1)  # every class but the blank
    logits_in = X if time_major else X.transpose(1, 0, 2)

    def build(tf):
        logits = tf.placeholder(tf.float32, logits_in.shape, name="logits")
        labels = tf.placeholder(tf.int32, [B, None], name="labels")
        label_length = tf.placeholder(tf.int32, [B], name="label_length")
        loss = tf.nn.ctc_loss_v2(
            labels, logits, label_length, LOGIT_LENGTH,
            logits_time_major=time_major, blank_index=blank_index,
        )  # fmt: skip
        (grad,) = tf.gradients(tf.reduce_mean(loss), [logits])
        feed = {logits: logits_in, labels: labels_in, label_length: LABEL_LENGTH}
        return lambda sess: sess.run([loss, grad], feed)

    ours, theirs, _, _ = run_both(build)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=2e-5)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-4, atol=2e-6)
