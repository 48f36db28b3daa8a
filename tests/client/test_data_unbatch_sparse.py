"""Client tf.data unbatch() of elements that are or contain SparseTensors, against
TensorFlow: TF's normalize_to_dense MapDataset (SerializeManySparse of each batch to an
[N, 3] variant) before UnbatchDataset, the same graph and function bodies, element specs,
elements and end; unbatch after batch gives back the rows."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client import test_data_sparse as sparse_tests
from tests.client.test_data import _assert_same_elements, _run
from tests.client.test_data_sparse import DENSE, _sparse

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module


def _from_tensors_unbatch(tf):
    return tf.data.Dataset.from_tensors((_sparse(tf), DENSE)).unbatch()


def _batch_unbatch(tf):
    return tf.data.Dataset.from_tensor_slices(_sparse(tf)).batch(3).unbatch()


def _dict_unbatch(tf):
    ds = tf.data.Dataset.from_tensor_slices({"s": _sparse(tf), "d": DENSE}).batch(2)
    return ds.unbatch().map(lambda e: {"s": e["s"], "n": tf.size(e["s"].values) + e["d"]})


def _value_3d_unbatch(tf):
    value = tf.SparseTensorValue(
        [[0, 1, 1], [2, 0, 0], [2, 1, 2]], np.array([b"a", b"b", b"c"], object), [3, 2, 4]
    )
    return tf.data.Dataset.from_tensors(value).unbatch()


PIPELINES = {
    f.__name__[1:]: f
    for f in (_from_tensors_unbatch, _batch_unbatch, _dict_unbatch, _value_3d_unbatch)
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
@pytest.mark.parametrize("initializable", [False, True])
def test_unbatched_sparse_elements_match_tensorflow(name, initializable):
    body = PIPELINES[name]
    ours, our_spec, our_static, our_kinds = _run(client, body, initializable)
    theirs, tf_spec, tf_static, tf_kinds = _run(tf1, body, initializable)
    assert (our_spec, our_static, our_kinds) == (tf_spec, tf_static, tf_kinds)
    assert len(theirs) > 0
    _assert_same_elements(ours, theirs)


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_unbatch_graph_is_tensorflows(name, monkeypatch):
    # test_data_sparse's comparison (nodes, key attrs, function bodies) on these pipelines
    monkeypatch.setattr(sparse_tests, "PIPELINES", PIPELINES)
    sparse_tests.test_graph_is_tensorflows(name)


def test_unbatch_of_scalar_sparse_fails_as_tensorflows():
    messages = []
    for tf in (client, tf1):
        with tf.Graph().as_default():
            scalar = tf.SparseTensor(np.zeros([0, 0], np.int64), [1.0][:0], [])
            ds = tf.data.Dataset.from_tensors((scalar, [1, 2]))
            with pytest.raises(ValueError, match="only supported for rank >= 1") as e:
                ds.unbatch()
            messages.append(str(e.value))
            dense = tf.data.Dataset.from_tensors((_sparse(tf), 1))
            with pytest.raises(ValueError, match="Cannot unbatch an input with scalar"):
                dense.unbatch()
    assert messages[0] == messages[1]


def test_sparse_leading_dimension_is_not_checked_while_building_as_tensorflows():
    # A SparseTensor component travels as a variant of unknown shape: only a run finds
    # that its 4 rows do not match the dense component's 2.
    for tf in (client, tf1):
        with tf.Graph().as_default():
            ds = tf.data.Dataset.from_tensors((_sparse(tf), [1, 2])).unbatch()
            nxt = tf.data.make_one_shot_iterator(ds).get_next()
            with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError) as e:
                sess.run(nxt)
            assert "same batch size in each component" in e.value.message
