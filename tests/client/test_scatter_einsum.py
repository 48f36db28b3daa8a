"""Client, N-d scatters, einsum, bincount and unique: values and gradients equal to
TensorFlow's compat.v1 for the same programs (the graphs are compared node for node in
test_graph_sweep)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.tf1_oracle import assert_close, run_both

RNG = np.random.default_rng(11)
T = RNG.standard_normal((4, 3))
# Row 1 is scattered twice; for Max/Min ties on row 3 split the gradient.
INDICES = np.array([[1], [3], [1]], np.int32)
UPDATES = np.array([[5.0, -1.0, 0.0], T[3], [-2.0, 7.0, 0.5]])


@pytest.mark.parametrize("how", ["update", "add", "sub", "max", "min"])
def test_tensor_scatter_and_gradient_match_tensorflow(how):
    def build(api):
        t, u = api.constant(T), api.constant(UPDATES)
        y = getattr(api, f"tensor_scatter_nd_{how}")(t, INDICES, u)
        grads = api.gradients(api.reduce_sum(y * y), [t, u])
        return lambda sess: sess.run([y, *grads])

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


def test_scatter_nd_and_gradient_match_tensorflow():
    def build(api):
        u = api.constant(UPDATES)
        y = api.scatter_nd(INDICES, u, [5, 3])
        (g,) = api.gradients(api.reduce_sum(y * y), [u])
        return lambda sess: sess.run([y, g])

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("how", ["update", "add", "sub"])
def test_variable_scatter_nd_matches_tensorflow(how):
    def build(api):
        v = api.Variable(T, use_resource=True, name="v")
        y = getattr(api, f"scatter_nd_{how}")(v, INDICES, UPDATES)
        return lambda sess: [sess.run(y), sess.run(y), sess.run(v.read_value())]

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


EINSUMS = {
    "matmul": ("ij,jk->ik", [(2, 3), (3, 4)]),
    "batch": ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    "reduce_binary": ("abc,cd->ad", [(2, 3, 4), (4, 5)]),
    "outer": ("i,j->ij", [(3,), (2,)]),
    "dot": ("i,i->", [(3,), (3,)]),
    "unary_sum": ("ijk->ik", [(2, 3, 4)]),
    "reduce_transpose": ("ijk->ki", [(2, 3, 4)]),
    "transpose": ("ij->ji", [(2, 3)]),
    "ellipsis_broadcast": ("...ij,jk->...ik", [(2, 1, 2, 3), (3, 4)]),
    "ellipsis_both": ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 4)]),
    "implicit": ("ij,jk", [(2, 3), (3, 4)]),
    "three": ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    # More operands: a chain of pairwise Einsums along opt_einsum's path.
    "implicit_four": ("ij,jk,kl,lm", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    "chain_ellipsis_broadcast": ("...ij,jk,...kl->...il", [(1, 3, 2, 3), (3, 4), (2, 1, 4, 2)]),
    "chain_batch": ("bij,bjk,bkl->bl", [(2, 2, 3), (2, 3, 4), (2, 4, 2)]),
    "chain_with_trace": ("ii,ij,jk->k", [(3, 3), (3, 4), (4, 2)]),
    "chain_to_scalar": ("ab,bc,cd->", [(2, 3), (3, 4), (4, 2)]),
    # Traces: their gradients are Einsums with a repeated output label ("i->ii").
    "diagonal": ("ii->i", [(3, 3)]),
    "trace": ("ii->", [(3, 3)]),
    "batch_trace": ("iij->j", [(3, 3, 2)]),
}


@pytest.mark.parametrize("case", sorted(EINSUMS))
def test_einsum_and_gradient_match_tensorflow(case):
    equation, shapes = EINSUMS[case]
    values = [RNG.standard_normal(s) for s in shapes]

    def build(api):
        xs = [api.constant(v) for v in values]
        y = api.einsum(equation, *xs)
        grads = api.gradients(api.reduce_sum(y * y), xs)
        return lambda sess: sess.run([y, *grads])

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert ours[0].shape == theirs[0].shape
    assert_close(ours, theirs, rtol=1e-10, atol=1e-10)


def test_einsum_complex_gradient_matches_tensorflow():
    a = RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3))
    b = RNG.standard_normal((3, 2)) + 1j * RNG.standard_normal((3, 2))

    def build(api):
        x, y = api.constant(a), api.constant(b)
        z = api.einsum("ij,jk->ik", x, y)
        seed = api.constant(np.full((2, 2), 1.0 - 0.5j))
        return lambda sess: sess.run([z, *api.gradients(z, [x, y], grad_ys=seed)])

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    "bad", ["ij,jk->ii", "ij,jk->il", "ij;jk", "i0,j->ij", "...i,...j->......"]
)
def test_einsum_bad_equations_raise_tensorflows_message(bad):
    tf = pytest.importorskip("tensorflow").compat.v1
    import client

    shapes = [(2, 2), (2, 2)]
    with tf.Graph().as_default(), pytest.raises(ValueError) as want:
        tf.einsum(bad, *[tf.zeros(s) for s in shapes])
    with client.Graph().as_default(), pytest.raises(ValueError) as got:
        client.einsum(bad, *[client.zeros(s) for s in shapes])
    assert str(got.value) == str(want.value)


BINCOUNTS = {
    "plain": {},
    "weights": {"weights": np.array([0.5, 1.0, 2.0, 0.25, 1.0, 3.0])},
    "minlength": {"minlength": 9},
    "maxlength": {"maxlength": 3},
    "dtype": {"dtype": "float64"},
}


@pytest.mark.parametrize("case", sorted(BINCOUNTS))
def test_bincount_matches_tensorflow(case):
    arr = np.array([[1, 4, 1], [0, 7, 1]], np.int32)

    def build(api):
        kwargs = dict(BINCOUNTS[case])
        if "dtype" in kwargs:
            kwargs["dtype"] = api.float64
        if "weights" in kwargs:
            kwargs["weights"] = api.constant(kwargs["weights"].reshape(2, 3))
        ys = [api.bincount(arr, **kwargs), api.math.bincount(np.zeros([0], np.int32))]
        return lambda sess: sess.run(ys)

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_unique_with_out_idx_matches_tensorflow():
    def build(api):
        x = api.constant([4, 1, 4, 2, 1])
        ys = [*api.unique(x, out_idx=api.int64), *api.unique_with_counts(x, api.int64)]
        return lambda sess: sess.run(ys)

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("reduction", ["mean", "sqrt_n"])
def test_unsorted_segment_mean_and_sqrt_n_match_tensorflow(reduction):
    data = RNG.standard_normal((5, 2))
    ids = np.array([0, 3, 0, -1, 3], np.int32)  # segment 1 and 2 empty, -1 dropped

    def build(api):
        fn = getattr(api.math, f"unsorted_segment_{reduction}")
        ids_fed = api.placeholder(api.int32, [None], name="ids")
        ys = [fn(data, ids, 4), getattr(api, f"unsorted_segment_{reduction}")(data, ids_fed, 4)]
        return lambda sess: sess.run(ys, {ids_fed: ids})

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


def test_scatter_nd_non_aliasing_add_gradient_matches_tensorflow():
    """No TF1 API emits ScatterNdNonAliasingAdd (its gradient serves imported graphs): the
    op is built directly in both clients."""
    tf = pytest.importorskip("tensorflow")
    import client
    from client.framework.op_builder import apply_op

    def build(api):
        t, u = api.constant(T), api.constant(UPDATES)
        if api is client:
            y = apply_op("ScatterNdNonAliasingAdd", [t, INDICES, u], {}).outputs[0]
        else:
            y = tf.raw_ops.ScatterNdNonAliasingAdd(input=t, indices=INDICES, updates=u)
        grads = api.gradients(api.reduce_sum(y * y), [t, u])
        return lambda sess: sess.run([y, *grads])

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


def test_unsorted_segment_gradients_match_tensorflow():
    data = RNG.standard_normal((5, 2))
    ids = np.array([0, 3, 0, -1, 3], np.int32)

    def build(api):
        x = api.constant(data)
        ys = [
            api.math.unsorted_segment_sum(x, ids, 4),
            api.math.unsorted_segment_mean(x, ids, 4),
            api.math.unsorted_segment_sqrt_n(x, ids, 4),
        ]
        grads = [api.gradients(api.reduce_sum(y * y), [x])[0] for y in ys]
        return lambda sess: sess.run(grads)

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)
