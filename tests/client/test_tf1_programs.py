"""Survey: eight short TF1 tutorial-style programs, written once against the TF1 API and
run through `import client as tf` (in-process session) and through tensorflow.compat.v1;
each prints (returns) its losses, compared value for value. Variables start from
TensorFlow's initial values (copied by name), random ops inside the programs are seeded
and must draw TensorFlow's numbers."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.tf1_oracle import assert_close, need_tf_keras, run_both
from tools.tf1_programs_models import skipgram_model

TF_GRAPH_MODE = True


@pytest.fixture(autouse=True)
def _tf_keras():
    need_tf_keras()


def linear_regression(tf):
    rng = np.random.RandomState(0)
    train_x = rng.rand(40).astype(np.float32)
    train_y = 3.0 * train_x + 2.0 + rng.randn(40).astype(np.float32) * 0.1
    X = tf.placeholder("float")
    Y = tf.placeholder("float")
    W = tf.Variable(rng.randn(), name="weight", dtype=tf.float32)
    b = tf.Variable(rng.randn(), name="bias", dtype=tf.float32)
    pred = tf.add(tf.multiply(X, W), b)
    cost = tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * 40)
    optimizer = tf.train.GradientDescentOptimizer(0.5).minimize(cost)

    def steps(sess):
        out = []
        for _ in range(10):
            for x, y in zip(train_x[:8], train_y[:8]):
                sess.run(optimizer, feed_dict={X: x, Y: y})
            out.append(sess.run(cost, feed_dict={X: train_x, Y: train_y}))
        return out, sess.run([W, b])

    return steps


def mlp(tf):
    rng = np.random.RandomState(1)
    xs = rng.rand(32, 10).astype(np.float32)
    ys = np.eye(3, dtype=np.float32)[rng.randint(0, 3, 32)]
    x = tf.placeholder(tf.float32, [None, 10])
    y = tf.placeholder(tf.float32, [None, 3])
    keep_prob = tf.placeholder(tf.float32)
    h1 = tf.layers.dense(x, 16, activation=tf.nn.relu)
    h1 = tf.nn.dropout(h1, keep_prob=keep_prob, seed=7)
    h2 = tf.layers.dense(h1, 16, activation=tf.nn.relu)
    logits = tf.layers.dense(h2, 3)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
    correct = tf.equal(tf.argmax(logits, 1), tf.argmax(y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))

    def steps(sess):
        losses = [sess.run([loss, train_op], {x: xs, y: ys, keep_prob: 0.8})[0] for _ in range(8)]
        return losses, sess.run(accuracy, {x: xs, y: ys, keep_prob: 1.0})

    return steps


def cnn(tf):
    rng = np.random.RandomState(2)
    images = rng.rand(8, 12, 12, 1).astype(np.float32)
    labels = rng.randint(0, 4, 8)
    x = tf.placeholder(tf.float32, [None, 12, 12, 1], name="images")
    y = tf.placeholder(tf.int64, [None], name="labels")
    training = tf.placeholder_with_default(False, [], name="training")
    conv1 = tf.layers.conv2d(x, 4, [3, 3], padding="same", activation=tf.nn.relu)
    pool1 = tf.layers.max_pooling2d(conv1, [2, 2], 2)
    conv2 = tf.layers.conv2d(pool1, 8, [3, 3], padding="same", activation=tf.nn.relu)
    pool2 = tf.layers.max_pooling2d(conv2, [2, 2], 2)
    flat = tf.reshape(pool2, [-1, 3 * 3 * 8])
    dense = tf.layers.dense(flat, 16, activation=tf.nn.relu)
    drop = tf.layers.dropout(dense, rate=0.4, training=training)
    logits = tf.layers.dense(drop, 4)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.train.get_or_create_global_step()
    )
    acc, acc_op = tf.metrics.accuracy(labels=y, predictions=tf.argmax(logits, axis=1))

    def steps(sess):
        losses = [sess.run([loss, train_op], {x: images, y: labels})[0] for _ in range(5)]
        sess.run(acc_op, {x: images, y: labels})
        return losses, sess.run(acc)

    return steps


def lstm_classifier(tf):
    rng = np.random.RandomState(3)
    seqs = rng.randn(6, 7, 2).astype(np.float32)
    labels = (seqs.sum(axis=(1, 2)) > 0).astype(np.int32)
    x = tf.placeholder(tf.float32, [None, 7, 2])
    y = tf.placeholder(tf.int32, [None])
    cell = tf.nn.rnn_cell.BasicLSTMCell(8)
    outputs, states = tf.nn.static_rnn(cell, tf.unstack(x, 7, 1), dtype=tf.float32)
    W = tf.Variable(rng.randn(8, 2).astype(np.float32), name="out_w")
    b = tf.Variable(np.zeros(2, np.float32), name="out_b")
    logits = tf.matmul(outputs[-1], W) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train_op = tf.train.RMSPropOptimizer(0.01).minimize(loss)

    def steps(sess):
        return [sess.run([loss, train_op], {x: seqs, y: labels})[0] for _ in range(6)]

    return steps


def autoencoder(tf):
    rng = np.random.RandomState(4)
    data = rng.rand(16, 12).astype(np.float32)
    X = tf.placeholder("float", [None, 12])
    weights = {
        "encoder_h1": tf.Variable(tf.random_normal([12, 6], seed=1)),
        "decoder_h1": tf.Variable(tf.random_normal([6, 12], seed=2)),
    }
    biases = {
        "encoder_b1": tf.Variable(tf.random_normal([6], seed=3)),
        "decoder_b1": tf.Variable(tf.random_normal([12], seed=4)),
    }
    enc = tf.nn.sigmoid(tf.add(tf.matmul(X, weights["encoder_h1"]), biases["encoder_b1"]))
    dec = tf.nn.sigmoid(tf.add(tf.matmul(enc, weights["decoder_h1"]), biases["decoder_b1"]))
    loss = tf.reduce_mean(tf.pow(X - dec, 2))
    optimizer = tf.train.RMSPropOptimizer(0.05).minimize(loss)

    def steps(sess):
        return [sess.run([optimizer, loss], {X: data})[1] for _ in range(6)]

    return steps


def gan(tf):
    tf.set_random_seed(11)
    rng = np.random.RandomState(5)
    real = (rng.randn(8, 4) * 0.5 + 2.0).astype(np.float32)

    def generator(z, reuse=False):
        with tf.variable_scope("generator", reuse=reuse):
            h = tf.layers.dense(z, 8, activation=tf.nn.leaky_relu)
            return tf.layers.dense(h, 4)

    def discriminator(x, reuse=False):
        with tf.variable_scope("discriminator", reuse=reuse):
            h = tf.layers.dense(x, 8, activation=tf.nn.leaky_relu)
            return tf.layers.dense(h, 1)

    X = tf.placeholder(tf.float32, [None, 4])
    Z = tf.random_uniform([8, 3], -1.0, 1.0)
    G = generator(Z)
    d_real = discriminator(X)
    d_fake = discriminator(G, reuse=True)
    d_loss = tf.reduce_mean(
        tf.nn.sigmoid_cross_entropy_with_logits(logits=d_real, labels=tf.ones_like(d_real))
        + tf.nn.sigmoid_cross_entropy_with_logits(logits=d_fake, labels=tf.zeros_like(d_fake))
    )
    g_loss = tf.reduce_mean(
        tf.nn.sigmoid_cross_entropy_with_logits(logits=d_fake, labels=tf.ones_like(d_fake))
    )
    g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="generator")
    d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="discriminator")
    d_step = tf.train.AdamOptimizer(0.01).minimize(d_loss, var_list=d_vars)
    g_step = tf.train.AdamOptimizer(0.01).minimize(g_loss, var_list=g_vars)

    def steps(sess):
        out = []
        for _ in range(4):
            _, dl = sess.run([d_step, d_loss], {X: real})
            _, gl = sess.run([g_step, g_loss], {X: real})
            out.append((dl, gl))
        return out

    return steps


def word2vec(tf):
    tf.set_random_seed(3)
    rng = np.random.RandomState(6)
    centers = rng.randint(0, 40, 16)
    contexts = ((centers + 1) % 40).reshape(-1, 1)
    train_inputs, train_labels, loss, optimizer, similarity = skipgram_model(
        tf, vocab_size=40, dim=6, num_sampled=8, valid_ids=[1, 2]
    )

    def steps(sess):
        feed = {train_inputs: centers, train_labels: contexts}
        losses = [sess.run([optimizer, loss], feed)[1] for _ in range(5)]
        return losses, sess.run(similarity)

    return steps


def kmeans(tf):
    rng = np.random.RandomState(7)
    points = np.concatenate(
        [rng.randn(10, 2) + [3, 3], rng.randn(10, 2) - [3, 3], rng.randn(10, 2) + [3, -3]]
    ).astype(np.float32)
    k = 3
    X = tf.constant(points)
    centroids = tf.Variable(tf.slice(tf.random_shuffle(X, seed=5), [0, 0], [k, -1]))
    expanded_v = tf.expand_dims(X, 0)
    expanded_c = tf.expand_dims(centroids, 1)
    distances = tf.reduce_sum(tf.square(tf.subtract(expanded_v, expanded_c)), 2)
    assignments = tf.argmin(distances, 0)
    means = tf.concat(
        [
            tf.reduce_mean(
                tf.gather(X, tf.reshape(tf.where(tf.equal(assignments, c)), [1, -1])),
                reduction_indices=[1],
            )
            for c in range(k)
        ],
        0,
    )
    update = tf.assign(centroids, means)
    cost = tf.reduce_sum(tf.reduce_min(distances, 0))

    def steps(sess):
        out = []
        for _ in range(4):
            _, c = sess.run([update, cost])
            out.append(c)
        return out, sess.run(assignments)

    return steps


PROGRAMS = [linear_regression, mlp, cnn, lstm_classifier, autoencoder, gan, word2vec, kmeans]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_runs_like_tf(program):
    out, want, _, _ = run_both(program)
    assert_close(out, want, rtol=1e-4, atol=1e-5)
