"""Roll, LowerBound, UpperBound and UnravelIndex against TensorFlow 2.21: signatures,
values and dtypes bit for bit, and the same error class and message on bad input.
Skipped without TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

from .kernel_harness import assert_same_as_tf
from .signatures import assert_signature_matches_tensorflow, module_ops

pytest.importorskip("tensorflow")

OPS = module_ops("common.ops.manip_ops", "common.ops.search_ops")


def test_the_modules_register_the_expected_ops():
    assert OPS == ["LowerBound", "Roll", "UnravelIndex", "UpperBound"]


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


_X = np.arange(24).reshape(2, 3, 4)


@pytest.mark.parametrize(
    "x",
    [
        _X.astype(np.float32),
        _X.astype(np.int64),
        _X.astype(np.float16),
        _X > 11,
        _X.astype(np.complex64),
        np.array([b"a", b"bc", b"d"], dtype=object),
    ],
    ids=["float32", "int64", "float16", "bool", "complex64", "string"],
)
def test_roll_dtypes(x):
    assert_same_as_tf("Roll", {"input": x, "shift": np.int32(1), "axis": np.int32(0)})


@pytest.mark.parametrize(
    "shift,axis",
    [
        (2, 1),
        (-7, 2),
        ([1, 2], [0, 2]),
        ([1, 2, -5], [2, -1, 1]),
        ([3, 3], [-1, 2]),
        (np.int64(5), np.int64(-3)),
        ([], []),
    ],
)
def test_roll_values(shift, axis):
    sh, ax = np.asarray(shift, np.int32), np.asarray(axis, np.int32)
    if isinstance(shift, np.int64):
        sh, ax = np.int64(shift), np.int64(axis)
    assert_same_as_tf("Roll", {"input": _X.astype(np.float64), "shift": sh, "axis": ax})


def test_roll_empty_dimension():
    x = np.zeros((0, 3), np.float32)
    assert_same_as_tf("Roll", {"input": x, "shift": np.int32(2), "axis": np.int32(1)})


@pytest.mark.parametrize(
    "x,shift,axis",
    [
        (np.float32(1), 1, 0),
        (np.arange(4.0), [[1]], [[0]]),
        (np.arange(4.0), [1], [[0]]),
        (np.arange(4.0), [1, 2], [0]),
        (np.arange(4.0), [1], [1]),
        (np.arange(4.0), [1], [-2]),
    ],
)
def test_roll_errors(x, shift, axis):
    inputs = {"input": x, "shift": np.asarray(shift, np.int32), "axis": np.asarray(axis, np.int32)}
    assert_same_as_tf("Roll", inputs)


_SORTED = np.array([[1, 2, 2, 3, 9], [-4, 0, 0, 0, 7]])
_VALUES = np.array([[2, 5, 0, 3, 10, 1], [0, -5, 7, 8, 0, 1]])


@pytest.mark.parametrize("op", ["LowerBound", "UpperBound"])
@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8]
)
@pytest.mark.parametrize("out_type", [np.int32, np.int64])
def test_bounds_values(op, dtype, out_type):
    sorted_inputs = _SORTED.astype(dtype) if dtype != np.uint8 else _SORTED.clip(0).astype(dtype)
    values = _VALUES.astype(dtype) if dtype != np.uint8 else _VALUES.clip(0).astype(dtype)
    from common import dtypes

    assert_same_as_tf(
        op,
        {"sorted_inputs": sorted_inputs, "values": values},
        {"out_type": dtypes.from_numpy(np.dtype(out_type))},
    )


@pytest.mark.parametrize("op", ["LowerBound", "UpperBound"])
@pytest.mark.parametrize(
    "sorted_shape,values_shape",
    [
        ((2, 0), (2, 3)),
        ((0, 0), (0, 3)),
        ((2, 4), (2, 0)),
        ((3,), (1,)),
        ((), ()),
        ((1, 3), (2, 1)),
        ((1, 3), (1, 1, 1)),
    ],
)
def test_bounds_shapes_and_errors(op, sorted_shape, values_shape):
    inputs = {
        "sorted_inputs": np.zeros(sorted_shape, np.float32),
        "values": np.ones(values_shape, np.float32),
    }
    assert_same_as_tf(op, inputs)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize(
    "indices,dims",
    [
        ([1, 5, 7], [2, 4]),
        (22, [2, 3, 4]),
        (0, [1]),
        (-1, [2, 4]),
        ([-9, -3], [3, 5]),
        (8, [2, 4]),
        ([[1, 2]], [2, 4]),
        (1, [[2, 4]]),
        ([1, 2], [0, 4]),
        ([1, 2], [-1, 4]),
        ([1, 2], []),
        ([], [3]),
    ],
)
def test_unravel_index(dtype, indices, dims):
    inputs = {"indices": np.asarray(indices, dtype), "dims": np.asarray(dims, dtype)}
    assert_same_as_tf("UnravelIndex", inputs)
