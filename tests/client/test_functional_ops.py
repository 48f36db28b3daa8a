"""tf.map_fn, tf.foldl, tf.foldr and tf.scan against tensorflow.compat.v1: TF's v1
control-flow graph (graph_diff) and TF's values, for single tensors, nested elements,
initializers, reverse scans, dynamic lengths and gradients through the loop."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, run_both

X = np.arange(8, dtype=np.float32).reshape(4, 2) / 4.0


def _v1(build):
    build.v1_control_flow = True
    return build


@_v1
def _map_static(api):
    x = api.placeholder(api.float32, [3, 2], name="x")
    api.map_fn(lambda e: e * 2.0, x)


@_v1
def _map_nested_dtype(api):
    x = api.placeholder(api.float32, [None, 2], name="x")
    api.map_fn(
        lambda e: (api.reduce_sum(e[0]), api.cast(e[1], api.int32)),
        (x, x),
        dtype=(api.float32, api.int32),
    )


@_v1
def _folds(api):
    x = api.placeholder(api.float32, [4], name="x")
    api.foldl(lambda a, e: a + e, x)
    api.foldr(lambda a, e: a * e, x, initializer=api.constant(1.0))


@_v1
def _scans(api):
    x = api.placeholder(api.float32, [4, 2], name="x")
    api.scan(lambda a, e: a + e, x)
    api.scan(
        lambda a, e: (a[0] + e, a[1] * 2),
        x,
        initializer=(api.zeros([2]), api.constant(1)),
        reverse=True,
    )


@pytest.mark.parametrize("build", [_map_static, _map_nested_dtype, _folds, _scans])
def test_builds_tensorflows_v1_graph(build):
    ours, theirs = build_both(build)
    assert graph_diff(ours, theirs) == []


def test_values_match_tensorflow():
    def build(api):
        x = api.placeholder(api.float32, [None, 2])
        outs = [
            api.map_fn(lambda e: e * e + 1.0, x),
            api.map_fn(
                lambda e: {"s": api.reduce_sum(e[0]), "m": e[1] * 2.0},
                (x, x),
                dtype={"s": api.float32, "m": api.float32},
            ),  # fmt: skip
            api.map_fn(lambda e: api.cast(api.reduce_max(e), api.int32), x, dtype=api.int32),
            api.foldl(lambda a, e: a * 0.5 + e, x),
            api.foldl(lambda a, e: a + api.reduce_sum(e), x, initializer=api.constant(10.0)),
            api.foldr(lambda a, e: a * 0.5 + e, x),
            api.foldr(
                lambda a, e: (a[0] + e[0], a[1] - e[1]),
                (x, x),
                initializer=(api.zeros([2]), api.ones([2])),
            ),  # fmt: skip
            api.scan(lambda a, e: a + e, x),
            api.scan(lambda a, e: a * e, x, reverse=True),
            api.scan(
                lambda a, e: (a[0] + api.reduce_sum(e), a[1] + 1),
                x,
                initializer=(api.constant(0.0), api.constant(0)),
            ),  # fmt: skip
        ]
        return lambda sess: sess.run(outs, {x: X})

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs)


def test_gradients_through_map_fn_and_scan_match_tensorflow():
    def build(api):
        x = api.constant(X)
        w = api.Variable([[1.0, -2.0], [0.5, 3.0]], name="w")
        m = api.map_fn(lambda e: api.tanh(api.matmul(e[None, :], w))[0], x)
        s = api.scan(lambda a, e: a * 0.9 + e, m)
        f = api.foldl(lambda a, e: a + api.reduce_sum(e * e), s, initializer=api.constant(0.0))
        grads = api.gradients(f, [w, x])
        return lambda sess: sess.run([m, s, f, grads])

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


def test_static_shapes_and_refusals():
    import client as tf

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [5, 3])
        assert tf.map_fn(lambda e: e[:2], x).shape.as_list() == [5, 2]
        assert tf.scan(lambda a, e: a + e, x).shape.as_list() == [5, 3]
        with pytest.raises(ValueError, match="1\\+ dimensional Tensors, not scalars"):
            tf.map_fn(lambda e: e, tf.constant(1.0))
        with pytest.raises(TypeError, match="not callable"):
            tf.foldl(1, x)
