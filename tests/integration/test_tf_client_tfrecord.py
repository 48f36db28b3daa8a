"""Integration, an input pipeline on one worker feeding a model on another: TFRecord
shards (one GZIP) read by TFRecordDataset -> parse_single_example -> decode_raw -> shuffle
-> batch on /job:worker/task:0, a CNN on /job:worker/task:1, its variables and Adam's slots
on /job:ps/task:0 (examples/cnn_tfrecord.py), on OUR cluster started through the CLIs.
Driven by an unmodified TensorFlow client and by our client, both give TensorFlow's own
in-process losses for the same seed; the partition graphs put the reader on worker 0 and
the convolutions on worker 1."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
pytest.importorskip("sklearn")
tf1 = tf.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STEPS = 20


def _example():
    spec = importlib.util.spec_from_file_location("cnn_tfrecord", EXAMPLES / "cnn_tfrecord.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """TensorFlow's own session on its one device: the losses to reach."""
    return _example().train(
        tf1, "", str(tmp_path_factory.mktemp("tf")), steps=STEPS, quiet=True, devices=("", "", "")
    )


def test_tensorflow_client_on_our_cluster(shared_cluster, reference, tmp_path) -> None:
    losses, acc = _example().train(tf1, shared_cluster.target, str(tmp_path), steps=STEPS,
                                   quiet=True)  # fmt: skip
    np.testing.assert_allclose(losses, reference[0], rtol=1e-5, atol=1e-6)
    assert acc == reference[1]


def test_our_client_on_our_cluster(shared_cluster, reference, tmp_path) -> None:
    import client

    losses, acc = _example().train(client, shared_cluster.target, str(tmp_path), steps=STEPS,
                                   quiet=True)  # fmt: skip
    np.testing.assert_allclose(losses, reference[0], rtol=1e-5, atol=1e-6)
    assert acc == reference[1]


def test_reader_on_worker_0_and_model_on_worker_1(shared_cluster, tmp_path) -> None:
    mod = _example()
    images, labels = mod.load_digits_uint8()
    shards = mod.write_tfrecords(tf1, str(tmp_path), images[:64], labels[:64])
    g = tf.Graph()
    with g.as_default():
        with tf1.device(mod.INPUT):
            x, y = mod.input_pipeline(tf1, shards, 8, 1)
        logits, _ = mod.model(tf1, x)
        options = tf1.RunOptions(output_partition_graphs=True)
        meta = tf1.RunMetadata()
        with tf1.Session(shared_cluster.target, graph=g) as sess:
            sess.run(tf1.global_variables_initializer())
            out = sess.run(logits, options=options, run_metadata=meta)
    assert out.shape == (8, 10)
    where: dict[str, set[str]] = {}
    for gd in meta.partition_graphs:
        for nd in gd.node:
            where.setdefault(nd.op, set()).add(nd.device.split("/device:")[0])
    assert where["IteratorGetNext"] == {"/job:worker/replica:0/task:0"}
    assert where["Conv2D"] == {"/job:worker/replica:0/task:1"}
