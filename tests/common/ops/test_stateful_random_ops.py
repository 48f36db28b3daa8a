"""tf.random.Generator's kernels against TensorFlow 2.21, value for value: a graph that
a Generator.from_seed builds (RngReadAndSkip feeding the stateless V2 kernels,
StatefulRandomBinomial) and the stateful kernels it can emit (StatefulUniform ...
RngSkip), run step after step in TensorFlow's session and in ours: the same samples and
the same state variable after every step. Also the counter arithmetic at its edges,
the errors TensorFlow gives, and NonDeterministicInts. Skipped without TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import FailedPreconditionError, InvalidArgumentError, UnimplementedError
from common.session import Session

from .signatures import assert_signature_matches_tensorflow, module_ops

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
raw = tf.raw_ops
MY_OPS = module_ops("common.ops.stateful_random_ops")
STEPS = 3


def _philox(handle, op, **kw):
    return getattr(raw, op)(resource=handle, algorithm=np.int64(1), **kw)


# Each draw is chained after the previous one (TF gives no order to a Generator's ops in
# one graph otherwise, so even TensorFlow's own results would vary).
DRAWS = {
    "uniform": lambda g: g.uniform([3]),
    "uniform_double": lambda g: g.uniform([2, 2], minval=-1.0, maxval=3.0, dtype=tf.float64),
    "normal": lambda g: g.normal([2, 3], mean=1.0, stddev=2.0),
    "truncated_normal": lambda g: g.truncated_normal([5]),
    "uniform_int": lambda g: g.uniform([4], minval=0, maxval=10, dtype=tf.int32),
    "uniform_full_int": lambda g: g.uniform_full_int([2], dtype=tf.int64),
    "binomial": lambda g: g.binomial([3, 2], counts=[10.0, 40.0], probs=[0.5, 0.8]),
    "make_seeds": lambda g: g.make_seeds(3),
    "StatefulUniform": lambda g: _philox(g.state.handle, "StatefulUniform", shape=[3]),
    "StatefulStandardNormalV2": lambda g: _philox(
        g.state.handle, "StatefulStandardNormalV2", shape=[3], dtype=tf.float64
    ),
    "StatefulTruncatedNormal": lambda g: _philox(
        g.state.handle, "StatefulTruncatedNormal", shape=[2, 4]
    ),
    "StatefulUniformInt": lambda g: _philox(
        g.state.handle,
        "StatefulUniformInt",
        shape=[3],
        minval=np.int64(-3),
        maxval=np.int64(100),
    ),
    "StatefulUniformFullInt": lambda g: _philox(
        g.state.handle, "StatefulUniformFullInt", shape=[3], dtype=tf.uint32
    ),
    "RngSkip": lambda g: _philox(g.state.handle, "RngSkip", delta=np.int64(7)),
    "skip": lambda g: g.skip(5),
}


def _both(build, steps: int = STEPS) -> tuple[list, list]:
    """`build()` returns fetches (an op becomes a constant after it); each side runs
    the variables' initializer, then the fetches `steps` times."""
    graph = tf.Graph()
    with graph.as_default():
        fetches = []
        for made in build():
            if isinstance(made, tf.Operation):
                with tf1.control_dependencies([made]):
                    made = tf.constant(0)
            fetches.append(made)
        init = tf1.global_variables_initializer()
    names = [f.name for f in fetches]
    with tf1.Session(graph=graph) as sess:
        sess.run(init)
        theirs = [sess.run(fetches) for _ in range(steps)]
    with Session(graph.as_graph_def().SerializeToString()) as sess:
        sess.run([], {}, targets=[init.name])
        ours = [sess.run(names, {}) for _ in range(steps)]
    return theirs, ours


def _assert_steps_equal(theirs: list, ours: list) -> None:
    for step, (t_step, o_step) in enumerate(zip(theirs, ours)):
        for i, (t, o) in enumerate(zip(t_step, o_step)):
            t, o = np.asarray(t), np.asarray(o)
            assert (o.dtype, o.shape) == (t.dtype, t.shape), (step, i)
            np.testing.assert_array_equal(o, t, err_msg=f"step {step} fetch {i}")


def _chained(gen, names: list[str]) -> list:
    made: list = []
    for name in names:
        with tf1.control_dependencies(made[-1:]):
            made.append(DRAWS[name](gen))
    with tf1.control_dependencies(made):
        made.append(tf.identity(gen.state.read_value(), name="state_after"))
    return made


@pytest.mark.parametrize("name", MY_OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


@pytest.mark.parametrize("draw", sorted(DRAWS))
@pytest.mark.parametrize("seed", [1234, 2**70 + 3])
def test_each_draw_and_the_state_after_it(draw, seed):
    # A uniform draw first: TensorFlow's StatefulRandomBinomial loses its state update
    # when the state variable still shares the buffer it was assigned from (the kernel
    # writes the new state into the buffer it has just copied away from), so in
    # TensorFlow a binomial drawn first after initialization repeats on the next step.
    # We advance the state every time; README lists the difference.
    def build():
        return _chained(tf.random.Generator.from_seed(seed), ["uniform", draw])

    _assert_steps_equal(*_both(build))


def test_a_chain_of_every_draw_from_one_generator():
    def build():
        return _chained(tf.random.Generator.from_seed(77), sorted(DRAWS))

    _assert_steps_equal(*_both(build))


def test_generator_from_an_explicit_state():
    def build():
        gen = tf.random.Generator.from_state([5, 2**40, -3], alg="philox")
        return _chained(gen, ["uniform", "normal", "StatefulUniform"])

    _assert_steps_equal(*_both(build))


# Counter arithmetic at its edges: TF's PhiloxRandom::Skip adds word by word, so a
# carry out of the low word can be lost when the count's high word wraps.
EDGE_STATES = [
    [-256 + 5, 0x7FFFFFFF, 7],
    [np.uint64(0xFFFFFFFF00000005).view(np.int64), 0x7FFFFFFF, 7],
    [np.uint64(0xFFFFFFFFFFFFFF05).view(np.int64), -1, 7],
    [2053, 6, 7],
]


@pytest.mark.parametrize("state", EDGE_STATES)
@pytest.mark.parametrize("delta", [1, -1, 2**56, 2**24 + 3])
def test_rng_skip_and_read_and_skip_at_counter_edges(state, delta):
    def build():
        gen = tf.random.Generator.from_state(np.array(state, np.int64), alg="philox")
        skip = _philox(gen.state.handle, "RngSkip", delta=np.int64(delta))
        with tf1.control_dependencies([skip]):
            old = raw.RngReadAndSkip(
                resource=gen.state.handle, alg=1, delta=np.uint64(delta % 2**64)
            )
        with tf1.control_dependencies([old]):
            after = tf.identity(gen.state.read_value())
        return [old, after]

    _assert_steps_equal(*_both(build, steps=2))


def _run_ours(build):
    graph = tf.Graph()
    with graph.as_default():
        out = build()
        init = tf1.global_variables_initializer()
    with Session(graph.as_graph_def().SerializeToString()) as sess:
        sess.run([], {}, targets=[init.name])
        return sess.run([out.name], {})


def _state_var(value, dtype=tf.int64):
    return tf1.Variable(np.asarray(value), dtype=dtype, use_resource=True)


@pytest.mark.parametrize(
    "make,error,message",
    [
        (
            lambda: raw.RngReadAndSkip(resource=_state_var([1, 2, 3]).handle, alg=2, delta=1),
            UnimplementedError,
            "Non-XLA devices don't support the ThreeFry algorithm.",
        ),
        (
            lambda: raw.RngReadAndSkip(resource=_state_var([1, 2, 3]).handle, alg=0, delta=1),
            InvalidArgumentError,
            "Unsupported algorithm id: 0",
        ),
        (
            lambda: raw.RngReadAndSkip(resource=_state_var([1, 2]).handle, alg=1, delta=1),
            InvalidArgumentError,
            "For the Philox algorithm, the size of state must be at least 3; got 2",
        ),
        (
            lambda: raw.RngReadAndSkip(
                resource=_state_var([1.0, 2.0, 3.0], tf.float64).handle, alg=1, delta=1
            ),
            InvalidArgumentError,
            "dtype of RNG state variable must be int64, not double",
        ),
        (
            lambda: raw.RngReadAndSkip(resource=_state_var([[1, 2, 3]]).handle, alg=1, delta=1),
            InvalidArgumentError,
            "RNG state must have one and only one dimension, not 2",
        ),
        (
            lambda: raw.StatefulUniform(
                resource=_state_var([1, 2, 3]).handle, algorithm=np.int64(0), shape=[2]
            ),
            InvalidArgumentError,
            "Unsupported algorithm id: 0",
        ),
        (
            lambda: raw.StatefulUniformInt(
                resource=_state_var([1, 2, 3]).handle,
                algorithm=np.int64(1),
                shape=[2],
                minval=np.int64(3),
                maxval=np.int64(3),
            ),
            InvalidArgumentError,
            "Need minval < maxval, got 3 >= 3",
        ),
    ],
)
def test_errors_match_tensorflow(make, error, message):
    graph = tf.Graph()
    with graph.as_default():
        out = make()
        init = tf1.global_variables_initializer()
    with tf1.Session(graph=graph) as sess:
        sess.run(init)
        with pytest.raises(tf.errors.OpError) as theirs:
            sess.run(out)
    assert message in theirs.value.message
    with pytest.raises(error) as ours:
        _run_ours(make)
    assert ours.value.message.startswith(message)


def test_an_unassigned_state_variable_is_a_failed_precondition():
    with pytest.raises(FailedPreconditionError, match="random_generator/StateVar"):
        graph = tf.Graph()
        with graph.as_default():
            gen = tf.random.Generator.from_seed(1)
            out = gen.uniform([2])
        with Session(graph.as_graph_def().SerializeToString()) as sess:
            sess.run([out.name], {})


@pytest.mark.parametrize("dtype", [tf.int32, tf.uint32, tf.int64, tf.uint64])
def test_non_deterministic_ints(dtype):
    def make():
        return raw.NonDeterministicInts(shape=np.array([4, 64], np.int64), dtype=dtype)

    (first,) = _run_ours(make)
    (second,) = _run_ours(make)
    assert first.dtype == dtype.as_numpy_dtype and first.shape == (4, 64)
    assert not np.array_equal(first, second)
    assert len(np.unique(first)) > 200  # 256 draws of 32 or 64 random bits


def test_non_deterministic_ints_has_no_float_kernel():
    def make():
        return raw.NonDeterministicInts(shape=[2], dtype=tf.float32)

    with pytest.raises(InvalidArgumentError, match="NonDeterministicInts"):
        _run_ours(make)
