"""Client, special functions: tf.math.betainc / zeta / polygamma / erfinv / erfcinv / ndtri
/ lbeta / bessel_* and tf.math.special.* build TensorFlow's graph (the same node names and
op types) and give its values, and their gradients give TF's gradient values."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.tf1_oracle import run_both

X = np.array([0.2, 0.7, 1.3, 2.9, 6.0])  # positive: every function is defined there
P = np.array([0.05, 0.3, 0.5, 0.8, 0.97])  # probabilities for erfinv / ndtri

UNARY = {
    "math.erfinv": P,
    "math.erfcinv": 2 * P,
    "math.ndtri": P,
    "math.lgamma": X,
    "math.digamma": X,
    "math.bessel_i0": X,
    "math.bessel_i0e": X,
    "math.bessel_i1": X,
    "math.bessel_i1e": np.array([0.0, -0.7, 1.3, 2.9, 6.0]),
    "math.special.bessel_j0": X,
    "math.special.bessel_j1": np.array([0.0, 0.7, -1.3, 2.9, 6.0]),
    "math.special.bessel_k0": X,
    "math.special.bessel_k0e": X,
    "math.special.bessel_k1": X,
    "math.special.bessel_k1e": X,
    "math.special.bessel_y0": X,
    "math.special.bessel_y1": X,
    "math.special.dawsn": X - 3,
    "math.special.expint": X,
    "math.special.fresnel_cos": X - 3,
    "math.special.fresnel_sin": X - 3,
    "math.special.spence": np.array([0.2, 0.7, 1.0, 2.9, 6.0]),
}


def _fn(api, path: str):
    for part in path.split("."):
        api = getattr(api, part)
    return api


def _assert_same(ours, theirs, names, tf_names, rtol=1e-12):
    assert names == tf_names
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-14)


@pytest.mark.parametrize("path", sorted(UNARY))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_value_graph_and_gradient(path, dtype):
    def build(api):
        x = api.constant(UNARY[path], dtype=getattr(api, dtype))
        y = _fn(api, path)(x)
        named = _fn(api, path)(x, name="named")
        (g,) = api.gradients(api.reduce_sum(y * y), [x])
        return lambda sess: sess.run([y, named, g])

    ours, theirs, names, tf_names = run_both(build)
    _assert_same(ours, theirs, names, tf_names, rtol=1e-12 if dtype == "float64" else 1e-5)


def test_lbeta_over_the_last_axis():
    def build(api):
        x = api.constant(np.array([[0.5, 1.0, 2.0], [3.0, 0.25, 7.5]]))
        y = api.lbeta(x)
        (g,) = api.gradients(api.reduce_sum(y), [x])
        return lambda sess: sess.run([y, api.math.lbeta(x[0], name="row"), g])

    _assert_same(*run_both(build))


def test_betainc_zeta_polygamma_and_their_gradients():
    def build(api):
        a = api.constant(np.array([0.5, 2.0, 3.5]))
        b = api.constant(2.5, dtype=api.float64)
        x = api.constant(np.array([0.1, 0.5, 0.9]))
        q = api.constant(np.array([[1.5], [4.0]]))
        n = api.constant(np.array([0.0, 1.0, 3.0]))
        i = api.betainc(a, b, x)
        z = api.math.zeta(a + 1.5, q)
        p = api.polygamma(n, q, name="pg")
        grads = api.gradients(
            [api.reduce_sum(i), api.reduce_sum(z), api.reduce_sum(p)], [a, b, x, q, n]
        )
        assert grads[0] is None and grads[1] is None and grads[4] is None
        return lambda sess: sess.run([i, z, p, grads[2], grads[3]])

    _assert_same(*run_both(build), rtol=1e-10)


def test_igamma_gradients():
    def build(api):
        a = api.constant(np.array([[0.5], [2.0], [7.5]]))
        x = api.constant(np.array([0.3, 1.0, 4.0, 12.0]))
        p, q = api.math.igamma(a, x), api.math.igammac(a, x)
        return lambda sess: sess.run(api.gradients([p, 2 * q], [a, x]))

    _assert_same(*run_both(build), rtol=1e-8)


def test_betainc_shape_inference_as_tensorflow():
    tf = pytest.importorskip("tensorflow").compat.v1
    import client

    for api in (client, tf):
        with api.Graph().as_default():
            ph = api.placeholder(api.float32, [None, 3])
            assert api.betainc(1.0, ph, 0.5).shape.as_list() == [None, 3]
            assert api.betainc(api.ones([2, 3]), ph, 0.5).shape.as_list() == [2, 3]
            assert api.betainc(1.0, 2.0, 0.5).shape.ndims == 0
            with pytest.raises(ValueError):
                api.betainc(api.ones([2, 3]), api.ones([3]), 0.5)


@pytest.mark.parametrize("op", ["betainc", "zeta"])
def test_runtime_shape_errors_name_the_node_as_tensorflow(op):
    tf = pytest.importorskip("tensorflow").compat.v1
    import client

    messages = []
    for api in (tf, client):
        with api.Graph().as_default():
            a = api.placeholder(api.float64)
            b = api.placeholder(api.float64)
            if op == "betainc":
                z = api.betainc(a, b, 0.5, name="bad")
            else:
                z = api.math.zeta(a, b, name="bad")
            with api.Session() as sess, pytest.raises(api.errors.InvalidArgumentError) as e:
                sess.run(z, {a: np.ones(2), b: np.ones(3)})
            messages.append(e.value.message)
    want = "Shapes of a and b are inconsistent" if op == "betainc" else "Incompatible shapes"
    for m in messages:
        assert want in m and "[2] vs. [3]" in m and "{{node bad}}" in m
