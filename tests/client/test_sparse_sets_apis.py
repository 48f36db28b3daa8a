"""Client, tf.sparse's concat/reshape/slice/split/softmax/maximum/minimum, tf.sets and
sparse serialization: each program builds the GraphDef tf.compat.v1 builds (node names,
ops, inputs, key attrs), runs to TensorFlow's values, and the registered gradients
(SparseSoftmax, SparseSlice) equal TensorFlow's."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, run_both

IDX = [[0, 1], [1, 0], [1, 3], [3, 2]]
VALS = [1.5, -2.0, 3.25, 4.0]


def _sp(api, values=VALS, indices=IDX, shape=(4, 5)):
    return api.SparseTensor(indices, values, list(shape))


def _fed(api):
    """A SparseTensor whose values come from a placeholder (its shape known)."""
    v = api.placeholder(api.float32, [4], name="v")
    return _sp(api, v), v


def _parts(sp):
    return [sp.indices, sp.values, sp.dense_shape]


FEED = np.array(VALS, np.float32)


def _concat(api):
    a, b = _sp(api), _sp(api, [7.0, 8.0], [[0, 0], [2, 1]], (4, 2))
    return _parts(api.sparse_concat(1, [a, b]))


def _concat_v1_names(api):
    a, b = _sp(api), _sp(api, [7.0, 8.0], [[0, 0], [1, 1]], (2, 5))
    return _parts(api.sparse.concat(None, [a, b], concat_dim=0, name="joined"))


def _concat_expand(api):
    a, b = _sp(api), _sp(api, [7.0, 8.0], [[0, 0], [2, 6]], (3, 7))
    return _parts(api.sparse_concat(0, [a, b], expand_nonconcat_dim=True))


def _concat_expand_last(api):
    shape = api.placeholder(api.int64, [2], name="shape")
    a, b = _sp(api), api.SparseTensor([[0, 0], [5, 1]], [7.0, 8.0], shape)
    return _parts(api.sparse_concat(-1, [a, b], expand_nonconcat_dim=True))


def _reshape(api):
    return _parts(api.sparse_reshape(_sp(api), [2, -1]))


def _reshape_dynamic(api):
    shape = api.placeholder(api.int64, [3], name="shape")
    out = api.sparse.reshape(_sp(api), shape)
    return _parts(out)


def _slice(api):
    return _parts(api.sparse_slice(_sp(api), [1, 0], [3, 4]))


def _split(api):
    return [_parts(s) for s in api.sparse_split(sp_input=_sp(api), num_split=2, axis=1)]


def _split_dim(api):
    parts = api.sparse.split(sp_input=_sp(api), num_split=3, axis=0, name="cut")
    return [_parts(s) for s in parts]


def _softmax(api):
    return _parts(api.sparse_softmax(_sp(api)))


def _maximum(api):
    b = _sp(api, [0.5, -9.0, 2.0], [[0, 1], [0, 2], [3, 2]])
    return [_parts(api.sparse_maximum(_sp(api), b)), _parts(api.sparse.minimum(_sp(api), b))]


def _sets(api):
    a = api.constant([[1, 2, 2, 3], [4, 4, 5, 6]], api.int64)
    b = api.constant([[2, 7, 3, 3], [9, 9, 9, 6]], api.int64)
    sb = api.SparseTensor([[0, 0], [0, 2], [1, 1]], api.constant([2, 9, 6], api.int64), [2, 3])
    sa = api.SparseTensor([[0, 1], [1, 0]], api.constant([3, 4], api.int64), [2, 4])
    return [
        _parts(api.sets.intersection(a, b)),
        _parts(api.sets.union(a, sb)),
        _parts(api.sets.difference(sa, a)),
        _parts(api.sets.set_difference(a, b, aminusb=False)),
        _parts(api.sets.set_union(sa, sb)),
        api.sets.size(sb),
        api.sets.set_size(api.sets.set_intersection(a, b)),
    ]


def _serialize(api):
    sp = _sp(api)
    one = api.serialize_sparse(sp)
    many = api.serialize_many_sparse(sp)
    back = api.deserialize_many_sparse(many, api.float32, rank=2)
    io_many = api.io.serialize_many_sparse(sp, name="io_many")
    return [one, many, io_many, _parts(back)]


def _strings(api):
    sp = _sp(api, api.constant([b"a", b"b", b"c", b"d"]))
    a = api.constant([[b"x", b"a"], [b"b", b"b"], [b"q", b"r"], [b"d", b"e"]])
    dense = api.sparse.to_dense(sp, default_value=b"")
    return [_parts(api.sets.union(dense, sp)), api.serialize_many_sparse(sp), _parts(
        api.sparse.slice(sp, [1, 1], [3, 3])), _parts(api.sets.intersection(a, dense))]  # fmt: skip


PROGRAMS = {
    "concat": _concat,
    "concat_v1_names": _concat_v1_names,
    "concat_expand": _concat_expand,
    "concat_expand_last": _concat_expand_last,
    "reshape": _reshape,
    "reshape_dynamic": _reshape_dynamic,
    "slice": _slice,
    "split": _split,
    "split_dim": _split_dim,
    "softmax": _softmax,
    "maximum_minimum": _maximum,
    "sets": _sets,
    "serialize": _serialize,
    "strings": _strings,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_graph_matches_tensorflow(name):
    ours, theirs = build_both(PROGRAMS[name])
    assert graph_diff(ours, theirs) == []


def _feeds(api):
    g = api.get_default_graph()
    feeds = {}
    for op in g.get_operations():
        if op.type == "Placeholder" and op.name == "shape":
            n = op.outputs[0].shape.as_list()[0]
            feeds[op.outputs[0]] = [4, 6] if n == 2 else [2, 2, 5]
    return feeds


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_match_tensorflow(name):
    def build(api):
        fetches = PROGRAMS[name](api)
        feeds = _feeds(api)
        return lambda sess: sess.run(fetches, feeds)

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-6, atol=1e-6)


def _softmax_grad(api):
    v = api.placeholder(api.float64, [6], name="v")
    sp = api.SparseTensor([[0, 0, 1], [0, 0, 3], [0, 2, 0], [1, 1, 1], [1, 1, 2], [1, 1, 4]], v,
                          [2, 3, 5])  # fmt: skip
    out = api.sparse.softmax(sp)
    w = api.constant(np.arange(1.0, 7.0))
    (g,) = api.gradients(api.reduce_sum(out.values * w), [v])
    return v, [out.values, g]


def _slice_grad(api):
    v = api.placeholder(api.float64, [4], name="v")
    out = api.sparse.slice(_sp(api, v), [1, 0], [3, 3])
    (g,) = api.gradients(api.reduce_sum(out.values * out.values), [v])
    return v, [out.values, g]


@pytest.mark.parametrize("program", [_softmax_grad, _slice_grad], ids=["softmax", "slice"])
def test_gradients_match_tensorflow(program):
    feed = {"softmax": np.array([0.5, -1.0, 2.0, 3.0, 0.25, -2.0]),
            "slice": np.array(VALS)}  # fmt: skip

    def build(api):
        v, fetches = program(api)
        values = feed["softmax" if program is _softmax_grad else "slice"]
        return lambda sess: sess.run(fetches, {v: values})

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)
    g_ours, g_theirs = build_both(lambda api: program(api))
    assert graph_diff(g_ours, g_theirs) == []


def test_not_differentiable_as_tensorflow():
    g = client.Graph()
    with g.as_default():
        v = client.placeholder(client.float32, [4])
        a, b = _sp(client, v), _sp(client, [1.0, 2.0], [[0, 0], [1, 1]], (4, 5))
        joined = client.sparse_concat(0, [a, b])
        assert client.gradients(client.reduce_sum(joined.values), [v]) == [None]
        biggest = client.sparse_maximum(a, b)
        with pytest.raises(NotImplementedError, match="SparseSparseMaximum"):
            client.gradients(client.reduce_sum(biggest.values), [v])


def test_static_shapes_as_tensorflow():
    import tensorflow as tf

    def shapes(api):
        sp = _sp(api)
        sp_int = _sp(api, api.constant([1, 2, 3, 4], api.int64))
        return [
            api.sparse_concat(1, [sp, sp]).shape,
            api.sparse_reshape(sp, [2, -1]).shape,
            api.serialize_many_sparse(sp).shape,
            api.sparse_softmax(sp).values.shape,
            api.sets.union(api.constant([[1, 2]]), api.constant([[3, 4]])).indices.shape,
            *(t.shape for t in _parts(api.sparse_slice(sp, [0, 0], [2, 2]))),
            *(t.shape for t in _parts(api.sparse_split(sp_input=sp, num_split=2, axis=0)[1])),
            *(t.shape for t in _parts(api.sparse_maximum(sp, sp))),
            *(
                t.shape
                for t in _parts(api.sets.intersection(api.constant([[1]], api.int64), sp_int))
            ),
            *(t.shape for t in _parts(api.sets.union(sp_int, sp_int))),
            api.sets.size(sp_int).shape,
            *(
                t.shape
                for t in _parts(
                    api.deserialize_many_sparse(api.serialize_many_sparse(sp), api.float32, rank=2)
                )
            ),
            api.serialize_sparse(sp).shape,
        ]

    with client.Graph().as_default():
        ours = [s.as_list() if s.ndims is not None else None for s in shapes(client)]
    with tf.Graph().as_default():
        theirs = [s.as_list() if s.ndims is not None else None for s in shapes(tf.compat.v1)]
    assert ours == theirs


def test_python_errors_as_tensorflow():
    import tensorflow as tf

    for api in (client, tf.compat.v1):
        graph = client.Graph() if api is client else tf.Graph()
        with graph.as_default():
            with pytest.raises(ValueError, match="Keyword arguments are required"):
                api.sparse_split(_sp(api), 2, 1)
            with pytest.raises(ValueError, match=r"Cannot reshape a tensor with 20 elements"):
                api.sparse_reshape(_sp(api), [3, 3])
            with pytest.raises(ValueError, match="At most one dimension can be inferred"):
                api.sparse_reshape(_sp(api), [-1, -1])
            with pytest.raises(TypeError, match="Types don't match"):
                api.sets.union(api.constant([[1]]), api.constant([[1]], api.int64))
