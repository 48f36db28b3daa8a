"""tf.nn.rnn_cell options against TensorFlow 2.21 (tf_keras legacy cells): LSTMCell with
sharded weights (num_unit_shards / num_proj_shards: kernels as PartitionedVariables from
fixed_size_partitioner), peepholes, cell and projection clipping, forget_bias and
state_is_tuple=False; BasicLSTMCell and GRUCell options. The same graph node for node
under dynamic_rnn and static_rnn, and the same outputs, states and gradients."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.graph_sweep_cases import _rnn_case
from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, need_tf_keras, run_both

pytest.importorskip("tensorflow")
TF_GRAPH_MODE = True

SEQ = np.random.RandomState(11).randn(2, 3, 4).astype(np.float32)


@pytest.fixture(autouse=True)
def _tf_keras():
    need_tf_keras()


CELLS = {
    "lstm_unit_shards": lambda api: api.nn.rnn_cell.LSTMCell(6, num_unit_shards=3),
    "lstm_all_options_sharded": lambda api: api.nn.rnn_cell.LSTMCell(
        6,
        use_peepholes=True,
        cell_clip=0.8,
        num_proj=4,
        proj_clip=0.3,
        num_unit_shards=2,
        num_proj_shards=3,
        forget_bias=0.5,
    ),
    "lstm_uneven_shards": lambda api: api.nn.rnn_cell.LSTMCell(5, num_unit_shards=4),
    "lstm_concat_state": lambda api: api.nn.rnn_cell.LSTMCell(
        5, num_proj=3, state_is_tuple=False, use_peepholes=True
    ),
    "basic_lstm_options": lambda api: api.nn.rnn_cell.BasicLSTMCell(
        4, forget_bias=0.25, state_is_tuple=False, activation=api.nn.relu
    ),
    "gru_options": lambda api: api.nn.rnn_cell.GRUCell(
        4,
        activation=api.nn.relu,
        kernel_initializer=api.constant_initializer(0.1),
        bias_initializer=api.constant_initializer(-0.2),
    ),
}
GRAPH_CASES = {
    **{f"{name}_dynamic": _rnn_case(cell) for name, cell in CELLS.items()},
    **{f"{name}_static": _rnn_case(cell, "static") for name, cell in CELLS.items()},
}


@pytest.mark.parametrize("name", sorted(GRAPH_CASES))
def test_graph_matches_tf(name):
    ours, theirs = build_both(GRAPH_CASES[name])
    assert graph_diff(ours, theirs) == []


@pytest.mark.parametrize("name", sorted(CELLS))
def test_dynamic_rnn_values_and_gradients_like_tf(name):
    def build(tf):
        x = tf.placeholder(tf.float32, SEQ.shape, name="x")
        cell = CELLS[name](tf)
        out, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        last = state[-1] if isinstance(state, tuple) else state
        loss = tf.reduce_sum(out * out) + tf.reduce_sum(last)
        grads = tf.gradients(loss, [x] + tf.trainable_variables())
        variables = [(v.name, v.shape.as_list()) for v in tf.trainable_variables()]
        return lambda sess: (sess.run([out, state, grads], {x: SEQ * 3}), variables)

    ours, theirs, _, _ = run_both(build)
    assert ours[1] == theirs[1]
    assert_close(ours[0], theirs[0], rtol=1e-5, atol=1e-5)
