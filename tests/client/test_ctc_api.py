"""Client CTC APIs against tensorflow.compat.v1: tf.nn.ctc_loss (time- and batch-major),
tf.nn.ctc_loss_v2 with SparseTensor labels and a blank that is not last, the greedy and
beam search decoders, and the gradient of the mean loss w.r.t. the logits build the same
graph nodes (names, ops, inputs, attrs) and static shapes, and give TensorFlow's values
from an in-process session; plus TF's Python-side errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import client

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1

T, B, C = 6, 3, 5
LABELS = [[1, 2], [3, 3, 1], [2]]
IX = np.array([[b, i] for b, s in enumerate(LABELS) for i in range(len(s))], np.int64)
VALS = np.array([v for s in LABELS for v in s], np.int32)
X = np.random.default_rng(4).standard_normal((T, B, C)).astype(np.float32)
SEQ = np.array([6, 5, 3], np.int32)


def _nodes(graph: Any) -> list[tuple[str, str, list[str], list[tuple[str, str]]]]:
    return [
        (n.name, n.op, list(n.input), sorted((k, str(v)) for k, v in n.attr.items()))
        for n in graph.as_graph_def().node
    ]


def _shape(t: Any) -> list | None:
    return t.shape.as_list() if t.shape.ndims is not None else None


def _build(api: Any) -> tuple[dict, list]:
    x = api.placeholder(api.float32, [T, B, C], name="x")
    ix = api.placeholder(api.int64, [None, 2], name="ix")
    vals = api.placeholder(api.int32, [None], name="vals")
    seq = api.placeholder(api.int32, [B], name="seq")
    labels = api.SparseTensor(ix, vals, api.constant([B, 3], api.int64))
    loss = api.nn.ctc_loss(labels, x, seq)
    batch_major = api.nn.ctc_loss(
        labels,
        api.transpose(x, [1, 0, 2]),
        seq,
        preprocess_collapse_repeated=True,
        ctc_merge_repeated=False,
        time_major=False,
    )
    v2 = api.nn.ctc_loss_v2(labels, x, None, seq, blank_index=0)
    grads = api.gradients(api.reduce_mean(loss), [x])
    (greedy,), greedy_lp = api.nn.ctc_greedy_decoder(x, seq)
    beams, beam_lp = api.nn.ctc_beam_search_decoder(x, seq, beam_width=4, top_paths=2)
    fetches = [loss, batch_major, v2, grads[0], greedy_lp, beam_lp]
    for sp in (greedy, *beams):
        fetches += [sp.indices, sp.values, sp.dense_shape]
    return {x: X, ix: IX, vals: VALS, seq: SEQ}, fetches


def test_graph_shapes_and_values_match_tensorflow() -> None:
    out = []
    for api in (client, tf1):
        g = api.Graph()
        with g.as_default():
            feed, fetches = _build(api)
            shapes = [_shape(t) for t in fetches]
            with api.Session(graph=g) as sess:
                out.append((_nodes(g), shapes, sess.run(fetches, feed)))
    (ours_nodes, ours_shapes, ours), (tf_nodes, tf_shapes, theirs) = out
    assert ours_nodes == tf_nodes
    assert ours_shapes == tf_shapes
    assert ours_shapes[:6] == [[B], [B], [B], [T, B, C], [B, 1], [B, 2]]
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert (a.dtype, a.shape) == (b.dtype, b.shape), i
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6, err_msg=str(i))
        else:
            np.testing.assert_array_equal(a, b, err_msg=str(i))


def test_gradient_of_mean_loss_matches_tensorflow_double() -> None:
    out = []
    for api in (client, tf1):
        with api.Graph().as_default() as g:
            x = api.constant(X.astype(np.float64))
            labels = api.SparseTensor(IX, VALS, [B, 3])
            loss = api.nn.ctc_loss(labels, x, SEQ, ignore_longer_outputs_than_inputs=True)
            (grad,) = api.gradients(api.reduce_mean(loss), [x])
            with api.Session(graph=g) as sess:
                out.append(sess.run([loss, grad]))
    for a, b in zip(*out):
        assert a.dtype == b.dtype == np.float64
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


def test_python_errors_match_tensorflow() -> None:
    for api in (client, tf1):
        with api.Graph().as_default():
            x = api.placeholder(api.float32, [T, B, C])
            seq = api.placeholder(api.int32, [B])
            with pytest.raises(TypeError, match="Expected argument `labels` to be a SparseTensor"):
                api.nn.ctc_loss(api.constant([[1]]), x, seq)
            labels = api.SparseTensor(IX, VALS, [B, 3])
            with pytest.raises(ValueError, match="Argument `blank_index` must be provided"):
                api.nn.ctc_loss_v2(labels, x, None, seq)
            with pytest.raises(ValueError, match="Shape must be rank 3 but is rank 2"):
                api.nn.ctc_greedy_decoder(x[0], seq)
            with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
                api.nn.ctc_loss(labels, x, api.placeholder(api.int32, [2]))


def test_half_logits_and_negative_blank_index_match_tensorflow() -> None:
    out = []
    for api in (client, tf1):
        g = api.Graph()
        with g.as_default():
            x = api.placeholder(api.float16, [T, B, C], name="x")
            labels = api.SparseTensor(IX, VALS, [B, 3])
            half = api.nn.ctc_loss(labels, logits=x, sequence_length=SEQ)
            x32 = api.placeholder(api.float32, [T, B, C], name="x32")
            v2 = api.nn.ctc_loss_v2(labels, x32, None, SEQ, blank_index=-3)
            with api.Session(graph=g) as sess:
                values = sess.run([half, v2], {x: X.astype(np.float16), x32: X})
            out.append((_nodes(g), _shape(half), values))
    assert out[0][:2] == out[1][:2]
    for a, b in zip(out[0][2], out[1][2]):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=2e-5)
