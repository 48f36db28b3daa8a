"""Whole TF1 programs, part two: input pipelines, checkpoints, summaries, session
wrappers, schedules, control flow and distribution, as tutorials write them.

Same contract as tools.tf1_programs_models: `program(tf, target) -> printed`. Programs
that write files use a fresh temporary directory and return only what does not depend on
its path (file names, not absolute paths).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

from tools.tf1_programs_models import PROGRAMS, program

# Programs that only make sense on a cluster with jobs ps (1 task) and worker (2 tasks).
CLUSTER_ONLY = {"between_graph_replication"}


@program
def tfrecord_pipeline(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(20)
    feats = rng.rand(10, 3).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "train.tfrecords")
        with tf.python_io.TFRecordWriter(path) as writer:
            for i in range(10):
                example = tf.train.Example(
                    features=tf.train.Features(
                        feature={
                            "x": tf.train.Feature(float_list=tf.train.FloatList(value=feats[i])),
                            "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 3])),
                            "name": tf.train.Feature(
                                bytes_list=tf.train.BytesList(value=[b"item%d" % i])
                            ),
                        }
                    )
                )
                writer.write(example.SerializeToString())

        def parse(record: Any) -> Any:
            parsed = tf.parse_single_example(
                record,
                {
                    "x": tf.FixedLenFeature([3], tf.float32),
                    "label": tf.FixedLenFeature([], tf.int64),
                    "name": tf.FixedLenFeature([], tf.string, default_value=""),
                },
            )
            return parsed["x"] * 2.0, parsed["label"], parsed["name"]

        with tf.Graph().as_default():
            dataset = tf.data.TFRecordDataset([path]).map(parse).batch(4)
            iterator = dataset.make_one_shot_iterator()
            next_x, next_label, next_name = iterator.get_next()
            printed: list[Any] = []
            with tf.Session(target) as sess:
                while True:
                    try:
                        printed.append(sess.run([next_x, next_label, next_name]))
                    except tf.errors.OutOfRangeError:
                        printed.append("end of dataset")
                        break
            return printed


@program
def queue_csv_pipeline(tf: Any, target: str) -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for f in range(2):
            path = os.path.join(tmp, f"data{f}.csv")
            with open(path, "w") as out:
                for r in range(6):
                    out.write(f"{f * 6 + r},{r * 0.5:.1f},{f + r * 0.25:.1f},{r % 2}\n")
            files.append(path)
        with tf.Graph().as_default():
            filename_queue = tf.train.string_input_producer(files, shuffle=False)
            reader = tf.TextLineReader()
            key, value = reader.read(filename_queue)
            record_defaults = [[0], [0.0], [0.0], [0]]
            col1, col2, col3, col4 = tf.decode_csv(value, record_defaults=record_defaults)
            features = tf.stack([col2, col3])
            ids, feature_batch, label_batch = tf.train.shuffle_batch(
                [col1, features, col4],
                batch_size=4,
                capacity=20,
                min_after_dequeue=8,
                num_threads=1,
                seed=3,
            )
            total = tf.reduce_sum(feature_batch)
            printed: list[Any] = []
            with tf.Session(target) as sess:
                coord = tf.train.Coordinator()
                threads = tf.train.start_queue_runners(sess=sess, coord=coord)
                seen = []
                for _ in range(3):
                    i, t, lab = sess.run([ids, total, label_batch])
                    seen.extend(i.tolist())
                    printed.append((len(i), int(lab.sum() <= 4), np.isfinite(t)))
                coord.request_stop()
                coord.join(threads)
            # The shuffle order depends on the queue runner's thread timing: compare what
            # every batch holds, not in which order.
            printed.append(len(set(seen)) == len(seen) and all(0 <= s < 12 for s in seen))
            return printed


@program
def saver_restore(tf: Any, target: str) -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "model.ckpt")
        printed: list[Any] = []
        with tf.Graph().as_default():
            w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
            b = tf.Variable([0.5, -0.5], name="b")
            global_step = tf.train.get_or_create_global_step()
            loss = tf.reduce_sum(tf.square(tf.matmul(tf.ones([1, 2]), w) + b))
            train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=global_step)
            saver = tf.train.Saver(max_to_keep=2)
            with tf.Session(target) as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(3):
                    sess.run(train)
                    path = saver.save(sess, ckpt, global_step=global_step)
                    printed.append(os.path.basename(path))
                printed.append(sess.run([w, b, loss]))
        printed.append(os.path.basename(tf.train.latest_checkpoint(tmp)))
        printed.append(sorted(f for f in os.listdir(tmp) if f.endswith(".index")))
        with tf.Graph().as_default():
            w = tf.Variable(tf.zeros([2, 2]), name="w")
            b = tf.Variable(tf.zeros([2]), name="b")
            global_step = tf.train.get_or_create_global_step()
            saver = tf.train.Saver()
            with tf.Session(target) as sess:
                saver.restore(sess, tf.train.latest_checkpoint(tmp))
                printed.append(sess.run([w, b, global_step]))
        with tf.Graph().as_default():
            restorer = tf.train.import_meta_graph(ckpt + "-2.meta")
            with tf.Session(target) as sess:
                restorer.restore(sess, ckpt + "-2")
                printed.append(sess.run(tf.global_variables()))
        return printed


@program
def summaries_filewriter(tf: Any, target: str) -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None])
            w = tf.Variable(1.0, name="w")
            loss = tf.reduce_mean(tf.square(x * w - 3.0))
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
            with tf.name_scope("summaries"):
                tf.summary.scalar("loss", loss)
                tf.summary.scalar("w", w)
                tf.summary.histogram("x", x)
            merged = tf.summary.merge_all()
            with tf.Session(target) as sess:
                writer = tf.summary.FileWriter(tmp, sess.graph)
                sess.run(tf.global_variables_initializer())
                for step in range(3):
                    summary, _ = sess.run([merged, train], {x: [1.0, 2.0, 3.0]})
                    writer.add_summary(summary, step)
                writer.close()
        events = [f for f in os.listdir(tmp) if "tfevents" in f]
        printed: list[Any] = [len(events)]
        for event in tf.train.summary_iterator(os.path.join(tmp, events[0])):
            if event.HasField("summary"):
                for v in event.summary.value:
                    kind = "simple" if v.HasField("simple_value") else "histo"
                    value = v.simple_value if kind == "simple" else v.histo.sum
                    printed.append((event.step, v.tag, kind, value))
            elif event.HasField("graph_def"):
                printed.append("graph")
        return printed


@program
def monitored_session_hooks(tf: Any, target: str) -> Any:
    class LossRecorder(tf.train.SessionRunHook):
        def __init__(self, loss: Any) -> None:
            self.loss = loss
            self.seen: list[Any] = []

        def before_run(self, run_context: Any) -> Any:
            return tf.train.SessionRunArgs(self.loss)

        def after_run(self, run_context: Any, run_values: Any) -> None:
            self.seen.append(run_values.results)

    with tempfile.TemporaryDirectory() as tmp:
        with tf.Graph().as_default():
            global_step = tf.train.get_or_create_global_step()
            w = tf.get_variable("w", [3], initializer=tf.constant_initializer([1.0, -1.0, 2.0]))
            loss = tf.reduce_sum(tf.square(w - 0.5))
            train_op = tf.train.AdamOptimizer(0.1).minimize(loss, global_step=global_step)
            recorder = LossRecorder(loss)
            hooks = [tf.train.StopAtStepHook(last_step=5), tf.train.NanTensorHook(loss), recorder]
            steps = []
            with tf.train.MonitoredTrainingSession(
                master=target, checkpoint_dir=tmp, hooks=hooks, save_summaries_steps=None
            ) as sess:
                while not sess.should_stop():
                    sess.run(train_op)
                    steps.append(len(recorder.seen))
            latest = tf.train.latest_checkpoint(tmp)
        with tf.Graph().as_default():
            tf.train.get_or_create_global_step()
            w = tf.get_variable("w", [3])
            with tf.train.MonitoredTrainingSession(master=target, checkpoint_dir=tmp) as sess:
                restored = sess.run(w)
        return steps, recorder.seen, os.path.basename(latest), restored


@program
def lr_decay_schedules(tf: Any, target: str) -> Any:
    with tf.Graph().as_default():
        global_step = tf.Variable(0, trainable=False)
        schedules = [
            tf.train.exponential_decay(0.1, global_step, 3, 0.5, staircase=True),
            tf.train.exponential_decay(0.1, global_step, 3, 0.5),
            tf.train.piecewise_constant(global_step, [2, 5], [1.0, 0.5, 0.1]),
            tf.train.polynomial_decay(0.1, global_step, 6, 0.01, power=2.0),
            tf.train.inverse_time_decay(0.1, global_step, 2, 0.5),
            tf.train.natural_exp_decay(0.1, global_step, 2, 0.5),
            tf.train.cosine_decay(0.1, global_step, 6),
        ]
        w = tf.Variable(5.0)
        loss = tf.square(w)
        lr = tf.train.exponential_decay(0.2, global_step, 2, 0.7, staircase=True)
        train = tf.train.GradientDescentOptimizer(lr).minimize(loss, global_step=global_step)
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(7):
                printed.append(sess.run(schedules))
                sess.run(train)
                printed.append(sess.run([lr, w]))
        return printed


@program
def cond_while_programs(tf: Any, target: str) -> Any:
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])

        def collatz_body(i: Any, steps: Any) -> Any:
            nxt = tf.cond(tf.equal(i % 2, 0), lambda: i // 2, lambda: 3 * i + 1)
            return nxt, steps + 1

        _, collatz = tf.while_loop(lambda i, s: i > 1, collatz_body, [n, tf.constant(0)])
        x = tf.Variable(2.0)
        power, _ = tf.while_loop(
            lambda p, k: k < 4, lambda p, k: (p * x, k + 1), [tf.constant(1.0), tf.constant(0)]
        )
        grad = tf.gradients(power, x)[0]
        use_square = tf.placeholder(tf.bool, [])
        loss = tf.cond(use_square, lambda: tf.square(x - 1.0), lambda: tf.abs(x - 1.0))
        train = tf.train.GradientDescentOptimizer(0.25).minimize(loss)
        fib = tf.while_loop(
            lambda a, b, k: k < 10,
            lambda a, b, k: (b, a + b, k + 1),
            (tf.constant(0, tf.int64), tf.constant(1, tf.int64), 0),
        )[0]
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            printed.append([sess.run(collatz, {n: v}) for v in (6, 7, 27)])
            printed.append(sess.run([power, grad, fib]))
            for i in range(4):
                printed.append(sess.run([train, loss], {use_square: i % 2 == 0})[1])
                printed.append(sess.run(x))
        return printed


@program
def input_fn_style(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(21)
    age = rng.randint(18, 70, size=40).astype(np.float32)
    income = rng.rand(40).astype(np.float32) * 100
    label = ((age > 40) & (income > 30)).astype(np.int32)

    def input_fn(batch_size: int) -> Any:
        dataset = tf.data.Dataset.from_tensor_slices(({"age": age, "income": income}, label))
        dataset = dataset.shuffle(40, seed=2).repeat().batch(batch_size)
        return dataset.make_one_shot_iterator().get_next()

    def model_fn(features: Any, labels: Any) -> dict[str, Any]:
        inputs = tf.stack([features["age"] / 70.0, features["income"] / 100.0], axis=1)
        logits = tf.layers.dense(inputs, 2, kernel_initializer=tf.zeros_initializer())
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        predictions = tf.argmax(logits, 1, output_type=tf.int32)
        accuracy, acc_update = tf.metrics.accuracy(labels, predictions)
        step = tf.train.get_or_create_global_step()
        train_op = tf.train.FtrlOptimizer(0.5).minimize(loss, global_step=step)
        return {"loss": loss, "train_op": train_op, "acc": accuracy, "acc_update": acc_update}

    with tf.Graph().as_default():
        features, labels = input_fn(8)
        spec = model_fn(features, labels)
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            for _ in range(6):
                _, loss, _ = sess.run([spec["train_op"], spec["loss"], spec["acc_update"]])
                printed.append(loss)
            printed.append(sess.run(spec["acc"]))
        return printed


@program
def between_graph_replication(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(22)
    x_np = rng.randn(8, 3).astype(np.float32)
    y_np = x_np @ np.array([[2.0], [-1.0], [0.5]], dtype=np.float32)
    printed: list[Any] = []
    for task in range(2):
        # Each worker task runs this same script with its own task index.
        with tf.Graph().as_default():
            with tf.device(
                tf.train.replica_device_setter(ps_tasks=1, worker_device=f"/job:worker/task:{task}")
            ):
                global_step = tf.train.get_or_create_global_step()
                w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
                x = tf.placeholder(tf.float32, [None, 3])
                y = tf.placeholder(tf.float32, [None, 1])
                loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
                train = tf.train.GradientDescentOptimizer(0.1).minimize(
                    loss, global_step=global_step
                )
            printed.append(sorted({w.device, global_step.device, train.device}))
            with tf.Session(target) as sess:
                if task == 0:
                    sess.run(tf.global_variables_initializer())
                printed.append(sess.run(tf.report_uninitialized_variables()).tolist())
                for _ in range(3):
                    _, loss_val = sess.run([train, loss], {x: x_np, y: y_np})
                    printed.append((task, sess.run(global_step), loss_val))
                printed.append(sess.run(w))
    return printed


@program
def py_func_pipeline(tf: Any, target: str) -> Any:
    def augment(x: np.ndarray, i: np.int64) -> tuple[np.ndarray, np.int64]:
        return (np.flip(x) * 2).astype(np.float32), np.int64(i * 10)

    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_tensor_slices((data, np.arange(6, dtype=np.int64)))

        def map_fn(x: Any, i: Any) -> Any:
            y, j = tf.py_func(augment, [x, i], [tf.float32, tf.int64])
            y.set_shape([2])
            j.set_shape([])
            return y, j

        dataset = dataset.map(map_fn).batch(3)
        x, i = dataset.make_one_shot_iterator().get_next()
        total = tf.reduce_sum(x, axis=1)
        printed: list[Any] = []
        with tf.Session(target) as sess:
            for _ in range(2):
                printed.append(sess.run([x, i, total]))
        return printed


@program
def partitioned_embeddings(tf: Any, target: str) -> Any:
    ids_np = np.array([[0, 3, 7], [9, 3, 1]], dtype=np.int64)
    with tf.Graph().as_default():
        init = tf.random_uniform_initializer(-1.0, 1.0, seed=3)
        embeddings = tf.get_variable(
            "embeddings", [10, 4], initializer=init, partitioner=tf.fixed_size_partitioner(3)
        )
        ids = tf.placeholder(tf.int64, [None, 3])
        embedded = tf.nn.embedding_lookup(embeddings, ids, partition_strategy="div")
        pooled = tf.reduce_mean(embedded, axis=1)
        loss = tf.reduce_sum(tf.square(pooled - 1.0))
        train = tf.train.AdagradOptimizer(0.5).minimize(loss)
        printed = [[v.name for v in tf.global_variables()]]
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                printed.append(sess.run([train, loss], {ids: ids_np})[1])
            printed.append(sess.run(embeddings.as_tensor()))
            printed.append(sess.run(embedded, {ids: ids_np[:1]}))
        return printed


__all__ = ["CLUSTER_ONLY", "PROGRAMS"]
