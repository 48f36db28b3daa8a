"""Client tf.histogram_fixed_width and tf.io / tf.encode_base64 / decode_base64 against
tensorflow.compat.v1: the same graph nodes (names, op types, inputs, attrs), the same
static shapes, and the same values from an in-process session."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import client

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1

VALUES = np.array([[-1.0, 0.0, 1.5], [2.0, 5.0, 15.0]], np.float32)
TEXTS = np.array([b"", b"ab", b"\xff\xfe?"], dtype=object)


def _nodes(graph: Any) -> list[tuple[str, str, list[str], list[tuple[str, str]]]]:
    return [
        (n.name, n.op, list(n.input), sorted((k, str(v)) for k, v in n.attr.items()))
        for n in graph.as_graph_def().node
    ]


def _build(api: Any) -> tuple[dict, list]:
    values = api.placeholder(api.float32, [None, 3], name="values")
    texts = api.placeholder(api.string, [None], name="texts")
    nbins = api.placeholder_with_default(np.int32(4), [], name="nbins")
    fetches = [
        api.histogram_fixed_width(values, [0.0, 5.0], nbins=5),
        api.histogram_fixed_width(values, [0.0, 5.0], nbins=nbins, dtype=api.int64, name="h"),
        api.encode_base64(texts),
        api.io.decode_base64(api.io.encode_base64(texts, pad=True), name="dec"),
        api.decode_base64(api.constant([b"YQ", b"YWI="])),
    ]
    return {values: VALUES, texts: TEXTS}, fetches


def test_graph_shapes_and_values_match_tensorflow() -> None:
    out = []
    for api in (client, tf1):
        g = api.Graph()
        with g.as_default():
            feed, fetches = _build(api)
            shapes = [t.shape.as_list() if t.shape.ndims is not None else None for t in fetches]
            with api.Session(graph=g) as sess:
                out.append((_nodes(g), shapes, sess.run(fetches, feed)))
    (ours_nodes, ours_shapes, ours_values), (tf_nodes, tf_shapes, tf_values) = out
    assert ours_nodes == tf_nodes
    assert ours_shapes == tf_shapes == [[5], [None], [None], [None], [2]]
    for a, b in zip(ours_values, tf_values):
        assert (a.dtype, a.shape) == (b.dtype, b.shape)
        np.testing.assert_array_equal(a, b)
    assert ours_values[0].tolist() == [2, 1, 1, 0, 2]
