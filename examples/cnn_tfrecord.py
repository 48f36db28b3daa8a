"""Example: a small CNN trained from TFRecord files through tf.data, on the cluster.

A TF1 tutorial-style script (the "deep MNIST" layout: tf.truncated_normal weights,
conv -> relu -> max-pool twice, a dense layer, softmax cross entropy, Adam), written so
that the same code runs with `import client as tf` against a flowrt cluster and with
`tensorflow.compat.v1` (the test compares their losses):

- data: scikit-learn's bundled 8x8 digits (no download), written by the script itself as
  tf.train.Example records (raw uint8 pixels + int64 label) into sharded TFRecord files
  with tf.io.TFRecordWriter (one GZIP-compressed shard, to read both kinds);
- input on /job:worker/task:0: TFRecordDataset over the shards -> parse_single_example ->
  decode_raw -> reshape/scale -> seeded shuffle -> batch -> repeat, one one-shot iterator;
- the model on /job:worker/task:1, its variables and Adam's slots on /job:ps/task:0.

Run against a cluster with --target grpc://HOST:PORT, or without one to start a local
cluster (deploy.launcher.LocalCluster). Prints the loss every 10 steps and the final
test accuracy.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PS = "/job:ps/task:0"
INPUT = "/job:worker/task:0"
MODEL = "/job:worker/task:1"
SHARDS = (("digits-0.tfrecord", ""), ("digits-1.tfrecord", ""), ("digits-2.tfrecord.gz", "GZIP"))


def load_digits_uint8(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits  # shipped with scikit-learn; no download

    digits = load_digits()
    images = (digits.images * 255 / 16).round().astype(np.uint8)
    order = np.random.RandomState(seed).permutation(len(images))
    return images[order], digits.target[order].astype(np.int64)


def write_tfrecords(tf: Any, directory: str, images: np.ndarray, labels: np.ndarray) -> list:
    """Round-robin the examples over the shards; returns [(path, compression)]."""
    os.makedirs(directory, exist_ok=True)
    shards = [(os.path.join(directory, name), kind) for name, kind in SHARDS]
    writers = [tf.io.TFRecordWriter(path, kind or None) for path, kind in shards]
    for i, (image, label) in enumerate(zip(images, labels)):
        example = tf.train.Example(features=tf.train.Features(feature={
            "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image.tobytes()])),
            "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
        }))  # fmt: skip
        writers[i % len(writers)].write(example.SerializeToString())
    for w in writers:
        w.close()
    return shards


def input_pipeline(tf: Any, shards: list, batch: int, seed: int) -> tuple[Any, Any]:
    def parse(record: Any) -> tuple[Any, Any]:
        features = tf.parse_single_example(record, {
            "image_raw": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64),
        })  # fmt: skip
        pixels = tf.decode_raw(features["image_raw"], tf.uint8)
        image = tf.cast(tf.reshape(pixels, [8, 8, 1]), tf.float32) / 255.0
        return image, tf.cast(features["label"], tf.int32)

    datasets = [tf.data.TFRecordDataset([path], compression_type=kind) for path, kind in shards]
    ds = datasets[0]
    for other in datasets[1:]:
        ds = ds.concatenate(other)
    ds = ds.map(parse).shuffle(256, seed=seed).batch(batch).repeat()
    return tf.data.make_one_shot_iterator(ds).get_next()


def weight(tf: Any, shape: list[int], name: str) -> Any:
    return tf.Variable(tf.truncated_normal(shape, stddev=0.1), name=name)


def bias(tf: Any, shape: list[int], name: str) -> Any:
    return tf.Variable(tf.constant(0.1, shape=shape), name=name)


def model(tf: Any, images: Any, ps: str = PS, worker: str = MODEL) -> tuple[Any, list]:
    with tf.device(ps):
        w1, b1 = weight(tf, [3, 3, 1, 16], "conv1/w"), bias(tf, [16], "conv1/b")
        w2, b2 = weight(tf, [3, 3, 16, 32], "conv2/w"), bias(tf, [32], "conv2/b")
        w3, b3 = weight(tf, [2 * 2 * 32, 10], "logits/w"), bias(tf, [10], "logits/b")
    with tf.device(worker):
        h = tf.nn.relu(tf.nn.conv2d(images, w1, [1, 1, 1, 1], "SAME") + b1)
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        h = tf.nn.relu(tf.nn.conv2d(h, w2, [1, 1, 1, 1], "SAME") + b2)
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        logits = tf.matmul(tf.reshape(h, [-1, 2 * 2 * 32]), w3) + b3
    return logits, [w1, b1, w2, b2, w3, b3]


def train(tf: Any, target: str, data_dir: str, steps: int = 60, batch: int = 32, seed: int = 7,
          quiet: bool = False, devices: tuple[str, str, str] = (PS, INPUT, MODEL),
          ) -> tuple[list[float], float]:  # fmt: skip
    """Trains on all but the last 300 digits; returns (losses per step, test accuracy).
    `devices`: where the variables, the input and the model go ("" for no cluster: the
    test runs TensorFlow's own session that way)."""
    ps, reader, worker = devices
    images, labels = load_digits_uint8()
    shards = write_tfrecords(tf, data_dir, images[:-300], labels[:-300])
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(seed)
        with tf.device(reader):
            x, y = input_pipeline(tf, shards, batch, seed)
        logits, _ = model(tf, x, ps, worker)
        with tf.device(worker):
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
            )
            correct = tf.equal(tf.argmax(logits, 1, output_type=tf.int32), y)
            accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
        with tf.device(ps):
            train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
        losses = []
        with tf.Session(target, graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(steps):
                value, _ = sess.run([loss, train_op])
                losses.append(float(value))
                if not quiet and step % 10 == 0:
                    print(f"step {step}: loss {value:.4f}")
            test_x = (images[-300:, :, :, None] / 255.0).astype(np.float32)
            acc = sess.run(accuracy, {x: test_x, y: labels[-300:].astype(np.int32)})
    if not quiet:
        print(f"test accuracy {acc:.4f}")
    return losses, float(acc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", help="grpc://HOST:PORT of a master; default: a local cluster")
    parser.add_argument("--data-dir", help="where the TFRecord shards go (default: a temp dir)")
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args(argv)
    import client as tf

    with contextlib.ExitStack() as stack:
        data_dir = args.data_dir or stack.enter_context(tempfile.TemporaryDirectory())
        target = args.target
        if not target:
            from deploy.launcher import LocalCluster

            cluster = stack.enter_context(LocalCluster({"worker": 2, "ps": 1}))
            target = cluster.target
        train(tf, target, data_dir, steps=args.steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
