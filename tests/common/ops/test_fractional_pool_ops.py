"""Tests (ops stage): FractionalMaxPool, FractionalAvgPool and their gradients against
TensorFlow (the oracle): OpDefs; seeded pooling sequences and values bit for bit
(pseudo-random and random cuts, overlapping or not, several seeds and sizes); the
gradients; deterministic runs without seeds; the errors of bad input."""

from __future__ import annotations

import os

import numpy as np
import pytest

from common.ops.registry import KernelConstruction
from tests.common.ops import compare_with_tf, run_kernel
from tests.common.ops.kernel_harness import assert_same_as_tf
from tests.common.ops.signatures import assert_signature_matches_tensorflow

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

OPS = ["FractionalMaxPool", "FractionalMaxPoolGrad", "FractionalAvgPool", "FractionalAvgPoolGrad"]
RATIOS = [[1, 1.44, 1.73, 1], [1, 2.0, 1.5, 1], [1, 1.0, 3.3, 1], [1, 2.7, 1.2, 1]]


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name: str) -> None:
    assert_signature_matches_tensorflow(name)


def _x(dtype: type, shape: tuple = (2, 11, 13, 3), seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-50, 50, shape).astype(dtype)


@pytest.mark.parametrize("op", ["FractionalMaxPool", "FractionalAvgPool"])
@pytest.mark.parametrize("pseudo", [False, True])
@pytest.mark.parametrize("overlapping", [False, True])
@pytest.mark.parametrize("ratio", RATIOS)
def test_seeded_pooling_matches_tensorflow(op: str, pseudo: bool, overlapping: bool, ratio) -> None:
    pytest.importorskip("tensorflow")
    for seed, seed2 in ((1, 2), (7, 0), (0, 12345), (2**40 + 3, 99)):
        attrs = {
            "pooling_ratio": ratio,
            "pseudo_random": pseudo,
            "overlapping": overlapping,
            "deterministic": True,
            "seed": seed,
            "seed2": seed2,
        }
        for dtype in (np.float32, np.int32):
            assert_same_as_tf(op, {"value": _x(dtype, seed=seed % 7)}, attrs)
    # float64 and int64, one seed; the average of floats to tolerance (sum order).
    attrs["seed"] = 5
    assert_same_as_tf(op, {"value": _x(np.int64, (1, 9, 25, 2))}, attrs)
    compare_with_tf(op, [_x(np.float64, (3, 17, 6, 1))], **attrs)


@pytest.mark.parametrize("overlapping", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_max_pool_grad_matches_tensorflow(overlapping: bool, dtype: type) -> None:
    tf = pytest.importorskip("tensorflow")
    x = _x(dtype) // 10 if np.dtype(dtype).kind == "i" else np.round(_x(dtype))  # ties
    y, rows, cols = tf.raw_ops.FractionalMaxPool(
        value=x,
        pooling_ratio=[1, 1.6, 1.9, 1],
        overlapping=overlapping,
        pseudo_random=True,
        deterministic=True,
        seed=3,
        seed2=9,
    )
    g = _x(dtype, tuple(y.shape), 8)
    inputs = {
        "orig_input": x,
        "orig_output": y.numpy(),
        "out_backprop": g,
        "row_pooling_sequence": rows.numpy(),
        "col_pooling_sequence": cols.numpy(),
    }
    assert_same_as_tf("FractionalMaxPoolGrad", inputs, {"overlapping": overlapping})


@pytest.mark.parametrize("overlapping", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_avg_pool_grad_matches_tensorflow(overlapping: bool, dtype: type) -> None:
    tf = pytest.importorskip("tensorflow")
    x = _x(dtype)
    y, rows, cols = tf.raw_ops.FractionalAvgPool(
        value=x,
        pooling_ratio=[1, 1.3, 2.2, 1],
        overlapping=overlapping,
        pseudo_random=False,
        deterministic=True,
        seed=4,
        seed2=1,
    )
    g = _x(dtype, tuple(y.shape), 8)
    shape = np.array(x.shape, np.int64)
    assert_same_as_tf(
        "FractionalAvgPoolGrad",
        {
            "orig_input_tensor_shape": shape,
            "out_backprop": g,
            "row_pooling_sequence": rows.numpy(),
            "col_pooling_sequence": cols.numpy(),
        },
        {"overlapping": overlapping},
    )


def test_deterministic_without_seeds_repeats_and_unseeded_runs_vary() -> None:
    x = _x(np.float32, (1, 40, 40, 1))
    attrs = {"pooling_ratio": [1, 1.5, 1.5, 1], "deterministic": True}
    kc_run = _kernel("FractionalMaxPool", attrs)
    first = kc_run(x)
    assert all(np.array_equal(first[1], kc_run(x)[1]) for _ in range(3))
    free = _kernel("FractionalMaxPool", {"pooling_ratio": [1, 1.5, 1.5, 1]})
    seqs = {tuple(free(x)[1]) for _ in range(8)}
    assert len(seqs) > 1  # fresh OS seeds every run


def _kernel(op: str, attrs: dict):
    """One kernel object run repeatedly (as an executor keeps it)."""
    from common.ops import registry
    from tests.common.ops import kernel_construction

    x = _x(np.float32, (1, 4, 4, 1))
    kc: KernelConstruction = kernel_construction(op, [x], **attrs)
    compute = registry.lookup_kernel(op, "CPU", "", kc.node_name).factory(kc)
    return lambda v: [np.asarray(o) for o in compute(None, [v])]


@pytest.mark.parametrize(
    "case", ["small_ratio", "batch_ratio", "channel_ratio", "seeds", "rank", "ratio_too_big"]
)
@pytest.mark.parametrize("op", ["FractionalMaxPool", "FractionalAvgPool"])
def test_pool_errors_match_tensorflow(op: str, case: str) -> None:
    pytest.importorskip("tensorflow")
    x = _x(np.float32, (1, 4, 5, 2))
    attrs: dict = {"pooling_ratio": [1, 1.5, 1.5, 1]}
    if case == "small_ratio":
        attrs["pooling_ratio"] = [1, 0.5, 1.5, 1]
    elif case == "batch_ratio":
        attrs["pooling_ratio"] = [2, 1.5, 1.5, 1]
    elif case == "channel_ratio":
        attrs["pooling_ratio"] = [1, 1.5, 1.5, 2]
    elif case == "seeds":
        attrs["seed"] = 3
    elif case == "rank":
        x = x[0]
    else:
        attrs["pooling_ratio"] = [1, 1.44, 5.73, 1]
    assert_same_as_tf(op, {"value": x}, attrs)


@pytest.mark.parametrize("case", ["rank", "empty", "mismatch", "seq_too_long"])
def test_max_grad_errors_match_tensorflow(case: str) -> None:
    pytest.importorskip("tensorflow")
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    y = np.array([5, 7, 13, 15], np.float32).reshape(1, 2, 2, 1)
    seq = np.array([0, 2, 4], np.int64)
    inputs = {
        "orig_input": x,
        "orig_output": y,
        "out_backprop": np.ones_like(y),
        "row_pooling_sequence": seq,
        "col_pooling_sequence": seq,
    }
    if case == "rank":
        inputs["orig_input"] = x[0]
    elif case == "empty":
        inputs["orig_output"] = y[:0]
    elif case == "mismatch":
        inputs["orig_output"] = y + 1
    else:
        inputs["row_pooling_sequence"] = np.arange(20, dtype=np.int64)
    assert_same_as_tf("FractionalMaxPoolGrad", inputs, message=case != "seq_too_long")


@pytest.mark.parametrize("case", ["shape_rank", "short_rows", "short_cols", "zero_dim"])
def test_avg_grad_errors_match_tensorflow(case: str) -> None:
    pytest.importorskip("tensorflow")
    shape = np.array([1, 4, 4, 1], np.int64)
    g = np.ones((1, 2, 2, 1), np.float32)
    seq = np.array([0, 2, 4], np.int64)
    inputs = {
        "orig_input_tensor_shape": shape,
        "out_backprop": g,
        "row_pooling_sequence": seq,
        "col_pooling_sequence": seq,
    }
    if case == "shape_rank":
        inputs["orig_input_tensor_shape"] = shape[:3]
    elif case == "short_rows":
        inputs["row_pooling_sequence"] = seq[:2]
    elif case == "short_cols":
        inputs["col_pooling_sequence"] = seq[:1]
    else:
        inputs["orig_input_tensor_shape"] = np.array([1, 0, 4, 1], np.int64)
    assert_same_as_tf("FractionalAvgPoolGrad", inputs)


def test_run_kernel_outputs_sequences_as_int64() -> None:
    out = run_kernel(
        "FractionalAvgPool", [_x(np.float32, (1, 6, 6, 1))], pooling_ratio=[1, 2.0, 2.0, 1]
    )
    assert (out[0].shape, out[1].tolist(), out[2].dtype) == ((1, 3, 3, 1), [0, 2, 4, 6], np.int64)
