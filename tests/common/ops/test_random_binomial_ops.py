"""Binomial samples and the stateless shuffle against TensorFlow 2.21, value for value:
StatelessRandomBinomial over parameter dtypes, output dtypes, broadcasting and both
samplers (inversion for n * p < 10, BTRS rejection above, p > 1/2 mirrored), and
StatelessShuffle for the key and counter a seed gives. Skipped without TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

from common import dtypes
from common.errors import InvalidArgumentError

from .kernel_harness import run
from .signatures import assert_signature_matches_tensorflow

tf = pytest.importorskip("tensorflow")
raw = tf.raw_ops

PARAMS = [
    (5.0, 0.3),  # inversion
    ([10.0, 50.0, 1000.0], [0.2, 0.7, 0.5]),  # both samplers, p > 1/2 mirrored
    ([[3.0], [40.0]], [0.1, 0.95, 0.5]),  # broadcast to [2, 3]
    (1e4, 0.001),  # n * p = 10: BTRS at the boundary
    (2000.0, 0.3),
    (0.0, 0.5),  # no trials
    (10.0, 0.0),
    (10.0, 1.0),
]


def _dtype(np_type) -> dtypes.DataType:
    return dtypes.from_numpy(np.dtype(np_type))


def assert_same(ours, theirs) -> None:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape)
    if ours.dtype.kind == "f":
        ours, theirs = ours.view(f"u{ours.itemsize}"), theirs.view(f"u{theirs.itemsize}")
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("name", ["StatelessRandomBinomial", "StatefulRandomBinomial"])
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


@pytest.mark.parametrize("counts,probs", PARAMS)
@pytest.mark.parametrize("param_type", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("out", [np.int32, np.int64, np.float16, np.float32, np.float64])
@pytest.mark.parametrize("seed", [[1, 2], [-7, 123456789]])
def test_stateless_binomial(counts, probs, param_type, out, seed):
    c, p = np.asarray(counts, param_type), np.asarray(probs, param_type)
    shape = np.array((4, 3, *np.broadcast_shapes(c.shape, p.shape)), np.int32)
    s = np.array(seed, np.int64)
    theirs = raw.StatelessRandomBinomial(shape=shape, seed=s, counts=c, probs=p, dtype=out)
    ours = run("StatelessRandomBinomial", [shape, s, c, p], {"dtype": _dtype(out)})[0]
    assert_same(ours, theirs.numpy())


def test_stateless_binomial_nan_probability_gives_nan():
    c, p = np.float32(7), np.float32(np.nan)
    shape, s = np.array([3], np.int64), np.array([1, 2], np.int64)
    theirs = raw.StatelessRandomBinomial(shape=shape, seed=s, counts=c, probs=p, dtype=tf.float32)
    ours = run("StatelessRandomBinomial", [shape, s, c, p], {"dtype": _dtype(np.float32)})[0]
    assert_same(ours, theirs.numpy())


@pytest.mark.parametrize(
    "shape,counts,probs,seed",
    [
        ([3, 2], [1.0, 2.0, 3.0], 0.5, [1, 2]),  # shape does not end with the batch shape
        ([3], [1.0, 2.0], [0.5, 0.1, 0.2], [1, 2]),  # counts and probs do not broadcast
        ([3], 1.0, 0.5, [1, 2, 3]),  # seed not [2]
    ],
)
def test_stateless_binomial_refuses_what_tensorflow_refuses(shape, counts, probs, seed):
    args = [np.array(shape, np.int32), np.array(seed, np.int64)]
    args += [np.asarray(counts, np.float32), np.asarray(probs, np.float32)]
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        raw.StatelessRandomBinomial(
            shape=args[0], seed=args[1], counts=args[2], probs=args[3], dtype=tf.int32
        )
    with pytest.raises(InvalidArgumentError) as ours:
        run("StatelessRandomBinomial", args, {"dtype": _dtype(np.int32)})
    assert ours.value.message in theirs.value.message


@pytest.mark.parametrize("shape", [[2], [5], [33], [17, 3], [1000], [6, 2, 2], [1, 4], []])
@pytest.mark.parametrize("seed", [[3, 4], [-1, 2**31 - 1]])
def test_stateless_shuffle_through_a_seed(shape, seed):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    theirs = tf.random.experimental.stateless_shuffle(x, seed=seed).numpy()
    key, counter, alg = (
        t.numpy() for t in raw.StatelessRandomGetKeyCounterAlg(seed=np.array(seed, np.int32))
    )
    assert_same(run("StatelessShuffle", [x, key, counter, alg])[0], theirs)


def test_stateless_shuffle_of_strings_from_a_key_and_counter():
    x = np.array([b"a", b"bb", b"ccc", b"d", b"ee"], object)
    key, counter = np.array([2**63 + 5], np.uint64), np.array([2**64 - 3, 9], np.uint64)
    theirs = raw.StatelessShuffle(value=x, key=key, counter=counter, alg=1).numpy()
    ours = run("StatelessShuffle", [x, key, counter, np.int32(1)])[0]
    assert list(ours) == list(theirs)


def test_stateless_shuffle_refuses_other_algorithms():
    x = np.arange(4)
    key, counter = np.array([1], np.uint64), np.array([0, 0], np.uint64)
    with pytest.raises(InvalidArgumentError, match="Unsupported algorithm id: 2"):
        run("StatelessShuffle", [x, key, counter, np.int32(2)])
