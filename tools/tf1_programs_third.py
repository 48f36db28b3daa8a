"""Whole TF1 programs, part four: the classic tutorials the first three parts left out,
such as a DCGAN generator, char-RNN sampling, a masked seq2seq, padded text batches, a
TFRecord queue pipeline, image augmentation, hand-written numerics in while loops,
custom gradients, weight averages restored for evaluation and the CIFAR-10 model.

Same contract as tools.tf1_programs_models: `program(tf, target) -> printed`. Programs
whose threads or parallel runs would race in TensorFlow itself are written so that what
they print does not depend on the race (a single reader thread, a queue drained only once
it is closed, statistics of one update op each).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

from tools.tf1_programs_models import program
from tools.tf1_programs_more import CLUSTER_ONLY, PROGRAMS


@program
def dcgan_conv_transpose(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(40)
    real = (rng.rand(6, 8, 8, 1) * 2 - 1).astype(np.float32)
    noise = rng.uniform(-1.0, 1.0, size=(6, 5)).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(40)
        z = tf.placeholder(tf.float32, [None, 5], name="z")
        x = tf.placeholder(tf.float32, [None, 8, 8, 1], name="x")
        training = tf.placeholder_with_default(True, [], name="training")

        def generator(z: Any) -> Any:
            with tf.variable_scope("generator"):
                # No biases before batch norm: their gradients are float noise, which
                # Adam would turn into full-size steps (and runs would differ).
                h = tf.reshape(tf.layers.dense(z, 2 * 2 * 8, use_bias=False), [-1, 2, 2, 8])
                h = tf.nn.relu(tf.layers.batch_normalization(h, training=training))
                h = tf.layers.conv2d_transpose(h, 4, 5, 2, padding="same", use_bias=False)
                h = tf.nn.relu(tf.layers.batch_normalization(h, training=training))
                w = tf.get_variable(
                    "w_out", [5, 5, 1, 4], initializer=tf.truncated_normal_initializer(stddev=0.1)
                )
                out_shape = tf.stack([tf.shape(h)[0], 8, 8, 1])
                h = tf.nn.conv2d_transpose(h, w, out_shape, [1, 2, 2, 1], padding="SAME")
                return tf.tanh(h)

        def discriminator(images: Any, reuse: bool = False) -> Any:
            with tf.variable_scope("discriminator", reuse=reuse):
                h = tf.nn.leaky_relu(tf.layers.conv2d(images, 4, 5, 2, padding="same"), 0.2)
                h = tf.layers.conv2d(h, 8, 5, 2, padding="same", use_bias=False)
                return tf.layers.dense(tf.layers.flatten(tf.nn.leaky_relu(h, 0.2)), 1)

        fake = generator(z)
        d_real, d_fake = discriminator(x), discriminator(fake, reuse=True)
        ce = tf.nn.sigmoid_cross_entropy_with_logits
        d_loss = tf.reduce_mean(ce(logits=d_real, labels=tf.ones_like(d_real) * 0.9))
        d_loss += tf.reduce_mean(ce(logits=d_fake, labels=tf.zeros_like(d_fake)))
        g_loss = tf.reduce_mean(ce(logits=d_fake, labels=tf.ones_like(d_fake)))
        t_vars = tf.trainable_variables()
        d_vars = [v for v in t_vars if v.name.startswith("discriminator/")]
        g_vars = [v for v in t_vars if v.name.startswith("generator/")]
        update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS, scope="generator")
        d_train = tf.train.AdamOptimizer(0.01, beta1=0.5).minimize(d_loss, var_list=d_vars)
        with tf.control_dependencies(update_ops):
            g_train = tf.train.AdamOptimizer(0.01, beta1=0.5).minimize(g_loss, var_list=g_vars)
        moving = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="generator/batch_norm")
        printed: list[Any] = [len(d_vars), len(g_vars), len(update_ops), fake.shape.as_list()]
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(3):
                _, dl = sess.run([d_train, d_loss], {x: real, z: noise})
                _, gl = sess.run([g_train, g_loss], {z: noise})
                printed.append((step, dl, gl))
            printed.append(sorted(v.op.name for v in moving))
            printed.append(sess.run(moving))
            printed.append(sess.run(fake, {z: noise[:2], training: False})[:, :3, :3, 0])
        return printed


@program
def char_rnn_gru_sampling(tf: Any, target: str) -> Any:
    text = "to be or not to be, that is the question; "
    chars = sorted(set(text))
    encoded = np.array([chars.index(c) for c in text], dtype=np.int32)
    seq_len, n_cls, units = 8, len(chars), 12
    xs = np.stack([encoded[i : i + seq_len] for i in range(0, 32, 8)])
    ys = np.stack([encoded[i + 1 : i + seq_len + 1] for i in range(0, 32, 8)])
    with tf.Graph().as_default():
        tf.set_random_seed(41)
        inputs = tf.placeholder(tf.int32, [None, None], name="inputs")
        targets = tf.placeholder(tf.int32, [None, None], name="targets")
        temperature = tf.placeholder_with_default(1.0, [], name="temperature")
        embedding = tf.get_variable("embedding", [n_cls, 6])
        cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(units) for _ in range(2)])
        initial_state = cell.zero_state(tf.shape(inputs)[0], tf.float32)
        outputs, final_state = tf.nn.dynamic_rnn(
            cell, tf.nn.embedding_lookup(embedding, inputs), initial_state=initial_state
        )
        logits = tf.layers.dense(outputs, n_cls, name="softmax")
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits)
        )
        train_op = tf.train.AdamOptimizer(0.02).minimize(loss)
        next_char = tf.multinomial(logits[:, -1, :] / temperature, 1, seed=7)
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(4):
                loss_val, _ = sess.run([loss, train_op], {inputs: xs, targets: ys})
                printed.append(("step", step, "loss", loss_val))
            # Sampling as the tutorials do: one character at a time, state fed back.
            state = sess.run(initial_state, {inputs: [[0]]})
            char = chars.index("t")
            sampled = ["t"]
            for _ in range(12):
                feed = {inputs: [[char]], temperature: 0.8}
                feed.update(zip(initial_state, state))
                drawn, state = sess.run([next_char, final_state], feed)
                char = int(drawn[0, 0])
                sampled.append(chars[char])
            printed.append("".join(sampled))
            printed.append(state[1])
        return printed


@program
def seq2seq_masked_loss(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(42)
    vocab, max_src, max_tgt, units, batch = 8, 6, 5, 6, 4
    src_len = np.array([6, 4, 3, 5], dtype=np.int32)
    tgt_len = np.array([5, 3, 2, 4], dtype=np.int32)
    src = rng.randint(1, vocab, size=(batch, max_src)).astype(np.int32)
    src[np.arange(max_src) >= src_len[:, None]] = 0
    tgt = np.zeros((batch, max_tgt), dtype=np.int32)
    for i in range(batch):
        tgt[i, : tgt_len[i]] = src[i, : src_len[i]][::-1][: tgt_len[i]]
    dec_in = np.concatenate([np.full((batch, 1), 1, np.int32), tgt[:, :-1]], axis=1)
    with tf.Graph().as_default():
        tf.set_random_seed(42)
        enc_ids = tf.placeholder(tf.int32, [None, None], name="enc_ids")
        enc_len = tf.placeholder(tf.int32, [None], name="enc_len")
        dec_ids = tf.placeholder(tf.int32, [None, None], name="dec_ids")
        dec_len = tf.placeholder(tf.int32, [None], name="dec_len")
        labels = tf.placeholder(tf.int32, [None, None], name="labels")
        emb = tf.get_variable("emb", [vocab, 5])
        with tf.variable_scope("encoder"):
            (out_fw, out_bw), (st_fw, st_bw) = tf.nn.bidirectional_dynamic_rnn(
                tf.nn.rnn_cell.LSTMCell(units),
                tf.nn.rnn_cell.LSTMCell(units),
                tf.nn.embedding_lookup(emb, enc_ids),
                sequence_length=enc_len,
                dtype=tf.float32,
            )
            enc_c = tf.layers.dense(tf.concat([st_fw.c, st_bw.c], 1), units, name="bridge_c")
            enc_h = tf.layers.dense(tf.concat([st_fw.h, st_bw.h], 1), units, name="bridge_h")
        with tf.variable_scope("decoder"):
            dec_out, _ = tf.nn.dynamic_rnn(
                tf.nn.rnn_cell.LSTMCell(units),
                tf.nn.embedding_lookup(emb, dec_ids),
                sequence_length=dec_len,
                initial_state=tf.nn.rnn_cell.LSTMStateTuple(enc_c, enc_h),
            )
            logits = tf.layers.dense(dec_out, vocab, name="projection")
        mask = tf.sequence_mask(dec_len, tf.shape(labels)[1], dtype=tf.float32)
        crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        loss = tf.reduce_sum(crossent * mask) / tf.to_float(tf.shape(labels)[0])
        params = tf.trainable_variables()
        grads, norm = tf.clip_by_global_norm(tf.gradients(loss, params), 1.0)
        train = tf.train.AdamOptimizer(0.05).apply_gradients(zip(grads, params))
        pred = tf.argmax(logits, 2, output_type=tf.int32)
        masked_pred = tf.where(tf.cast(mask, tf.bool), pred, tf.zeros_like(pred))
        correct = tf.reduce_sum(tf.to_float(tf.equal(pred, labels)) * mask) / tf.reduce_sum(mask)
        feed = {enc_ids: src, enc_len: src_len, dec_ids: dec_in, dec_len: tgt_len, labels: tgt}
        printed: list[Any] = [out_bw.shape.as_list(), len(params)]
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(5):
                _, loss_val, norm_val = sess.run([train, loss, norm], feed)
                printed.append((loss_val, norm_val))
            printed.append(sess.run([masked_pred, correct, mask], feed))
            printed.append(sess.run(out_fw[2], feed))
        return printed


@program
def text_classification_padded_batch(tf: Any, target: str) -> Any:
    sentences = [
        b"a great movie",
        b"bad plot and bad acting",
        b"great acting",
        b"not good",
        b"a truly great and moving film",
        b"boring",
        b"good fun",
        b"bad",
    ]
    sentiment = np.array([1, 0, 1, 0, 1, 0, 1, 0], dtype=np.int64)
    vocab = sorted({w for s in sentences for w in s.split()})
    with tf.Graph().as_default():
        tf.set_random_seed(43)
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(vocab), tf.range(1, len(vocab) + 1, dtype=tf.int64)
            ),
            default_value=0,
        )

        def encode(line: Any, label: Any) -> Any:
            words = tf.string_split([line]).values
            ids = table.lookup(words)
            return ids, tf.size(ids), label

        dataset = (
            tf.data.Dataset.from_tensor_slices((sentences, sentiment))
            .map(encode)
            .padded_batch(3, padded_shapes=([None], [], []))
        )
        iterator = dataset.make_initializable_iterator()
        ids, lengths, labels = iterator.get_next()
        embeddings = tf.get_variable("embeddings", [len(vocab) + 1, 4])
        embedded = tf.nn.embedding_lookup(embeddings, ids)
        mask = tf.expand_dims(tf.sequence_mask(lengths, tf.shape(ids)[1], tf.float32), -1)
        averaged = tf.reduce_sum(embedded * mask, 1) / tf.to_float(tf.expand_dims(lengths, 1))
        logits = tf.layers.dense(averaged, 2)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        train = tf.train.AdagradOptimizer(0.5).minimize(loss)
        accuracy, acc_update = tf.metrics.accuracy(labels, tf.argmax(logits, 1))
        printed: list[Any] = [str(dataset.output_shapes)]
        with tf.Session(target) as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            for epoch in range(3):
                sess.run(iterator.initializer)
                while True:
                    try:
                        _, loss_val, batch_ids = sess.run([train, loss, ids])
                        printed.append((epoch, batch_ids.shape, loss_val))
                    except tf.errors.OutOfRangeError:
                        break
            sess.run([iterator.initializer, tf.local_variables_initializer()])
            while True:
                try:
                    sess.run(acc_update)
                except tf.errors.OutOfRangeError:
                    break
            printed.append(sess.run(accuracy))
        return printed


@program
def tfrecord_queue_logistic(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(44)
    feats = rng.randn(12, 3).astype(np.float32)
    labels = (feats @ np.array([1.0, -1.0, 0.5]) > 0).astype(np.int64)
    with tempfile.TemporaryDirectory() as tmp:
        files = [os.path.join(tmp, f"part-{i}.tfrecord") for i in range(2)]
        for i, path in enumerate(files):
            with tf.python_io.TFRecordWriter(path) as writer:
                for r in range(6 * i, 6 * i + 6):
                    example = tf.train.Example(
                        features=tf.train.Features(
                            feature={
                                "features": tf.train.Feature(
                                    float_list=tf.train.FloatList(value=feats[r])
                                ),
                                "label": tf.train.Feature(
                                    int64_list=tf.train.Int64List(value=[labels[r]])
                                ),
                            }
                        )
                    )
                    writer.write(example.SerializeToString())
        with tf.Graph().as_default():
            tf.set_random_seed(44)
            filename_queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
            _, serialized = tf.TFRecordReader().read(filename_queue)
            parsed = tf.parse_single_example(
                serialized,
                features={
                    "features": tf.FixedLenFeature([3], tf.float32),
                    "label": tf.FixedLenFeature([], tf.int64),
                },
            )
            # min_after_dequeue covers the whole data set: the first batch waits for the
            # closed queue, so the shuffle depends on the seed only, not on thread timing.
            x, y = tf.train.shuffle_batch(
                [parsed["features"], parsed["label"]],
                batch_size=4,
                capacity=16,
                min_after_dequeue=12,
                num_threads=1,
                seed=3,
                allow_smaller_final_batch=True,
            )
            w = tf.Variable(tf.zeros([3, 1]), name="weights")
            b = tf.Variable(0.0, name="bias")
            logits = tf.squeeze(tf.matmul(x, w) + b, 1)
            loss = tf.reduce_mean(
                tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.to_float(y), logits=logits)
            )
            train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
            printed: list[Any] = []
            with tf.Session(target) as sess:
                sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
                coord = tf.train.Coordinator()
                threads = tf.train.start_queue_runners(sess=sess, coord=coord)
                try:
                    while not coord.should_stop():
                        _, loss_val, y_val = sess.run([train, loss, y])
                        printed.append((loss_val, y_val))
                except tf.errors.OutOfRangeError:
                    printed.append("Done training, epoch limit reached")
                finally:
                    coord.request_stop()
                coord.join(threads)
                printed.append(sess.run([w, b]))
        return printed


@program
def image_augmentation_dataset(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(45)
    images = rng.randint(0, 256, size=(6, 10, 10, 3)).astype(np.uint8)
    classes = np.arange(6, dtype=np.int32) % 3
    with tf.Graph().as_default():
        tf.set_random_seed(45)

        def augment(image: Any, label: Any) -> Any:
            image = tf.image.convert_image_dtype(image, tf.float32)
            image = tf.image.resize_image_with_crop_or_pad(image, 12, 12)
            image = tf.random_crop(image, [8, 8, 3], seed=1)
            image = tf.image.random_flip_left_right(image, seed=2)
            image = tf.image.random_brightness(image, max_delta=0.2, seed=3)
            image = tf.image.random_contrast(image, 0.8, 1.2, seed=4)
            image = tf.image.per_image_standardization(image)
            return image, label

        def evaluate(image: Any, label: Any) -> Any:
            image = tf.image.central_crop(tf.image.convert_image_dtype(image, tf.float32), 0.8)
            return tf.image.per_image_standardization(image), label

        train = (
            tf.data.Dataset.from_tensor_slices((images, classes))
            .shuffle(6, seed=5)
            .map(augment)
            .batch(3)
            .repeat(2)
        )
        test = tf.data.Dataset.from_tensor_slices((images, classes)).map(evaluate).batch(6)
        x, y = train.make_one_shot_iterator().get_next()
        test_x, _ = test.make_one_shot_iterator().get_next()
        net = tf.layers.conv2d(x, 4, 3, activation=tf.nn.relu)
        logits = tf.layers.dense(tf.reduce_mean(net, [1, 2]), 3)
        loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
        step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        moments = tf.nn.moments(x, axes=[1, 2, 3])
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(4):
                _, loss_val, labels, (mean, var), corner = sess.run(
                    [step, loss, y, moments, x[:, 0, 0, :]]
                )
                printed.append((loss_val, labels, mean, var, corner))
            test_val = sess.run(test_x)
            printed.append((test_val.shape, test_val[:, 0, 0, 0]))
        return printed


@program
def while_loop_numerics(tf: Any, target: str) -> Any:
    matrix = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 1.0]], dtype=np.float32)
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [3, 3], name="a")

        # Power iteration: the dominant eigenpair, stopping at a tolerance or 100 steps.
        def power_cond(i: Any, v: Any, lam: Any, delta: Any) -> Any:
            return tf.logical_and(i < 100, delta > 1e-6)

        def power_body(i: Any, v: Any, lam: Any, delta: Any) -> Any:
            w = tf.linalg.matvec(a, v)
            v_new = w / tf.norm(w)
            lam_new = tf.reduce_sum(v_new * tf.linalg.matvec(a, v_new))
            return i + 1, v_new, lam_new, tf.abs(lam_new - lam)

        steps, vec, eig, _ = tf.while_loop(
            power_cond, power_body, [0, tf.ones([3]) / np.sqrt(3.0), 0.0, 1.0]
        )

        # Newton's method for square roots, every element at once, with its gradient.
        x = tf.placeholder(tf.float32, [None], name="x")

        def newton_body(k: Any, guess: Any) -> Any:
            return k + 1, 0.5 * (guess + x / guess)

        _, roots = tf.while_loop(
            lambda k, g: k < 8, newton_body, [tf.constant(0), tf.ones_like(x)], back_prop=True
        )
        droots = tf.gradients(tf.reduce_sum(roots), x)[0]

        # A growing history of iterates needs a shape invariant on its first dimension.
        def history_body(k: Any, g: Any, history: Any) -> Any:
            g = 0.5 * (g + 2.0 / g)
            return k + 1, g, tf.concat([history, [g]], 0)

        _, _, history = tf.while_loop(
            lambda k, g, h: k < 5,
            history_body,
            [tf.constant(0), tf.constant(1.0), tf.constant([1.0])],
            shape_invariants=[tf.TensorShape([]), tf.TensorShape([]), tf.TensorShape([None])],
        )
        # Bisection with maximum_iterations: the root of x^3 - x - 2 in [1, 2].
        lo, hi = tf.while_loop(
            lambda lo, hi: hi - lo > 1e-9,
            lambda lo, hi: tf.cond(
                ((lo + hi) / 2) ** 3 - (lo + hi) / 2 - 2 > 0,
                lambda: (lo, (lo + hi) / 2),
                lambda: ((lo + hi) / 2, hi),
            ),
            [tf.constant(1.0, tf.float64), tf.constant(2.0, tf.float64)],
            maximum_iterations=30,
        )
        printed: list[Any] = [history.shape.as_list()]
        with tf.Session(target) as sess:
            printed.append(sess.run([steps, vec, eig], {a: matrix}))
            printed.append(np.linalg.eigvalsh(matrix)[-1])
            printed.append(sess.run([roots, droots], {x: [2.0, 9.0, 0.25, 10.0]}))
            printed.append(sess.run(history))
            printed.append(sess.run([lo, hi]))
        return printed


def _register_gradient(tf: Any, name: str, fn: Any) -> None:
    """A script registers its gradient once, at import; the probe runs it many times."""
    try:
        tf.RegisterGradient(name)(fn)
    except KeyError:
        pass


@program
def custom_gradients(tf: Any, target: str) -> Any:
    def reversed_scaled(op: Any, grad: Any) -> Any:
        return -0.5 * grad

    _register_gradient(tf, "Programs3ReverseGrad", reversed_scaled)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")

        @tf.custom_gradient
        def log1pexp(v: Any) -> Any:
            e = tf.exp(v)

            def grad(dy: Any) -> Any:
                return dy * (1 - 1 / (1 + e))

            return tf.log(1 + e), grad

        @tf.custom_gradient
        def clip_gradient(v: Any) -> Any:
            def grad(dy: Any) -> Any:
                return tf.clip_by_norm(dy, 0.5)

            return tf.identity(v), grad

        g = tf.get_default_graph()
        with g.gradient_override_map({"Identity": "Programs3ReverseGrad"}):
            flipped = tf.identity(x, name="flip")
        with g.gradient_override_map({"Round": "Identity", "Sign": "Identity"}):
            quantized = tf.round(x * 4.0) / 4.0
            binary = tf.sign(x)
        straight_through = x + tf.stop_gradient(tf.round(x) - x)
        outputs = [log1pexp(x), clip_gradient(x * 3.0), flipped, quantized, binary]
        outputs.append(straight_through)
        grads = [tf.gradients(tf.reduce_sum(out * out), x)[0] for out in outputs]
        w = tf.Variable([0.3, -0.7, 1.2], name="w")
        loss = tf.reduce_sum(tf.square(clip_gradient(w) - 2.0))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        feed = {x: [-100.0, -1.3, 0.2, 0.6, 50.0]}
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            printed.append(sess.run(outputs, feed))
            printed.append(sess.run(grads, feed))
            for _ in range(3):
                printed.append(sess.run([train, loss])[1])
            printed.append(sess.run(w))
        return printed


@program
def ema_shadow_eval(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(46)
    x_np = rng.randn(16, 3).astype(np.float32)
    y_np = x_np @ np.array([[2.0], [-1.0], [0.5]], dtype=np.float32) + 0.3

    def model(x: Any) -> Any:
        with tf.variable_scope("linear"):
            w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
            b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        return tf.matmul(x, w) + b

    printed: list[Any] = []
    with tempfile.TemporaryDirectory() as tmp:
        with tf.Graph().as_default():
            global_step = tf.train.get_or_create_global_step()
            x = tf.placeholder(tf.float32, [None, 3])
            loss = tf.reduce_mean(tf.square(model(x) - y_np))
            opt = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
            ema = tf.train.ExponentialMovingAverage(0.9, num_updates=global_step)
            with tf.control_dependencies([opt]):
                train_op = ema.apply(tf.trainable_variables())
            shadows = [ema.average(v) for v in tf.trainable_variables()]
            printed.append([ema.average_name(v) for v in tf.trainable_variables()])
            saver = tf.train.Saver()
            with tf.Session(target) as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(6):
                    printed.append(sess.run([train_op, loss], {x: x_np})[1])
                printed.append(sess.run(tf.trainable_variables() + shadows))
                saver.save(sess, os.path.join(tmp, "model.ckpt"), global_step=global_step)
        # The evaluation graph loads the averages into the plain variables.
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None, 3])
            pred = model(x)
            ema = tf.train.ExponentialMovingAverage(0.9)
            to_restore = ema.variables_to_restore()
            printed.append(sorted(to_restore))
            saver = tf.train.Saver(to_restore)
            with tf.Session(target) as sess:
                saver.restore(sess, tf.train.latest_checkpoint(tmp))
                printed.append(sess.run(tf.global_variables()))
                printed.append(sess.run(pred, {x: x_np[:3]}))
    return printed


@program
def cifar10_style_model(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(47)
    images_np = rng.rand(8, 12, 12, 3).astype(np.float32)
    labels_np = rng.randint(0, 4, size=8).astype(np.int32)

    def variable_on_cpu(name: str, shape: list[int], initializer: Any) -> Any:
        with tf.device("/cpu:0"):
            return tf.get_variable(name, shape, initializer=initializer, dtype=tf.float32)

    def variable_with_weight_decay(name: str, shape: list[int], stddev: float, wd: Any) -> Any:
        var = variable_on_cpu(name, shape, tf.truncated_normal_initializer(stddev=stddev))
        if wd is not None:
            weight_decay = tf.multiply(tf.nn.l2_loss(var), wd, name="weight_loss")
            tf.add_to_collection("losses", weight_decay)
        return var

    def inference(images: Any) -> Any:
        with tf.variable_scope("conv1") as scope:
            kernel = variable_with_weight_decay("weights", [3, 3, 3, 8], 5e-2, None)
            conv = tf.nn.conv2d(images, kernel, [1, 1, 1, 1], padding="SAME")
            biases = variable_on_cpu("biases", [8], tf.constant_initializer(0.0))
            conv1 = tf.nn.relu(tf.nn.bias_add(conv, biases), name=scope.name)
        pool1 = tf.nn.max_pool(conv1, [1, 3, 3, 1], [1, 2, 2, 1], padding="SAME", name="pool1")
        norm1 = tf.nn.lrn(pool1, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name="norm1")
        with tf.variable_scope("local3") as scope:
            reshape = tf.reshape(norm1, [images.get_shape().as_list()[0], -1])
            dim = reshape.get_shape().as_list()[1]
            weights = variable_with_weight_decay("weights", [dim, 16], 0.04, 0.004)
            biases = variable_on_cpu("biases", [16], tf.constant_initializer(0.1))
            local3 = tf.nn.relu(tf.matmul(reshape, weights) + biases, name=scope.name)
        with tf.variable_scope("softmax_linear") as scope:
            weights = variable_with_weight_decay("weights", [16, 4], 1 / 16.0, None)
            biases = variable_on_cpu("biases", [4], tf.constant_initializer(0.0))
            return tf.add(tf.matmul(local3, weights), biases, name=scope.name)

    with tf.Graph().as_default():
        tf.set_random_seed(47)
        global_step = tf.train.get_or_create_global_step()
        images = tf.constant(images_np)
        labels = tf.constant(labels_np)
        logits = inference(images)
        cross_entropy = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=tf.cast(labels, tf.int64), logits=logits
            ),
            name="cross_entropy",
        )
        tf.add_to_collection("losses", cross_entropy)
        total_loss = tf.add_n(tf.get_collection("losses"), name="total_loss")
        loss_averages = tf.train.ExponentialMovingAverage(0.9, name="avg")
        loss_averages_op = loss_averages.apply(tf.get_collection("losses") + [total_loss])
        lr = tf.train.exponential_decay(0.1, global_step, 2, 0.5, staircase=True)
        with tf.control_dependencies([loss_averages_op]):
            grads = tf.train.GradientDescentOptimizer(lr).compute_gradients(total_loss)
        apply_op = tf.train.GradientDescentOptimizer(lr).apply_gradients(grads, global_step)
        variable_averages = tf.train.ExponentialMovingAverage(0.9999, global_step)
        with tf.control_dependencies([apply_op]):
            variables_averages_op = variable_averages.apply(tf.trainable_variables())
        with tf.control_dependencies([apply_op, variables_averages_op]):
            train_op = tf.no_op(name="train")
        top_k = tf.nn.in_top_k(logits, labels, 2)
        printed: list[Any] = [[v.op.name for v in tf.global_variables()]]
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(4):
                _, loss_val = sess.run([train_op, total_loss])
                printed.append((sess.run(global_step), loss_val))
            printed.append(sess.run([loss_averages.average(total_loss), lr]))
            printed.append(sess.run([top_k, tf.reduce_sum(tf.to_int32(top_k))]))
        return printed


@program
def lr_schedules_clipping(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(48)
    x_np = rng.randn(10, 2).astype(np.float32) * 5
    y_np = x_np @ np.array([[1.0], [-3.0]], dtype=np.float32)
    with tf.Graph().as_default():
        global_step = tf.train.get_or_create_global_step()
        schedules = [
            tf.train.piecewise_constant(global_step, [np.int64(2), np.int64(4)], [0.1, 0.05, 0.01]),
            tf.train.polynomial_decay(0.1, global_step, 3, 0.01, power=1.0, cycle=True),
            tf.train.cosine_decay(0.1, global_step, 5, alpha=0.1),
            tf.train.cosine_decay_restarts(0.1, global_step, 2, t_mul=2.0, m_mul=0.5),
            tf.train.linear_cosine_decay(0.1, global_step, 6),
        ]
        x = tf.constant(x_np)
        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y_np))
        lr = schedules[2]
        opt = tf.train.AdamOptimizer(lr)
        grads_and_vars = opt.compute_gradients(loss, [w])
        clipped = [(tf.clip_by_norm(g, 2.0), v) for g, v in grads_and_vars]
        clipped = [(tf.clip_by_value(g, -1.5, 1.5), v) for g, v in clipped]
        train = opt.apply_gradients(clipped, global_step=global_step)
        printed: list[Any] = [global_step.dtype.name, global_step.op.name]
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(7):
                printed.append(sess.run(schedules))
                _, grad = sess.run([train, clipped[0][0]])
                printed.append((sess.run(global_step), grad, sess.run(loss)))
            printed.append(sess.run(w))
        return printed


__all__ = ["CLUSTER_ONLY", "PROGRAMS"]
