"""Integration, tf.random.Generator on the cluster: an unmodified tf.compat.v1 client
builds a Generator.from_seed whose state variable lives on the ps task and draws on
worker 1 (RngReadAndSkip on the ps, the stateless V2 kernels on the worker,
StatefulRandomBinomial where the state is), against OUR master (real processes started
by their CLIs): the same numbers and the same state as TensorFlow's own runtime, step
after step."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True

W1, PS = "/job:worker/task:1", "/job:ps/task:0"


def _run(target: str, steps: int = 3) -> list:
    def dev(name):
        return tf1.device(name) if target else contextlib.nullcontext()

    g = tf.Graph()
    with g.as_default():
        with dev(PS):
            gen = tf.random.Generator.from_seed(2024)
        draws: list = []
        with dev(W1):
            for make in (
                lambda: gen.uniform([2, 3]),
                lambda: gen.normal([4], dtype=tf.float64),
                lambda: gen.truncated_normal([3]),
                lambda: gen.uniform([5], minval=-3, maxval=9, dtype=tf.int64),
                lambda: gen.binomial([2, 2], counts=[20.0, 3.0], probs=[0.3, 0.9]),
                lambda: gen.make_seeds(2),
            ):
                with tf1.control_dependencies(draws[-1:]):
                    draws.append(make())
            with tf1.control_dependencies(draws):
                state = tf.identity(gen.state.read_value())
        init = tf1.global_variables_initializer()
        with tf1.Session(target, graph=g) as sess:
            sess.run(init)
            return [sess.run([*draws, state]) for _ in range(steps)]


def test_generator_draws_and_state_match_tensorflow_on_the_cluster(shared_cluster):
    want = _run("")
    got = _run(shared_cluster.target)
    for step, (ours, theirs) in enumerate(zip(got, want)):
        for i, (o, t) in enumerate(zip(ours, theirs)):
            o, t = np.asarray(o), np.asarray(t)
            assert o.dtype == t.dtype, (step, i)
            np.testing.assert_array_equal(o, t, err_msg=f"step {step} fetch {i}")
