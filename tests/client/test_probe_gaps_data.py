"""Client, the TF1 probe's sparse/strings/data/nn gaps: each probe snippet (and a few
variants of its arguments) builds the graph tf.compat.v1 builds, node for node, and
fetches TensorFlow's values (exact for ints/bools/strings, to float32 rounding else)."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.test_graph_sweep import build_both, graph_diff
from tools import tf1_probe_cases as cases
from tools.tf1_probe import _flatten, run_case

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1

PROBE = dict(cases.CASES)


def _sp(tf):
    return tf.SparseTensor([[0, 1], [1, 0], [2, 3]], [1.0, 2.0, 3.0], [3, 4])


def _unknown_sp(tf):
    """The probe's SparseTensor with its dense shape only known at run time."""
    shape = tf.placeholder_with_default(np.array([3, 4], np.int64), [None])
    return tf.SparseTensor([[2, 3], [0, 1], [1, 0]], [3.0, 1.0, 2.0], shape)


def _variants():
    """Argument forms beyond the probe's: thresh, dense + sparse in both orders, the
    TF1 keep_dims/reduction_axes names, run-time shapes, an explicit perm."""
    return {
        "add_thresh": lambda tf: tf.sparse_add(_sp(tf), _sp(tf), thresh=2.5),
        "add_dense_first": lambda tf: tf.sparse.add(tf.ones([3, 4]), _sp(tf)),
        "reduce_keep_dims": lambda tf: tf.sparse_reduce_sum(
            _sp(tf), reduction_axes=[0], keep_dims=True
        ),
        "reduce_max_axis": lambda tf: tf.sparse_reduce_max(_sp(tf), axis=-1, keepdims=True),
        "reorder_unknown": lambda tf: tf.sparse_reorder(_unknown_sp(tf)),
        "transpose_unknown": lambda tf: tf.sparse_transpose(_unknown_sp(tf)),
        "transpose_perm": lambda tf: tf.sparse.transpose(
            tf.SparseTensor([[0, 1, 2], [1, 0, 1]], [4, 5], [2, 3, 4]), perm=[2, 0, 1]
        ),
        "fill_named": lambda tf: tf.sparse_fill_empty_rows(
            tf.SparseTensor([[1, 1]], ["x"], [3, 2]), "-", name="fill"
        ),
        "retain_int": lambda tf: tf.sparse_retain(
            tf.SparseTensor([[0, 0], [1, 1]], [7, 8], [2, 2]), tf.constant([False, True])
        ),
        "from_dense_float": lambda tf: tf.sparse.from_dense(tf.constant([[0.0, 1.5], [0.0, 0.0]])),
    }


def _assert_same_values(ours, theirs) -> None:
    got, want = _flatten(ours), _flatten(theirs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        if np.issubdtype(w.dtype, np.floating):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
        else:
            np.testing.assert_array_equal(g, w)


def _v1(build):
    """`build` compared under TF1 control flow (v1 cond: Switch/Merge), what a TF1
    program gets with disable_v2_behavior; the client's cond builds only that form."""
    build.v1_control_flow = True
    return build


def _check(build) -> None:
    ours_graph, tf_graph = build_both(build)
    assert graph_diff(ours_graph, tf_graph) == []
    _assert_same_values(run_case(client, build), run_case(tf1, build))


SPARSE = [
    "sparse_to_dense_and_add",
    "sparse_matmul_reduce",
    "sparse_transpose_retain_fill",
    "sparse_from_dense_and_reorder",
]


@pytest.mark.parametrize("name", SPARSE)
def test_sparse_probe_snippet_matches_tensorflow(name):
    _check(PROBE[name])


@pytest.mark.parametrize("name", sorted(_variants()))
def test_sparse_variant_matches_tensorflow(name):
    _check(_variants()[name])


def test_sparse_add_of_two_dense_tensors_raises_as_tensorflow():
    for api in (client, tf1):
        with (
            api.Graph().as_default(),
            pytest.raises(TypeError, match="At least one input should be SparseTensor"),
        ):
            api.sparse.add(api.ones([2]), api.ones([2]))


OTHER = [
    "nn_conv1d",
    "image_flip_transpose_rot",
    "strings_split_join",
    "data_interleave_prefetch",
    "data_from_generator_free_unbatch",
]


@pytest.mark.parametrize("name", OTHER)
def test_probe_snippet_matches_tensorflow(name):
    build = PROBE[name]
    _check(_v1(lambda tf: build(tf)) if "rot" in name else build)


def _ints(tf):
    return tf.constant(np.arange(2 * 3 * 4 * 2, dtype=np.int32).reshape(2, 3, 4, 2))


def _other_variants():
    """conv1d with stride/dilation/input=, rot90 for every k on 3-D and 4-D images,
    transpose of a batch, reduce_join over one axis, interleave with blocks and in
    parallel."""
    x = np.linspace(-1, 1, 2 * 9 * 3, dtype=np.float32).reshape(2, 9, 3)
    w = np.linspace(0, 1, 3 * 3 * 4, dtype=np.float32).reshape(3, 3, 4)
    words = np.array([["a", "b", "c"], ["d", "e", "f"]])

    def interleave(tf, **kw):
        ds = tf.data.Dataset.range(1, 4).interleave(
            lambda n: tf.data.Dataset.range(n).map(lambda v: v + 10 * n), **kw
        )
        return cases._drain(tf, ds)

    return {
        "conv1d_stride": lambda tf: tf.nn.conv1d(
            input=tf.constant(x), filters=tf.constant(w), stride=2, padding="VALID", name="c1"
        ),
        "conv1d_dilated": lambda tf: tf.nn.conv1d(
            tf.constant(x), tf.constant(w), stride=[1], padding="SAME", dilations=2
        ),
        **{
            f"rot90_k{k}": _v1(lambda tf, k=k: tf.image.rot90(_ints(tf)[0], k=k))
            for k in (0, 2, 3, -1, 5)
        },
        "rot90_batch": _v1(lambda tf: [tf.image.rot90(_ints(tf), k=k) for k in range(4)]),
        "transpose_batch": lambda tf: tf.image.transpose(_ints(tf), name="tr"),
        "reduce_join_axis": lambda tf: tf.reduce_join(words, axis=0, separator=","),
        "reduce_join_keep": lambda tf: tf.strings.reduce_join(
            words, reduction_indices=[1], keep_dims=True
        ),
        "interleave_blocks": lambda tf: interleave(tf, cycle_length=2, block_length=2),
        "interleave_parallel": lambda tf: interleave(tf, cycle_length=3, num_parallel_calls=2),
    }


@pytest.mark.parametrize("name", sorted(_other_variants()))
def test_other_variant_matches_tensorflow(name):
    _check(_other_variants()[name])


def test_image_ops_reject_what_tensorflow_rejects():
    for api in (client, tf1):
        with api.Graph().as_default():
            with pytest.raises(ValueError, match="must be at least three-dimensional"):
                api.image.rot90(api.ones([2, 2]))
            with pytest.raises(ValueError, match="must have either 3 or 4 dimensions"):
                api.image.transpose(api.ones([1, 2, 2, 2, 1]))
            with pytest.raises(ValueError, match="data_format"):
                api.nn.conv1d(api.ones([1, 4, 1]), api.ones([1, 1, 1]), 1, "SAME", data_format="X")
