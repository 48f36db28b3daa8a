"""NN op families (activations, BiasAdd, softmax, conv, pooling, top-k): numpy
expectations and a TensorFlow oracle on random inputs. Signatures are checked against TF's
OpDefs in test_math_ops.py (it covers every op of these modules)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops.conv_ops import output_size

from . import compare_with_tf, run1, run_kernel

f32, f64, f16 = np.float32, np.float64, np.float16
bf16 = ml_dtypes.bfloat16
i32, i64 = np.int32, np.int64


def _r(shape, t=f32, seed=0, lo=-2.0, hi=2.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(t)


# ---------------------------------------------------------------------------------------
# numpy expectations
# ---------------------------------------------------------------------------------------


def test_activations():
    x = np.array([-2.0, -0.5, 0.0, 3.0, 7.0], f32)
    np.testing.assert_array_equal(run1("Relu", x), [0, 0, 0, 3, 7])
    np.testing.assert_array_equal(run1("Relu6", x), [0, 0, 0, 3, 6])
    np.testing.assert_allclose(run1("LeakyRelu", x, alpha=0.1), [-0.2, -0.05, 0, 3, 7])
    np.testing.assert_allclose(run1("Elu", x), np.where(x < 0, np.expm1(x), x), rtol=1e-6)
    np.testing.assert_allclose(run1("Softsign", x), x / (1 + np.abs(x)), rtol=1e-6)
    np.testing.assert_allclose(run1("Softplus", x), np.log1p(np.exp(x)), rtol=1e-6)
    assert run1("Relu", np.array([-3, 4], i32)).tolist() == [0, 4]
    assert run1("Selu", x.astype(f16)).dtype == f16


def test_bias_add_formats_and_errors():
    x = np.zeros((2, 3, 4, 5), f32)
    b = np.arange(5, dtype=f32)
    assert run1("BiasAdd", x, b)[1, 2, 3].tolist() == b.tolist()
    bc = np.arange(3, dtype=f32)
    assert run1("BiasAdd", x, bc, data_format="NCHW")[1, :, 0, 0].tolist() == bc.tolist()
    assert run1("BiasAddV1", x, b).shape == x.shape
    with pytest.raises(InvalidArgumentError, match="as many biases as the last dimension"):
        run1("BiasAdd", x, bc)
    with pytest.raises(InvalidArgumentError, match="Biases must be 1D"):
        run1("BiasAdd", x, np.zeros((1, 5), f32))


def test_softmax_rows_sum_to_one():
    x = _r((4, 7)) * 30
    y = run1("Softmax", x)
    assert y.dtype == f32
    np.testing.assert_allclose(y.sum(-1), np.ones(4), rtol=1e-6)
    x64 = x.astype(f64)
    expect = x64 - x64.max(-1, keepdims=True)
    expect -= np.log(np.exp(expect).sum(-1, keepdims=True))
    np.testing.assert_allclose(run1("LogSoftmax", x), expect, rtol=1e-5, atol=1e-5)


def test_l2_loss():
    x = np.array([1.0, 2.0, 3.0], f32)
    out = run1("L2Loss", x)
    assert out.shape == () and out.dtype == f32 and float(out) == 7.0


def test_output_size_same_valid_explicit():
    assert output_size(5, 3, 2, 1, "SAME", (0, 0)) == (3, 1, 1)
    assert output_size(6, 3, 2, 1, "SAME", (0, 0)) == (3, 0, 1)
    assert output_size(5, 3, 2, 1, "VALID", (0, 0)) == (2, 0, 0)
    assert output_size(5, 3, 1, 2, "VALID", (0, 0)) == (1, 0, 0)
    assert output_size(5, 3, 1, 1, "EXPLICIT", (2, 1)) == (6, 2, 1)
    with pytest.raises(InvalidArgumentError, match="negative"):
        output_size(2, 5, 1, 1, "VALID", (0, 0))


def test_conv2d_matches_direct_sum():
    x = _r((1, 4, 4, 2))
    f = _r((3, 3, 2, 3), seed=1)
    out = run1("Conv2D", x, f, strides=[1, 1, 1, 1], padding="VALID")
    expect = np.zeros((1, 2, 2, 3), f32)
    for i in range(2):
        for j in range(2):
            expect[0, i, j] = np.tensordot(x[0, i : i + 3, j : j + 3], f, axes=3)
    np.testing.assert_allclose(out, expect, rtol=1e-5)
    with pytest.raises(InvalidArgumentError, match="evenly divisible"):
        run1("Conv2D", x, _r((3, 3, 3, 3)), strides=[1, 1, 1, 1], padding="VALID")
    with pytest.raises(InvalidArgumentError, match="strides in the batch"):
        run1("Conv2D", x, f, strides=[2, 1, 1, 1], padding="VALID")


def test_avg_pool_same_divides_by_valid_count():
    x = np.arange(9, dtype=f32).reshape(1, 3, 3, 1)
    out = run1("AvgPool", x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
    np.testing.assert_allclose(out[0, :, :, 0], [[2.0, 3.5], [6.5, 8.0]])
    mx = run1("MaxPool", x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
    np.testing.assert_array_equal(mx[0, :, :, 0], [[4, 5], [7, 8]])
    v2 = run1(
        "MaxPoolV2", x, np.array([1, 2, 2, 1], i32), np.array([1, 2, 2, 1], i32), padding="SAME"
    )
    np.testing.assert_array_equal(v2, mx)


def test_nchw_equals_transposed_nhwc():
    x = _r((2, 5, 6, 3))
    f = _r((3, 2, 3, 4), seed=1)
    nhwc = run1("Conv2D", x, f, strides=[1, 2, 1, 1], padding="SAME")
    nchw = run1(
        "Conv2D",
        x.transpose(0, 3, 1, 2),
        f,
        strides=[1, 1, 2, 1],
        padding="SAME",
        data_format="NCHW",
    )
    np.testing.assert_allclose(nchw.transpose(0, 2, 3, 1), nhwc, rtol=1e-5)
    p = run1(
        "MaxPool",
        x.transpose(0, 3, 1, 2),
        ksize=[1, 1, 2, 2],
        strides=[1, 1, 2, 2],
        padding="VALID",
        data_format="NCHW",
    )
    q = run1("MaxPool", x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    np.testing.assert_array_equal(p.transpose(0, 2, 3, 1), q)


def test_top_k_ties_and_errors():
    values, idx = run_kernel("TopKV2", [np.array([[1, 3, 3, 2]], i32), np.int32(3)])
    assert values.tolist() == [[3, 3, 2]] and idx.tolist() == [[1, 2, 3]]
    assert idx.dtype == i32
    with pytest.raises(InvalidArgumentError, match="at least k columns"):
        run_kernel("TopKV2", [np.array([1, 2], f32), np.int32(3)])
    with pytest.raises(InvalidArgumentError, match="Need k >= 0"):
        run_kernel("TopKV2", [np.array([1, 2], f32), np.int32(-1)])


def test_in_top_k():
    pred = np.array([[0.1, 0.5, 0.4], [0.3, 0.3, 0.4]], f32)
    out = run1("InTopKV2", pred, np.array([2, 0], i32), np.int32(1))
    assert out.tolist() == [False, False]
    out = run1("InTopKV2", pred, np.array([2, 5], i32), np.int32(2))
    assert out.tolist() == [True, False]  # out-of-range target is never in the top k


# ---------------------------------------------------------------------------------------
# TensorFlow oracle
# ---------------------------------------------------------------------------------------

FLOATS = (f32, f64, f16, bf16)


@pytest.mark.parametrize(
    "op",
    [
        "Relu",
        "Relu6",
        "Elu",
        "Selu",
        "Softplus",
        "Softsign",
        "LeakyRelu",
        "Softmax",
        "LogSoftmax",
        "L2Loss",
    ],
)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda t: np.dtype(t).name)
def test_tf_oracle_float_nn(op, dtype):
    pytest.importorskip("tensorflow")
    x = _r((3, 8), dtype, lo=-6, hi=6)
    compare_with_tf(op, [x])
    if op == "LeakyRelu":
        compare_with_tf(op, [x], alpha=0.3)


@pytest.mark.parametrize("dtype", (i32, i64, np.uint8, np.int8), ids=lambda t: np.dtype(t).name)
def test_tf_oracle_integer_relu(dtype):
    pytest.importorskip("tensorflow")
    x = np.random.default_rng(2).integers(0 if dtype == np.uint8 else -9, 9, (4, 5))
    compare_with_tf("Relu", [x.astype(dtype)])
    compare_with_tf("Relu6", [x.astype(dtype)])


@pytest.mark.parametrize(
    "dtype", (f32, f64, f16, i32, np.complex64), ids=lambda t: np.dtype(t).name
)
def test_tf_oracle_bias_add(dtype):
    pytest.importorskip("tensorflow")
    x, b = _r((2, 3, 4, 5)).astype(dtype), _r((5,), seed=1).astype(dtype)
    compare_with_tf("BiasAdd", [x, b])
    compare_with_tf("BiasAddV1", [x, b])
    compare_with_tf("BiasAdd", [_r((2, 3)).astype(dtype), _r((3,), seed=1).astype(dtype)])


CONV_CASES = [
    ((2, 7, 7, 3), (3, 3, 3, 4), {"strides": [1, 1, 1, 1], "padding": "SAME"}),
    ((1, 8, 9, 2), (3, 2, 2, 5), {"strides": [1, 2, 3, 1], "padding": "SAME"}),
    ((1, 8, 9, 2), (3, 2, 2, 5), {"strides": [1, 2, 2, 1], "padding": "VALID"}),
    (
        (1, 9, 9, 2),
        (3, 3, 2, 2),
        {"strides": [1, 1, 1, 1], "padding": "VALID", "dilations": [1, 2, 2, 1]},
    ),
    (
        (1, 6, 6, 2),
        (2, 3, 2, 3),
        {
            "strides": [1, 1, 2, 1],
            "padding": "EXPLICIT",
            "explicit_paddings": [0, 0, 1, 2, 0, 1, 0, 0],
        },
    ),
    ((2, 6, 6, 4), (3, 3, 2, 6), {"strides": [1, 1, 1, 1], "padding": "SAME"}),  # 2 groups
]


@pytest.mark.parametrize("xs,fs,attrs", CONV_CASES)
def test_tf_oracle_conv2d(xs, fs, attrs):
    pytest.importorskip("tensorflow")
    compare_with_tf("Conv2D", [_r(xs), _r(fs, seed=1)], **attrs)
    if xs == (2, 7, 7, 3):
        compare_with_tf("Conv2D", [_r(xs, f64), _r(fs, f64, seed=1)], **attrs)


@pytest.mark.parametrize("dtype", (f32, f64), ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("strides", [[1, 1, 1, 1], [1, 2, 2, 1]])
def test_tf_oracle_depthwise(dtype, padding, strides):
    pytest.importorskip("tensorflow")
    x, f = _r((2, 7, 6, 3), dtype), _r((3, 3, 3, 2), dtype, seed=1)
    compare_with_tf("DepthwiseConv2dNative", [x, f], strides=strides, padding=padding)


POOL_CASES = [
    {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"},
    {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1], "padding": "SAME"},
    {"ksize": [1, 3, 2, 1], "strides": [1, 1, 2, 1], "padding": "SAME"},
    {"ksize": [1, 4, 4, 1], "strides": [1, 3, 3, 1], "padding": "SAME"},
]


@pytest.mark.parametrize("attrs", POOL_CASES)
@pytest.mark.parametrize("dtype", (f32, f64, f16), ids=lambda t: np.dtype(t).name)
def test_tf_oracle_pooling(attrs, dtype):
    pytest.importorskip("tensorflow")
    x = _r((2, 7, 8, 3), dtype)
    compare_with_tf("MaxPool", [x], **attrs)
    compare_with_tf("AvgPool", [x], **attrs)
    compare_with_tf(
        "MaxPoolV2",
        [x, np.array(attrs["ksize"], i32), np.array(attrs["strides"], i32)],
        padding=attrs["padding"],
    )


def test_tf_oracle_integer_max_pool_and_explicit_padding():
    pytest.importorskip("tensorflow")
    x = np.random.default_rng(5).integers(-50, 50, (1, 6, 6, 2)).astype(i32)
    compare_with_tf("MaxPool", [x], ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
    compare_with_tf(
        "MaxPool",
        [_r((1, 5, 5, 2))],
        ksize=[1, 2, 2, 1],
        strides=[1, 1, 1, 1],
        padding="EXPLICIT",
        explicit_paddings=[0, 0, 1, 0, 0, 1, 0, 0],
    )


@pytest.mark.parametrize("dtype", (f32, f64, i32, i64), ids=lambda t: np.dtype(t).name)
def test_tf_oracle_top_k(dtype):
    pytest.importorskip("tensorflow")
    x = np.random.default_rng(9).integers(-5, 5, (3, 10)).astype(dtype)  # with ties
    for k in (0, 1, 4, 10):
        compare_with_tf("TopKV2", [x, np.int32(k)])
    compare_with_tf("TopKV2", [x[0], np.int64(3)], index_type=DataType.DT_INT64)


def test_tf_oracle_in_top_k_and_lrn():
    pytest.importorskip("tensorflow")
    pred = np.random.default_rng(4).integers(0, 4, (6, 5)).astype(f32)  # with ties
    for k in (1, 2, 5):
        compare_with_tf("InTopKV2", [pred, np.array([0, 1, 2, 3, 4, 0], i32), np.int32(k)])
    # A row with a non-finite prediction anywhere is false, whatever the target's rank.
    odd = np.array([[0.5, -np.inf, 2.0], [np.nan, 1.0, 0.0], [1.0, 2.0, 3.0]], f32)
    compare_with_tf("InTopKV2", [odd, np.array([2, 1, 2], i32), np.int32(1)])
    x = _r((1, 3, 3, 12))
    compare_with_tf("LRN", [x])
    compare_with_tf("LRN", [x], depth_radius=2, bias=0.5, alpha=0.3, beta=0.75)
