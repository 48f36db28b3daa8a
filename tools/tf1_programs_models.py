"""Whole TF1 programs, part one: models as tutorials write them.

Each program is `program(tf, target) -> printed`: it builds its own graph with module `tf`
(tensorflow.compat.v1 or our `client`), opens a session on `target` ("" for local), trains
or evaluates a few steps and returns what a tutorial would print. Data are synthetic and
seeded (numpy RandomState, tf.set_random_seed), so values compare across runtimes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Program = Callable[[Any, str], Any]
PROGRAMS: list[tuple[str, Program]] = []


def program(fn: Program) -> Program:
    PROGRAMS.append((fn.__name__, fn))
    return fn


def mnist_like(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """MNIST-shaped data: n flattened 28x28 images in [0, 1) and one-hot labels that a
    linear model can learn (the label is the brightest of ten pixel bands)."""
    rng = np.random.RandomState(seed)
    x = rng.rand(n, 784).astype(np.float32)
    labels = x[:, :780].reshape(n, 10, 78).sum(axis=2).argmax(axis=1)
    return x, np.eye(10, dtype=np.float32)[labels]


@program
def linear_regression(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(1)
    train_x = rng.rand(30).astype(np.float32) * 10
    train_y = 0.3 * train_x + 2.0 + rng.randn(30).astype(np.float32) * 0.1
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        X = tf.placeholder("float")
        Y = tf.placeholder("float")
        W = tf.Variable(tf.random_normal([]), name="weight")
        b = tf.Variable(tf.random_normal([]), name="bias")
        pred = tf.add(tf.multiply(X, W), b)
        cost = tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * len(train_x))
        optimizer = tf.train.GradientDescentOptimizer(0.01).minimize(cost)
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for epoch in range(10):
                for x, y in zip(train_x, train_y):
                    sess.run(optimizer, feed_dict={X: x, Y: y})
                if epoch % 5 == 4:
                    c = sess.run(cost, feed_dict={X: train_x, Y: train_y})
                    printed.append((epoch, c, sess.run(W), sess.run(b)))
        return printed


@program
def logistic_regression(tf: Any, target: str) -> Any:
    train_x, train_y = mnist_like(200)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 784])
        y = tf.placeholder(tf.float32, [None, 10])
        W = tf.Variable(tf.zeros([784, 10]))
        b = tf.Variable(tf.zeros([10]))
        pred = tf.nn.softmax(tf.matmul(x, W) + b)
        cost = tf.reduce_mean(-tf.reduce_sum(y * tf.log(pred), reduction_indices=1))
        optimizer = tf.train.GradientDescentOptimizer(0.01).minimize(cost)
        correct = tf.equal(tf.argmax(pred, 1), tf.argmax(y, 1))
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for epoch in range(3):
                avg = 0.0
                for i in range(4):
                    bx, by = train_x[i * 50 : (i + 1) * 50], train_y[i * 50 : (i + 1) * 50]
                    _, c = sess.run([optimizer, cost], feed_dict={x: bx, y: by})
                    avg += c / 4
                printed.append(("Epoch", epoch + 1, "cost", avg))
            printed.append(("Accuracy", accuracy.eval({x: train_x, y: train_y})))
        return printed


@program
def mlp_mnist(tf: Any, target: str) -> Any:
    train_x, train_y = mnist_like(128, seed=2)
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        X = tf.placeholder("float", [None, 784])
        Y = tf.placeholder("float", [None, 10])
        weights = {
            "h1": tf.Variable(tf.random_normal([784, 32], stddev=0.1)),
            "h2": tf.Variable(tf.random_normal([32, 32], stddev=0.1)),
            "out": tf.Variable(tf.random_normal([32, 10], stddev=0.1)),
        }
        biases = {
            "b1": tf.Variable(tf.random_normal([32])),
            "b2": tf.Variable(tf.random_normal([32])),
            "out": tf.Variable(tf.random_normal([10])),
        }
        layer_1 = tf.nn.relu(tf.add(tf.matmul(X, weights["h1"]), biases["b1"]))
        layer_2 = tf.nn.relu(tf.add(tf.matmul(layer_1, weights["h2"]), biases["b2"]))
        logits = tf.matmul(layer_2, weights["out"]) + biases["out"]
        loss_op = tf.reduce_mean(
            tf.nn.softmax_cross_entropy_with_logits_v2(logits=logits, labels=Y)
        )
        train_op = tf.train.AdamOptimizer(learning_rate=0.01).minimize(loss_op)
        correct = tf.equal(tf.argmax(logits, 1), tf.argmax(Y, 1))
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(8):
                bx = train_x[(step % 4) * 32 : (step % 4 + 1) * 32]
                by = train_y[(step % 4) * 32 : (step % 4 + 1) * 32]
                sess.run(train_op, feed_dict={X: bx, Y: by})
                if step % 4 == 3:
                    printed.append(sess.run([loss_op, accuracy], feed_dict={X: bx, Y: by}))
        return printed


@program
def cnn_layers(tf: Any, target: str) -> Any:
    train_x, train_y = mnist_like(16, seed=3)
    labels = train_y.argmax(axis=1).astype(np.int64)
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float32, [None, 784], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        training = tf.placeholder_with_default(False, [], name="training")
        net = tf.reshape(x, [-1, 28, 28, 1])
        net = tf.layers.conv2d(net, 4, 5, activation=tf.nn.relu)
        net = tf.layers.max_pooling2d(net, 2, 2)
        net = tf.layers.conv2d(net, 8, 3, padding="same", activation=tf.nn.relu)
        net = tf.layers.max_pooling2d(net, 2, 2)
        net = tf.layers.flatten(net)
        net = tf.layers.dense(net, 16, activation=tf.nn.relu)
        net = tf.layers.dropout(net, rate=0.25, training=training)
        logits = tf.layers.dense(net, 10)
        loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
        train_op = tf.train.AdamOptimizer(1e-3).minimize(
            loss, global_step=tf.train.get_or_create_global_step()
        )
        acc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train_op, {x: train_x[:8], y: labels[:8], training: True})
            printed.append(sess.run([loss, acc], {x: train_x[8:], y: labels[8:]}))
            printed.append([v.name for v in tf.trainable_variables()])
        return printed


@program
def autoencoder(tf: Any, target: str) -> Any:
    data, _ = mnist_like(64, seed=4)
    with tf.Graph().as_default():
        tf.set_random_seed(4)
        X = tf.placeholder("float", [None, 784])

        def dense(name: str, inp: Any, n_in: int, n_out: int) -> Any:
            w = tf.get_variable(
                name + "_w", [n_in, n_out], initializer=tf.glorot_uniform_initializer()
            )
            b = tf.get_variable(name + "_b", [n_out], initializer=tf.zeros_initializer())
            return tf.nn.sigmoid(tf.matmul(inp, w) + b)

        code = dense("enc2", dense("enc1", X, 784, 64), 64, 16)
        decoded = dense("dec2", dense("dec1", code, 16, 64), 64, 784)
        loss = tf.reduce_mean(tf.pow(X - decoded, 2))
        optimizer = tf.train.RMSPropOptimizer(0.01).minimize(loss)
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for i in range(6):
                _, loss_val = sess.run([optimizer, loss], feed_dict={X: data[(i % 2) * 32 :][:32]})
                printed.append(("Step", i, "Minibatch Loss", loss_val))
            printed.append(sess.run(code, {X: data[:2]}))
        return printed


@program
def gan(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(5)
    real = (rng.randn(32, 8) * 0.5 + 1.0).astype(np.float32)
    noise = rng.uniform(-1.0, 1.0, size=(32, 4)).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        z = tf.placeholder(tf.float32, [None, 4], name="z")
        x = tf.placeholder(tf.float32, [None, 8], name="x")

        def generator(z: Any) -> Any:
            with tf.variable_scope("generator"):
                h = tf.layers.dense(z, 16, activation=tf.nn.leaky_relu)
                return tf.layers.dense(h, 8)

        def discriminator(x: Any, reuse: bool = False) -> Any:
            with tf.variable_scope("discriminator", reuse=reuse):
                h = tf.layers.dense(x, 16, activation=tf.nn.leaky_relu)
                return tf.layers.dense(h, 1)

        fake = generator(z)
        d_real = discriminator(x)
        d_fake = discriminator(fake, reuse=True)
        ce = tf.nn.sigmoid_cross_entropy_with_logits
        d_loss = tf.reduce_mean(ce(logits=d_real, labels=tf.ones_like(d_real))) + tf.reduce_mean(
            ce(logits=d_fake, labels=tf.zeros_like(d_fake))
        )
        g_loss = tf.reduce_mean(ce(logits=d_fake, labels=tf.ones_like(d_fake)))
        g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="generator")
        d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="discriminator")
        d_train = tf.train.AdamOptimizer(2e-3, beta1=0.5).minimize(d_loss, var_list=d_vars)
        g_train = tf.train.AdamOptimizer(2e-3, beta1=0.5).minimize(g_loss, var_list=g_vars)
        printed: list[Any] = [len(g_vars), len(d_vars)]
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(4):
                _, dl = sess.run([d_train, d_loss], {x: real, z: noise})
                _, gl = sess.run([g_train, g_loss], {z: noise})
                printed.append((step, dl, gl))
            printed.append(sess.run(fake, {z: noise[:2]}))
        return printed


def skipgram_model(
    tf: Any, vocab_size: int, dim: int, num_sampled: int, valid_ids: list[int]
) -> tuple[Any, Any, Any, Any, Any]:
    """The skip-gram model of TensorFlow's word2vec_basic tutorial: embeddings, NCE loss
    trained by gradient descent, and the cosine similarity of the `valid_ids` words to
    every word. Returns (inputs, labels, loss, train op, similarity); also the test
    suite's word2vec program (tests/client/test_tf1_programs.py)."""
    train_inputs = tf.placeholder(tf.int32, shape=[None])
    train_labels = tf.placeholder(tf.int64, shape=[None, 1])
    embeddings = tf.Variable(tf.random_uniform([vocab_size, dim], -1.0, 1.0))
    embed = tf.nn.embedding_lookup(embeddings, train_inputs)
    nce_weights = tf.Variable(tf.truncated_normal([vocab_size, dim], stddev=1.0 / np.sqrt(dim)))
    nce_biases = tf.Variable(tf.zeros([vocab_size]))
    loss = tf.reduce_mean(
        tf.nn.nce_loss(
            weights=nce_weights,
            biases=nce_biases,
            labels=train_labels,
            inputs=embed,
            num_sampled=num_sampled,
            num_classes=vocab_size,
        )
    )
    optimizer = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    norm = tf.sqrt(tf.reduce_sum(tf.square(embeddings), 1, keepdims=True))
    normalized = embeddings / norm
    valid = tf.constant(valid_ids, dtype=tf.int32)
    similarity = tf.matmul(tf.nn.embedding_lookup(normalized, valid), normalized, transpose_b=True)
    return train_inputs, train_labels, loss, optimizer, similarity


@program
def word2vec_skipgram(tf: Any, target: str) -> Any:
    words = [
        "the",
        "quick",
        "brown",
        "fox",
        "jumps",
        "over",
        "the",
        "lazy",
        "dog",
        "and",
        "the",
        "quick",
        "cat",
        "sleeps",
    ]
    vocab = sorted(set(words))
    ids = [vocab.index(w) for w in words]
    pairs = [(ids[i], ids[j]) for i in range(len(ids)) for j in (i - 1, i + 1) if 0 <= j < len(ids)]
    batch = np.array([p[0] for p in pairs], dtype=np.int32)
    labels = np.array([[p[1]] for p in pairs], dtype=np.int64)
    vocab_size, dim = len(vocab), 8
    with tf.Graph().as_default():
        tf.set_random_seed(6)
        valid = [vocab.index("quick"), vocab.index("fox")]
        train_inputs, train_labels, loss, optimizer, similarity = skipgram_model(
            tf, vocab_size, dim, num_sampled=4, valid_ids=valid
        )
        printed: list[Any] = []
        with tf.Session(target) as sess:
            tf.global_variables_initializer().run()
            for step in range(5):
                _, loss_val = sess.run(
                    [optimizer, loss], {train_inputs: batch, train_labels: labels}
                )
                printed.append(("Average loss at step", step, loss_val))
            sim = similarity.eval()
            for i in range(2):
                nearest = (-sim[i, :]).argsort()[1:4]
                printed.append([vocab[k] for k in nearest])
        return printed


@program
def kmeans_plain_ops(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(8)
    centers = np.array([[0, 0], [5, 5], [0, 5]], dtype=np.float32)
    points_np = np.concatenate([c + rng.randn(20, 2).astype(np.float32) for c in centers])
    k = 3
    with tf.Graph().as_default():
        points = tf.constant(points_np)
        centroids = tf.Variable(tf.slice(tf.random_shuffle(points, seed=1), [0, 0], [k, -1]))
        expanded_points = tf.expand_dims(points, 0)
        expanded_centroids = tf.expand_dims(centroids, 1)
        distances = tf.reduce_sum(tf.square(tf.subtract(expanded_points, expanded_centroids)), 2)
        assignments = tf.argmin(distances, 0)
        sums = tf.unsorted_segment_sum(points, assignments, k)
        counts = tf.unsorted_segment_sum(tf.ones_like(points), assignments, k)
        update = tf.assign(centroids, sums / counts)
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(5):
                _, c, a = sess.run([update, centroids, assignments])
            return c, a


@program
def nearest_neighbour(tf: Any, target: str) -> Any:
    train_x, train_y = mnist_like(100, seed=9)
    test_x, test_y = mnist_like(10, seed=10)
    with tf.Graph().as_default():
        xtr = tf.placeholder("float", [None, 784])
        xte = tf.placeholder("float", [784])
        distance = tf.reduce_sum(tf.abs(tf.add(xtr, tf.negative(xte))), reduction_indices=1)
        pred = tf.arg_min(distance, 0)
        accuracy = 0.0
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for i in range(len(test_x)):
                nn_index = sess.run(pred, feed_dict={xtr: train_x, xte: test_x[i, :]})
                printed.append((i, int(np.argmax(train_y[nn_index])), int(np.argmax(test_y[i]))))
                if np.argmax(train_y[nn_index]) == np.argmax(test_y[i]):
                    accuracy += 1.0 / len(test_x)
        return printed, accuracy


@program
def char_rnn(tf: Any, target: str) -> Any:
    text = "hello world, hello tensorflow. "
    chars = sorted(set(text))
    encoded = np.array([chars.index(c) for c in text], dtype=np.int32)
    seq_len, n_cls = 6, len(chars)
    xs = np.stack([encoded[i : i + seq_len] for i in range(0, 24, 6)])
    ys = np.stack([encoded[i + 1 : i + seq_len + 1] for i in range(0, 24, 6)])
    with tf.Graph().as_default():
        tf.set_random_seed(11)
        inputs = tf.placeholder(tf.int32, [None, seq_len])
        targets = tf.placeholder(tf.int32, [None, seq_len])
        embedding = tf.get_variable("embedding", [n_cls, 8])
        rnn_inputs = tf.nn.embedding_lookup(embedding, inputs)
        cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.LSTMCell(12) for _ in range(2)])
        init_state = cell.zero_state(tf.shape(inputs)[0], tf.float32)
        outputs, final_state = tf.nn.dynamic_rnn(cell, rnn_inputs, initial_state=init_state)
        logits = tf.layers.dense(outputs, n_cls)
        weights = tf.ones_like(targets, dtype=tf.float32)
        crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits)
        loss = tf.reduce_sum(crossent * weights) / tf.reduce_sum(weights)
        tvars = tf.trainable_variables()
        grads, _ = tf.clip_by_global_norm(tf.gradients(loss, tvars), 5.0)
        train_op = tf.train.AdamOptimizer(0.01).apply_gradients(zip(grads, tvars))
        sample = tf.argmax(logits, axis=2)
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(4):
                loss_val, _ = sess.run([loss, train_op], {inputs: xs, targets: ys})
                printed.append(("step", step, "loss", loss_val))
            printed.append("".join(chars[i] for i in sess.run(sample, {inputs: xs[:1]})[0]))
            printed.append(sess.run(final_state[1].h, {inputs: xs[:1]}))
        return printed


@program
def seq2seq_static_rnn(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(12)
    src = rng.randint(1, 6, size=(4, 5)).astype(np.int32)
    tgt = src[:, ::-1].copy()
    steps, vocab, units = 5, 6, 10
    with tf.Graph().as_default():
        tf.set_random_seed(12)
        enc_in = tf.placeholder(tf.int32, [None, steps])
        dec_in = tf.placeholder(tf.int32, [None, steps])
        dec_out = tf.placeholder(tf.int32, [None, steps])
        emb = tf.get_variable(
            "emb", [vocab, 4], initializer=tf.random_uniform_initializer(-0.5, 0.5)
        )
        enc_x = tf.unstack(tf.nn.embedding_lookup(emb, enc_in), axis=1)
        dec_x = tf.unstack(tf.nn.embedding_lookup(emb, dec_in), axis=1)
        with tf.variable_scope("encoder"):
            _, enc_state = tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(units), enc_x, dtype=tf.float32)
        with tf.variable_scope("decoder"):
            outs, _ = tf.nn.static_rnn(
                tf.nn.rnn_cell.GRUCell(units), dec_x, initial_state=enc_state
            )
        w = tf.get_variable("proj_w", [units, vocab])
        b = tf.get_variable("proj_b", [vocab], initializer=tf.zeros_initializer())
        logits = [tf.matmul(o, w) + b for o in outs]
        labels = tf.unstack(dec_out, axis=1)
        loss = tf.add_n(
            [
                tf.reduce_mean(
                    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=lab, logits=lg)
                )
                for lab, lg in zip(labels, logits)
            ]
        ) / float(steps)
        train = tf.train.AdagradOptimizer(0.5).minimize(loss)
        pred = tf.stack([tf.argmax(lg, 1) for lg in logits], axis=1)
        go = np.zeros((4, 1), dtype=np.int32)
        feed = {enc_in: src, dec_in: np.concatenate([go, tgt[:, :-1]], 1), dec_out: tgt}
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(4):
                printed.append(sess.run([loss, train], feed)[0])
            printed.append(sess.run(pred, feed))
        return printed


@program
def bilstm_classifier(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(13)
    x_np = rng.randn(6, 7, 3).astype(np.float32)
    lengths = np.array([7, 5, 3, 7, 2, 6], dtype=np.int32)
    y_np = (x_np[:, 0, 0] > 0).astype(np.int32)
    with tf.Graph().as_default():
        tf.set_random_seed(13)
        x = tf.placeholder(tf.float32, [None, 7, 3])
        seq_len = tf.placeholder(tf.int32, [None])
        y = tf.placeholder(tf.int32, [None])
        fw = tf.nn.rnn_cell.BasicLSTMCell(8)
        bw = tf.nn.rnn_cell.BasicLSTMCell(8)
        (out_fw, out_bw), (st_fw, st_bw) = tf.nn.bidirectional_dynamic_rnn(
            fw, bw, x, sequence_length=seq_len, dtype=tf.float32
        )
        final = tf.concat([st_fw.h, st_bw.h], axis=1)
        logits = tf.layers.dense(final, 2)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        )
        train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
        feed = {x: x_np, seq_len: lengths, y: y_np}
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                printed.append(sess.run([train, loss], feed)[1])
            printed.append(sess.run([tf.argmax(logits, 1), out_bw[:, 0, :]], feed))
        return printed


@program
def batch_norm_update_ops(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(14)
    x_np = rng.randn(16, 5).astype(np.float32) * 3 + 1
    y_np = (x_np.sum(axis=1, keepdims=True) > 5).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(14)
        x = tf.placeholder(tf.float32, [None, 5])
        y = tf.placeholder(tf.float32, [None, 1])
        is_training = tf.placeholder(tf.bool)
        h = tf.layers.dense(x, 8, use_bias=False)
        h = tf.layers.batch_normalization(h, training=is_training, momentum=0.9)
        h = tf.nn.relu(h)
        logits = tf.layers.dense(h, 1)
        loss = tf.losses.sigmoid_cross_entropy(y, logits)
        update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(update_ops):
            train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
        printed = [len(update_ops)]
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(4):
                printed.append(sess.run([train_op, loss], {x: x_np, y: y_np, is_training: True})[1])
            moving = [v for v in tf.global_variables() if "moving" in v.name]
            printed.append(sess.run(moving))
            printed.append(sess.run(loss, {x: x_np, y: y_np, is_training: False}))
        return printed


@program
def gradient_clipping(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(15)
    x_np = rng.randn(20, 4).astype(np.float32) * 10
    y_np = x_np @ np.array([[1.0], [-2.0], [3.0], [0.5]], dtype=np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.get_variable("w", [4, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        global_step = tf.Variable(0, trainable=False, name="global_step")
        opt = tf.train.MomentumOptimizer(0.01, 0.9)
        grads_and_vars = opt.compute_gradients(loss)
        grads, variables = zip(*grads_and_vars)
        clipped, global_norm = tf.clip_by_global_norm(grads, 1.0)
        capped = [(tf.clip_by_value(g, -0.5, 0.5), v) for g, v in zip(clipped, variables)]
        train_op = opt.apply_gradients(capped, global_step=global_step)
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(5):
                _, n = sess.run([train_op, global_norm], {x: x_np, y: y_np})
                printed.append((sess.run(global_step), n))
            printed.append(sess.run([w, b, loss], {x: x_np, y: y_np}))
        return printed
