"""Integration, special functions and tf.distributions through a real cluster: a tiny
VAE-style loss (Normal.log_prob of the decoded sample plus kl_divergence of the encoder's
Normal from the prior) trained one SGD step with its weights on the ps, encoder on worker
0 and decoder on worker 1; and the special-function kernels (Betainc, Zeta, Polygamma,
Erfinv, Ndtri, Bessel*, Dawsn, Expint, Fresnel*, Spence) with their gradients on worker 1
from inputs made on worker 0. Built by TensorFlow's client (tf.compat.v1.Session against
OUR master) and by ours, both compared with TensorFlow's local session."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import client as ours

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

RNG = np.random.default_rng(11)
DATA = RNG.standard_normal((6, 4))
EPS = RNG.standard_normal((6, 2))
W_ENC = 0.3 * RNG.standard_normal((4, 4))  # two columns of mean, two of log-scale
W_DEC = 0.3 * RNG.standard_normal((2, 4))
POS = np.array([0.4, 1.1, 2.5, 6.0])
PROB = np.array([0.05, 0.4, 0.7, 0.95])


def _vae(api, on) -> tuple[dict, list]:
    d = api.distributions
    with api.device(on("/job:ps/task:0")):
        w_enc = api.Variable(W_ENC, name="w_enc")
        w_dec = api.Variable(W_DEC, name="w_dec")
    x = api.placeholder(api.float64, [6, 4], name="x")
    eps = api.placeholder(api.float64, [6, 2], name="eps")
    with api.device(on("/job:worker/task:0")):
        h = api.matmul(x, w_enc)
        q = d.Normal(loc=h[:, :2], scale=api.exp(h[:, 2:]), name="q")
        z = q.loc + q.scale * eps
        kl = api.reduce_sum(d.kl_divergence(q, d.Normal(np.zeros(2), np.ones(2), name="prior")))
    with api.device(on("/job:worker/task:1")):
        p = d.Normal(loc=api.matmul(z, w_dec), scale=np.ones(4), name="p")
        nll = -api.reduce_sum(p.log_prob(x))
        loss = nll + kl
        train = api.train.GradientDescentOptimizer(0.05).minimize(loss)
    return {x: DATA, eps: EPS}, [loss, train, w_enc, w_dec]


def _special(api, on) -> tuple[dict, list]:
    with api.device(on("/job:worker/task:0")):
        a = api.placeholder(api.float64, [4], name="a")
        u = api.placeholder(api.float64, [4], name="u")
        a2, u2 = a * 1.0, u * 1.0  # made on worker 0, consumed on worker 1
    with api.device(on("/job:worker/task:1")):
        s = api.math.special
        outs = [
            api.math.betainc(a2, a2[::-1], u2),
            api.math.zeta(a2 + 1.5, a2),
            api.math.polygamma(api.constant([0.0, 1.0, 2.0, 3.0], api.float64), a2),
            api.math.erfinv(u2 * 2 - 1),
            api.math.ndtri(u2),
            api.math.bessel_i0e(a2),
            api.math.bessel_i1e(a2),
            api.math.lbeta(api.reshape(a2, [2, 2])),
            s.bessel_j0(a2),
            s.bessel_k1(a2),
            s.bessel_y0(a2),
            s.dawsn(a2),
            s.expint(a2),
            s.fresnel_cos(a2),
            s.spence(a2),
            api.distributions.Gamma(a2, 2.0 * a2).cdf(u2),
            api.distributions.StudentT(a2, 0.0 * a2, 1.0 + a2).cdf(u2 - 0.5),
        ]
        total = api.add_n([api.reduce_sum(o) for o in outs])
        grads = api.gradients(total, [a2, u2])
    return {a: POS, u: PROB}, outs + grads


def _run(api, session, target: str, build) -> list:
    g = api.Graph()
    with g.as_default():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # TensorFlow's local session (the reference) has no ps or workers to place on
            feeds, fetches = build(api, lambda device: device if target else "")
        init = api.global_variables_initializer()
    with session(target, graph=g) as sess:
        sess.run(init)
        return [v for v in sess.run(fetches, feeds) if v is not None]


@pytest.mark.parametrize("build", [_vae, _special], ids=["vae_step", "special_kernels"])
def test_through_our_master_with_both_clients(shared_cluster, build):
    expected = _run(tf1, tf1.Session, "", build)
    for api, session in ((tf1, tf1.Session), (ours, ours.Session)):
        got = _run(api, session, shared_cluster.target, build)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert np.asarray(g).dtype == np.asarray(e).dtype
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
