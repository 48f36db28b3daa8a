"""SerializeSparse, SerializeManySparse, DeserializeSparse, DeserializeManySparse: the
serialized bytes equal TensorFlow's (strings and variants), round trips, and errors."""

from __future__ import annotations

import numpy as np
import pytest

from common import tensor as tensor_util
from common.dtypes import DataType
from common.errors import InvalidArgumentError

from .kernel_harness import assert_same_as_tf, run
from .signatures import assert_signature_matches_tensorflow, module_ops

OPS = module_ops("common.ops.sparse_serialize_ops")
I64 = np.int64
IDX = np.array([[0, 1], [1, 0], [1, 3], [3, 2]], I64)
SHAPE = np.array([4, 5], I64)
VALUES = {
    "float": np.array([1.5, -2.0, 3.25, 4.0], np.float32),
    "int64": np.array([7, -8, 9, 10], I64),
    "string": np.array([b"a", b"bc", b"", b"d"], object),
    "bool": np.array([True, False, True, True]),
}


def test_the_family_is_registered():
    assert (
        sorted(
            ["DeserializeManySparse", "DeserializeSparse", "SerializeManySparse", "SerializeSparse"]
        )
        == OPS
    )


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


@pytest.fixture(autouse=True)
def _tf():
    pytest.importorskip("tensorflow")


def _sparse(kind):
    return {"sparse_indices": IDX, "sparse_values": VALUES[kind], "sparse_shape": SHAPE}


@pytest.mark.parametrize("op", ["SerializeSparse", "SerializeManySparse"])
@pytest.mark.parametrize("kind", sorted(VALUES))
def test_serialize_bytes_equal_tensorflows(op, kind):
    assert_same_as_tf(op, _sparse(kind))


@pytest.mark.parametrize("op", ["SerializeSparse", "SerializeManySparse"])
@pytest.mark.parametrize("kind", ["float", "string"])
def test_serialize_variant_bytes_equal_tensorflows(op, kind):
    import tensorflow as tf

    inputs = _sparse(kind)
    want = getattr(tf.raw_ops, op)(**inputs, out_type=tf.variant)
    got = run(op, list(inputs.values()), {"out_type": DataType.DT_VARIANT})[0]
    assert got.shape == tuple(want.shape)
    ours = tensor_util.as_proto_tensor_content(got, DataType.DT_VARIANT).SerializeToString()
    assert ours == tf.io.serialize_tensor(want).numpy()


@pytest.mark.parametrize(
    "change",
    [
        {"sparse_indices": IDX[0]},
        {"sparse_values": VALUES["float"][None]},
        {"sparse_shape": SHAPE[None]},
        {"sparse_values": VALUES["float"][:3]},
        {"sparse_indices": IDX[::-1].copy()},
        {"sparse_indices": IDX + 4},
        {"sparse_indices": IDX[:, :1], "sparse_shape": SHAPE[:1]},
        {"sparse_indices": np.zeros((0, 2), I64), "sparse_values": np.zeros(0, np.float32)},
    ],
)
@pytest.mark.parametrize("op", ["SerializeSparse", "SerializeManySparse"])
def test_serialize_checks_as_tensorflow(op, change):
    assert_same_as_tf(op, {**_sparse("float"), **change})


def _tf_many(kind="float", **change):
    import tensorflow as tf

    return tf.raw_ops.SerializeManySparse(**{**_sparse(kind), **change}).numpy()


@pytest.mark.parametrize("op", ["DeserializeSparse", "DeserializeManySparse"])
@pytest.mark.parametrize("kind", sorted(VALUES))
def test_deserialize(op, kind):
    import tensorflow as tf

    many = _tf_many(kind)
    dtype = DataType(
        (tf.string if kind == "string" else tf.as_dtype(VALUES[kind].dtype)).as_datatype_enum
    )
    for serialized in (many, many[1], many[::-1].copy(), many[:1]):
        assert_same_as_tf(op, {"serialized_sparse": serialized}, {"dtype": dtype})
    if op == "DeserializeSparse":
        assert_same_as_tf(op, {"serialized_sparse": many.reshape(2, 2, 3)}, {"dtype": dtype})


@pytest.mark.parametrize(
    "serialized",
    [
        lambda m: m[:, :2].copy(),
        lambda m: m[:0],
        lambda m: np.array([[b"x", b"y", b"z"]], object),
        lambda m: np.stack([m[1], _tf_single(rank1=True)]),
        lambda m: np.array(b"x", object),
    ],
)
def test_deserialize_errors(serialized):
    inputs = {"serialized_sparse": serialized(_tf_many())}
    assert_same_as_tf("DeserializeSparse", inputs, {"dtype": DataType.DT_FLOAT})


def test_deserialize_wrong_dtype():
    inputs = {"serialized_sparse": _tf_many()}
    assert_same_as_tf("DeserializeSparse", inputs, {"dtype": DataType.DT_INT32})


def _tf_single(rank1=False):
    import tensorflow as tf

    shape = SHAPE[:1] if rank1 else SHAPE
    idx = IDX[:, :1] if rank1 else IDX
    return tf.raw_ops.SerializeSparse(sparse_indices=idx, sparse_values=VALUES["float"],
                                      sparse_shape=shape).numpy()  # fmt: skip


def test_deserialize_variants():
    """Our variant triples deserialize to what TensorFlow's variant triples do."""
    import tensorflow as tf

    inputs = _sparse("float")
    ours = run("SerializeManySparse", list(inputs.values()), {"out_type": DataType.DT_VARIANT})[0]
    want = tf.raw_ops.DeserializeSparse(
        serialized_sparse=tf.raw_ops.SerializeManySparse(**inputs, out_type=tf.variant),
        dtype=tf.float32,
    )
    got = run("DeserializeSparse", [ours], {"dtype": DataType.DT_FLOAT,
                                             "Tserialized": DataType.DT_VARIANT})  # fmt: skip
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w.numpy())
        assert g.dtype == w.numpy().dtype


# -- SparseTensorSliceDataset: the rows of a SparseTensor as tf.data elements ------------------


def _rows_of(dataset_variant) -> list:
    from common.ops.data import IteratorContext, dataset_of

    it = dataset_of(dataset_variant, "n").make_iterator()
    rows = []
    while (element := it.get_next(IteratorContext(None))) is not None:
        rows.append(element)
    return rows


def test_sparse_tensor_slice_dataset_signature():
    assert_signature_matches_tensorflow("SparseTensorSliceDataset")


IDX3 = np.array([[0, 0, 1], [0, 1, 0], [2, 0, 1], [2, 1, 1]], I64)


@pytest.mark.parametrize("kind", ["float", "string"])
@pytest.mark.parametrize(
    "indices, shape",
    [(IDX, SHAPE), (IDX3, [3, 2, 2]), (IDX[[0, 3], :1], [4])],
    ids=["2d", "3d", "1d"],
)
def test_sparse_tensor_slice_dataset_rows_as_tensorflow(kind, indices, shape):
    import tensorflow as tf

    values = VALUES[kind][: len(indices)]
    inputs = [np.asarray(indices, I64), values, np.asarray(shape, I64)]
    # TensorFlow's own SparseTensorSliceDataset kernel, its three components per row.
    ds = tf.compat.v1.data.Dataset.from_sparse_tensor_slices(tf.SparseTensor(*inputs))
    want = [[c.numpy() for c in row] for row in ds]
    got = _rows_of(run("SparseTensorSliceDataset", inputs)[0])
    assert len(got) == len(want)
    for g_row, w_row in zip(got, want):
        for g, w in zip(g_row, w_row):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize(
    "change",
    [
        {"values": VALUES["float"][:3]},
        {"indices": IDX[0]},
        {"values": VALUES["float"][None]},
        {"dense_shape": SHAPE[None]},
        {"dense_shape": SHAPE[:1]},
        {"indices": IDX[::-1].copy()},
    ],
)
def test_sparse_tensor_slice_dataset_errors(change):
    inputs = {"indices": IDX, "values": VALUES["float"], "dense_shape": SHAPE, **change}
    assert_same_as_tf("SparseTensorSliceDataset", inputs)


@pytest.mark.parametrize(
    "pick, dtype",
    [
        (lambda m, one, stack: m, DataType.DT_INT32),
        (lambda m, one, stack: m[:, :2], DataType.DT_FLOAT),
        (lambda m, one, stack: stack([m[1], one]), DataType.DT_FLOAT),
        (lambda m, one, stack: stack([one, m[1]]), DataType.DT_FLOAT),
        (lambda m, one, stack: m[:0], DataType.DT_FLOAT),
        (lambda m, one, stack: m[0, 0], DataType.DT_FLOAT),
    ],
)
def test_deserialize_variant_errors_as_tensorflow(pick, dtype):
    import tensorflow as tf

    inputs = _sparse("float")
    v = {"out_type": DataType.DT_VARIANT}
    ours_m = run("SerializeManySparse", list(inputs.values()), v)[0]
    ours_one = run("SerializeSparse", [IDX, VALUES["float"], SHAPE], v)[0]
    tf_m = tf.raw_ops.SerializeManySparse(**inputs, out_type=tf.variant)
    tf_one = tf.raw_ops.SerializeSparse(**inputs, out_type=tf.variant)
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        tf.raw_ops.DeserializeSparse(serialized_sparse=pick(tf_m, tf_one, tf.stack),
                                     dtype=tf.as_dtype(int(dtype)))  # fmt: skip
    attrs = {"dtype": dtype, "Tserialized": DataType.DT_VARIANT}
    with pytest.raises(InvalidArgumentError) as mine:
        run("DeserializeSparse", [pick(ours_m, ours_one, np.stack)], attrs)
    assert str(mine.value) in theirs.value.message
