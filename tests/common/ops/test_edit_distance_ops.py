"""Tests (ops stage): EditDistance against TensorFlow (the oracle): its signature, values
bit for bit (normalized or not, missing truths and hypotheses, strings and NaNs, batch
dims), and the errors on bad input."""

from __future__ import annotations

import os

import numpy as np
import pytest

from common.errors import InvalidArgumentError
from tests.common.ops import run1
from tests.common.ops.kernel_harness import assert_same_as_tf
from tests.common.ops.signatures import assert_signature_matches_tensorflow

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

I64 = np.int64


def _inputs(h_ix, h_vals, h_shape, t_ix, t_vals, t_shape) -> dict:
    return {
        "hypothesis_indices": np.array(h_ix, I64).reshape(-1, len(h_shape)),
        "hypothesis_values": h_vals,
        "hypothesis_shape": np.array(h_shape, I64),
        "truth_indices": np.array(t_ix, I64).reshape(-1, len(t_shape)),
        "truth_values": t_vals,
        "truth_shape": np.array(t_shape, I64),
    }


# TF's docstring example: hypothesis ["a"] / ["b"], truth of 2x2 with two empty slots.
DOC = _inputs(
    [[0, 0, 0], [1, 0, 0]],
    np.array([b"a", b"b"], object),
    [2, 1, 1],
    [[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 0]],
    np.array([b"a", b"b", b"c", b"a"], object),
    [2, 2, 2],
)


def test_signature_matches_tensorflow() -> None:
    assert_signature_matches_tensorflow("EditDistance")


def test_tf_docstring_example() -> None:
    out = run1("EditDistance", *DOC.values())
    assert out.dtype == np.float32
    assert out.tolist() == [[np.inf, 1.0], [0.5, 1.0]]


def test_levenshtein_kitten_sitting() -> None:
    h = _inputs(
        [[0, i] for i in range(6)], np.frombuffer(b"kitten", np.uint8), [1, 6], [], [], [1, 7]
    )
    t = _inputs(
        [[0, i] for i in range(7)], np.frombuffer(b"sitting", np.uint8), [1, 7], [], [], [1, 7]
    )
    args = [*list(h.values())[:3], *list(t.values())[:3]]
    assert run1("EditDistance", *args, normalize=False).tolist() == [3.0]


@pytest.mark.parametrize("normalize", [True, False])
def test_docstring_example_matches_tensorflow(normalize: bool) -> None:
    pytest.importorskip("tensorflow")
    assert_same_as_tf("EditDistance", DOC, {"normalize": normalize})


def _random_sparse(rng, shape, dtype, density) -> tuple[np.ndarray, np.ndarray]:
    dense = rng.integers(0, 4, shape)
    mask = rng.random(shape) < density
    # sequences are left-aligned: keep a prefix of each row of the last dimension
    mask = np.cumprod(mask, axis=-1).astype(bool)
    ix = np.argwhere(mask).astype(I64)
    return ix, dense[mask].astype(dtype)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64, np.uint8])
@pytest.mark.parametrize("normalize", [True, False])
def test_random_batches_match_tensorflow(dtype: type, normalize: bool) -> None:
    pytest.importorskip("tensorflow")
    rng = np.random.default_rng(7)
    for h_shape, t_shape in (
        ([3, 4, 6], [3, 4, 5]),
        ([2, 7], [4, 3]),
        ([1, 1, 1, 3], [2, 1, 2, 4]),
    ):
        h_ix, h_vals = _random_sparse(rng, h_shape, dtype, 0.8)
        t_ix, t_vals = _random_sparse(rng, t_shape, dtype, 0.8)
        inputs = _inputs(h_ix, h_vals, h_shape, t_ix, t_vals, t_shape)
        assert_same_as_tf("EditDistance", inputs, {"normalize": normalize})


def test_nan_never_equals_nan_and_unsorted_groups_match_tensorflow() -> None:
    pytest.importorskip("tensorflow")
    nan = np.float32(np.nan)
    inputs = _inputs(
        [[1, 0], [0, 0], [0, 1]],
        np.array([nan, 1, nan], np.float32),
        [2, 2],
        [[0, 0], [0, 1], [1, 0]],
        np.array([1, nan, nan], np.float32),
        [2, 2],
    )
    assert_same_as_tf("EditDistance", inputs, {"normalize": False})
    empty = _inputs([], np.zeros(0, np.float32), [2, 3], [], np.zeros(0, np.float32), [2, 3])
    assert_same_as_tf("EditDistance", empty, {})


@pytest.mark.parametrize(
    "case",
    [
        "rank1",
        "zero_output",
        "rank_mismatch",
        "values_rows",
        "shape_cols",
        "indices_vector",
        "negative_dim",
    ],
)
def test_bad_input_errors_match_tensorflow(case: str) -> None:
    pytest.importorskip("tensorflow")
    f = np.zeros(1, np.float32)
    inputs = {
        "rank1": _inputs([[0]], f, [1], [[0]], f, [1]),
        "zero_output": _inputs([], f[:0], [0, 3], [], f[:0], [0, 3]),
        "rank_mismatch": _inputs([[0, 0]], f, [1, 1], [[0, 0, 0]], f, [1, 1, 1]),
        "values_rows": _inputs([[0, 0]], np.zeros(2, np.float32), [1, 1], [[0, 0]], f, [1, 1]),
        "shape_cols": {
            **_inputs([[0, 0]], f, [1, 1], [[0, 0]], f, [1, 1]),
            "truth_shape": np.array([1, 1, 1], I64),
        },
        "indices_vector": {
            **_inputs([[0, 0]], f, [1, 1], [[0, 0]], f, [1, 1]),
            "truth_indices": np.zeros(2, I64),
        },
        "negative_dim": _inputs([[0, 0]], f, [1, -1], [[0, 0]], f, [1, 1]),
    }[case]
    assert_same_as_tf("EditDistance", inputs, {})


def test_zero_element_output_is_invalid_argument() -> None:
    f = np.zeros(0, np.float32)
    with pytest.raises(InvalidArgumentError, match=r"Got output shape \[0\] which has 0"):
        run1("EditDistance", *_inputs([], f, [0, 3], [], f, [0, 3]).values())
