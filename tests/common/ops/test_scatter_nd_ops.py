"""Tests (ops stage): N-d scatters on reference and resource variables, ScatterNdNonAliasingAdd,
TensorScatterSub/Max/Min, InplaceUpdate/Add/Sub, UniqueV2 and UniqueWithCountsV2 —
TensorFlow's signatures, values equal to TensorFlow 2.21's kernels (repeated indices,
bad_indices_policy IGNORE) and the same errors for the inputs TensorFlow checks."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

import common.ops  # noqa: F401  (registers every op)
from common.dtypes import DataType
from common.errors import FailedPreconditionError, InvalidArgumentError
from common.ops import registry
from common.ops.registry import KernelConstruction, OpKernelContext
from common.ops.state_ops import Var
from common.resource_mgr import ResourceMgr
from tests.common.ops.kernel_harness import DEVICE, fake_step, run
from tests.common.ops.signatures import assert_signature_matches_tensorflow, module_ops

F32 = DataType.DT_FLOAT
HOWS = ["Update", "Add", "Sub", "Max", "Min"]
INIT = np.arange(24, dtype=np.float32).reshape(4, 3, 2) - 10.0
# Rows [1, 2] and [3, 0]; [1, 2] twice so every combining rule meets a repeat.
INDICES = np.array([[1, 2], [3, 0], [1, 2]], np.int32)
UPDATES = np.array([[5.0, -30.0], [40.0, 0.5], [-7.0, 9.0]], np.float32)


def test_registered_the_whole_family():
    scatter = module_ops("common.ops.scatter_nd_ops")
    expected = [f"ScatterNd{h}" for h in HOWS] + [f"ResourceScatterNd{h}" for h in HOWS]
    expected += [f"TensorScatter{h}" for h in ("Sub", "Max", "Min")]
    expected += ["ScatterNdNonAliasingAdd"] + [f"Inplace{h}" for h in ("Update", "Add", "Sub")]
    assert scatter == sorted(expected)


@pytest.mark.parametrize(
    "op",
    module_ops("common.ops.scatter_nd_ops") + ["UniqueV2", "UniqueWithCountsV2"],
)
def test_signature_matches_tensorflow(op):
    assert_signature_matches_tensorflow(op)


def _tf_message(fn: Callable) -> tuple[type, str]:
    """The error class and the message of an eager TensorFlow call that fails."""
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(tf.errors.OpError) as e:
        fn(tf)
    # Eager errors read "{{function_node ...}} MESSAGE [Op:NAME] name: ": the message.
    message = re.sub(r" \[Op:\w+\].*$", "", e.value.message.split("}} ", 1)[-1])
    return type(e.value), message


def _assert_same_error(ours: Callable, theirs: Callable) -> None:
    tf_type, tf_message = _tf_message(theirs)
    with pytest.raises(InvalidArgumentError) as e:
        ours()
    assert tf_type.__name__ == "InvalidArgumentError"
    assert e.value.message == tf_message


# -- variables ----------------------------------------------------------------------------


def _ours_resource(how: str, init, indices, updates, **attrs) -> np.ndarray:
    step = fake_step(ResourceMgr())
    var_attrs = {"shared_name": "v", "dtype": F32, "shape": init.shape, "container": ""}
    h = run("VarHandleOp", [], var_attrs, step=step, node_name="h")[0]
    run("AssignVariableOp", [h, init], {"dtype": F32}, step=step)
    assert run(f"ResourceScatterNd{how}", [h, indices, updates], attrs, step=step) == []
    return run("ReadVariableOp", [h], {"dtype": F32}, step=step)[0]


def _ours_ref(how: str, init, indices, updates, **attrs) -> np.ndarray:
    var = Var(F32, init.shape, "ref_v")
    var.set(init)
    out = run(f"ScatterNd{how}", [var, indices, updates], {"T": F32, **attrs})
    assert out[0] is var
    return var.read_ref()


@pytest.mark.parametrize("how", HOWS)
def test_resource_scatter_nd_matches_tensorflow(how):
    tf = pytest.importorskip("tensorflow")
    v = tf.Variable(INIT)
    getattr(tf.raw_ops, f"ResourceScatterNd{how}")(ref=v.handle, indices=INDICES, updates=UPDATES)
    got = _ours_resource(how, INIT, INDICES, UPDATES)
    np.testing.assert_array_equal(got, v.numpy())
    assert got.dtype == np.float32


@pytest.mark.parametrize("how", HOWS)
def test_ref_scatter_nd_matches_tensorflow(how):
    tf = pytest.importorskip("tensorflow")
    v1 = tf.compat.v1
    with tf.Graph().as_default():
        ref = v1.Variable(INIT, use_resource=False)
        update = getattr(tf.raw_ops, f"ScatterNd{how}")(ref=ref, indices=INDICES, updates=UPDATES)
        with v1.Session() as sess:
            sess.run(ref.initializer)
            expected = sess.run(update)
    np.testing.assert_array_equal(_ours_ref(how, INIT, INDICES, UPDATES), expected)


@pytest.mark.parametrize("rows", [[3, 0, 3], [0, 5], [2]])
def test_one_dimensional_indices_apply_their_first_index(rows):
    tf = pytest.importorskip("tensorflow")
    rows = np.array(rows, np.int64)
    upd = np.arange(len(rows) * 6, dtype=np.float32).reshape(len(rows), 3, 2) + 1
    v = tf.Variable(INIT)
    tf.raw_ops.ResourceScatterNdAdd(ref=v.handle, indices=rows, updates=upd)
    np.testing.assert_array_equal(_ours_resource("Add", INIT, rows, upd), v.numpy())
    expected = tf.raw_ops.ScatterNdNonAliasingAdd(input=INIT, indices=rows, updates=upd)
    got = run("ScatterNdNonAliasingAdd", [INIT, rows, upd])[0]
    np.testing.assert_array_equal(got, expected.numpy())


def test_ignore_policy_drops_bad_rows():
    tf = pytest.importorskip("tensorflow")
    indices = np.array([[1, 2], [9, 0], [0, -1], [2, 1]], np.int32)
    updates = np.arange(8, dtype=np.float32).reshape(4, 2)
    v = tf.Variable(INIT)
    tf.raw_ops.ResourceScatterNdUpdate(
        ref=v.handle, indices=indices, updates=updates, bad_indices_policy="IGNORE"
    )
    got = _ours_resource("Update", INIT, indices, updates, bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(got, v.numpy())


BAD_VARIABLE_SCATTERS = {
    "index_out_of_range": (np.array([[1, 2], [4, 0]], np.int32), np.ones((2, 2), np.float32)),
    "negative_index": (np.array([[[0, -1]]], np.int32), np.ones((1, 1, 2), np.float32)),
    "rank1_out_of_range": (np.array([5], np.int32), np.ones((1, 3, 2), np.float32)),
    "outer_mismatch": (np.array([[1, 2], [3, 0]], np.int32), np.ones((3, 2), np.float32)),
    "inner_mismatch": (np.array([[1, 2]], np.int32), np.ones((1, 3), np.float32)),
    "rank_mismatch": (np.array([[1, 2]], np.int32), np.ones((1, 2, 1), np.float32)),
    "too_deep": (np.array([[1, 2, 0, 0]], np.int32), np.ones((1,), np.float32)),
}


@pytest.mark.parametrize("case", sorted(BAD_VARIABLE_SCATTERS))
def test_variable_scatter_errors_match_tensorflow(case):
    indices, updates = BAD_VARIABLE_SCATTERS[case]

    def theirs(tf):
        v = tf.Variable(INIT)
        tf.raw_ops.ResourceScatterNdSub(ref=v.handle, indices=indices, updates=updates)

    _assert_same_error(lambda: _ours_resource("Sub", INIT, indices, updates), theirs)
    _assert_same_error(lambda: _ours_ref("Sub", INIT, indices, updates), theirs)


def test_failed_scatter_leaves_the_variable_unchanged():
    var = Var(F32, INIT.shape, "ref_v")
    var.set(INIT)
    bad = np.array([[0, 0], [7, 0]], np.int32)
    with pytest.raises(InvalidArgumentError):
        run("ScatterNdAdd", [var, bad, np.ones((2, 2), np.float32)], {"T": F32})
    np.testing.assert_array_equal(var.read_ref(), INIT)


def test_uninitialized_ref_variable_fails_precondition():
    var = Var(F32, INIT.shape, "ref_v")
    with pytest.raises(FailedPreconditionError, match="uninitialized value ref_v"):
        run("ScatterNdUpdate", [var, INDICES, UPDATES], {"T": F32})


def test_scatter_updates_in_place_when_unshared():
    var = Var(F32, INIT.shape, "ref_v")
    var.set(INIT)
    before = id(var.value)
    run("ScatterNdAdd", [var, INDICES, UPDATES], {"T": F32})
    assert id(var.value) == before
    held = var.read_ref()
    run("ScatterNdAdd", [var, INDICES, UPDATES], {"T": F32})
    assert id(var.value) != id(held)  # a reader's snapshot is never changed


# -- tensors -----------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["Sub", "Max", "Min"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_tensor_scatter_matches_tensorflow(how, index_dtype):
    tf = pytest.importorskip("tensorflow")
    indices = INDICES.astype(index_dtype)
    expected = getattr(tf.raw_ops, f"TensorScatter{how}")(
        tensor=INIT, indices=indices, updates=UPDATES
    ).numpy()
    got = run(f"TensorScatter{how}", [INIT, indices, UPDATES])[0]
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.float32


@pytest.mark.parametrize("how", ["Sub", "Max", "Min"])
def test_tensor_scatter_ints_and_ignore(how):
    tf = pytest.importorskip("tensorflow")
    tensor = np.arange(10, dtype=np.int64)
    indices = np.array([[2], [12], [2], [-1], [9]], np.int32)
    updates = np.array([7, 1, -3, 5, 100], np.int64)
    expected = getattr(tf.raw_ops, f"TensorScatter{how}")(
        tensor=tensor, indices=indices, updates=updates, bad_indices_policy="IGNORE"
    ).numpy()
    got = run(f"TensorScatter{how}", [tensor, indices, updates], {"bad_indices_policy": "IGNORE"})[
        0
    ]
    np.testing.assert_array_equal(got, expected)


BAD_TENSOR_SCATTERS = {
    "index_out_of_range": (np.array([[1, 2], [4, 0]], np.int32), np.ones((2, 2), np.float32)),
    "nested_bad_index": (np.array([[[0, 0]], [[0, 3]]], np.int32), np.ones((2, 1, 2), np.float32)),
    "scalar_indices": (np.array(1, np.int32), np.ones((3, 2), np.float32)),
    "outer_mismatch": (np.array([[1, 2], [3, 0]], np.int32), np.ones((3, 2), np.float32)),
    "inner_rank": (np.array([[1, 2]], np.int32), np.ones((1, 2, 1), np.float32)),
    "inner_size": (np.array([[1, 2]], np.int32), np.ones((1, 3), np.float32)),
}


@pytest.mark.parametrize("case", sorted(BAD_TENSOR_SCATTERS))
def test_tensor_scatter_errors_match_tensorflow(case):
    indices, updates = BAD_TENSOR_SCATTERS[case]
    _assert_same_error(
        lambda: run("TensorScatterMax", [INIT, indices, updates]),
        lambda tf: tf.raw_ops.TensorScatterMax(tensor=INIT, indices=indices, updates=updates),
    )


def test_non_aliasing_add_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    expected = tf.raw_ops.ScatterNdNonAliasingAdd(
        input=INIT, indices=INDICES, updates=UPDATES
    ).numpy()
    np.testing.assert_array_equal(
        run("ScatterNdNonAliasingAdd", [INIT, INDICES, UPDATES])[0], expected
    )
    flags = np.array([False, True, False, False])
    got = run("ScatterNdNonAliasingAdd", [flags, np.array([[0], [0]]), np.array([True, False])])
    want = tf.raw_ops.ScatterNdNonAliasingAdd(
        input=flags, indices=np.array([[0], [0]]), updates=np.array([True, False])
    ).numpy()
    np.testing.assert_array_equal(got[0], want)
    indices, updates = BAD_VARIABLE_SCATTERS["index_out_of_range"]
    _assert_same_error(
        lambda: run("ScatterNdNonAliasingAdd", [INIT, indices, updates]),
        lambda tf: tf.raw_ops.ScatterNdNonAliasingAdd(input=INIT, indices=indices, updates=updates),
    )


# -- Inplace* ----------------------------------------------------------------------------

X = np.arange(12, dtype=np.float32).reshape(4, 3)


@pytest.mark.parametrize("how", ["Update", "Add", "Sub"])
def test_inplace_matches_tensorflow(how):
    tf = pytest.importorskip("tensorflow")
    # Rows wrap modulo the row count (7 -> 3, -1 -> 3) and repeat, as in TensorFlow.
    i = np.array([1, 7, -1, 0], np.int32)
    v = np.arange(12, dtype=np.float32).reshape(4, 3) * 10 + 1
    expected = getattr(tf.raw_ops, f"Inplace{how}")(x=tf.constant(X), i=i, v=v).numpy()
    x = X.copy()
    np.testing.assert_array_equal(run(f"Inplace{how}", [x, i, v])[0], expected)
    np.testing.assert_array_equal(x, X)  # the input is never written


BAD_INPLACE = {
    "i_not_vector": (X, np.array([[1]], np.int32), np.ones((1, 3), np.float32)),
    "ranks_differ": (np.float32(1.0), np.array([0], np.int32), np.ones(1, np.float32)),
    "inner_mismatch": (X, np.array([1], np.int32), np.ones((1, 2), np.float32)),
    "rows_mismatch": (X, np.array([1], np.int32), np.ones((2, 3), np.float32)),
}


@pytest.mark.parametrize("case", sorted(BAD_INPLACE))
def test_inplace_errors_match_tensorflow(case):
    x, i, v = BAD_INPLACE[case]
    _assert_same_error(
        lambda: run("InplaceAdd", [x, i, v]),
        lambda tf: tf.raw_ops.InplaceAdd(x=tf.constant(x), i=i, v=v),
    )


# -- UniqueV2 ----------------------------------------------------------------------------

UNIQUE_CASES = {
    "rows": (np.array([[1, 2], [1, 2], [0, 1], [1, 2]], np.int32), [0]),
    "columns": (np.array([[1, 1, 0, 1], [2, 2, 1, 2]], np.int64), [1]),
    "negative_axis": (np.array([[1, 1, 0], [2, 2, 1]], np.int32), [-1]),
    "middle_axis": (np.array([[[1, 2], [1, 2], [3, 4]], [[5, 6], [5, 6], [0, 0]]]), [1]),
    "vector_no_axis": (np.array([3.0, 1.0, 3.0, -0.0, 0.0, np.nan, np.nan], np.float32), []),
    "vector_axis": (np.array([3.0, 1.0, 3.0, -0.0, 0.0, np.nan], np.float32), [0]),
    "strings": (np.array([[b"a", b"b"], [b"a", b"b"], [b"c", b"b"]], dtype=object), [0]),
    "empty": (np.zeros((0, 2), np.float32), [0]),
}


@pytest.mark.parametrize("case", sorted(UNIQUE_CASES))
@pytest.mark.parametrize("counts", [False, True])
@pytest.mark.parametrize("out_idx", [DataType.DT_INT32, DataType.DT_INT64])
def test_unique_v2_matches_tensorflow(case, counts, out_idx):
    tf = pytest.importorskip("tensorflow")
    x, axis = UNIQUE_CASES[case]
    axis_t = np.array(axis, np.int64)
    op = "UniqueWithCountsV2" if counts else "UniqueV2"
    tf_idx = tf.int32 if out_idx == DataType.DT_INT32 else tf.int64
    expected = getattr(tf.raw_ops, op)(x=x, axis=axis_t, out_idx=tf_idx)
    got = run(op, [x, axis_t], {"out_idx": out_idx})
    assert len(got) == len(expected)
    for ours, theirs in zip(got, expected):
        theirs = theirs.numpy()
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


BAD_UNIQUE = {
    "axis_out_of_range": (X, np.array([5], np.int64)),
    "two_axes": (X, np.array([0, 1], np.int64)),
    "no_axis_matrix": (X, np.zeros(0, np.int64)),
    "scalar_axis": (np.array([1, 2, 1]), np.array(0, np.int64)),
    "scalar_input": (np.array(3), np.array([0], np.int32)),
}


@pytest.mark.parametrize("case", sorted(BAD_UNIQUE))
def test_unique_v2_errors_match_tensorflow(case):
    x, axis = BAD_UNIQUE[case]
    _assert_same_error(
        lambda: run("UniqueV2", [x, axis]), lambda tf: tf.raw_ops.UniqueV2(x=x, axis=axis)
    )


@pytest.mark.parametrize("equation", ["i->ii", "ij->iij", "ij->jii", "i,j->iji"])
def test_einsum_with_a_repeated_output_label_matches_tensorflow(equation):
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(4)
    inputs = [rng.standard_normal((3,) * len(s)) for s in equation.split("->")[0].split(",")]
    expected = tf.raw_ops.Einsum(inputs=inputs, equation=equation).numpy()
    attrs = {"equation": equation, "N": len(inputs), "T": DataType.DT_DOUBLE}
    types = (DataType.DT_DOUBLE,) * len(inputs)
    k = KernelConstruction("n", "Einsum", attrs, types, (DataType.DT_DOUBLE,), DEVICE)
    compute = registry.lookup_kernel("Einsum", "CPU", "", "n").factory(k)
    got = compute(OpKernelContext(fake_step(), (0, 0), "n"), inputs)[0]
    np.testing.assert_array_equal(got, expected)
