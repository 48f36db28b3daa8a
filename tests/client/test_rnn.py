"""tf.nn.rnn_cell, static_rnn, dynamic_rnn and the bidirectional RNNs through `client`
against tensorflow.compat.v1 (v1 control flow, as a TF1 program's disable_v2_behavior
gives): the same variable names, outputs, final states and gradients (through the while
loop and its TensorArrays), and the same names for the output tensors."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.tf1_oracle import assert_close, need_tf_keras, run_both, tf1

TF_GRAPH_MODE = True

X = np.random.RandomState(0).randn(3, 5, 4).astype(np.float32)
LENGTHS = np.array([5, 2, 4], np.int32)


@pytest.fixture(autouse=True, scope="module")
def _v1_control_flow():
    need_tf_keras()
    from tensorflow.python.ops import control_flow_util

    was = control_flow_util.ENABLE_CONTROL_FLOW_V2
    tf1.disable_control_flow_v2()
    yield
    control_flow_util.ENABLE_CONTROL_FLOW_V2 = was


CELLS = {
    "basic_rnn": lambda tf: tf.nn.rnn_cell.BasicRNNCell(3),
    "basic_lstm": lambda tf: tf.nn.rnn_cell.BasicLSTMCell(3, forget_bias=0.5),
    "basic_lstm_concat": lambda tf: tf.nn.rnn_cell.BasicLSTMCell(3, state_is_tuple=False),
    "lstm": lambda tf: tf.nn.rnn_cell.LSTMCell(3),
    "lstm_peep_proj": lambda tf: tf.nn.rnn_cell.LSTMCell(
        4, use_peepholes=True, num_proj=2, cell_clip=0.5, proj_clip=0.3
    ),
    "gru": lambda tf: tf.nn.rnn_cell.GRUCell(3),
    "multi": lambda tf: tf.nn.rnn_cell.MultiRNNCell(
        [tf.nn.rnn_cell.BasicLSTMCell(3), tf.nn.rnn_cell.GRUCell(2)]
    ),
}


def _check(build):
    out, want, _, _ = run_both(build)
    assert_close(out, want, rtol=2e-5, atol=2e-6)


def _flat(x):
    if isinstance(x, (list, tuple)):
        return [y for v in x for y in _flat(v)]
    return [x]


def _grads(tf, outputs, state, x):
    loss = tf.reduce_sum(tf.square(_flat(outputs)[0])) + tf.add_n(
        [tf.reduce_sum(s) for s in _flat(state)]
    )
    return tf.gradients(loss, [x] + tf.trainable_variables())


@pytest.mark.parametrize("cell_name", sorted(CELLS))
@pytest.mark.parametrize("with_lengths", [False, True])
def test_dynamic_rnn_like_tf(cell_name, with_lengths):
    def build(tf):
        x = tf.placeholder(tf.float32, [3, 5, 4], name="x")
        lengths = tf.placeholder(tf.int32, [3], name="lengths") if with_lengths else None
        outputs, state = tf.nn.dynamic_rnn(
            CELLS[cell_name](tf), x, sequence_length=lengths, dtype=tf.float32
        )
        grads = _grads(tf, outputs, state, x)
        variables = [v.name for v in tf.global_variables()]
        names = [t.name for t in _flat([outputs, state])]
        feed = {x: X} if lengths is None else {x: X, lengths: LENGTHS}

        def steps(sess):
            return sess.run([outputs, state, grads], feed), variables, names

        return steps

    _check(build)


@pytest.mark.parametrize("cell_name", ["basic_lstm", "gru", "multi", "lstm_peep_proj"])
@pytest.mark.parametrize("with_lengths", [False, True])
def test_static_rnn_like_tf(cell_name, with_lengths):
    def build(tf):
        x = tf.placeholder(tf.float32, [3, 5, 4], name="x")
        lengths = tf.constant(LENGTHS) if with_lengths else None
        outputs, state = tf.nn.static_rnn(
            CELLS[cell_name](tf), tf.unstack(x, axis=1), sequence_length=lengths, dtype=tf.float32
        )
        grads = _grads(tf, outputs[-1], state, x)
        variables = [v.name for v in tf.global_variables()]

        def steps(sess):
            return sess.run([outputs, state, grads], {x: X}), variables

        return steps

    _check(build)


@pytest.mark.parametrize("with_lengths", [False, True])
def test_bidirectional_rnns_like_tf(with_lengths):
    def build(tf):
        x = tf.placeholder(tf.float32, [3, 5, 4], name="x")
        lengths = tf.constant(LENGTHS) if with_lengths else None
        (fw, bw), (s_fw, s_bw) = tf.nn.bidirectional_dynamic_rnn(
            tf.nn.rnn_cell.GRUCell(3),
            tf.nn.rnn_cell.BasicLSTMCell(2),
            x,
            sequence_length=lengths,
            dtype=tf.float32,
        )
        outs, st_fw, st_bw = tf.nn.static_bidirectional_rnn(
            tf.nn.rnn_cell.BasicRNNCell(2),
            tf.nn.rnn_cell.BasicRNNCell(2),
            tf.unstack(x, axis=1),
            sequence_length=lengths,
            dtype=tf.float32,
        )
        loss = (
            tf.reduce_sum(fw * fw)
            + tf.reduce_sum(bw)
            + tf.reduce_sum(s_bw.c)
            + tf.reduce_sum(outs[1])
            + tf.reduce_sum(st_bw)
        )
        grads = tf.gradients(loss, [x] + tf.trainable_variables())
        variables = [v.name for v in tf.global_variables()]

        def steps(sess):
            return sess.run([fw, bw, s_fw, s_bw, outs, st_fw, grads], {x: X}), variables

        return steps

    _check(build)


def test_dropout_wrapper_and_initial_state_like_tf():
    def build(tf):
        x = tf.placeholder(tf.float32, [3, 5, 4], name="x")
        keep = tf.placeholder_with_default(1.0, [], name="keep")
        cell = tf.nn.rnn_cell.DropoutWrapper(
            tf.nn.rnn_cell.LSTMCell(3), input_keep_prob=keep, output_keep_prob=keep
        )
        init = tf.nn.rnn_cell.LSTMStateTuple(tf.ones([3, 3]), tf.zeros([3, 3]))
        outputs, state = tf.nn.dynamic_rnn(cell, x, initial_state=init, time_major=False)
        grads = _grads(tf, outputs, state, x)

        def steps(sess):
            return sess.run([outputs, state, grads], {x: X})

        return steps

    _check(build)


def test_rnn_training_steps_like_tf():
    """An LSTM classifier trained 5 steps with Adam: the same losses."""

    def build(tf):
        x = tf.placeholder(tf.float32, [3, 5, 4], name="x")
        y = tf.constant([0, 1, 1])
        _, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(6), x, dtype=tf.float32)
        logits = tf.layers.dense(state.h, 2)
        loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
        train = tf.train.AdamOptimizer(0.05).minimize(loss)

        def steps(sess):
            return [sess.run([loss, train], {x: X})[0] for _ in range(5)]

        return steps

    _check(build)


@pytest.mark.parametrize("variational", [False, True])
@pytest.mark.parametrize("cell_name", ["lstm", "gru", "multi"])
def test_dropout_wrapper_masks_like_tf(variational, cell_name):
    """Seeded dropout on inputs, state (never an LSTM's c) and outputs, per step or
    variational (one [1, size] mask per run, shared over time and batch): TensorFlow's
    masks, outputs, states and gradients over two runs. Per-step masks go through
    static_rnn: inside TensorFlow's while loop the iterations' draws from the one
    dropout kernel run in no fixed order (parallel_iterations), so even TensorFlow's
    own results vary there."""

    def build(tf):
        tf.set_random_seed(21)
        x = tf.placeholder(tf.float32, [3, 5, 4], name="x")
        cell = tf.nn.rnn_cell.DropoutWrapper(
            CELLS[cell_name](tf),
            input_keep_prob=0.8,
            state_keep_prob=0.6,
            output_keep_prob=0.7,
            variational_recurrent=variational,
            input_size=4,
            dtype=tf.float32,
            seed=5,
        )
        if variational:
            outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        else:
            outputs, state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float32)
        grads = _grads(tf, outputs, state, x)

        def steps(sess):
            return [sess.run([outputs, state, grads], {x: X}) for _ in range(2)]

        return steps

    _check(build)
