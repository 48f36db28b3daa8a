"""Tests (ops stage): SpaceToBatchND, BatchToSpaceND, SpaceToBatch and BatchToSpace —
signatures, values and TF-worded errors with TensorFlow as the oracle, exact values without
it, and a GraphDef run through the in-process session."""

from __future__ import annotations

import numpy as np
import pytest

import common.ops  # noqa: F401  (registers every op)
from common.errors import Code, InvalidArgumentError
from common.ops import registry
from common.session import Session
from tests.common.ops.kernel_harness import assert_same_as_tf, op_def_mismatches, run1
from tests.common.ops.signatures import assert_signature_matches_tensorflow, module_ops

OPS = ["BatchToSpace", "BatchToSpaceND", "SpaceToBatch", "SpaceToBatchND"]


def _x(shape, dtype=np.float32) -> np.ndarray:
    return (np.arange(int(np.prod(shape))) - 3).astype(dtype).reshape(shape)


def test_the_module_registers_the_four_ops():
    assert module_ops("common.ops.space_batch_ops") == OPS


@pytest.mark.parametrize("op", OPS)
def test_signature_matches_tensorflow(op):
    pytest.importorskip("tensorflow")
    assert op_def_mismatches(op) == []
    assert_signature_matches_tensorflow(op)


def test_signature_details():
    s2b = registry.lookup_op("SpaceToBatch")
    assert [a.name for a in s2b.attrs] == ["T", "Tpaddings", "block_size"]
    assert (s2b.attr("block_size").has_minimum, s2b.attr("block_size").minimum) == (True, 2)
    b2s = registry.lookup_op("BatchToSpace")
    assert [a.name for a in b2s.attrs] == ["T", "block_size", "Tidx"]
    nd = registry.lookup_op("BatchToSpaceND")
    assert [(a.name, a.default) for a in nd.attrs[1:]] == [
        ("Tblock_shape", common.dtypes.DataType.DT_INT32),
        ("Tcrops", common.dtypes.DataType.DT_INT32),
    ]


# ---------------------------------------------------------------------------------------
# Exact values (no TensorFlow needed)
# ---------------------------------------------------------------------------------------


def test_space_to_batch_nd_known_values():
    x = np.arange(1, 17, dtype=np.float32).reshape(1, 4, 4, 1)
    got = run1("SpaceToBatchND", x, np.array([2, 2], np.int32), np.zeros((2, 2), np.int32))
    want = np.array(
        [[[1, 3], [9, 11]], [[2, 4], [10, 12]], [[5, 7], [13, 15]], [[6, 8], [14, 16]]],
        np.float32,
    ).reshape(4, 2, 2, 1)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    back = run1("BatchToSpaceND", got, np.array([2, 2], np.int32), np.zeros((2, 2), np.int32))
    np.testing.assert_array_equal(back, x)


def test_padding_then_cropping_round_trips():
    x = _x((2, 3, 5, 2))
    block, pads = np.array([2, 3], np.int64), np.array([[1, 0], [2, 2]], np.int64)
    y = run1("SpaceToBatchND", x, block, pads)
    assert y.shape == (12, 2, 3, 2)
    np.testing.assert_array_equal(run1("BatchToSpaceND", y, block, pads), x)


def test_trivial_blocks_return_the_input():
    x = _x((2, 3, 4))
    trivial = np.array([1, 1], np.int32), np.zeros((2, 2), np.int32)
    assert run1("SpaceToBatchND", x, *trivial) is x
    assert run1("BatchToSpaceND", x, *trivial) is x


def test_errors_are_invalid_argument_in_tensorflow_words():
    x = _x((1, 4, 4, 1))
    with pytest.raises(InvalidArgumentError) as e:
        run1("SpaceToBatchND", x, np.array([3, 2], np.int32), np.zeros((2, 2), np.int32))
    assert e.value.code == Code.INVALID_ARGUMENT
    assert str(e.value) == "padded_shape[0]=4 is not divisible by block_shape[0]=3"
    with pytest.raises(InvalidArgumentError, match=r"^Input rank should be: 4instead of: 3$"):
        run1("BatchToSpace", _x((4, 2, 2)), np.zeros((2, 2), np.int32), block_size=2)


# ---------------------------------------------------------------------------------------
# TensorFlow as the oracle
# ---------------------------------------------------------------------------------------

_S2B_CASES = [
    # (input shape, block_shape, paddings)
    ((1, 4, 4, 1), [2, 2], [[0, 0], [0, 0]]),
    ((2, 2, 4, 3), [2, 2], [[1, 1], [0, 2]]),
    ((3, 6, 2), [3], [[0, 0]]),
    ((2, 5, 3), [2], [[1, 2]]),
    ((2, 4, 6, 2, 3), [2, 3], [[0, 0], [1, 2]]),
    ((1, 2, 2, 2, 2, 1), [1, 2, 1, 2], [[0, 0], [0, 0], [0, 0], [1, 1]]),
    ((1, 4, 3), [1, 3], [[0, 0], [0, 0]]),
    ((2, 3, 4), [1, 1], [[0, 0], [0, 0]]),
    ((2, 3), [], np.zeros((0, 2), np.int32)),
    ((0, 4, 4, 1), [2, 2], [[0, 0], [0, 0]]),
    ((1, 0, 4, 1), [2, 2], [[1, 1], [0, 0]]),
]
_B2S_CASES = [
    # (input shape, block_shape, crops)
    ((4, 2, 2, 1), [2, 2], [[0, 0], [0, 0]]),
    ((8, 2, 3, 2), [2, 2], [[1, 0], [2, 1]]),
    ((6, 2, 2), [3], [[1, 2]]),
    ((12, 2, 2, 2, 3), [2, 3], [[0, 1], [3, 0]]),
    ((4, 2, 2, 1), [1, 1], [[1, 0], [0, 1]]),
    ((2, 3, 4), [1, 1], [[0, 0], [0, 0]]),
    ((4, 1, 1, 1), [2, 2], [[0, 2], [1, 1]]),
    ((0, 2, 2, 1), [2, 2], [[0, 0], [0, 0]]),
]


def _index(values, dtype) -> np.ndarray:
    return np.asarray(values, dtype).reshape(np.shape(values))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64])
@pytest.mark.parametrize("shape,block,pads", _S2B_CASES)
def test_space_to_batch_nd_matches_tensorflow(shape, block, pads, dtype):
    pytest.importorskip("tensorflow")
    inputs = {
        "input": _x(shape, dtype),
        "block_shape": _index(block, np.int32),
        "paddings": _index(pads, np.int32),
    }
    assert_same_as_tf("SpaceToBatchND", inputs)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64])
@pytest.mark.parametrize("shape,block,crops", _B2S_CASES)
def test_batch_to_space_nd_matches_tensorflow(shape, block, crops, dtype):
    pytest.importorskip("tensorflow")
    inputs = {
        "input": _x(shape, dtype),
        "block_shape": _index(block, np.int32),
        "crops": _index(crops, np.int32),
    }
    assert_same_as_tf("BatchToSpaceND", inputs)


@pytest.mark.parametrize("block_type,pad_type", [(np.int64, np.int64), (np.int64, np.int32)])
def test_int64_index_types_match_tensorflow(block_type, pad_type):
    pytest.importorskip("tensorflow")
    x = _x((2, 3, 4, 2))
    assert_same_as_tf(
        "SpaceToBatchND",
        {
            "input": x,
            "block_shape": np.array([3, 2], block_type),
            "paddings": np.array([[0, 0], [1, 1]], pad_type),
        },
    )
    assert_same_as_tf(
        "BatchToSpaceND",
        {
            "input": _x((12, 1, 2, 2)),
            "block_shape": np.array([3, 2], block_type),
            "crops": np.array([[1, 1], [0, 1]], pad_type),
        },
    )


@pytest.mark.parametrize("index_type", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64])
def test_legacy_square_block_ops_match_tensorflow(dtype, index_type):
    pytest.importorskip("tensorflow")
    x = _x((2, 3, 5, 2), dtype)
    pads = np.array([[1, 0], [0, 1]], index_type)
    assert_same_as_tf("SpaceToBatch", {"input": x, "paddings": pads}, {"block_size": 2})
    crops = np.array([[1, 2], [0, 3]], index_type)
    assert_same_as_tf(
        "BatchToSpace", {"input": _x((18, 2, 3, 1), dtype), "crops": crops}, {"block_size": 3}
    )


_S2B_ERRORS = [
    ((1, 4, 4, 1), [2, 2], [[0, 0]]),  # paddings should have shape [2, 2] ...
    ((1, 4, 4, 1), [[2, 2]], [[0, 0], [0, 0]]),  # block_shape rank should be 1 ...
    ((1, 4, 4, 1), [2, 2, 2, 2], [[0, 0]] * 4),  # input rank should be >= 5 ...
    ((1, 4, 4, 1), [0, 2], [[0, 0], [0, 0]]),  # All values in block_shape must be positive
    ((1, 4, 4, 1), [1, -1], [[0, 0], [0, 0]]),
    ((1, 4, 4, 1), [2, 2], [[-1, 1], [0, 0]]),  # Paddings must be non-negative
    ((1, 4, 4, 1), [1, 1], [[0, 0], [0, -1]]),
    ((1, 4, 4, 1), [3, 2], [[0, 0], [0, 0]]),  # padded_shape[0]=4 is not divisible ...
    ((1, 4, 4, 1), [2, 2], [[0, 0], [1, 0]]),
    ((1,) * 7, [2] * 5, [[0, 1]] * 5),  # Maximum number of non-combined block dimensions
]
_B2S_ERRORS = [
    ((4, 2, 2, 1), [2, 2], [[0, 0]]),  # crops should have shape [2, 2] ...
    ((4, 2, 2, 1), [[2, 2]], [[0, 0], [0, 0]]),
    ((4, 2), [2, 2], [[0, 0], [0, 0]]),  # input rank should be >= 3 ...
    ((4, 2, 2, 1), [0, 2], [[0, 0], [0, 0]]),  # Product of block sizes must be positive
    ((4, 2, 2, 1), [-1, 1], [[0, 0], [0, 0]]),
    ((3, 2, 2, 1), [2, 2], [[0, 0], [0, 0]]),  # Input batch dimension (3) is not divisible
    ((4, 2, 2, 1), [2, 2], [[-1, 0], [0, 0]]),  # Crops must be non-negative
    ((4, 2, 2, 1), [1, 1], [[0, 0], [-1, 0]]),
    ((4, 2, 2, 1), [2, 2], [[3, 2], [0, 0]]),  # cropped_shape[0]=-1 must be non-negative
    ((4, 2, 2, 1), [-2, -2], [[0, 0], [0, 0]]),  # cropped_shape[0]=-4 ...
    ((2**5,) + (1,) * 6, [2] * 5, [[0, 1]] * 5),  # Maximum number of non-combined ...
]


@pytest.mark.parametrize("index_type", [np.int32, np.int64])
@pytest.mark.parametrize("shape,block,pads", _S2B_ERRORS)
def test_space_to_batch_nd_errors_match_tensorflow(shape, block, pads, index_type):
    tf = pytest.importorskip("tensorflow")
    inputs = {
        "input": _x(shape),
        "block_shape": _index(block, index_type),
        "paddings": _index(pads, index_type),
    }
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.raw_ops.SpaceToBatchND(**inputs)
    assert_same_as_tf("SpaceToBatchND", inputs)


@pytest.mark.parametrize("index_type", [np.int32, np.int64])
@pytest.mark.parametrize("shape,block,crops", _B2S_ERRORS)
def test_batch_to_space_nd_errors_match_tensorflow(shape, block, crops, index_type):
    tf = pytest.importorskip("tensorflow")
    inputs = {
        "input": _x(shape),
        "block_shape": _index(block, index_type),
        "crops": _index(crops, index_type),
    }
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.raw_ops.BatchToSpaceND(**inputs)
    assert_same_as_tf("BatchToSpaceND", inputs)


@pytest.mark.parametrize(
    "op,shape,pads",
    [
        ("SpaceToBatch", (1, 4, 4), [[0, 0], [0, 0]]),  # Input rank should be: 4instead of: 3
        ("SpaceToBatch", (1, 4, 4, 1), [[0, 0]]),
        ("SpaceToBatch", (1, 3, 4, 1), [[0, 0], [0, 0]]),
        ("SpaceToBatch", (1, 4, 4, 1), [[0, 0], [-2, 2]]),
        ("BatchToSpace", (4, 2, 2), [[0, 0], [0, 0]]),
        ("BatchToSpace", (4, 2, 2, 1), [[0, 0], [0, 0], [0, 0]]),
        ("BatchToSpace", (6, 2, 2, 1), [[0, 0], [0, 0]]),
        ("BatchToSpace", (4, 2, 2, 1), [[0, 0], [3, 2]]),
    ],
)
def test_legacy_square_block_errors_match_tensorflow(op, shape, pads):
    tf = pytest.importorskip("tensorflow")
    arg = "paddings" if op == "SpaceToBatch" else "crops"
    inputs = {"input": _x(shape), arg: _index(pads, np.int32)}
    with pytest.raises(tf.errors.InvalidArgumentError):
        getattr(tf.raw_ops, op)(**inputs, block_size=2)
    assert_same_as_tf(op, inputs, {"block_size": 2})


# ---------------------------------------------------------------------------------------
# A GraphDef through the in-process session, TensorFlow's Session as the oracle
# ---------------------------------------------------------------------------------------


def _graph_def(tf):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, None, None, 2], name="x")
        block = tf.compat.v1.placeholder(tf.int64, [2], name="block")
        pads = tf.constant([[1, 0], [0, 2]], tf.int64, name="pads")
        s2b = tf.raw_ops.SpaceToBatchND(input=x, block_shape=block, paddings=pads, name="s2b")
        tf.raw_ops.BatchToSpaceND(input=s2b * 2.0, block_shape=block, crops=pads, name="b2s")
        legacy = tf.raw_ops.SpaceToBatch(input=x, paddings=[[1, 0], [0, 2]], block_size=3)
        tf.raw_ops.BatchToSpace(input=legacy, crops=[[1, 0], [0, 2]], block_size=3, name="b2s3")
    return g


def test_graph_def_runs_as_in_tensorflow():
    tf = pytest.importorskip("tensorflow")
    g = _graph_def(tf)
    feeds = {"x:0": _x((2, 5, 4, 2)), "block:0": np.array([3, 3], np.int64)}
    fetches = ["s2b:0", "b2s:0", "b2s3:0"]
    with tf.compat.v1.Session(graph=g) as sess:
        want = sess.run(fetches, feeds)
    with Session(g.as_graph_def().SerializeToString()) as sess:
        got = sess.run(fetches, feeds)
    for w, o in zip(want, got):
        assert o.dtype == w.dtype and o.shape == w.shape
        np.testing.assert_array_equal(o, w)
    np.testing.assert_array_equal(got[1], feeds["x:0"] * 2.0)
    np.testing.assert_array_equal(got[2], feeds["x:0"])


def test_graph_def_error_names_the_node():
    tf = pytest.importorskip("tensorflow")
    g = _graph_def(tf)
    feeds = {"x:0": _x((2, 5, 4, 2)), "block:0": np.array([2, 0], np.int64)}
    with (
        Session(g.as_graph_def().SerializeToString()) as sess,
        pytest.raises(InvalidArgumentError) as e,
    ):
        sess.run(["s2b:0"], feeds)
    assert e.value.node_name == "s2b"
    assert e.value.message.startswith(
        "All values in block_shape must be positive, got value, 0 at index 1."
    )
    assert "{{node s2b}}" in e.value.message
