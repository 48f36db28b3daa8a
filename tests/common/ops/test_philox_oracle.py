"""Random kernels against TensorFlow 2.21, value for value: the same seeds give the same
bits (uniform floats and ints, normals, truncated normals, shuffles, multinomial), for
stateful kernels over several runs (each run draws fresh numbers as TF's generator
advances) and for the stateless V1/V2 family. Skipped without TensorFlow."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops.random import libm
from common.session import Session

from .test_random_ops import Kernel

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1

FLOATS = [
    (DataType.DT_FLOAT, "float32"),
    (DataType.DT_DOUBLE, "float64"),
    (DataType.DT_HALF, "float16"),
    (DataType.DT_BFLOAT16, "bfloat16"),
]
SHAPES = [[], [1], [7], [3, 5], [2, 3, 5]]
RUNS = 3


def assert_same_bits(ours: np.ndarray, theirs: np.ndarray, where: str = "") -> None:
    """Exact equality, bit for bit (so -0.0 != 0.0 and NaNs compare by payload)."""
    theirs = np.asarray(theirs)
    assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape), where
    if ours.dtype.kind == "f" or ours.dtype == ml_dtypes.bfloat16:
        view = f"u{ours.dtype.itemsize}"
        np.testing.assert_array_equal(ours.view(view), theirs.view(view), err_msg=where)
    else:
        np.testing.assert_array_equal(ours, theirs, err_msg=where)


def tf_runs(build, runs: int = RUNS) -> list[np.ndarray]:
    """`runs` session.run calls of the tensor `build()` makes, in one TF graph session."""
    g = tf.Graph()
    with g.as_default():
        t = build()
        with tf1.Session(graph=g) as sess:
            return [sess.run(t) for _ in range(runs)]


def tf1_runs_multi(build, runs: int = RUNS) -> list:
    """As tf_runs, for an op with several outputs: per run, the list of outputs."""
    g = tf.Graph()
    with g.as_default():
        t = build()
        with tf1.Session(graph=g) as sess:
            return [list(sess.run(list(t))) for _ in range(runs)]


def assert_runs_match(op: str, inputs: list, tf_build, **attrs) -> None:
    kernel = Kernel(op, inputs, **attrs)
    for i, theirs in enumerate(tf_runs(tf_build)):
        assert_same_bits(kernel(), theirs, f"{op} {attrs} run {i}")


@pytest.mark.parametrize("op", ["RandomUniform", "RandomStandardNormal", "TruncatedNormal"])
@pytest.mark.parametrize("dt,name", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_stateful_floats(op, dt, name, shape):
    assert_runs_match(
        op,
        [np.array(shape, np.int32)],
        lambda: getattr(tf1.raw_ops, op)(
            shape=np.array(shape, np.int32), dtype=name, seed=87654321, seed2=5
        ),
        dtype=dt,
        seed=87654321,
        seed2=5,
    )


def test_normals_use_the_c_library():
    # Without a C compiler the normals are correctly rounded instead (1-ulp differences
    # from TensorFlow's, so the exact normal tests here fail): .ci/run installs gcc.
    import shutil

    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler: libm falls back to numpy")
    assert libm.exact()


@pytest.mark.parametrize("dt", [np.int32, np.int64])
@pytest.mark.parametrize("lo,hi", [(0, 1), (-5, 7), (-3, 1000003), (-(2**31), 2**31 - 1)])
def test_stateful_uniform_int(dt, lo, hi):
    shape = [3, 5]
    lo_v, hi_v = np.array(lo, dt), np.array(hi, dt)
    assert_runs_match(
        "RandomUniformInt",
        [np.array(shape, np.int32), lo_v, hi_v],
        lambda: tf1.raw_ops.RandomUniformInt(
            shape=shape, minval=lo_v, maxval=hi_v, seed=1, seed2=2
        ),
        seed=1,
        seed2=2,
    )


@pytest.mark.parametrize("shape", [[2], [5], [33], [17, 3], [6, 2, 2]])
def test_random_shuffle(shape):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    assert_runs_match(
        "RandomShuffle",
        [x],
        lambda: tf1.raw_ops.RandomShuffle(value=x, seed=4, seed2=9),
        seed=4,
        seed2=9,
    )


@pytest.mark.parametrize("batch,samples", [(1, 1), (1, 7), (3, 5), (2, 16)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_multinomial(batch, samples, dtype):
    rng = np.random.default_rng(batch * 100 + samples)
    logits = rng.normal(size=(batch, 6)).astype(dtype)
    logits[0, 2] = -np.inf
    assert_runs_match(
        "Multinomial",
        [logits, np.int32(samples)],
        lambda: tf1.raw_ops.Multinomial(logits=logits, num_samples=samples, seed=3, seed2=1),
        seed=3,
        seed2=1,
    )


SEEDS = [
    np.array([1, 2], np.int64),
    np.array([-7, 2**40 + 3], np.int64),
    np.array([5, -1], np.int32),
]


@pytest.mark.parametrize(
    "op", ["StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal"]
)
@pytest.mark.parametrize("dt,name", FLOATS)
@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_stateless_v1_floats(op, dt, name, seed):
    shape = [5, 3]
    theirs = getattr(tf.raw_ops, op)(shape=shape, seed=seed, dtype=name).numpy()
    ours = Kernel(op, [np.array(shape, np.int32), seed], dtype=dt)()
    assert_same_bits(ours, theirs, f"{op} {name}")


@pytest.mark.parametrize(
    "dt,name",
    [
        (DataType.DT_INT32, "int32"),
        (DataType.DT_INT64, "int64"),
        (DataType.DT_UINT32, "uint32"),
        (DataType.DT_UINT64, "uint64"),
    ],
)
@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_stateless_full_ints(dt, name, seed):
    theirs = tf.raw_ops.StatelessRandomUniformFullInt(shape=[9], seed=seed, dtype=name).numpy()
    assert_same_bits(
        Kernel("StatelessRandomUniformFullInt", [np.array([9], np.int32), seed], dtype=dt)(), theirs
    )
    key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(seed=seed)
    theirs = tf.raw_ops.StatelessRandomUniformFullIntV2(
        shape=[9], key=key, counter=counter, alg=1, dtype=name
    ).numpy()
    ours = Kernel(
        "StatelessRandomUniformFullIntV2",
        [np.array([9], np.int32), key.numpy(), counter.numpy(), np.int32(1)],
        dtype=dt,
    )()
    assert_same_bits(ours, theirs)


@pytest.mark.parametrize("dt", [np.int32, np.int64])
@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_stateless_uniform_ints(dt, seed):
    lo, hi = np.array(-9, dt), np.array(123457, dt)
    theirs = tf.raw_ops.StatelessRandomUniformInt(shape=[11], seed=seed, minval=lo, maxval=hi)
    ours = Kernel("StatelessRandomUniformInt", [np.array([11], np.int32), seed, lo, hi])()
    assert_same_bits(ours, theirs.numpy())
    key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(seed=seed)
    theirs = tf.raw_ops.StatelessRandomUniformIntV2(
        shape=[11], key=key, counter=counter, alg=1, minval=lo, maxval=hi
    )
    ours = Kernel(
        "StatelessRandomUniformIntV2",
        [np.array([11], np.int32), key.numpy(), counter.numpy(), np.int32(1), lo, hi],
    )()
    assert_same_bits(ours, theirs.numpy())
    with pytest.raises(InvalidArgumentError, match="Need minval < maxval, got 3 >= 3"):
        Kernel(
            "StatelessRandomUniformInt",
            [np.array([2], np.int32), seed, np.array(3, dt), np.array(3, dt)],
        )()


@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_get_key_counter_alg(seed):
    key, counter, alg = tf.raw_ops.StatelessRandomGetKeyCounterAlg(seed=seed)
    ours = Kernel("StatelessRandomGetKeyCounterAlg", [seed])
    got = ours.compute(None, [seed])
    assert_same_bits(got[0], key.numpy())
    assert_same_bits(got[1], counter.numpy())
    assert int(got[2]) == int(alg) == 1
    got = Kernel("StatelessRandomGetKeyCounter", [seed]).compute(None, [seed])
    assert_same_bits(got[0], key.numpy())
    assert_same_bits(got[1], counter.numpy())
    assert int(Kernel("StatelessRandomGetAlg", []).compute(None, [])[0]) == int(
        tf.raw_ops.StatelessRandomGetAlg()
    )


@pytest.mark.parametrize(
    "op", ["StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2"]
)
@pytest.mark.parametrize("dt,name", FLOATS)
@pytest.mark.parametrize("alg", [1, 3])
@pytest.mark.parametrize("shape", [[], [1], [7, 3]])
def test_stateless_v2_floats(op, dt, name, alg, shape):
    key, counter = np.array([0x1234567890ABCDEF], np.uint64), np.array([2**63 + 11, 5], np.uint64)
    theirs = getattr(tf.raw_ops, op)(
        shape=np.array(shape, np.int32), key=key, counter=counter, alg=alg, dtype=name
    )
    ours = Kernel(op, [np.array(shape, np.int32), key, counter, np.int32(alg)], dtype=dt)()
    assert_same_bits(ours, theirs.numpy(), f"{op} {name}")


def test_stateless_v2_refuses_what_tensorflow_refuses():
    shape, key, counter = (
        np.array([2], np.int32),
        np.array([1], np.uint64),
        np.array([1, 2], np.uint64),
    )
    with pytest.raises(InvalidArgumentError, match="Unsupported algorithm id: 2"):
        Kernel("StatelessRandomUniformV2", [shape, key, counter, np.int32(2)])()
    with pytest.raises(InvalidArgumentError, match=r"key must have shape \[1\], not \[2\]"):
        Kernel(
            "StatelessRandomUniformV2", [shape, np.array([1, 2], np.uint64), counter, np.int32(1)]
        )()


@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_stateless_multinomial(seed):
    logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25], [0.3, 0.3, 0.4]], np.float32))
    theirs = tf.raw_ops.StatelessMultinomial(logits=logits, num_samples=9, seed=seed)
    ours = Kernel("StatelessMultinomial", [logits, np.int32(9), seed])()
    assert_same_bits(ours, theirs.numpy())


def test_seeded_graph_through_the_in_process_session():
    """A TF1 graph with graph- and op-level seeds: the same values in our Session as in
    TensorFlow's over several steps (stateful kernels advance, stateless ones repeat)."""
    g = tf.Graph()
    with g.as_default():
        tf1.set_random_seed(42)
        fetches = [
            tf1.random_uniform([4, 3]),
            tf1.random_normal([5], seed=7),
            tf1.truncated_normal([3, 3], dtype=tf.float64),
            tf1.random_uniform([6], maxval=10, dtype=tf.int64),
            tf1.random_shuffle(tf.range(10)),
            tf1.multinomial([[0.0, 1.0, 2.0]], 4),
            tf.random.stateless_uniform([2, 3], seed=[1, 2]),
            tf.random.stateless_normal([3], seed=[3, 4]),
            tf.random.stateless_truncated_normal([5], seed=[5, 6]),
            tf.random.stateless_uniform([4], seed=[7, 8], minval=0, maxval=100, dtype=tf.int32),
        ]
        names = [t.name for t in fetches]
        with tf1.Session(graph=g) as sess:
            want = [sess.run(fetches) for _ in range(RUNS)]
    ours = Session(g.as_graph_def().SerializeToString())
    try:
        for step in range(RUNS):
            for name, got, theirs in zip(names, ours.run(names), want[step]):
                assert_same_bits(np.asarray(got), theirs, f"{name} step {step}")
    finally:
        ours.close()


def test_stateful_streams_continue_across_fetch_signatures():
    """TF's session shares one kernel per stateful node (OpSegment) between executors:
    fetching the op with another set of fetches continues its stream; a second session
    starts it afresh."""
    g = tf.Graph()
    with g.as_default():
        tf1.set_random_seed(3)
        r = tf1.random_uniform([3])
        s = tf1.random_shuffle(tf.range(6))
        c = tf.constant(1.0)
        plan = [[r.name], [r.name, c.name], [s.name], [r.name, s.name], [r.name]]
        with tf1.Session(graph=g) as sess:
            want = [sess.run(fetches) for fetches in plan]
    for _ in range(2):  # a fresh session replays the same numbers
        ours = Session(g.as_graph_def().SerializeToString())
        try:
            for fetches, theirs in zip(plan, want):
                for got, value in zip(ours.run(fetches), theirs):
                    assert_same_bits(np.asarray(got), value, str(fetches))
        finally:
            ours.close()


@pytest.mark.parametrize(
    "alpha",
    [
        np.array([0.3, 1.0, 2.5, 10.0], np.float32),
        np.array([[0.5], [1.0]], np.float64),
        np.array(3.0, np.float16),
        np.array([0.01, 1e3], np.float32),
    ],
    ids=["float", "double-2d", "half-scalar", "extremes"],
)
@pytest.mark.parametrize("shape", [[7], [2, 3], []])
def test_random_gamma(alpha, shape):
    assert_runs_match(
        "RandomGamma",
        [np.array(shape, np.int32), alpha],
        lambda: tf1.raw_ops.RandomGamma(
            shape=np.array(shape, np.int32), alpha=alpha, seed=5, seed2=6
        ),
        seed=5,
        seed2=6,
    )


@pytest.mark.parametrize(
    "rate,dtype",
    [
        (np.array([0.5, 3.0, 9.9, 10.0, 25.0, 1e4], np.float32), "int64"),
        (np.array([[0.0], [50.0]], np.float64), "float64"),
        (np.array([2.0, np.inf, 300.0], np.float64), "float32"),
        (np.array([7, 40], np.int32), "int32"),
        (np.array(12.5, np.float16), "float16"),
    ],
    ids=["knuth-and-hormann", "zero", "inf", "int-rates", "half"],
)
@pytest.mark.parametrize("shape", [[7], [2, 3]])
def test_random_poisson_v2(rate, dtype, shape):
    from common import dtypes as our_dtypes

    dt = our_dtypes.from_numpy(np.dtype(dtype))
    assert_runs_match(
        "RandomPoissonV2",
        [np.array(shape, np.int32), rate],
        lambda: tf1.raw_ops.RandomPoissonV2(
            shape=np.array(shape, np.int32), rate=rate, seed=5, seed2=6, dtype=dtype
        ),
        seed=5,
        seed2=6,
        dtype=dt,
    )


@pytest.mark.parametrize(
    "alpha,shape",
    [
        (np.array([0.3, 1.0, 2.5], np.float32), [4, 3]),
        (np.array([[0.5], [2.0]], np.float64), [5, 2, 1]),
        (np.array(3.0, np.float16), [6]),
    ],
    ids=["float", "double", "half-scalar"],
)
@pytest.mark.parametrize("seed", SEEDS[:2], ids=str)
def test_stateless_gamma_v2(alpha, shape, seed):
    theirs = tf.raw_ops.StatelessRandomGammaV2(shape=shape, seed=seed, alpha=alpha).numpy()
    ours = Kernel("StatelessRandomGammaV2", [np.array(shape, np.int32), seed, alpha])()
    assert_same_bits(ours, theirs)
    key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(seed=seed)
    theirs = tf.raw_ops.StatelessRandomGammaV3(
        shape=shape, key=key, counter=counter, alg=3, alpha=alpha
    ).numpy()
    shape_in = np.array(shape, np.int32)
    ours = Kernel(
        "StatelessRandomGammaV3", [shape_in, key.numpy(), counter.numpy(), np.int32(3), alpha]
    )()
    assert_same_bits(ours, theirs)


@pytest.mark.parametrize(
    "lam,shape,dtype",
    [
        (np.array([0.3, 5.0, 25.0], np.float32), [4, 3], "int64"),
        (np.array([[2.0], [200.0]], np.float64), [5, 2, 1], "float32"),
        (np.array(3.0, np.float32), [6], "int32"),
    ],
    ids=["knuth-hormann", "float-out", "int32-out"],
)
@pytest.mark.parametrize("seed", SEEDS[:2], ids=str)
def test_stateless_poisson(lam, shape, dtype, seed):
    from common import dtypes as our_dtypes

    theirs = tf.raw_ops.StatelessRandomPoisson(shape=shape, seed=seed, lam=lam, dtype=dtype)
    ours = Kernel(
        "StatelessRandomPoisson",
        [np.array(shape, np.int32), seed, lam],
        dtype=our_dtypes.from_numpy(np.dtype(dtype)),
    )()
    assert_same_bits(ours, theirs.numpy())


def test_stateless_gamma_shape_must_end_with_alphas():
    with pytest.raises(InvalidArgumentError, match="Shape passed in must end with broadcasted"):
        Kernel(
            "StatelessRandomGammaV2",
            [np.array([4, 2], np.int32), SEEDS[0], np.ones(3, np.float32)],
        )()
