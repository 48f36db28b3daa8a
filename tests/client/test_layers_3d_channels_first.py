"""channels_first (NCDHW) for tf.compat.v1.layers conv3d, conv3d_transpose, max_pooling3d,
average_pooling3d and the tf.nn 3-D ops beneath, against TensorFlow 2.21: the same graphs
(node names, ops, inputs, attrs, data_format included), the same values where TF's CPU
kernels run them (the pooling layers transpose to NDHWC), and the same InvalidArgument
errors, naming the node, where they do not (Conv3D and its transpose on NCDHW)."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.graph_sweep_cases import _layer_case
from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, need_tf_keras, run_both

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True

X5 = np.random.RandomState(5).randn(2, 3, 4, 5, 6).astype(np.float32)  # N, C, D, H, W


@pytest.fixture(autouse=True)
def _tf_keras():
    need_tf_keras()


def _data_formats(graph_def) -> list[tuple[str, bytes]]:
    return [(n.name, n.attr["data_format"].s) for n in graph_def.node if "data_format" in n.attr]


CF = "channels_first"
GRAPH_CASES = {
    "conv3d": _layer_case(
        lambda api, x: api.layers.conv3d(x, 2, (2, 3, 2), strides=(1, 2, 1), data_format=CF),
        X5.shape,
    ),
    "conv3d_transpose": _layer_case(
        lambda api, x: api.layers.conv3d_transpose(x, 2, 2, strides=2, data_format=CF),
        X5.shape,
    ),
    "conv3d_transpose_same_unknown_batch": _layer_case(
        lambda api, x: api.layers.conv3d_transpose(
            x, 3, (2, 3, 2), strides=(1, 2, 2), padding="same", data_format=CF
        ),
        (None, *X5.shape[1:]),
    ),
    "max_pooling3d": _layer_case(
        lambda api, x: api.layers.max_pooling3d(x, 2, 1, data_format=CF), X5.shape
    ),
    "average_pooling3d_same": _layer_case(
        lambda api, x: api.layers.average_pooling3d(
            x, (1, 2, 3), 2, padding="same", data_format=CF
        ),
        X5.shape,
    ),
    "nn_max_pool3d_ncdhw": _layer_case(
        lambda api, x: api.nn.max_pool3d(x, 2, 2, "SAME", data_format="NCDHW"), X5.shape
    ),
    "nn_avg_pool3d_ncdhw": _layer_case(
        lambda api, x: api.nn.avg_pool3d(x, [1, 2, 2], [2, 1, 1], "VALID", data_format="NCDHW"),
        X5.shape,
    ),
}


@pytest.mark.parametrize("name", sorted(GRAPH_CASES))
def test_graph_matches_tf_including_data_format(name):
    ours, theirs = build_both(GRAPH_CASES[name])
    assert graph_diff(ours, theirs) == []
    assert _data_formats(ours) == _data_formats(theirs)


def _pool_program(tf):
    x = tf.placeholder(tf.float32, X5.shape, name="x")
    h = tf.layers.max_pooling3d(x, 2, 1, padding="same", data_format=CF)
    y = tf.layers.average_pooling3d(h, (2, 1, 3), (1, 2, 1), data_format=CF)
    loss = tf.reduce_sum(tf.square(y) * y)
    grads = tf.gradients(loss, [x])
    return lambda sess: sess.run([y, grads], {x: X5})


def test_channels_first_pooling_values_and_gradients_like_tf():
    ours, theirs, _, _ = run_both(_pool_program)
    assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


RUNTIME_REFUSED = {
    "conv3d/Conv3D": lambda tf, x: tf.layers.conv3d(x, 2, 2, data_format=CF),
    "conv3d_transpose/conv3d_transpose": lambda tf, x: tf.layers.conv3d_transpose(
        x, 2, 2, strides=2, data_format=CF
    ),
    "MaxPool3D": lambda tf, x: tf.nn.max_pool3d(x, 2, 1, "VALID", data_format="NCDHW"),
}


@pytest.mark.parametrize("node", sorted(RUNTIME_REFUSED))
def test_cpu_refuses_ncdhw_convolution_as_tf_does(node):
    """TF builds these NCDHW nodes and its CPU kernels refuse them when run: so do ours,
    with TF's message, naming the node."""
    g = tf1.Graph()
    with g.as_default():
        x = tf1.placeholder(tf1.float32, X5.shape, name="x")
        y = RUNTIME_REFUSED[node](tf1, x)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            with pytest.raises(tf1.errors.InvalidArgumentError) as theirs:
                sess.run(y, {x: X5})
    gc = client.Graph()
    with gc.as_default():
        x = client.placeholder(client.float32, X5.shape, name="x")
        y = RUNTIME_REFUSED[node](client, x)
        with client.Session() as sess:
            sess.run(client.global_variables_initializer())
            with pytest.raises(client.errors.InvalidArgumentError) as ours:
                sess.run(y, {x: X5})
    assert gc.get_operation_by_name(node) is not None
    assert ours.value.message.endswith(f"[[{{{{node {node}}}}}]]")
    assert theirs.value.message.endswith(ours.value.message)
