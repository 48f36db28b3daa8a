"""Client tf.data with SparseTensor elements vs TensorFlow: from_tensor_slices and
from_tensors of a SparseTensor (or SparseTensorValue), map/filter functions taking and
returning SparseTensors, batch, and both TF1 iterators give TensorFlow's element specs,
output classes, elements and end; the graph is TensorFlow's (SerializeManySparse /
SerializeSparse to DT_VARIANT components, DeserializeSparse after IteratorGetNext and in
function bodies, the known dense shape spliced back as TF does); padded_batch of sparse
elements fails as TensorFlow's."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.test_data import _assert_same_elements, _run, _spec, _wire

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

INDICES = [[0, 0], [1, 2], [1, 3], [3, 1]]
DENSE = np.array([10, 20, 30, 40], np.int32)


def _sparse(tf):
    return tf.SparseTensor(INDICES, np.array([1.5, 2.0, -3.0, 4.0], np.float32), [4, 5])


def _slices(tf):
    return tf.data.Dataset.from_tensor_slices(_sparse(tf))


def _slices_value_3d(tf):
    value = tf.SparseTensorValue(
        [[0, 1, 1], [2, 0, 0], [2, 1, 2]], np.array([b"a", b"b", b"c"], object), [3, 2, 4]
    )
    return tf.data.Dataset.from_tensor_slices(value)


def _tuple_map_batch(tf):
    ds = tf.data.Dataset.from_tensor_slices((_sparse(tf), DENSE))
    scale = tf.constant(2.0, name="scale")

    def double(s, x):
        return tf.SparseTensor(s.indices, s.values * scale, s.dense_shape), x + 1

    return ds.map(double).batch(3)


def _batch_drop_remainder(tf):
    return _slices(tf).batch(2, drop_remainder=True)


def _from_tensors_repeat(tf):
    return tf.data.Dataset.from_tensors(_sparse(tf)).repeat(2)


def _filter_on_values(tf):
    return _slices(tf).filter(lambda s: tf.size(s.values) > 0)


def _map_dense_to_sparse(tf):
    def to_sparse(x):
        return tf.SparseTensor([[0], [2]], tf.stack([x, x * 2]), [3])

    return tf.data.Dataset.from_tensor_slices(DENSE).map(to_sparse).batch(2)


def _dict_of_sparse_and_dense(tf):
    ds = tf.data.Dataset.from_tensor_slices({"s": _sparse(tf), "d": DENSE})
    return ds.map(lambda e: {"s": e["s"], "n": tf.size(e["s"].values) + e["d"]})


PIPELINES = {
    f.__name__[1:]: f
    for f in (
        _slices,
        _slices_value_3d,
        _tuple_map_batch,
        _batch_drop_remainder,
        _from_tensors_repeat,
        _filter_on_values,
        _map_dense_to_sparse,
        _dict_of_sparse_and_dense,
    )
}


def _classes(tf, ds):
    return [c.__name__ for c in tf_real.nest.flatten(tf.data.get_output_classes(ds))]


@pytest.mark.parametrize("name", sorted(PIPELINES))
@pytest.mark.parametrize("initializable", [False, True])
def test_sparse_elements_match_tensorflow(name, initializable):
    body = PIPELINES[name]
    ours, our_spec, our_static, our_kinds = _run(client, body, initializable)
    theirs, tf_spec, tf_static, tf_kinds = _run(tf1, body, initializable)
    assert our_spec == tf_spec
    assert our_static == tf_static
    assert our_kinds == tf_kinds
    assert len(theirs) > 0
    _assert_same_elements(ours, theirs)


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_element_specs_and_classes_match_tensorflow(name):
    got = []
    for tf in (client, tf1):
        with tf.Graph().as_default():
            ds = PIPELINES[name](tf)
            spec = tf_real.nest.flatten(ds.element_spec)
            got.append(([type(s).__name__ for s in spec], _spec(tf, ds), _classes(tf, ds)))
    assert got[0] == got[1]


def _graph(tf, body):
    g = tf.Graph()
    with g.as_default():
        it = tf.data.make_initializable_iterator(body(tf))
        it.get_next()
    return g.as_graph_def()


_ATTRS = ("_class", "output_types", "output_shapes", "Toutput_types", "out_type", "T",
          "dtype", "Tserialized", "num", "N", "value")  # fmt: skip


@pytest.mark.parametrize("name", ["tuple_map_batch", "slices_value_3d", "map_dense_to_sparse"])
def test_graph_is_tensorflows(name):
    ours, theirs = _graph(client, PIPELINES[name]), _graph(tf1, PIPELINES[name])
    assert [(n.name, n.op, list(n.input)) for n in ours.node] == [
        (n.name, n.op, list(n.input)) for n in theirs.node
    ]
    for a, b in zip(ours.node, theirs.node):
        for key in _ATTRS:
            assert (key in a.attr) == (key in b.attr), (a.name, key)
            if key in a.attr:
                assert _wire(a.attr[key]) == _wire(b.attr[key]), (a.name, key)

    def bodies(gd):
        # Arguments by position: TF 2.21 names a captured tensor's argument after its first
        # consumer ("mul_scale"), this client after the tensor ("scale").
        out = []
        for f in gd.library.function:
            args = {a.name: f"arg{i}" for i, a in enumerate(f.signature.input_arg)}
            nodes = [(n.name, n.op, [args.get(i, i) for i in n.input]) for n in f.node_def]
            types = [a.type for a in f.signature.input_arg]
            out.append((types, nodes, sorted(f.ret.items())))
        return sorted(out)

    assert bodies(ours) == bodies(theirs)


def test_padded_batch_of_sparse_elements_fails_as_tensorflows():
    for tf in (client, tf1):
        with tf.Graph().as_default(), pytest.raises(TypeError, match="padded_batch` is only"):
            _slices(tf).padded_batch(2)
