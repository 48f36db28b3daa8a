"""Integration, tf.distributions' validate_args checks through a real cluster: probs,
counts and a Dirichlet sample made on worker 0, the Categorical, Multinomial and
Dirichlet (and their assert_near / assert_integer_form / rank checks) on worker 1.
Built by TensorFlow's client (tf.compat.v1.Session against OUR master) and by ours:
good inputs give TensorFlow's local values, bad ones TF's InvalidArgumentError with the
assertion's message."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import client as ours
from tests.client.test_check_ops_near_rank import same_assert_message

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

PROBS = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
COUNTS = np.array([[1.0, 1.0, 2.0], [0.0, 3.0, 1.0]])
SAMPLE = np.array([0.2, 0.3, 0.5])
GOOD = (PROBS, COUNTS, SAMPLE)
BAD = [
    ((PROBS * 1.1, COUNTS, SAMPLE), "probs does not sum to 1."),
    ((PROBS, COUNTS + 0.5, SAMPLE), "cannot contain fractional components."),
    ((PROBS, COUNTS, SAMPLE * 2.0), "sample last-dimension must sum to `1`"),
]


def _build(api, on):
    d = api.distributions
    with api.device(on("/job:worker/task:0")):
        p = api.placeholder(api.float64, [2, 3], name="p")
        c = api.placeholder(api.float64, [2, 3], name="c")
        x = api.placeholder(api.float64, None, name="x")
        p2, c2, x2 = p * 1.0, c * 1.0, x * 1.0
    with api.device(on("/job:worker/task:1")):
        cat = d.Categorical(probs=p2, validate_args=True)
        multi = d.Multinomial(np.float64(4.0), probs=PROBS[0], validate_args=True)
        dirichlet = d.Dirichlet(np.array([1.5, 2.0, 0.5]), validate_args=True)
        fetches = [cat.entropy(), multi.log_prob(c2), dirichlet.log_prob(x2)]
    return (p, c, x), fetches


def _run(api, session, target: str) -> list:
    g = api.Graph()
    with g.as_default(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # TensorFlow's local session (the reference) has no workers to place on
        phs, fetches = _build(api, lambda device: device if target else "")
    out = []
    with session(target, graph=g) as sess:
        for feed in [GOOD] + [b for b, _ in BAD]:
            try:
                out.append(sess.run(fetches, dict(zip(phs, feed))))
            except api.errors.InvalidArgumentError as e:
                out.append(e.message)
    return out


def test_validate_args_through_our_master_with_both_clients(shared_cluster):
    expected = _run(tf1, tf1.Session, "")
    for api, session in ((tf1, tf1.Session), (ours, ours.Session)):
        got = _run(api, session, shared_cluster.target)
        for g, e in zip(got[0], expected[0]):
            np.testing.assert_allclose(g, e, rtol=1e-12)
        for message, tf_message, (_, want) in zip(got[1:], expected[1:], BAD):
            assert isinstance(message, str), message
            line = next(m for m in message.split("\n") if m.startswith("assertion failed: ["))
            assert want in line
            # Tensors named in the message carry their device here, not in the local run;
            # Multinomial.log_prob checks its counts twice, both fail, the first met
            # reports: the two messages differ in node names only.
            line = re.sub(r", device=[^)]*", "", line)
            names = re.compile(r"\(\S+:0\)")
            assert same_assert_message(names.sub("(t)", line), names.sub("(t)", tf_message))
