"""A step its client gives no deadline is still bounded by the workers' --step-timeout
(the master used to send a 7-day deadline that overrode it), through real processes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import client as tf
from deploy.launcher import LocalCluster

from .conftest import stop_cluster


@pytest.fixture(scope="module")
def short_steps() -> Iterator[LocalCluster]:
    cluster = LocalCluster(
        jobs={"worker": 1}, master_args=["--rpc-timeout", "10"],
        worker_args=["--step-timeout", "2"],
    ).start()
    try:
        yield cluster
    finally:
        stop_cluster(cluster)


def test_a_blocked_step_without_a_client_deadline_ends_at_the_worker_step_timeout(
    short_steps: LocalCluster,
) -> None:
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            queue = tf.FIFOQueue(1, tf.float32, shapes=[[]])
            value = queue.dequeue()  # nothing is ever enqueued
        with tf.Session(short_steps.target) as sess:
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(value)
            assert sess.run(tf.constant(3.0)) == 3.0
