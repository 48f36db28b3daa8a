"""Integration: a TF1 program of tf.keras layers and models (tests/client/keras_program.py:
Sequential with BatchNormalization, a functional head, Adam) trained through OUR master,
its variables on the ps by replica_device_setter and its computation on worker 1, once
built by our client (client.keras) and once by TensorFlow's own client (tf_keras,
tf.compat.v1.Session against our master); the step losses and final weights equal
TensorFlow's local session's."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import client  # noqa: E402
from tests.client import keras_program  # noqa: E402

tf = pytest.importorskip("tensorflow")
pytest.importorskip("tf_keras")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

WORKER = "/job:worker/task:1"


def _assert_close(got, want):
    from tests.client.keras_oracle import assert_close

    assert_close(got, want, rtol=1e-5, atol=1e-6)


@pytest.fixture(scope="module")
def expected():
    return keras_program.train(tf1, tf.keras)


def test_our_client_trains_keras_model_on_ps_and_worker(shared_cluster, expected):
    setter = client.train.replica_device_setter(ps_tasks=1, worker_device=WORKER)
    losses, weights = keras_program.train(client, client.keras, shared_cluster.target, setter)
    _assert_close(losses, expected[0])
    _assert_close(weights, expected[1])


def test_tensorflow_client_trains_keras_model_through_our_master(shared_cluster, expected):
    setter = tf1.train.replica_device_setter(ps_tasks=1, worker_device=WORKER)
    losses, weights = keras_program.train(tf1, tf.keras, shared_cluster.target, setter)
    _assert_close(losses, expected[0])
    _assert_close(weights, expected[1])
