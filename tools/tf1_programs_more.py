"""Whole TF1 programs, part three: what tutorials add once the basics run, such as a
flags-and-app.run script that resumes from its checkpoint, a PTB-style language model,
a VAE, feedable iterators, hook-driven sessions, a hand-written attention decoder,
tower gradients, sparse features, second derivatives and the Supervisor.

Same contract as tools.tf1_programs_models: `program(tf, target) -> printed`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from tools.tf1_programs_models import program
from tools.tf1_programs_pipelines import CLUSTER_ONLY, PROGRAMS

CLUSTER_ONLY.add("tower_gradients")


@program
def conv_batchnorm_training(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(30)
    images = rng.rand(8, 10, 10, 3).astype(np.float32)
    labels = rng.randint(0, 3, 8).astype(np.int32)
    with tf.Graph().as_default():
        tf.set_random_seed(30)
        x = tf.placeholder(tf.float32, [None, 10, 10, 3])
        y = tf.placeholder(tf.int32, [None])
        is_training = tf.placeholder(tf.bool, [], name="is_training")
        net = tf.layers.conv2d(x, 6, 3, padding="same", use_bias=False)
        net = tf.layers.batch_normalization(net, training=is_training, momentum=0.8)
        net = tf.nn.relu(net)
        net = tf.layers.max_pooling2d(net, 2, 2)
        net = tf.layers.conv2d(net, 8, 3, strides=2, activation=tf.nn.relu)
        net = tf.layers.batch_normalization(net, axis=-1, training=is_training)
        net = tf.reduce_mean(net, axis=[1, 2])
        logits = tf.layers.dense(net, 3)
        loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
        global_step = tf.train.get_or_create_global_step()
        update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(update_ops):
            train_op = tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True).minimize(
                loss, global_step=global_step
            )
        printed: list[Any] = [len(update_ops), len(tf.trainable_variables())]
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(4):
                _, loss_val = sess.run([train_op, loss], {x: images, y: labels, is_training: True})
                printed.append((sess.run(global_step), loss_val))
            stats = [v for v in tf.global_variables() if "moving_" in v.name]
            printed.append(sorted(v.name for v in stats))
            printed.append(sess.run(stats))
            printed.append(sess.run(loss, {x: images, y: labels, is_training: False}))
        return printed


@program
def ptb_language_model(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(31)
    vocab, steps, batch, hidden = 12, 5, 3, 8
    corpus = rng.randint(0, vocab, size=batch * (3 * steps + 1)).astype(np.int32)
    data = corpus.reshape(batch, -1)

    class Model:
        def __init__(self, is_training: bool, keep_prob: float) -> None:
            self.inputs = tf.placeholder(tf.int32, [batch, steps])
            self.targets = tf.placeholder(tf.int32, [batch, steps])
            embedding = tf.get_variable("embedding", [vocab, hidden])
            inputs = tf.nn.embedding_lookup(embedding, self.inputs)
            if is_training:
                inputs = tf.nn.dropout(inputs, keep_prob=keep_prob, seed=4)

            def make_cell(i: int) -> Any:
                cell = tf.nn.rnn_cell.LSTMCell(hidden, forget_bias=0.0)
                if is_training:
                    cell = tf.nn.rnn_cell.DropoutWrapper(
                        cell, output_keep_prob=keep_prob, seed=10 + i
                    )
                return cell

            cell = tf.nn.rnn_cell.MultiRNNCell([make_cell(i) for i in range(2)])
            self.initial_state = cell.zero_state(batch, tf.float32)
            # Unrolled by hand as the PTB tutorial does (dropout inside a while_loop would
            # draw its random numbers in whatever order the iterations run, in TF).
            outputs, state = [], self.initial_state
            with tf.variable_scope("RNN"):
                for time_step in range(steps):
                    if time_step > 0:
                        tf.get_variable_scope().reuse_variables()
                    cell_output, state = cell(inputs[:, time_step, :], state)
                    outputs.append(cell_output)
            self.final_state = state
            output = tf.reshape(tf.concat(outputs, 1), [-1, hidden])
            softmax_w = tf.get_variable("softmax_w", [hidden, vocab])
            softmax_b = tf.get_variable("softmax_b", [vocab])
            logits = tf.reshape(
                tf.nn.xw_plus_b(output, softmax_w, softmax_b), [batch, steps, vocab]
            )
            # sequence_loss without contrib: per-token cross-entropy weighted by a mask.
            weights = tf.ones([batch, steps], dtype=tf.float32)
            crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=self.targets, logits=logits
            )
            self.cost = tf.reduce_sum(tf.reduce_sum(crossent * weights, axis=1) / batch)
            if not is_training:
                return
            self.lr = tf.Variable(0.0, trainable=False)
            tvars = tf.trainable_variables()
            grads, _ = tf.clip_by_global_norm(tf.gradients(self.cost, tvars), 5.0)
            optimizer = tf.train.GradientDescentOptimizer(self.lr)
            self.train_op = optimizer.apply_gradients(
                zip(grads, tvars), global_step=tf.train.get_or_create_global_step()
            )
            self.new_lr = tf.placeholder(tf.float32, shape=[], name="new_learning_rate")
            self.lr_update = tf.assign(self.lr, self.new_lr)

    def run_epoch(sess: Any, model: Any, train: bool) -> Any:
        state = sess.run(model.initial_state)
        costs = 0.0
        for i in range(3):
            feed = {
                model.inputs: data[:, i * steps : (i + 1) * steps],
                model.targets: data[:, i * steps + 1 : (i + 1) * steps + 1],
            }
            for layer, (c, h) in enumerate(model.initial_state):
                feed[c] = state[layer].c
                feed[h] = state[layer].h
            fetches = [model.cost, model.final_state]
            if train:
                fetches.append(model.train_op)
            cost, state = sess.run(fetches, feed)[:2]
            costs += cost
        return np.exp(costs / (3 * steps))

    with tf.Graph().as_default():
        tf.set_random_seed(31)
        initializer = tf.random_uniform_initializer(-0.1, 0.1)
        with tf.variable_scope("Model", reuse=None, initializer=initializer):
            m = Model(is_training=True, keep_prob=0.8)
        with tf.variable_scope("Model", reuse=True, initializer=initializer):
            mvalid = Model(is_training=False, keep_prob=1.0)
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for epoch in range(3):
                sess.run(m.lr_update, {m.new_lr: 1.0 * 0.5 ** max(epoch - 1, 0)})
                printed.append(("Epoch", epoch + 1, "lr", sess.run(m.lr)))
                printed.append(("Train Perplexity", run_epoch(sess, m, True)))
                printed.append(("Valid Perplexity", run_epoch(sess, mvalid, False)))
        return printed


@program
def variational_autoencoder(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(32)
    data = (rng.rand(16, 12) > 0.5).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(32)
        x = tf.placeholder(tf.float32, [None, 12])
        with tf.variable_scope("encoder"):
            h = tf.layers.dense(x, 10, activation=tf.nn.softplus)
            mu = tf.layers.dense(h, 2)
            log_sigma_sq = tf.layers.dense(h, 2)
        eps = tf.random_normal(tf.shape(mu), 0, 1, dtype=tf.float32)
        z = mu + tf.sqrt(tf.exp(log_sigma_sq)) * eps
        with tf.variable_scope("decoder"):
            logits = tf.layers.dense(tf.layers.dense(z, 10, activation=tf.nn.softplus), 12)
        recon = tf.reduce_sum(
            tf.nn.sigmoid_cross_entropy_with_logits(labels=x, logits=logits), axis=1
        )
        posterior = tf.distributions.Normal(loc=mu, scale=tf.exp(0.5 * log_sigma_sq))
        prior = tf.distributions.Normal(loc=tf.zeros_like(mu), scale=tf.ones_like(mu))
        kl = tf.reduce_sum(tf.distributions.kl_divergence(posterior, prior), axis=1)
        kl_closed = -0.5 * tf.reduce_sum(
            1 + log_sigma_sq - tf.square(mu) - tf.exp(log_sigma_sq), axis=1
        )
        elbo = tf.reduce_mean(recon + kl)
        train = tf.train.AdamOptimizer(0.01).minimize(elbo)
        log_q = tf.reduce_sum(posterior.log_prob(z), axis=1)
        bern = tf.distributions.Bernoulli(logits=logits)
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(5):
                _, loss_val, kl_a, kl_b = sess.run([train, elbo, kl, kl_closed], {x: data})
                printed.append((loss_val, np.allclose(kl_a, kl_b, atol=1e-5)))
            printed.append(sess.run([mu, log_sigma_sq], {x: data[:3]}))
            printed.append(sess.run(tf.shape(log_q), {x: data}))
            printed.append(sess.run(bern.mean(), {x: data[:1]}).shape)
        return printed


@program
def feedable_iterators(tf: Any, target: str) -> Any:
    features = np.arange(20, dtype=np.float32).reshape(10, 2)
    labels = np.arange(10, dtype=np.int64) % 3
    with tf.Graph().as_default():
        features_ph = tf.placeholder(features.dtype, features.shape)
        labels_ph = tf.placeholder(labels.dtype, labels.shape)
        train_ds = (
            tf.data.Dataset.from_tensor_slices((features_ph, labels_ph))
            .map(lambda f, lab: (f * 0.5, lab + 1), num_parallel_calls=2)
            .shuffle(10, seed=7)
            .batch(4)
            .repeat()
            .prefetch(1)
        )
        valid_ds = (
            tf.data.Dataset.range(5)
            .map(lambda i: (tf.fill([2], tf.cast(i, tf.float32)), i))
            .batch(4)
        )
        handle = tf.placeholder(tf.string, shape=[])
        iterator = tf.data.Iterator.from_string_handle(
            handle, train_ds.output_types, train_ds.output_shapes
        )
        next_x, next_y = iterator.get_next()
        total = tf.reduce_sum(next_x)
        train_iter = train_ds.make_initializable_iterator()
        valid_iter = valid_ds.make_initializable_iterator()
        printed: list[Any] = [str(train_ds.output_shapes)]
        with tf.Session(target) as sess:
            train_handle, valid_handle = sess.run(
                [train_iter.string_handle(), valid_iter.string_handle()]
            )
            sess.run(train_iter.initializer, {features_ph: features, labels_ph: labels})
            for _ in range(4):
                printed.append(sess.run([next_x, next_y, total], {handle: train_handle}))
            for _ in range(2):
                sess.run(valid_iter.initializer)
                while True:
                    try:
                        printed.append(sess.run([next_y, total], {handle: valid_handle}))
                    except tf.errors.OutOfRangeError:
                        printed.append("validation done")
                        break
            printed.append(sess.run(next_y, {handle: train_handle}))
        return printed


@program
def hooks_checkpoint_summaries(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(33)
    x_np = rng.randn(12, 3).astype(np.float32)
    y_np = (x_np @ np.array([1.5, -2.0, 0.5], dtype=np.float32)).reshape(-1, 1)
    with tempfile.TemporaryDirectory() as tmp:
        with tf.Graph().as_default():
            global_step = tf.train.get_or_create_global_step()
            x = tf.constant(x_np)
            w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
            pred = tf.matmul(x, w)
            loss = tf.losses.mean_squared_error(y_np, pred)
            tf.summary.scalar("loss", loss)
            tf.summary.histogram("predictions", pred)
            opt = tf.train.RMSPropOptimizer(0.05)
            grads = opt.compute_gradients(loss)
            # Gradients, not the variables: a variable's summary in the training run reads
            # it before or after the update, as it happens, in TF.
            for grad, var in grads:
                tf.summary.histogram(var.op.name + "/gradients", grad)
            train_op = opt.apply_gradients(grads, global_step=global_step)
            merged = tf.summary.merge_all()
            saver = tf.train.Saver(max_to_keep=3)
            hooks = [
                tf.train.StopAtStepHook(num_steps=6),
                tf.train.CheckpointSaverHook(tmp, save_steps=2, saver=saver),
                # Every step: between saves the hook reads global_step in the same run as
                # the increment, a race in TF, so its later steps vary from run to run.
                tf.train.SummarySaverHook(save_steps=1, output_dir=tmp, summary_op=merged),
            ]
            losses = []
            with tf.train.MonitoredTrainingSession(
                master=target,
                hooks=hooks,
                save_checkpoint_secs=None,
                save_summaries_steps=None,
                log_step_count_steps=None,
            ) as sess:
                while not sess.should_stop():
                    losses.append(sess.run([train_op, loss])[1])
        ckpts = tf.train.get_checkpoint_state(tmp).all_model_checkpoint_paths
        printed: list[Any] = [losses, [os.path.basename(p) for p in ckpts]]
        events = sorted(f for f in os.listdir(tmp) if "tfevents" in f)
        for event in tf.train.summary_iterator(os.path.join(tmp, events[0])):
            for v in event.summary.value:
                if v.HasField("simple_value"):
                    printed.append((event.step, v.tag, v.simple_value))
                else:
                    printed.append((event.step, v.tag, v.histo.num, v.histo.min, v.histo.max))
        reader = tf.train.NewCheckpointReader(tf.train.latest_checkpoint(tmp))
        printed.append(sorted(reader.get_variable_to_shape_map()))
        printed.append(reader.get_tensor("w"))
        return printed


@program
def attention_decoder_while_loop(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(34)
    vocab, src_len, tgt_len, units, batch = 7, 5, 4, 8, 3
    src = rng.randint(1, vocab, size=(batch, src_len)).astype(np.int32)
    tgt = np.sort(src[:, :tgt_len], axis=1).astype(np.int32)
    with tf.Graph().as_default():
        tf.set_random_seed(34)
        enc_ids = tf.placeholder(tf.int32, [None, src_len])
        dec_targets = tf.placeholder(tf.int32, [None, tgt_len])
        emb = tf.get_variable("emb", [vocab, units])
        with tf.variable_scope("encoder"):
            enc_out, enc_state = tf.nn.dynamic_rnn(
                tf.nn.rnn_cell.GRUCell(units),
                tf.nn.embedding_lookup(emb, enc_ids),
                dtype=tf.float32,
            )
        dec_cell = tf.nn.rnn_cell.GRUCell(units)
        w_att = tf.get_variable("w_att", [units, units])
        w_out = tf.get_variable("w_out", [2 * units, vocab])
        n = tf.shape(enc_ids)[0]
        keys = tf.tensordot(enc_out, w_att, axes=1)

        def attend(h: Any) -> tuple[Any, Any]:
            scores = tf.reduce_sum(keys * tf.expand_dims(h, 1), axis=2)
            alignments = tf.nn.softmax(scores)
            context = tf.reduce_sum(enc_out * tf.expand_dims(alignments, 2), axis=1)
            return context, alignments

        def decode(teacher: bool) -> tuple[Any, Any]:
            targets_ta = tf.TensorArray(tf.int32, size=tgt_len).unstack(tf.transpose(dec_targets))
            logits_ta = tf.TensorArray(tf.float32, size=tgt_len)
            align_ta = tf.TensorArray(tf.float32, size=tgt_len)

            def body(t: Any, prev: Any, h: Any, logits_ta: Any, align_ta: Any) -> Any:
                with tf.variable_scope("decoder", reuse=tf.AUTO_REUSE):
                    out, h = dec_cell(tf.nn.embedding_lookup(emb, prev), h)
                context, alignments = attend(out)
                logits = tf.matmul(tf.concat([out, context], 1), w_out)
                nxt = targets_ta.read(t) if teacher else tf.argmax(logits, 1, output_type=tf.int32)
                return t + 1, nxt, h, logits_ta.write(t, logits), align_ta.write(t, alignments)

            go = tf.zeros([n], tf.int32)
            _, _, _, logits_ta, align_ta = tf.while_loop(
                lambda t, *_: t < tgt_len, body, [0, go, enc_state, logits_ta, align_ta]
            )
            return tf.transpose(logits_ta.stack(), [1, 0, 2]), align_ta.stack()

        train_logits, _ = decode(teacher=True)
        greedy_logits, alignments = decode(teacher=False)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=dec_targets, logits=train_logits)
        )
        train = tf.train.AdamOptimizer(0.05).minimize(loss)
        predictions = tf.argmax(greedy_logits, 2)
        feed = {enc_ids: src, dec_targets: tgt}
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(5):
                printed.append(sess.run([train, loss], feed)[1])
            printed.append(sess.run([predictions, alignments], feed))
        return printed


@program
def tower_gradients(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(35)
    x_np = rng.randn(8, 4).astype(np.float32)
    y_np = (x_np @ rng.randn(4, 1)).astype(np.float32)

    def average_gradients(tower_grads: list[list[tuple[Any, Any]]]) -> list[tuple[Any, Any]]:
        averaged = []
        for grad_and_vars in zip(*tower_grads):
            grads = [tf.expand_dims(g, 0) for g, _ in grad_and_vars]
            grad = tf.reduce_mean(tf.concat(grads, axis=0), 0)
            averaged.append((grad, grad_and_vars[0][1]))
        return averaged

    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            global_step = tf.train.get_or_create_global_step()
            opt = tf.train.AdamOptimizer(0.1)
        x = tf.placeholder(tf.float32, [None, 4])
        y = tf.placeholder(tf.float32, [None, 1])
        x_split, y_split = tf.split(x, 2), tf.split(y, 2)
        tower_grads, tower_losses = [], []
        with tf.variable_scope(tf.get_variable_scope()):
            for i in range(2):
                with (
                    tf.device(
                        tf.train.replica_device_setter(
                            ps_tasks=1, worker_device=f"/job:worker/task:{i}"
                        )
                    ),
                    tf.name_scope(f"tower_{i}"),
                ):
                    w = tf.get_variable("w", [4, 1], initializer=tf.zeros_initializer())
                    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
                    loss = tf.reduce_mean(tf.square(tf.matmul(x_split[i], w) + b - y_split[i]))
                    tf.get_variable_scope().reuse_variables()
                    tower_grads.append(opt.compute_gradients(loss))
                    tower_losses.append(loss)
        with tf.device("/job:ps/task:0"):
            train_op = opt.apply_gradients(average_gradients(tower_grads), global_step=global_step)
            mean_loss = tf.add_n(tower_losses) / 2.0
        printed: list[Any] = [sorted({v.device for v in tf.global_variables()})]
        printed.append(sorted({loss.device for loss in tower_losses}))
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(4):
                _, loss_val = sess.run([train_op, mean_loss], {x: x_np, y: y_np})
                printed.append((sess.run(global_step), loss_val))
            printed.append(sess.run(tf.trainable_variables()))
        return printed


@program
def sparse_linear_model(tf: Any, target: str) -> Any:
    rng = np.random.RandomState(36)
    n_features, n_rows = 20, 6
    rows = [
        sorted(rng.choice(n_features, size=rng.randint(1, 4), replace=False)) for _ in range(n_rows)
    ]
    indices = np.array([[r, c] for r, cols in enumerate(rows) for c in cols], dtype=np.int64)
    ids = indices[:, 1].copy()
    values = rng.rand(len(indices)).astype(np.float32)
    labels = rng.randint(0, 2, size=(n_rows, 1)).astype(np.float32)
    shape = np.array([n_rows, n_features], dtype=np.int64)
    with tf.Graph().as_default():
        tf.set_random_seed(36)
        sp_x = tf.sparse_placeholder(tf.float32, name="x")
        sp_ids = tf.SparseTensor(indices, ids, shape)
        sp_weights = tf.SparseTensor(indices, values, shape)
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.get_variable("w", [n_features, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        emb = tf.get_variable("emb", [n_features, 3])
        linear = tf.sparse_tensor_dense_matmul(sp_x, w) + b
        embedded = tf.nn.embedding_lookup_sparse(emb, sp_ids, sp_weights, combiner="sqrtn")
        mean_emb = tf.nn.embedding_lookup_sparse(emb, sp_ids, None, combiner="mean")
        logits = linear + tf.reduce_sum(embedded, axis=1, keepdims=True)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
        train = tf.train.AdagradOptimizer(0.3).minimize(loss)
        dense_x = tf.sparse_tensor_to_dense(tf.sparse_reorder(sp_x))
        feed = {sp_x: tf.SparseTensorValue(indices, values, shape), y: labels}
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(4):
                printed.append(sess.run([train, loss], feed)[1])
            printed.append(sess.run([tf.sigmoid(logits), mean_emb], feed))
            printed.append(sess.run(tf.reduce_sum(dense_x, axis=1), feed))
        return printed


@program
def second_order_gradients(tf: Any, target: str) -> Any:
    with tf.Graph().as_default():
        x = tf.Variable([1.0, -2.0, 0.5], name="x")
        a = tf.constant([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]])
        f = 0.5 * tf.reduce_sum(x * tf.linalg.matvec(a, x)) + tf.reduce_sum(tf.exp(0.1 * x))
        grad = tf.gradients(f, x)[0]
        hess = tf.hessians(f, x)[0]
        # Newton's method: x <- x - H^-1 g, with the step computed by a linear solve.
        step = tf.matrix_solve(hess, tf.expand_dims(grad, 1))[:, 0]
        newton = tf.assign_sub(x, step)
        # stop_gradient: d/dx of x * sg(x) counts only the first factor.
        y = tf.Variable(3.0, name="y")
        partial = tf.gradients(y * tf.stop_gradient(y), y)[0]
        full = tf.gradients(y * y, y)[0]
        second = tf.gradients(tf.gradients(y**3, y)[0], y)[0]
        weighted = tf.gradients([y * 2.0, y**2], y, grad_ys=[tf.constant(0.5), tf.constant(-1.0)])
        z = tf.placeholder(tf.float32, [2, 2])
        hz = tf.hessians(tf.reduce_sum(tf.sin(z) * z), z)[0]
        no_path = tf.gradients(tf.stop_gradient(y) * 2.0, y)
        printed: list[Any] = []
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            printed.append(sess.run([f, grad, hess]))
            for _ in range(3):
                sess.run(newton)
                printed.append(sess.run([f, tf.norm(grad)]))
            printed.append(sess.run([partial, full, second, weighted]))
            printed.append(sess.run(hz, {z: [[0.1, 0.2], [0.3, 0.4]]}).shape)
            printed.append(sess.run(hz, {z: [[0.1, 0.2], [0.3, 0.4]]}).reshape(4, 4))
            printed.append(no_path)
        return printed


@program
def supervisor_managed_session(tf: Any, target: str) -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        printed: list[Any] = []
        for run in range(2):
            with tf.Graph().as_default():
                global_step = tf.train.get_or_create_global_step()
                w = tf.Variable([2.0, -1.0], name="w")
                loss = tf.reduce_sum(tf.square(w - [0.5, 0.5]))
                tf.summary.scalar("loss", loss)
                train = tf.train.AdagradOptimizer(0.5).minimize(loss, global_step=global_step)
                sv = tf.train.Supervisor(
                    logdir=tmp,
                    global_step=global_step,
                    save_model_secs=0,
                    save_summaries_secs=0,
                )
                with sv.managed_session(target) as sess:
                    printed.append(("start", sess.run(global_step), sess.run(w)))
                    for _ in range(3):
                        if sv.should_stop():
                            break
                        _, loss_val = sess.run([train, loss])
                        printed.append((run, sess.run(global_step), loss_val))
                    sv.saver.save(sess, sv.save_path, global_step=global_step)
                    sv.request_stop()
                printed.append(sv.should_stop())
        printed.append(os.path.basename(tf.train.latest_checkpoint(tmp)))
        return printed


@contextmanager
def _v1_behavior(tf: Any) -> Iterator[None]:
    """The script's disable_v2_behavior() preamble, undone afterwards: the probe runs many
    programs in one process, where a real script would exit."""
    tf.disable_v2_behavior()
    try:
        yield
    finally:
        tf.enable_v2_behavior()


@program
def app_flags_resume_training(tf: Any, target: str) -> Any:
    with _v1_behavior(tf), tempfile.TemporaryDirectory() as tmp:
        flags = tf.app.flags
        FLAGS = flags.FLAGS
        # A script defines its flags once at import; the probe runs it several times.
        if "p2_learning_rate" not in FLAGS:
            flags.DEFINE_float("p2_learning_rate", 0.1, "Initial learning rate.")
            flags.DEFINE_integer("p2_steps", 3, "Steps per run.")
            flags.DEFINE_string("p2_train_dir", "/tmp/unused", "Checkpoint directory.")
            flags.DEFINE_boolean("p2_resume", False, "Restore from the latest checkpoint.")
        printed: list[Any] = []
        rng = np.random.RandomState(37)
        x_np = rng.randn(10, 2).astype(np.float32)
        y_np = x_np @ np.array([[3.0], [-1.0]], dtype=np.float32) + 0.5

        def main(argv: Any) -> int:
            with tf.Graph().as_default():
                global_step = tf.Variable(0, name="global_step", trainable=False)
                x = tf.placeholder(tf.float32, [None, 2])
                y = tf.placeholder(tf.float32, [None, 1])
                w = tf.Variable(tf.zeros([2, 1]), name="w")
                b = tf.Variable(0.0, name="b")
                loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
                lr = tf.train.exponential_decay(
                    FLAGS.p2_learning_rate, global_step, 2, 0.5, staircase=True
                )
                train = tf.train.GradientDescentOptimizer(lr).minimize(
                    loss, global_step=global_step
                )
                saver = tf.train.Saver()
                with tf.Session(target) as sess:
                    ckpt = tf.train.get_checkpoint_state(FLAGS.p2_train_dir)
                    if FLAGS.p2_resume and ckpt and ckpt.model_checkpoint_path:
                        saver.restore(sess, ckpt.model_checkpoint_path)
                        printed.append(("restored", os.path.basename(ckpt.model_checkpoint_path)))
                    else:
                        sess.run(tf.global_variables_initializer())
                    for _ in range(FLAGS.p2_steps):
                        # The step is read after the update: read in the same run, it
                        # races with the increment.
                        _, lr_val, loss_val = sess.run([train, lr, loss], {x: x_np, y: y_np})
                        printed.append((sess.run(global_step), lr_val, loss_val))
                    saver.save(sess, os.path.join(FLAGS.p2_train_dir, "model.ckpt"), global_step)
                    printed.append(sess.run([w, b]))
            return 0

        for argv in (
            ["train.py", f"--p2_train_dir={tmp}", "--p2_learning_rate=0.2", "--p2_resume=false"],
            ["train.py", f"--p2_train_dir={tmp}", "--p2_resume", "--p2_steps=4"],
            ["train.py", f"--p2_train_dir={tmp}", "--p2_steps=3", "--p2_resume=false"],
        ):
            try:
                tf.app.run(main=main, argv=argv)
            except SystemExit as e:
                printed.append(("exit", e.code))
        return printed


__all__ = ["CLUSTER_ONLY", "PROGRAMS"]
