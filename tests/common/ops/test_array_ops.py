"""Tests (ops stage): base, shape, slicing and transform array ops — exact results, TF-worded
errors, and TensorFlow as the oracle for signatures and values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import common.ops  # noqa: F401  (registers every op)
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops import registry
from common.ops.array_ops import broadcast_gradient_args, reshape_target
from common.ops.slicing_ops import SliceMasks, strided_slice_index
from tests.common.ops.kernel_harness import (
    assert_same_as_tf,
    op_def_mismatches,
    run,
    run1,
)

_MODULES = {"common.ops.array_ops", "common.ops.slicing_ops", "common.ops.transform_ops"}
ARRAY_OPS = sorted(
    op.name
    for op in registry.all_ops()
    if any(k.factory.__module__ in _MODULES for k in registry.kernels_for(op.name))
)


def test_every_required_op_is_registered():
    required = [
        "Const",
        "Placeholder",
        "PlaceholderV2",
        "PlaceholderWithDefault",
        "Identity",
        "IdentityN",
        "StopGradient",
        "PreventGradient",
        "Snapshot",
        "CheckNumerics",
        "EnsureShape",
        "Shape",
        "ShapeN",
        "Size",
        "Rank",
        "Reshape",
        "ExpandDims",
        "Squeeze",
        "BroadcastTo",
        "BroadcastArgs",
        "BroadcastGradientArgs",
        "ZerosLike",
        "OnesLike",
        "Fill",
        "Transpose",
        "ConjugateTranspose",
        "Concat",
        "ConcatV2",
        "ConcatOffset",
        "Pack",
        "Unpack",
        "Split",
        "SplitV",
        "Slice",
        "StridedSlice",
        "StridedSliceGrad",
        "Gather",
        "GatherV2",
        "GatherNd",
        "ScatterNd",
        "TensorScatterUpdate",
        "TensorScatterAdd",
        "Tile",
        "Pad",
        "PadV2",
        "MirrorPad",
        "ReverseV2",
        "Reverse",
        "OneHot",
        "Where",
        "Unique",
        "InvertPermutation",
    ]
    assert sorted(set(required) - set(ARRAY_OPS)) == []
    assert "NoOp" not in ARRAY_OPS


@pytest.mark.parametrize("op", ARRAY_OPS)
def test_op_def_matches_tensorflow(op):
    pytest.importorskip("tensorflow")
    assert op_def_mismatches(op) == []


# ---------------------------------------------------------------------------------------
# Base ops
# ---------------------------------------------------------------------------------------


def test_const_decodes_once_and_is_read_only():
    value = np.array([[1, 2], [3, 4]], dtype=np.int64)
    k = registry.lookup_kernel("Const", "CPU", "", "c")
    from tests.common.ops.kernel_harness import construction

    compute = k.factory(construction("Const", [], {"value": value, "dtype": DataType.DT_INT64}))
    a, b = compute(None, [])[0], compute(None, [])[0]
    assert a is b
    np.testing.assert_array_equal(a, value)
    assert a.dtype == np.int64 and not a.flags.writeable
    value[0, 0] = 99  # the kernel owns its copy
    assert a[0, 0] == 1


def test_const_from_tensor_proto():
    from common.tensor import from_numpy

    proto = from_numpy(np.array([1.5, 2.5], dtype=np.float32))
    out = run1("Const", value=proto, dtype=DataType.DT_FLOAT)
    assert out.dtype == np.float32 and out.tolist() == [1.5, 2.5]


def test_placeholder_unfed_is_invalid_argument_naming_dtype_and_shape():
    with pytest.raises(InvalidArgumentError) as e:
        run("Placeholder", [], {"dtype": DataType.DT_FLOAT, "shape": (None, 3)}, node_name="x")
    assert str(e.value) == (
        "You must feed a value for placeholder tensor 'x' with dtype float and shape [?,3]"
    )
    with pytest.raises(InvalidArgumentError) as e:
        run("Placeholder", [], {"dtype": DataType.DT_INT32}, node_name="y")
    assert str(e.value) == "You must feed a value for placeholder tensor 'y' with dtype int32"


def test_identity_family_pass_values_through():
    x = np.arange(3.0)
    for op in ("Identity", "StopGradient", "PreventGradient", "Snapshot"):
        assert run1(op, x) is x
    assert run1("PlaceholderWithDefault", x, dtype=DataType.DT_DOUBLE, shape=(3,)) is x
    a, b = np.int32(1), np.array([b"s"], dtype=object)
    assert run("IdentityN", [a, b]) == [a, b]


def test_check_numerics_messages():
    ok = np.array([1.0, 2.0], dtype=np.float32)
    assert run1("CheckNumerics", ok, message="m") is ok
    cases = {
        "NaN": [np.nan, 1.0],
        "Inf": [np.inf, 1.0],
        "Inf and NaN": [np.nan, -np.inf],
    }
    for what, values in cases.items():
        with pytest.raises(InvalidArgumentError) as e:
            run1("CheckNumerics", np.array(values, dtype=np.float16), message="boom")
        assert str(e.value) == f"boom : Tensor had {what} values"


def test_ensure_shape():
    x = np.zeros((2, 3))
    assert run1("EnsureShape", x, shape=(2, None)) is x
    assert run1("EnsureShape", x, shape=None) is x
    with pytest.raises(
        InvalidArgumentError,
        match=r"input \[2,3\] is not compatible with "
        r"expected shape \[2,\?,1\]",
    ):
        run1("EnsureShape", x, shape=(2, None, 1))


# ---------------------------------------------------------------------------------------
# Shape family
# ---------------------------------------------------------------------------------------


def test_shape_size_rank_out_types():
    x = np.zeros((2, 3, 4), dtype=np.float32)
    s = run1("Shape", x)
    assert s.dtype == np.int32 and s.tolist() == [2, 3, 4]
    s64 = run1("Shape", x, out_type=DataType.DT_INT64)
    assert s64.dtype == np.int64
    n = run("ShapeN", [x, np.zeros(5)], {"out_type": DataType.DT_INT64})
    assert [v.tolist() for v in n] == [[2, 3, 4], [5]] and n[1].dtype == np.int64
    size = run1("Size", x)
    assert size.dtype == np.int32 and size.shape == () and int(size) == 24
    rank = run1("Rank", x)
    assert rank.dtype == np.int32 and int(rank) == 3


def test_reshape_and_errors():
    x = np.arange(6)
    assert run1("Reshape", x, np.array([-1, 2], dtype=np.int32)).shape == (3, 2)
    with pytest.raises(InvalidArgumentError) as e:
        run1("Reshape", x, np.array([2, 2]))
    assert str(e.value) == (
        "Input to reshape is a tensor with 6 values, but the requested shape has 4"
    )
    with pytest.raises(InvalidArgumentError, match="requires a multiple of 4"):
        run1("Reshape", x, np.array([-1, 4]))
    with pytest.raises(InvalidArgumentError, match="Only one input size may be -1, not both 0"):
        run1("Reshape", x, np.array([-1, -1]))
    assert reshape_target((0, 4), [-1, 4]) == (0, 4)
    assert reshape_target((2, 0), [0, -1]) == (0, 2)


def test_expand_dims_and_squeeze():
    x = np.zeros((2, 3))
    assert run1("ExpandDims", x, np.int32(-1)).shape == (2, 3, 1)
    assert run1("ExpandDims", x, np.array([0])).shape == (1, 2, 3)
    with pytest.raises(InvalidArgumentError, match="Tried to expand dim index 5 for tensor"):
        run1("ExpandDims", x, np.int32(5))
    y = np.zeros((1, 2, 1, 3))
    assert run1("Squeeze", y).shape == (2, 3)
    assert run1("Squeeze", y, squeeze_dims=[-2]).shape == (1, 2, 3)
    with pytest.raises(InvalidArgumentError) as e:
        run1("Squeeze", y, squeeze_dims=[1])
    assert str(e.value) == "Can not squeeze dim[1], expected a dimension of 1, got 2"


def test_broadcast_ops():
    out = run1("BroadcastTo", np.array([1, 2, 3]), np.array([2, 3]))
    assert out.tolist() == [[1, 2, 3], [1, 2, 3]] and out.flags.writeable
    with pytest.raises(InvalidArgumentError, match=r"Incompatible shapes: \[3\] vs. \[4\]"):
        run1("BroadcastTo", np.zeros(3), np.array([4]))
    r = run1("BroadcastArgs", np.array([2, 1], np.int64), np.array([3], np.int64))
    assert r.dtype == np.int64 and r.tolist() == [2, 3]
    assert broadcast_gradient_args([2, 3], [2, 3]) == ([], [])
    assert broadcast_gradient_args([1, 3], [2, 1]) == ([0], [1])
    assert broadcast_gradient_args([], [2, 3]) == ([0, 1], [])
    assert broadcast_gradient_args([3, 1, 1], [1]) == ([1, 2], [0, 1, 2])
    r0, r1 = run("BroadcastGradientArgs", [np.array([5, 1, 3]), np.array([1, 4, 1])])
    assert (r0.tolist(), r1.tolist()) == ([1], [0, 2]) and r0.dtype == np.int64


def test_fill_zeros_ones_like():
    f = run1("Fill", np.array([2, 2], np.int32), np.float32(7))
    assert f.dtype == np.float32 and f.tolist() == [[7, 7], [7, 7]]
    with pytest.raises(InvalidArgumentError, match="Dimension -1 must be >= 0"):
        run1("Fill", np.array([2, -1]), np.float32(1))
    s = run1("Fill", np.array([2]), np.array(b"a", dtype=object))
    assert s.tolist() == [b"a", b"a"]
    assert run1("ZerosLike", np.array([b"x"], dtype=object)).tolist() == [b""]
    assert run1("OnesLike", np.array([True, False])).tolist() == [True, True]


def test_transpose():
    x = np.arange(6).reshape(2, 3)
    assert run1("Transpose", x, np.array([1, 0])).tolist() == [[0, 3], [1, 4], [2, 5]]
    c = np.array([[1 + 2j]], dtype=np.complex64)
    assert run1("ConjugateTranspose", c, np.array([1, 0])).tolist() == [[1 - 2j]]
    with pytest.raises(InvalidArgumentError, match=r"1 is missing from \{0,0\}"):
        run1("Transpose", x, np.array([0, 0]))


# ---------------------------------------------------------------------------------------
# Joining, splitting, slicing
# ---------------------------------------------------------------------------------------


def test_concat_pack_unpack():
    a, b = np.zeros((2, 3)), np.ones((1, 3))
    assert run("Concat", [np.int32(0), a, b])[0].shape == (3, 3)
    assert run("ConcatV2", [a, b, np.int64(-2)])[0].shape == (3, 3)
    with pytest.raises(InvalidArgumentError, match="Dimension 1 in both shapes must be equal"):
        run("ConcatV2", [a, np.zeros((3, 2)), np.int32(0)])
    offsets = run("ConcatOffset", [np.int32(1), np.array([2, 3]), np.array([2, 5])])
    assert [o.tolist() for o in offsets] == [[0, 0], [0, 3]]
    p = run("Pack", [np.array([1, 2]), np.array([3, 4])], {"axis": 1})[0]
    assert p.tolist() == [[1, 3], [2, 4]]
    u = run("Unpack", [p], {"num": 2, "axis": 0})
    assert [v.tolist() for v in u] == [[1, 3], [2, 4]]


def test_split_and_split_v():
    x = np.arange(10).reshape(5, 2)
    parts = run("SplitV", [x, np.array([1, -1, 2]), np.int32(0)], {"num_split": 3})
    assert [p.shape for p in parts] == [(1, 2), (2, 2), (2, 2)]
    parts = run("Split", [np.int32(1), x], {"num_split": 2})
    assert [p.tolist() for p in parts] == [[[0], [2], [4], [6], [8]], [[1], [3], [5], [7], [9]]]
    with pytest.raises(InvalidArgumentError, match="evenly divide the split dimension"):
        run("Split", [np.int32(0), x], {"num_split": 2})


def test_split_parts_are_contiguous_and_np_splits():
    # Split slices its parts directly (an LSTM's gates): np.split's values, each part
    # C-contiguous, zero-size parts included.
    x = np.arange(3 * 4 * 8, dtype=np.float32).reshape(3, 4, 8)
    for axis in (0, 1, 2, -1):
        parts = run("Split", [np.int32(axis), x], {"num_split": 4 if axis else 3})
        want = np.split(x, 4 if axis else 3, axis=axis)
        for p, w in zip(parts, want):
            assert p.flags.c_contiguous
            np.testing.assert_array_equal(p, w)
    parts = run("SplitV", [x, np.array([0, -1, 3]), np.int32(2)], {"num_split": 3})
    assert [p.shape for p in parts] == [(3, 4, 0), (3, 4, 5), (3, 4, 3)]
    np.testing.assert_array_equal(parts[2], x[:, :, 5:])


def test_slice():
    x = np.arange(12).reshape(3, 4)
    out = run1("Slice", x, np.array([1, 1]), np.array([-1, 2]))
    assert out.tolist() == [[5, 6], [9, 10]]
    with pytest.raises(InvalidArgumentError) as e:
        run1("Slice", x, np.array([1, 0]), np.array([5, 1]))
    assert str(e.value) == "Expected size[0] in [0, 2], but got 5"


def _ss(shape, begin, end, strides, **masks):
    return strided_slice_index(shape, begin, end, strides, SliceMasks(**masks))


def test_strided_slice_index_translation():
    assert _ss((4, 5), [1], [3], [1]) == (slice(1, 3, 1),)
    assert _ss((4, 5), [0, 2], [0, 0], [1, -1], begin_mask=1, end_mask=3) == (
        slice(None, None, 1),
        slice(2, None, -1),
    )
    assert _ss((2, 3, 4), [0, -1], [0, 0], [1, 1], ellipsis_mask=1, shrink_axis_mask=2) == (
        Ellipsis,
        3,
    )
    assert _ss((2, 3), [0, 0], [1, 1], [1, 1], new_axis_mask=1) == (None, slice(0, 1, 1))


def test_strided_slice_all_masks_and_errors():
    x = np.arange(24).reshape(2, 3, 4)
    out = run1(
        "StridedSlice",
        x,
        np.array([0, 1, 0, -1]),
        np.array([0, 3, 0, 0]),
        np.array([1, 1, 1, -2]),
        ellipsis_mask=4,
        new_axis_mask=1,
        end_mask=8,
    )
    np.testing.assert_array_equal(out, x[None, 1:3, ..., -1::-2])
    with pytest.raises(InvalidArgumentError, match="only stride 1 allowed on non-range"):
        run1("StridedSlice", x, np.array([1]), np.array([0]), np.array([-1]), shrink_axis_mask=1)
    with pytest.raises(InvalidArgumentError) as e:
        run1("StridedSlice", x, np.array([5]), np.array([0]), np.array([1]), shrink_axis_mask=1)
    assert str(e.value) == "slice index 5 of dimension 0 out of bounds."
    with pytest.raises(InvalidArgumentError, match="Multiple ellipses"):
        run1(
            "StridedSlice", x, np.zeros(2, int), np.zeros(2, int), np.ones(2, int), ellipsis_mask=3
        )
    with pytest.raises(InvalidArgumentError, match="Index out of range using input dim 3"):
        run1("StridedSlice", x, np.zeros(4, int), np.ones(4, int), np.ones(4, int))
    with pytest.raises(InvalidArgumentError, match=r"strides\[0\] must be non-zero"):
        run1("StridedSlice", x, np.zeros(1, int), np.ones(1, int), np.zeros(1, int))


def test_strided_slice_grad_scatters_dy():
    dy = np.array([[1.0, 2.0]])
    out = run1(
        "StridedSliceGrad",
        np.array([2, 4]),
        np.array([1, 3]),
        np.array([2, 0]),
        np.array([1, -2]),
        dy,
    )
    assert out.tolist() == [[0, 0, 0, 0], [0, 2, 0, 1]]


# ---------------------------------------------------------------------------------------
# Gather and scatter
# ---------------------------------------------------------------------------------------


def test_gather_v2_axis_batch_dims_and_errors():
    p = np.arange(12).reshape(3, 4)
    assert run1("GatherV2", p, np.array([2, 0]), np.int32(1)).tolist() == [[2, 0], [6, 4], [10, 8]]
    out = run1("GatherV2", p, np.array([[0], [3], [1]]), np.int32(1), batch_dims=1)
    assert out.tolist() == [[0], [7], [9]]
    with pytest.raises(InvalidArgumentError) as e:
        run1("GatherV2", np.zeros(5), np.array([1, 7]), np.int32(0))
    assert str(e.value) == "indices[1] = 7 is not in [0, 5)"
    assert run1("Gather", p, np.int64(1)).tolist() == [4, 5, 6, 7]


def test_gather_nd_and_scatter_nd():
    p = np.arange(6).reshape(3, 2)
    assert run1("GatherNd", p, np.array([[2, 1], [0, 0]])).tolist() == [5, 0]
    assert run1("GatherNd", p, np.array([[1]])).tolist() == [[2, 3]]
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] = \[7\] does not index"):
        run1("GatherNd", p, np.array([[1], [7]]))
    s = run1("ScatterNd", np.array([[1], [1], [3]]), np.array([1.0, 2.0, 3.0]), np.array([4]))
    assert s.tolist() == [0, 3, 0, 3]
    t = np.zeros(3)
    assert run1("TensorScatterUpdate", t, np.array([[2]]), np.array([5.0])).tolist() == [0, 0, 5]
    assert t.tolist() == [0, 0, 0]
    assert run1(
        "TensorScatterAdd", np.ones(3), np.array([[0], [0]]), np.array([1.0, 1.0])
    ).tolist() == [3, 1, 1]


# ---------------------------------------------------------------------------------------
# Transform ops
# ---------------------------------------------------------------------------------------


def test_tile_pad_mirror_pad_reverse():
    x = np.array([[1, 2], [3, 4]])
    assert run1("Tile", x, np.array([1, 2])).tolist() == [[1, 2, 1, 2], [3, 4, 3, 4]]
    assert run1("Pad", x, np.array([[1, 0], [0, 1]])).tolist() == [[0, 0, 0], [1, 2, 0], [3, 4, 0]]
    assert run1("PadV2", np.array([1]), np.array([[1, 1]]), np.int64(9)).tolist() == [9, 1, 9]
    row = np.array([1, 2, 3])
    assert run1("MirrorPad", row, np.array([[2, 1]]), mode="REFLECT").tolist() == [3, 2, 1, 2, 3, 2]
    assert run1("MirrorPad", row, np.array([[2, 1]]), mode="SYMMETRIC").tolist() == [
        2,
        1,
        1,
        2,
        3,
        3,
    ]
    assert run1("ReverseV2", x, np.array([-1])).tolist() == [[2, 1], [4, 3]]
    assert run1("Reverse", x, np.array([True, False])).tolist() == [[3, 4], [1, 2]]


def test_one_hot_where_unique_invert_permutation():
    oh = run1("OneHot", np.array([0, 2, -1]), np.int32(3), np.float32(5), np.float32(0))
    assert oh.dtype == np.float32 and oh.tolist() == [[5, 0, 0], [0, 0, 5], [0, 0, 0]]
    oh0 = run1("OneHot", np.array([1]), np.int32(2), np.int32(1), np.int32(0), axis=0)
    assert oh0.tolist() == [[0], [1]]
    w = run1("Where", np.array([[True, False], [False, True]]))
    assert w.dtype == np.int64 and w.tolist() == [[0, 0], [1, 1]]
    y, idx = run("Unique", [np.array([4, 1, 4, 2, 1])])
    assert y.tolist() == [4, 1, 2] and idx.tolist() == [0, 1, 0, 2, 1] and idx.dtype == np.int32
    y, idx, count = run("UniqueWithCounts", [np.array([b"a", b"b", b"a"], dtype=object)])
    assert y.tolist() == [b"a", b"b"] and count.tolist() == [2, 1]
    assert run1("InvertPermutation", np.array([2, 0, 1])).tolist() == [1, 2, 0]
    with pytest.raises(InvalidArgumentError, match="0 is duplicated in the input."):
        run1("InvertPermutation", np.array([0, 0, 1]))


def test_diag_space_depth_empty():
    assert run1("Diag", np.array([1, 2])).tolist() == [[1, 0], [0, 2]]
    assert run1("DiagPart", np.array([[1, 5], [6, 2]])).tolist() == [1, 2]
    assert run1("MatrixDiag", np.array([[1, 2]])).tolist() == [[[1, 0], [0, 2]]]
    x = np.arange(16).reshape(1, 4, 4, 1)
    d = run1("SpaceToDepth", x, block_size=2)
    assert d.shape == (1, 2, 2, 4) and d[0, 0, 0].tolist() == [0, 1, 4, 5]
    np.testing.assert_array_equal(run1("DepthToSpace", d, block_size=2), x)
    e = run1("Empty", np.array([2, 1], np.int32), dtype=DataType.DT_HALF)
    assert e.shape == (2, 1) and e.dtype == np.float16


# ---------------------------------------------------------------------------------------
# TensorFlow oracle: random inputs through tf.raw_ops (eager) and our kernels
# ---------------------------------------------------------------------------------------

_RNG = np.random.default_rng(7)
_X = _RNG.standard_normal((3, 4, 5)).astype(np.float32)
_I = _RNG.integers(-5, 5, (2, 3, 4)).astype(np.int64)

ORACLE_CASES = [
    ("Shape", {"input": _X}, {"out_type": DataType.DT_INT64}),
    ("ShapeN", {"input": [_X, _X[0]]}, {}),
    ("Size", {"input": _I}, {}),
    ("Rank", {"input": _X}, {}),
    ("Reshape", {"tensor": _X, "shape": np.array([5, -1], np.int64)}, {}),
    ("Reshape", {"tensor": _X, "shape": np.array([7, -1])}, {}),
    ("Reshape", {"tensor": np.zeros((0, 3)), "shape": np.array([-1, 0])}, {}),
    ("ExpandDims", {"input": _X, "axis": np.int32(-2)}, {}),
    ("Squeeze", {"input": _X[:1, :, None]}, {"axis": [0]}),
    ("BroadcastTo", {"input": _X[:, :1], "shape": np.array([2, 3, 4, 5])}, {}),
    ("BroadcastArgs", {"s0": np.array([3, 1, 5]), "s1": np.array([4, 1])}, {}),
    ("BroadcastGradientArgs", {"s0": np.array([1, 4, 1]), "s1": np.array([3, 1, 1, 5])}, {}),
    ("BroadcastGradientArgs", {"s0": np.array([2, 1]), "s1": np.array([1])}, {}),
    ("BroadcastGradientArgs", {"s0": np.array([2]), "s1": np.array([3])}, {}),
    ("ZerosLike", {"x": _I}, {}),
    ("OnesLike", {"x": _X}, {}),
    ("Fill", {"dims": np.array([2, 3], np.int64), "value": np.int32(4)}, {}),
    ("Transpose", {"x": _X, "perm": np.array([2, 0, 1])}, {}),
    (
        "ConjugateTranspose",
        {"x": (_X + 1j * _X).astype(np.complex64), "perm": np.array([1, 0, 2])},
        {},
    ),
    ("Concat", {"concat_dim": np.int32(1), "values": [_X, _X[:, :2]]}, {}),
    ("ConcatV2", {"values": [_I, _I, _I], "axis": np.int64(-1)}, {}),
    ("ConcatV2", {"values": [_X, _X], "axis": np.int32(3)}, {}),
    (
        "ConcatOffset",
        {"concat_dim": np.int32(1), "shape": [np.array([2, 3]), np.array([2, 5])]},
        {},
    ),
    ("Pack", {"values": [_I, _I]}, {"axis": -1}),
    ("Pack", {"values": [_I, _I[:1]]}, {}),
    ("Unpack", {"value": _X}, {"num": 4, "axis": 1}),
    ("Split", {"axis": np.int32(-1), "value": _X}, {"num_split": 5}),
    ("Split", {"axis": np.int32(0), "value": _X}, {"num_split": 2}),
    (
        "SplitV",
        {"value": _X, "size_splits": np.array([1, -1, 2]), "axis": np.int32(2)},
        {"num_split": 3},
    ),
    (
        "SplitV",
        {"value": _X, "size_splits": np.array([1, 2]), "axis": np.int32(0)},
        {"num_split": 2},
    ),
    ("Slice", {"input": _X, "begin": np.array([1, 0, 2]), "size": np.array([-1, 2, 3])}, {}),
    ("Slice", {"input": _X, "begin": np.array([4, 0, 0]), "size": np.array([1, 1, 1])}, {}),
    ("Gather", {"params": _X, "indices": np.array([[2, 0], [1, 1]])}, {}),
    ("GatherV2", {"params": _X, "indices": np.array([4, 0, 1]), "axis": np.int64(-1)}, {}),
    (
        "GatherV2",
        {"params": _X, "indices": np.array([[1, 0], [2, 2], [0, 0]]), "axis": np.int32(1)},
        {"batch_dims": 1},
    ),
    ("GatherV2", {"params": _X, "indices": np.array([1, 9]), "axis": np.int32(2)}, {}),
    ("GatherNd", {"params": _X, "indices": np.array([[[0, 1], [2, 3]]])}, {}),
    ("GatherNd", {"params": _X, "indices": np.array([[0, 1, 4], [2, 3, 0]], np.int32)}, {}),
    (
        "ScatterNd",
        {
            "indices": np.array([[0, 1], [2, 0], [0, 1]]),
            "updates": _X[:3, 0, :],
            "shape": np.array([3, 4, 5]),
        },
        {},
    ),
    (
        "TensorScatterUpdate",
        {"tensor": _X, "indices": np.array([[1, 2], [0, 0]]), "updates": _X[:2, 0]},
        {},
    ),
    ("TensorScatterAdd", {"tensor": _I, "indices": np.array([[1], [1]]), "updates": _I[:2]}, {}),
    ("Tile", {"input": _I, "multiples": np.array([2, 1, 3])}, {}),
    ("Pad", {"input": _X, "paddings": np.array([[1, 0], [0, 2], [3, 1]])}, {}),
    (
        "PadV2",
        {
            "input": _I,
            "paddings": np.array([[0, 1], [1, 0], [0, 0]]),
            "constant_values": np.int64(-9),
        },
        {},
    ),
    (
        "MirrorPad",
        {"input": _X, "paddings": np.array([[2, 2], [3, 0], [0, 4]])},
        {"mode": "REFLECT"},
    ),
    (
        "MirrorPad",
        {"input": _X, "paddings": np.array([[3, 1], [4, 0], [0, 5]])},
        {"mode": "SYMMETRIC"},
    ),
    ("ReverseV2", {"tensor": _X, "axis": np.array([0, -1])}, {}),
    ("Reverse", {"tensor": _I, "dims": np.array([True, False, True])}, {}),
    (
        "OneHot",
        {
            "indices": _I,
            "depth": np.int32(4),
            "on_value": np.float32(2),
            "off_value": np.float32(-1),
        },
        {"axis": 1},
    ),
    ("Where", {"condition": _I > 0}, {}),
    ("Where", {"condition": _X.round()}, {}),
    ("Unique", {"x": _I.reshape(-1)}, {"out_idx": DataType.DT_INT64}),
    ("UniqueWithCounts", {"x": _I.reshape(-1)}, {}),
    ("InvertPermutation", {"x": np.array([3, 0, 2, 1])}, {}),
    ("Diag", {"diagonal": _X[0, :2]}, {}),
    ("DiagPart", {"input": np.arange(16.0).reshape(2, 2, 2, 2)}, {}),
    ("MatrixDiag", {"diagonal": _X}, {}),
    ("SpaceToDepth", {"input": _X[None, :2, :4]}, {"block_size": 2}),
    ("DepthToSpace", {"input": np.arange(32).reshape(1, 2, 2, 8)}, {"block_size": 2}),
    ("CheckNumerics", {"tensor": np.array([1.0, np.inf])}, {"message": "xx"}),
    ("EnsureShape", {"input": _X}, {"shape": (3, None, 6)}),
]


@pytest.mark.parametrize("op,inputs,attrs", ORACLE_CASES, ids=[c[0] for c in ORACLE_CASES])
def test_against_tensorflow(op, inputs, attrs):
    pytest.importorskip("tensorflow")
    assert_same_as_tf(op, inputs, attrs)


@st.composite
def _strided_slice_specs(draw):
    rank = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=rank, max_size=rank)))
    n = draw(st.integers(0, rank + 2))
    ints = st.integers(-7, 7)
    begin = draw(st.lists(ints, min_size=n, max_size=n))
    end = draw(st.lists(ints, min_size=n, max_size=n))
    strides = draw(st.lists(st.sampled_from([-3, -2, -1, 1, 2, 3]), min_size=n, max_size=n))
    bits = st.integers(0, (1 << n) - 1) if n else st.just(0)
    masks = {
        "begin_mask": draw(bits),
        "end_mask": draw(bits),
        "ellipsis_mask": draw(st.sampled_from([0] + [1 << i for i in range(n)])),
        "new_axis_mask": draw(bits),
        "shrink_axis_mask": draw(bits),
    }
    return shape, begin, end, strides, masks


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_strided_slice_specs())
def test_strided_slice_against_tensorflow(spec):
    pytest.importorskip("tensorflow")
    shape, begin, end, strides, masks = spec
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    idx = np.array(begin, np.int64), np.array(end, np.int64), np.array(strides, np.int64)
    assert_same_as_tf(
        "StridedSlice",
        {"input": x, "begin": idx[0], "end": idx[1], "strides": idx[2]},
        masks,
    )
