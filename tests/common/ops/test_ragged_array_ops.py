"""Tests (ops stage): RaggedRange and RaggedGather against TensorFlow 2.21's raw ops (the
oracle): values and dtypes exact, the same error class and message for the bad inputs
TF's kernels check, and hostile sizes refused as ResourceExhausted before allocating."""

from __future__ import annotations

import os

import numpy as np
import pytest

from common import memory
from common.errors import InvalidArgumentError, ResourceExhaustedError
from tests.common.ops.kernel_harness import assert_same_as_tf, ours_run, run
from tests.common.ops.signatures import assert_signature_matches_tensorflow

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
pytest.importorskip("tensorflow")

I32, I64, F32, F64 = np.int32, np.int64, np.float32, np.float64


@pytest.mark.parametrize("name", ["RaggedRange", "RaggedGather"])
def test_signature_matches_tensorflow(name: str) -> None:
    assert_signature_matches_tensorflow(name)


# -- RaggedRange ---------------------------------------------------------------------------
RANGES = [
    ([0, 5, 2, 7], [3, 1, 2, -4], [1, -2, 3, -5]),  # up, down, empty, negative steps
    ([0, 3, 5], [3, 7, 15], [1, 1, 2]),
    (3, [10, 4, 0], 2),  # broadcast scalars
    (0, 5, 1),  # all scalars: one row
    ([], [], []),
    ([1, 6], [0, 9], [1, -1]),  # limit past start in the other direction: empty rows
]


@pytest.mark.parametrize("starts,limits,deltas", RANGES)
@pytest.mark.parametrize("dtype", [I32, I64, F32, F64])
@pytest.mark.parametrize("splits", [I32, I64])
def test_range_as_tensorflow(starts, limits, deltas, dtype, splits) -> None:
    import tensorflow as tf

    inputs = {"starts": dtype(starts), "limits": dtype(limits), "deltas": dtype(deltas)}
    assert_same_as_tf("RaggedRange", inputs, {"Tsplits": tf.as_dtype(splits)})


@pytest.mark.parametrize("dtype", [F32, F64])
def test_float_steps_accumulate_as_tensorflow(dtype) -> None:
    # TF adds delta to a running value: 0.1 steps drift as they do there, bit for bit.
    inputs = {"starts": dtype([0.0, 5.0, -1.0]), "limits": dtype([3.9, 15.0, 1.0])}
    assert_same_as_tf("RaggedRange", {**inputs, "deltas": dtype([0.1, 2.2, 0.3])}, {})


BAD_RANGES = [
    ([[0]], [3], [1]),  # starts must be a scalar or vector
    ([0], [[3]], [1]),
    ([0], [3], [[1]]),
    ([0, 1], [3], [1]),  # same shape
    ([0, 1], [3, 4, 5], 1),
    ([0, 1], [3, 4], [1, 0]),  # delta != 0
]


@pytest.mark.parametrize("starts,limits,deltas", BAD_RANGES)
def test_range_errors_as_tensorflow(starts, limits, deltas) -> None:
    inputs = {"starts": I32(starts), "limits": I32(limits), "deltas": I32(deltas)}
    assert_same_as_tf("RaggedRange", inputs, {})


@pytest.mark.parametrize("limit", [np.inf, np.nan, 1e30])
def test_unbounded_float_range_as_tensorflow(limit) -> None:
    inputs = {"starts": F64([0.5]), "limits": F64([limit]), "deltas": F64([1.0])}
    assert_same_as_tf("RaggedRange", inputs, {})


def test_total_size_past_int32_splits_as_tensorflow() -> None:
    import tensorflow as tf

    # Two rows of 2**30 values: their total does not fit int32 splits (checked before
    # anything is allocated, on both sides).
    inputs = {"starts": I32([0, 0]), "limits": I32([2**30, 2**30 + 5]), "deltas": I32([1, 1])}
    assert_same_as_tf("RaggedRange", inputs, {"Tsplits": tf.int32})
    inputs = {k: I64(v) for k, v in inputs.items()}
    inputs["limits"] = I64([2**62, 2**62])
    assert_same_as_tf("RaggedRange", inputs, {})


def test_huge_range_is_resource_exhausted_naming_the_node() -> None:
    # TF fails this allocation too ("OOM when allocating tensor with shape[2**62]"); the
    # numpy kernel refuses before allocating, against the process budget.
    inputs = [I64(0), I64(2**62), I64(1)]
    with pytest.raises(ResourceExhaustedError, match=r"OOM when allocating .*shape\[4611") as e:
        run("RaggedRange", inputs, node_name="rr")
    assert e.value.node_name == "rr"
    before = memory.limit()
    memory.set_limit(1 << 20)
    try:
        with pytest.raises(ResourceExhaustedError, match="OOM when allocating"):
            run("RaggedRange", [I32([0, 0]), I32([2**20, 5]), I32(1)])
    finally:
        memory.set_limit(before)


# -- RaggedGather --------------------------------------------------------------------------
def _assert_gather_as_tf(inputs: dict, rank: int) -> None:
    """assert_same_as_tf for an op with a list output: TF's output_nested_splits flattened
    before the values, as our kernel returns them."""
    import tensorflow as tf

    tf_inputs = {k: [tf.constant(x) for x in v] if isinstance(v, list) else tf.constant(v)
                 for k, v in inputs.items()}  # fmt: skip
    try:
        splits, values = tf.raw_ops.RaggedGather(**tf_inputs, OUTPUT_RAGGED_RANK=rank)
    except tf.errors.OpError as e:
        with pytest.raises(Exception) as ours:  # noqa: PT011  compared below
            ours_run("RaggedGather", inputs, {"OUTPUT_RAGGED_RANK": rank})
        assert type(ours.value).__name__ == type(e).__name__, (ours.value, e.message)
        assert str(ours.value) in e.message, (str(ours.value), e.message)
        return
    got = ours_run("RaggedGather", inputs, {"OUTPUT_RAGGED_RANK": rank})
    want = [np.asarray(x) for x in [*splits, values]]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g.dtype, g.shape) == (w.dtype, w.shape), (g, w)
        np.testing.assert_array_equal(g, w)


def _splits(*levels, dtype=I64) -> list[np.ndarray]:
    return [dtype(s) for s in levels]


NESTED = _splits([0, 2, 3, 3], [0, 1, 1, 4])  # [[[a], []], [[b, c, d]], []]
DENSE = F32([[1, 2], [3, 4], [5, 6], [7, 8]])

GATHERS = [
    (_splits([0, 2, 3]), I32([1, 2, 3]), [1, 0, 1]),
    (_splits([0, 2, 3]), I32([1, 2, 3]), [[1, 0], [1, 1]]),  # indices' rank adds dimensions
    (_splits([0, 2, 3]), I32([1, 2, 3]), 1),  # a scalar index: one row, ragged rank 0
    (_splits([0, 2, 3], dtype=I32), I32([1, 2, 3]), [0, 0]),
    (_splits([0]), I32([]), np.zeros([0], I32)),
    (NESTED, DENSE, [1, 0, 2, 1]),
    (NESTED, DENSE, [[2], [0]]),
    (NESTED, DENSE, 1),
    (_splits([0, 1, 3]), np.array([b"a", b"bc", b""], dtype=object), [1, 1, 0]),
    (_splits([1, 2, 3]), I32([1, 2, 3]), [1]),  # TF does not require a leading 0
]


@pytest.mark.parametrize("splits,values,indices", GATHERS)
@pytest.mark.parametrize("index_dtype", [I32, I64])
def test_gather_as_tensorflow(splits, values, indices, index_dtype) -> None:
    indices = index_dtype(indices)
    rank = indices.ndim + len(splits) - 1
    inputs = {"params_nested_splits": splits, "params_dense_values": values, "indices": indices}
    _assert_gather_as_tf(inputs, rank)


BAD_GATHERS = [
    (_splits([0, 2, 3]), I32([1, 2, 3]), [3]),  # indices[0] = 3 is not in [0, 2)
    (_splits([0, 2, 3]), I32([1, 2, 3]), [[0], [-1]]),
    (_splits([0, 2, 3]), I32([1, 2, 3]), 2),
    (_splits([0, 2, 5]), I32([1, 2, 3]), [1]),  # must not point past values
    (_splits([0, 3, 2]), I32([1, 2, 3]), [1]),  # must be sorted
    (_splits([-1, 2, 3]), I32([1, 2, 3]), [1]),  # must be non-negative
    (_splits([]), np.zeros([0], I32), np.zeros([0], I32)),  # may not be empty
    (_splits([0, 2, 3]), I32(5), [1]),  # params.rank must be nonzero
    (_splits([0, 2, 3], [0, 1, 1, 5]), DENSE, [1]),
]


@pytest.mark.parametrize("splits,values,indices", BAD_GATHERS)
def test_gather_errors_as_tensorflow(splits, values, indices) -> None:
    indices = I32(indices)
    rank = indices.ndim + len(splits) - 1
    inputs = {"params_nested_splits": splits, "params_dense_values": values, "indices": indices}
    _assert_gather_as_tf(inputs, rank)


def test_gather_refuses_what_tensorflow_aborts_on() -> None:
    # TF 2.21's kernel check-fails (ending the process) on these; they are plain errors
    # here: an outer split naming one row past the inner splits, a wrong output rank.
    inner_past = [*_splits([0, 2, 4], [0, 1, 1, 4]), DENSE, I32([1])]
    with pytest.raises(InvalidArgumentError, match="must not point past values"):
        run("RaggedGather", inner_past, {"OUTPUT_RAGGED_RANK": 2})
    with pytest.raises(InvalidArgumentError, match="OUTPUT_RAGGED_RANK 2 must be"):
        run("RaggedGather", [I64([0, 2, 3]), I32([1, 2, 3]), I32([1])], {"OUTPUT_RAGGED_RANK": 2})
