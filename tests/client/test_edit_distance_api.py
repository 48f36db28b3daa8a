"""Client tf.edit_distance against tensorflow.compat.v1: the same graph nodes (names, op
types, inputs, attrs), the same static shapes, the same values from an in-process session,
no gradient (TF's NotDifferentiable), and TF's TypeError for dense inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import client

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1

H_IX = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]], np.int64)
H_VALS = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
T_IX = np.array([[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 0]], np.int64)
T_VALS = np.array([1.0, 2.0, 5.0, 3.0], np.float32)


def _nodes(graph: Any) -> list[tuple[str, str, list[str], list[tuple[str, str]]]]:
    return [
        (n.name, n.op, list(n.input), sorted((k, str(v)) for k, v in n.attr.items()))
        for n in graph.as_graph_def().node
    ]


def _build(api: Any) -> tuple[dict, list, list]:
    ix = api.placeholder(api.int64, [None, 3], name="ix")
    vals = api.placeholder(api.float32, [None], name="vals")
    truth = api.SparseTensor(ix, vals, api.constant([2, 2, 2], api.int64))
    hyp = api.SparseTensorValue(H_IX, H_VALS, [2, 2, 3])
    fetches = [
        api.edit_distance(hyp, truth),
        api.edit_distance(hyp, hyp, normalize=False, name="self"),
        api.edit_distance(api.SparseTensor(H_IX, H_VALS, [2, 2, 3]), hyp),
    ]
    grads = api.gradients(fetches[0], [vals])
    return {ix: T_IX, vals: T_VALS}, fetches, grads


def test_graph_shapes_and_values_match_tensorflow() -> None:
    out = []
    for api in (client, tf1):
        g = api.Graph()
        with g.as_default():
            feed, fetches, grads = _build(api)
            shapes = [t.shape.as_list() if t.shape.ndims is not None else None for t in fetches]
            with api.Session(graph=g) as sess:
                out.append((_nodes(g), shapes, grads, sess.run(fetches, feed)))
    (ours_nodes, ours_shapes, ours_grads, ours_values) = out[0]
    (tf_nodes, tf_shapes, tf_grads, tf_values) = out[1]
    assert ours_nodes == tf_nodes
    assert ours_shapes == tf_shapes == [[2, 2], [2, 2], [2, 2]]
    assert ours_grads == tf_grads == [None]
    for a, b in zip(ours_values, tf_values):
        assert (a.dtype, a.shape) == (b.dtype, b.shape)
        np.testing.assert_array_equal(a, b)
    assert ours_values[0].tolist() == [[np.inf, 1.0], [0.5, 1.0]]


def test_dense_inputs_raise_tensorflows_type_error() -> None:
    with client.Graph().as_default():
        st = client.SparseTensor([[0, 0]], [1.0], [1, 1])
        with pytest.raises(TypeError, match="Hypothesis must be a SparseTensor."):
            client.edit_distance(client.constant([[1.0]]), st)
        with pytest.raises(TypeError, match="Truth must be a SparseTensor."):
            client.edit_distance(st, client.constant([[1.0]]))
