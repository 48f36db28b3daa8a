"""tf.random.Generator in the client against tensorflow.compat.v1 (graph mode): from_seed
and from_state build TensorFlow's state variable and draw nodes (RngReadAndSkip, Bitcast,
the stateless V2 kernels, StatefulRandomBinomial), and every draw and the state after it
equal TensorFlow's, run after run."""

from __future__ import annotations

import numpy as np
import pytest

import client

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True


def _draws(tf, gen) -> list:
    makers = [
        lambda: gen.uniform([3]),
        lambda: gen.uniform([2, 2], minval=-1.0, maxval=3.0, dtype=tf.float64),
        lambda: gen.normal([2, 2], mean=1.0, stddev=2.0),
        lambda: gen.truncated_normal([3]),
        lambda: gen.uniform([4], minval=0, maxval=10, dtype=tf.int32),
        lambda: gen.uniform_full_int([2], dtype=tf.int64),
        lambda: gen.binomial([3, 2], counts=[10.0, 40.0], probs=[0.5, 0.8]),
        lambda: gen.make_seeds(2),
        lambda: gen.skip(5),
    ]
    made: list = []
    for make in makers:  # chained: TF gives a Generator's ops no order otherwise
        with tf.control_dependencies(made[-1:]):
            made.append(make())
    with tf.control_dependencies(made):
        made.append(tf.identity(gen.state.read_value(), name="state_after"))
    return made


def _both(make_generator, steps: int = 3):
    results, graphs = [], []
    for tf, generator in ((client, client.random.Generator), (tf1, tf_real.random.Generator)):
        g = tf.Graph()
        with g.as_default():
            fetches = _draws(tf, make_generator(generator))
            init = tf.global_variables_initializer()
            with tf.Session(graph=g) as sess:
                sess.run(init)
                results.append([sess.run(fetches) for _ in range(steps)])
        # TF's read_value() adds an Identity of its own; the draws' nodes are compared.
        graphs.append([(n.name, n.op) for n in g.as_graph_def().node
                       if not n.name.startswith(("Read", "Identity", "state_after"))])  # fmt: skip
    return results, graphs


@pytest.mark.parametrize(
    "make",
    [
        lambda G: G.from_seed(1234),
        lambda G: G.from_seed(2**70 + 5),
        lambda G: G.from_state([5, 2**40, -3], alg="philox"),
    ],
    ids=["seed", "big_seed", "state"],
)
def test_generator_names_draws_and_state(make):
    (ours, theirs), (g_ours, g_theirs) = _both(make)
    assert g_ours == g_theirs
    for step, (o_step, t_step) in enumerate(zip(ours, theirs)):
        for i, (o, t) in enumerate(zip(o_step, t_step)):
            o, t = np.asarray(o), np.asarray(t)
            assert o.dtype == t.dtype, (step, i)
            np.testing.assert_array_equal(o, t, err_msg=f"step {step} fetch {i}")
