"""Client, tf.norm: every ord/axis form TF's linalg_ops.norm accepts (vector, matrix,
p-norms, keepdims, complex input) runs to TensorFlow's values with their gradients, and
bad ord/axis arguments raise TF's ValueError messages (the graphs are compared node for
node in test_graph_sweep)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.tf1_oracle import assert_close, run_both

RNG = np.random.default_rng(5)
X = RNG.standard_normal((2, 3, 4))
Z = (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))).astype(np.complex128)

FORMS: dict[str, dict] = {
    "euclidean_all": {},
    "euclidean_axis": {"axis": 1},
    "fro": {"ord": "fro", "axis": (1, 2)},
    "one_vector": {"ord": 1, "axis": -1, "keepdims": True},
    "one_all": {"ord": 1},
    "one_matrix": {"ord": 1, "axis": [-2, -1]},
    "inf_vector": {"ord": np.inf, "axis": 0},
    "inf_matrix": {"ord": np.inf, "axis": (2, 0)},
    "p3": {"ord": 3, "axis": 2},
    "p_half": {"ord": 0.5},
    "keep_dims_v1": {"ord": 2, "axis": 1, "keep_dims": True},
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_norm_and_gradient_match_tensorflow(form):
    def build(api):
        x = api.constant(X)
        y = api.norm(x, **FORMS[form])
        (g,) = api.gradients(api.reduce_sum(y * y), [x])
        return lambda sess: sess.run([y, g])

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert ours[0].shape == theirs[0].shape
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


def test_complex_norm_matches_tensorflow():
    def build(api):
        z = api.constant(Z)
        return lambda sess: sess.run([api.norm(z), api.linalg.norm(z, ord=1, axis=(0, 1))])

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    # TF's Euclidean norm of a complex tensor stays complex; abs-based norms are real.
    assert [o.dtype for o in ours] == [t.dtype for t in theirs] == [np.complex128, np.float64]
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


BAD = [
    {"ord": "nuc", "axis": (0, 1)},
    {"ord": 1, "axis": (0, 0)},
    {"ord": 1, "axis": (0, 1, 2)},
    {"ord": 0},
    {"ord": -1, "axis": 0},
    {"ord": "fro"},
]


@pytest.mark.parametrize("kwargs", BAD, ids=[str(k) for k in BAD])
def test_bad_arguments_raise_tensorflows_message(kwargs):
    tf = pytest.importorskip("tensorflow").compat.v1
    import client

    with tf.Graph().as_default(), pytest.raises(ValueError) as want:
        tf.norm(tf.constant(X), **kwargs)
    with client.Graph().as_default(), pytest.raises(ValueError) as got:
        client.norm(client.constant(X), **kwargs)
    assert str(got.value) == str(want.value)


def test_matrix_two_norm_and_its_gradient_match_tensorflow():
    """The largest singular value (Svd behind map_fn permutations), and through the Svd
    gradient, as TF's."""

    def build(api):
        x = api.constant(X)
        n = api.norm(x, ord=2, axis=(1, 2))
        (g,) = api.gradients(api.reduce_sum(n), x)
        return lambda sess: sess.run([n, g])

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-6, atol=1e-6)
