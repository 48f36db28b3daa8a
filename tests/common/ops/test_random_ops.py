"""Random ops (random_ops): signatures against TensorFlow's, shapes and dtypes, the seed
contract (deterministic per (seed, seed2), advancing per call) and distributions."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops import registry
from common.ops.registry import OpKernelContext

from . import kernel_construction
from .signatures import assert_signature_matches_tensorflow, module_ops

MY_OPS = module_ops("common.ops.random_ops", "common.ops.stateless_random_ops")
N = 20000


class Kernel:
    """One kernel instance (one graph node): its stream persists across calls."""

    def __init__(self, op: str, inputs: list, **attrs) -> None:
        kc = kernel_construction(op, inputs, **attrs)
        self.compute = registry.lookup_kernel(op, "CPU", "", kc.node_name).factory(kc)
        self.inputs = inputs

    def __call__(self) -> np.ndarray:
        return np.asarray(self.compute(OpKernelContext(None, (0, 0), "n"), self.inputs)[0])


def _shape(*dims) -> np.ndarray:
    return np.array(dims, np.int32)


def test_registered_the_whole_family():
    assert (
        sorted(
            [
                "Multinomial",
                "RandomGamma",
                "RandomPoisson",
                "RandomPoissonV2",
                "RandomShuffle",
                "RandomStandardNormal",
                "RandomUniform",
                "RandomUniformInt",
                "StatelessMultinomial",
                "StatelessRandomGammaV2",
                "StatelessRandomGammaV3",
                "StatelessRandomGetAlg",
                "StatelessRandomGetKeyCounter",
                "StatelessRandomGetKeyCounterAlg",
                "StatelessRandomNormal",
                "StatelessRandomNormalV2",
                "StatelessRandomPoisson",
                "StatelessRandomUniform",
                "StatelessRandomUniformFullInt",
                "StatelessRandomUniformFullIntV2",
                "StatelessRandomUniformInt",
                "StatelessRandomUniformIntV2",
                "StatelessRandomUniformV2",
                "StatelessShuffle",
                "StatelessTruncatedNormal",
                "StatelessTruncatedNormalV2",
                "TruncatedNormal",
            ]
        )
        == MY_OPS
    )


@pytest.mark.parametrize("name", MY_OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16])
def test_uniform_dtype_shape_range(dtype):
    k = Kernel(
        "RandomUniform",
        [_shape(N // 10, 10)],
        dtype=DataType(
            {np.float32: 1, np.float64: 2, np.float16: 19, ml_dtypes.bfloat16: 14}[dtype]
        ),
        seed=1,
        seed2=2,
    )
    x = k()
    assert x.dtype == np.dtype(dtype) and x.shape == (N // 10, 10)
    v = x.astype(np.float64)
    assert v.min() >= 0 and v.max() < 1
    assert abs(v.mean() - 0.5) < 0.02
    assert abs(v.std() - np.sqrt(1 / 12)) < 0.02


def test_normal_and_truncated_normal_moments():
    x = Kernel("RandomStandardNormal", [_shape(N)], dtype=DataType.DT_FLOAT, seed=3)()
    assert x.dtype == np.float32
    assert abs(x.mean()) < 0.03 and abs(x.std() - 1) < 0.03
    t = Kernel("TruncatedNormal", [_shape(N)], dtype=DataType.DT_DOUBLE, seed=3)()
    assert t.dtype == np.float64
    assert np.abs(t).max() <= 2
    # std of a standard normal truncated to [-2, 2]
    assert abs(t.std() - 0.8796) < 0.02 and abs(t.mean()) < 0.03


def test_fixed_seeds_replay_and_advance():
    a = Kernel("RandomUniform", [_shape(5)], dtype=DataType.DT_FLOAT, seed=7, seed2=9)
    b = Kernel("RandomUniform", [_shape(5)], dtype=DataType.DT_FLOAT, seed=7, seed2=9)
    first, second = a(), a()
    assert not np.array_equal(first, second)  # the stream advances per call
    np.testing.assert_array_equal(b(), first)  # a fresh kernel replays it
    np.testing.assert_array_equal(b(), second)
    c = Kernel("RandomUniform", [_shape(5)], dtype=DataType.DT_FLOAT, seed=7, seed2=10)
    assert not np.array_equal(c(), first)


def test_zero_seeds_are_nondeterministic():
    a = Kernel("RandomUniform", [_shape(8)], dtype=DataType.DT_FLOAT)
    b = Kernel("RandomUniform", [_shape(8)], dtype=DataType.DT_FLOAT)
    assert not np.array_equal(a(), b())


def test_uniform_int():
    x = Kernel("RandomUniformInt", [_shape(N), np.int64(-3), np.int64(4)], seed=1)()
    assert x.dtype == np.int64
    assert set(np.unique(x).tolist()) == set(range(-3, 4))
    with pytest.raises(InvalidArgumentError, match="Need minval < maxval: 4 >= 4"):
        Kernel("RandomUniformInt", [_shape(2), np.int32(4), np.int32(4)])()


def test_shape_errors():
    with pytest.raises(InvalidArgumentError, match="Dimension -1 must be >= 0"):
        Kernel("RandomUniform", [_shape(2, -1)], dtype=DataType.DT_FLOAT)()
    with pytest.raises(InvalidArgumentError, match="shape must be a vector"):
        Kernel("RandomUniform", [np.ones((2, 2), np.int32)], dtype=DataType.DT_FLOAT)()


def test_shuffle_is_a_permutation_of_rows():
    x = np.arange(100).reshape(50, 2)
    y = Kernel("RandomShuffle", [x], seed=5)()
    assert not np.array_equal(x, y)
    np.testing.assert_array_equal(np.sort(y[:, 0]), x[:, 0])
    np.testing.assert_array_equal(y[:, 1], y[:, 0] + 1)
    np.testing.assert_array_equal(Kernel("RandomShuffle", [np.int32(3)], seed=5)(), 3)


def test_multinomial_frequencies():
    with np.errstate(divide="ignore"):
        logits = np.log(np.array([[0.2, 0.8, 0.0], [1.0, 1.0, 2.0]], np.float32))
    x = Kernel("Multinomial", [logits, np.int32(N)], seed=11)()
    assert x.dtype == np.int64 and x.shape == (2, N)
    np.testing.assert_allclose(np.bincount(x[0], minlength=3) / N, [0.2, 0.8, 0.0], atol=0.015)
    np.testing.assert_allclose(np.bincount(x[1], minlength=3) / N, [0.25, 0.25, 0.5], atol=0.015)
    with pytest.raises(InvalidArgumentError, match="logits should be a matrix"):
        Kernel("Multinomial", [np.zeros(3, np.float32), np.int32(1)])()


def test_stateless_is_a_function_of_the_seed():
    seed = np.array([1, 2], np.int64)
    a = Kernel("StatelessRandomNormal", [_shape(4, 3), seed])
    first = a()
    assert first.dtype == np.float32 and first.shape == (4, 3)
    np.testing.assert_array_equal(a(), first)
    assert not np.array_equal(
        Kernel("StatelessRandomNormal", [_shape(4, 3), np.array([1, 3], np.int64)])(), first
    )
    u = Kernel(
        "StatelessRandomUniformInt",
        [_shape(N), seed, np.int32(0), np.int32(3)],
        dtype=DataType.DT_INT32,
    )()
    assert u.dtype == np.int32 and set(np.unique(u).tolist()) == {0, 1, 2}
    with pytest.raises(InvalidArgumentError, match=r"seed must have shape \[2\], not \[3\]"):
        Kernel("StatelessRandomUniform", [_shape(2), np.array([1, 2, 3], np.int64)])()


def test_dtypes_like_tensorflow():
    tf = pytest.importorskip("tensorflow")
    for op, inputs, attrs in (
        ("RandomUniform", [_shape(2, 3)], {"dtype": DataType.DT_HALF}),
        ("TruncatedNormal", [np.array([4], np.int64)], {"dtype": DataType.DT_DOUBLE}),
        (
            "Multinomial",
            [np.zeros((2, 3), np.float32), np.int32(4)],
            {"output_dtype": DataType.DT_INT32},
        ),
    ):
        ours = Kernel(op, inputs, **attrs)()
        tf_attrs = {k: tf.dtypes.as_dtype(int(v)) for k, v in attrs.items()}
        names = [a.name for a in registry.lookup_op(op).input_args]
        theirs = getattr(tf.raw_ops, op)(**dict(zip(names, inputs)), **tf_attrs).numpy()
        assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape), op
