"""Integration, ragged arithmetic through OUR master (real processes started through the
CLIs): an unmodified tf.compat.v1.Session("grpc://...") and our client build TF's ragged
dispatch graphs (elementwise ops with scalars, dense tensors and RaggedTensors of the same
partition, tf.where, tf.reduce_* over each axis) on the worker that did not make the
values and lengths; the fetches equal TensorFlow's in-process session's, and mismatched
row partitions fail as TensorFlow's do (InvalidArgument, "Condition x == y")."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from tests.integration.test_ragged_cluster import W0, W1, _assert_equal

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

LENGTHS = np.array([3, 0, 2, 1], np.int64)
VALUES = np.array([1.5, -2.0, 3.0, 4.0, -5.5, 6.0], np.float32)


def _build(api, dev) -> tuple[dict, list, object]:
    values = api.placeholder(api.float32, [None], name="values")
    lengths = api.placeholder(api.int64, [None], name="lengths")
    with dev(W0):
        scaled = values * 2.0
        rows = api.identity(lengths, name="rows")
    with dev(W1):
        rt = api.RaggedTensor.from_row_lengths(scaled, rows)
        shifted = rt + 1.0
        product = rt * shifted
        positive = rt > 0.0
        chosen = api.where(positive, product, -rt)
        mixed = rt + api.constant([[1.0], [2.0], [3.0], [4.0]])
        other = api.RaggedTensor.from_row_lengths(values, lengths)
        paired = rt - other
        ints = api.cast(api.abs(rt), api.int32) % 3
    fetches = [
        shifted.flat_values, product.to_tensor(), chosen.to_tensor(), mixed.flat_values,
        api.reduce_sum(rt, axis=1), api.reduce_max(rt, axis=0), api.reduce_mean(rt),
        api.reduce_any(positive, axis=1), api.reduce_all(positive, axis=0),
        api.reduce_sum(ints, axis=1, keepdims=True), paired.flat_values,
        api.where(positive),
    ]  # fmt: skip
    return {values: VALUES, lengths: LENGTHS}, fetches, paired


def _run(api, target: str, dev) -> list:
    g = api.Graph()
    with g.as_default():
        feed, fetches, _ = _build(api, dev)
    with api.Session(target, graph=g) as sess:
        return sess.run(fetches, feed)


def _local() -> list:
    return _run(tf1, "", lambda name: contextlib.nullcontext())


def test_tensorflow_client_on_our_cluster(shared_cluster) -> None:
    _assert_equal(_run(tf1, shared_cluster.target, tf.device), _local())


def test_our_client_on_our_cluster(shared_cluster) -> None:
    import client

    _assert_equal(_run(client, shared_cluster.target, client.device), _local())


def test_mismatched_partitions_fail_as_tensorflow(shared_cluster) -> None:
    import client

    for api, dev in ((tf1, tf.device), (client, client.device)):
        g = api.Graph()
        with g.as_default():
            feed, _, paired = _build(api, dev)
            # The first operand's rows (made on W0) fed other lengths than the second's.
            feed[g.get_tensor_by_name("rows:0")] = [2, 1, 2, 1]
            with (
                api.Session(shared_cluster.target, graph=g) as sess,
                pytest.raises(Exception) as e,  # noqa: PT011 (the class is compared)
            ):
                sess.run(paired.flat_values, feed)
        assert type(e.value).__name__ == "InvalidArgumentError"
        assert "Condition x == y did not hold element-wise" in str(e.value)
