"""Client linear algebra and spectral APIs TensorFlow composes in Python (lstsq, expm,
lu/lu_solve/lu_matrix_inverse, the matrix 2-norm, hessians, real FFTs) and the ops they
wrap (sqrtm, logm, eig, eigvals): values run by our in-process session equal
TensorFlow's for the same TF1 program (graphs are compared in test_graph_sweep)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.tf1_oracle import assert_close, run_both

RNG = np.random.default_rng(17)


def _rand(shape, dtype=np.float64):
    x = RNG.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _spd(shape, dtype=np.float64):
    a = _rand(shape, dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _linalg_v2(api):
    if api.__name__ == "client":
        return api.linalg
    import tensorflow

    return tensorflow.linalg


def _same(build, tol=1e-7):
    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=tol, atol=tol)


def _values(*fns):
    def build(api):
        outs = [fn(api) for fn in fns]
        return lambda sess: sess.run(outs)

    return build


TALL, WIDE, RHS = _rand((2, 6, 3)), _rand((2, 3, 5)), _rand((2, 6, 2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_lstsq_fast_regularized_and_exact_paths(dtype):
    a, w, b = TALL.astype(dtype), WIDE.astype(dtype), RHS.astype(dtype)
    tol = 1e-3 if dtype in (np.float32, np.complex64) else 1e-7
    _same(
        _values(
            lambda api: api.linalg.lstsq(api.constant(a), api.constant(b)),
            lambda api: api.linalg.lstsq(api.constant(a), api.constant(b), l2_regularizer=0.5),
            lambda api: api.linalg.lstsq(api.constant(w), api.constant(b[:, :3])),
            lambda api: api.matrix_solve_ls(api.constant(a), api.constant(b), fast=False),
            lambda api: api.linalg.lstsq(
                api.placeholder_with_default(a, [None, None, 3]), api.constant(b), 0.25
            ),
        ),
        tol,
    )


def test_lstsq_refuses_complex128_with_regularizer_as_tensorflow():
    import client

    with client.Graph().as_default():
        m = client.constant(TALL.astype(np.complex128))
        with pytest.raises(NotImplementedError, match="complex128 and l2_regularizer"):
            client.linalg.lstsq(m, m, l2_regularizer=0.1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_expm_matches_tensorflow_across_pade_degrees(dtype):
    # 1-norms from 0.01 to ~40: every Pade degree and several squarings.
    base = _rand((5, 3, 3), dtype)
    scales = np.array([0.002, 0.05, 0.3, 1.0, 8.0]).reshape(5, 1, 1)
    x = (base * scales).astype(dtype)
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-9
    _same(
        _values(
            lambda api: api.linalg.expm(api.constant(x)),
            lambda api: api.linalg.expm(api.constant(x[:2].reshape(2, 1, 3, 3))),
            lambda api: api.linalg.expm(api.placeholder_with_default(x[3], [None, None])),
        ),
        tol,
    )


def test_expm_of_inf_is_nan_as_tensorflow():
    x = np.array([[np.inf, 0.0], [0.0, 1.0]])
    _same(_values(lambda api: api.linalg.expm(api.constant(x))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_lu_solve_and_inverse_match_tensorflow(dtype):
    a, b = _rand((2, 4, 4), dtype), _rand((2, 4, 3), dtype)
    tol = 1e-4 if dtype == np.float32 else 1e-9

    def build(api):
        lu, p = api.linalg.lu(api.constant(a))
        lu1, p1 = api.linalg.lu(api.constant(a[0]), output_idx_type=api.int64)
        outs = [
            lu,
            p,
            api.linalg.lu_solve(lu, p, api.constant(b)),
            api.linalg.lu_matrix_inverse(lu, p),
            api.linalg.lu_solve(lu1, p1, api.constant(b[0])),
            api.linalg.lu_matrix_inverse(lu1, p1),
            api.linalg.lu_solve(lu, p, api.constant(b[0])),  # rhs batch broadcast
        ]
        return lambda sess: sess.run(outs)

    _same(build, tol)


def test_lu_static_argument_checks_match_tensorflow():
    import tensorflow as tf

    import client

    for api in (client, tf.compat.v1):
        with api.Graph().as_default():
            lu = api.constant(np.eye(3))
            for args, message in (
                ((lu, api.constant([0, 1, 2]), api.constant(np.ones(3))), "at least 2"),
                ((lu, api.constant([[0, 1, 2]]), api.constant(np.ones((3, 1)))), "rank"),
                ((lu, api.constant([0, 1, 2]), api.constant(np.ones((2, 1)))), "must equal"),
            ):
                with pytest.raises(ValueError, match=message):
                    api.linalg.lu_solve(*args)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_sqrtm_logm_eig_eigvals_match_tensorflow(dtype):
    spd = _spd((2, 3, 3), dtype)
    tol = 1e-3 if dtype in (np.float32, np.complex64) else 1e-8

    def build(api):
        x = api.constant(spd)
        e, v = _linalg_v2(api).eig(x)
        vals = _linalg_v2(api).eigvals(x)
        # Eigenvalue order and vector phases are solver choices: compare sorted values
        # and A v = e v residuals, plus the 2-norm of the vectors' magnitudes.
        outs = [api.linalg.sqrtm(x), api.abs(vals), api.abs(e), api.reduce_sum(api.abs(v) ** 2, 1)]
        if dtype in (np.complex64, np.complex128):
            outs.append(api.linalg.logm(x))
        return lambda sess: [
            np.sort(o, axis=-1) if i in (1, 2) else o for i, o in enumerate(sess.run(outs))
        ]

    _same(build, tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_real_ffts_match_tensorflow(dtype):
    x = _rand((2, 4, 6), dtype)
    tol = 1e-4 if dtype == np.float32 else 1e-9

    def build(api):
        t = api.constant(x)
        spectrum = api.signal.rfft(t)
        spectrum2 = api.signal.rfft2d(t)
        spectrum3 = api.signal.rfft3d(t)
        outs = [
            spectrum,
            api.signal.rfft(t, fft_length=[9]),
            api.signal.rfft(t, [4]),
            api.signal.irfft(spectrum),
            api.signal.irfft(spectrum, [7]),
            spectrum2,
            api.signal.rfft2d(t, [5, 10]),
            api.signal.irfft2d(spectrum2),
            api.signal.irfft2d(spectrum2, [3, 3]),
            spectrum3,
            api.signal.irfft3d(spectrum3),
            api.spectral.irfft3d(spectrum3, [2, 4, 8]),
            api.signal.rfft(api.placeholder_with_default(x, [None, None, None]), [8]),
            api.signal.irfft(api.placeholder_with_default(spectrum, [None, None, None])),
        ]
        return lambda sess: sess.run(outs)

    _same(build, tol)


def test_real_fft_dtype_checks_match_tensorflow():
    import tensorflow as tf

    import client

    for api in (client, tf.compat.v1):
        with api.Graph().as_default():
            with pytest.raises(ValueError, match="RFFT requires"):
                api.signal.rfft(api.constant([1, 2, 3]))
            with pytest.raises(ValueError, match="IRFFT requires"):
                api.signal.irfft(api.constant([1.0, 2.0]))


def test_matrix_2_norm_matches_tensorflow():
    x, z = _rand((2, 3, 4)), _rand((3, 3), np.complex128)
    _same(
        _values(
            lambda api: api.norm(api.constant(x), ord=2, axis=[1, 2]),
            lambda api: api.norm(api.constant(x), ord=2, axis=(-1, 0), keepdims=True),
            lambda api: api.linalg.norm(api.constant(x[0]), ord=2, axis=(0, 1)),
            lambda api: api.norm(api.constant(z), ord=2, axis=[0, 1]),
        )
    )


def test_hessians_match_tensorflow():
    x0, y0 = _rand((3,)), _rand((2, 2))

    def build(api):
        x, y = api.constant(x0), api.constant(y0)
        loss = api.reduce_sum(x * x * x) + x[0] * x[2] + api.reduce_sum(api.sin(y) * y[0, 0])
        h = api.hessians(loss, [x, y])
        return lambda sess: sess.run(h)

    _same(build)


@pytest.mark.parametrize(
    "fn,value",
    [
        (lambda api, x: api.linalg.sqrtm(x), np.ones((2, 3))),
        (lambda api, x: _linalg_v2(api).eigvals(x), np.ones((3, 2))),
        (lambda api, x: api.linalg.logm(api.cast(x, api.complex128)), np.ones((1, 2))),
    ],
)
def test_kernel_errors_name_the_node_as_tensorflow(fn, value):
    import tensorflow as tf

    import client

    messages = []
    for api, error in (
        (client, client.errors.InvalidArgumentError),
        (tf.compat.v1, tf.errors.InvalidArgumentError),
    ):
        with api.Graph().as_default():
            x = api.placeholder(api.float64, [None, None], name="x")
            y = fn(api, x)
            with api.Session() as sess, pytest.raises(error) as info:
                sess.run(y, {x: value})
        messages.append(str(info.value))
    assert "Input matrix must be square." in messages[0]
    assert y.op.name in messages[0] and y.op.name in messages[1]


@pytest.mark.parametrize("shape", [[2, 3], [3]])
@pytest.mark.parametrize("which", ["sqrtm", "eigvals", "lu", "logm"])
def test_static_shape_errors_match_tensorflow(which, shape):
    """Square-matrix shape functions refuse a static non-square or rank-1 input at graph
    building with TF's ValueError message."""
    import tensorflow as tf

    import client

    messages = []
    for api in (client, tf.compat.v1):
        with api.Graph().as_default():
            x = api.placeholder(api.float32, shape)
            if which == "logm":
                x = api.cast(x, api.complex64)
            fn = _linalg_v2(api).eigvals if which == "eigvals" else getattr(api.linalg, which)
            with pytest.raises(ValueError) as info:
                fn(x)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
