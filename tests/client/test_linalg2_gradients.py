"""Client, gradients of decompositions, least squares, FFTs and complex parts: the values
of TF's rules (Svd, SelfAdjointEigV2, Eig, MatrixSolveLs, the FFT family, Complex, Real,
Imag, ComplexAbs, Conj, ConjugateTranspose) run by our in-process session equal
TensorFlow's on the same graph (the graphs are compared node for node in
test_graph_sweep). Losses are invariant to the sign/phase and order freedoms of the
decompositions, which LAPACK and Eigen resolve differently."""

from __future__ import annotations

import numpy as np
import pytest

from tests.client.tf1_oracle import assert_close, run_both

RNG = np.random.default_rng(3)
ROW_W = np.arange(1.0, 6.0)


def _linalg_v2(api):
    if api.__name__ == "client":
        return api.linalg
    import tensorflow

    return tensorflow.linalg


def _raw_solve_ls(api, a, b, l2):
    if api.__name__ == "client":
        from client.framework.op_builder import apply_op

        return apply_op("MatrixSolveLs", [a, b, l2], {"fast": True}).outputs[0]
    return api.raw_ops.MatrixSolveLs(matrix=a, rhs=b, l2_regularizer=l2, fast=True)


def _weighted(api, v, power=4):
    """sum_ij |v_ij|^power * w_i: blind to column signs/phases and column order."""
    mag = api.abs(v)
    w = api.constant(ROW_W[: v.shape[-2]].reshape(-1, 1), dtype=mag.dtype)
    return api.reduce_sum(api.pow(mag, float(power)) * w)


def _svd_loss(full=False, compute_uv=True):
    def loss(api, x):
        if not compute_uv:
            return api.reduce_sum(api.svd(x, compute_uv=False) ** 2)
        s, u, v = api.svd(x, full_matrices=full)
        return api.reduce_sum(api.abs(s) * 1.5) + _weighted(api, u) + _weighted(api, v, 2)

    return loss


def _eigh_loss(api, x):
    e, v = api.linalg.eigh(x)
    return api.reduce_sum(api.abs(e) ** 2) + _weighted(api, v)


def _eig_loss(api, x):
    e, v = _linalg_v2(api).eig(x)
    return api.reduce_sum(api.math.real(e * e)) + _weighted(api, v)


def _rand(shape, dtype=np.float64):
    x = RNG.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _sym(shape, dtype=np.float64):
    a = _rand(shape, dtype)
    return a + np.conj(np.swapaxes(a, -1, -2))


CASES = {
    "svd_square": (_svd_loss(), _rand((2, 3, 3))),
    "svd_wide": (_svd_loss(), _rand((3, 5))),
    "svd_tall": (_svd_loss(), _rand((2, 5, 3))),
    "svd_full_tall": (_svd_loss(full=True), _rand((4, 3))),
    "svd_values_only": (_svd_loss(compute_uv=False), _rand((2, 4, 3))),
    "svd_complex": (_svd_loss(), _rand((3, 4), np.complex128)),
    "eigh": (_eigh_loss, _sym((2, 4, 4))),
    "eigvalsh": (lambda api, x: api.reduce_sum(api.linalg.eigvalsh(x) ** 3), _sym((3, 3))),
    "eigh_complex": (_eigh_loss, _sym((3, 3), np.complex128)),
    "eig": (_eig_loss, _rand((2, 4, 4))),
    "eig_complex": (_eig_loss, _rand((3, 3), np.complex128)),
    "solve_ls_tall": (
        lambda api, x: api.reduce_sum(_raw_solve_ls(api, x, x[..., :2] * 2.0 + 1.0, 0.25) ** 2),
        _rand((2, 5, 3)),
    ),
    "solve_ls_wide": (
        lambda api, x: api.reduce_sum(_raw_solve_ls(api, x, x[..., :1] + 1.0, 0.0) ** 2),
        _rand((2, 4)),
    ),
    "lstsq_l2": (
        lambda api, x: api.reduce_sum(api.linalg.lstsq(x, x[..., :1] - 1.0, 0.5) ** 2),
        _rand((5, 3)),
    ),
    "fft": (lambda api, x: _weighted(api, api.signal.fft(x * x), 2), _rand((2, 5), np.complex128)),
    "ifft": (lambda api, x: _weighted(api, api.signal.ifft(x * x), 2), _rand((5, 4), np.complex64)),
    "fft2d": (
        lambda api, x: _weighted(api, api.signal.fft2d(x * x), 3),
        _rand((3, 4), np.complex128),
    ),
    "ifft2d": (
        lambda api, x: _weighted(api, api.signal.ifft2d(x * x), 3),
        _rand((3, 4), np.complex128),
    ),
    "fft3d": (
        lambda api, x: _weighted(api, api.signal.fft3d(x * x), 3),
        _rand((2, 3, 4), np.complex128),
    ),
    "ifft3d": (
        lambda api, x: _weighted(api, api.signal.ifft3d(x * x), 3),
        _rand((2, 3, 4), np.complex128),
    ),
    "rfft_even": (lambda api, x: _weighted(api, api.signal.rfft(x * x), 3), _rand((3, 6))),
    "rfft_odd": (lambda api, x: _weighted(api, api.signal.rfft(x * x), 3), _rand((3, 5))),
    "irfft": (
        lambda api, x: _weighted(api, api.signal.irfft(x * x), 3),
        _rand((3, 4), np.complex128),
    ),
    "irfft_odd": (
        lambda api, x: _weighted(api, api.signal.irfft(x * x, [7]), 3),
        _rand((3, 4), np.complex128),
    ),
    "rfft2d": (lambda api, x: _weighted(api, api.signal.rfft2d(x * x), 3), _rand((2, 4, 6))),
    "irfft2d": (
        lambda api, x: _weighted(api, api.signal.irfft2d(x * x), 3),
        _rand((4, 3), np.complex128),
    ),
    "complex_parts": (
        lambda api, x: api.reduce_sum(
            api.abs(api.complex(api.math.imag(x) * 2.0, api.math.real(api.math.conj(x)))) ** 3
        ),
        _rand((2, 3), np.complex128),
    ),
    "conjugate_transpose": (
        lambda api, x: _weighted(api, api.transpose(x, conjugate=True) * x[0, 1], 3),
        _rand((3, 3), np.complex128),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_values_match_tensorflow(case):
    fn, value = CASES[case]

    def build(api):
        x = api.constant(value)
        loss = fn(api, x)
        (grad,) = api.gradients(loss, x)
        return lambda sess: sess.run([loss, grad])

    ours, theirs, _, _ = run_both(build)
    tol = 2e-4 if value.dtype in (np.float32, np.complex64) else 1e-7
    assert_close(ours, theirs, rtol=tol, atol=tol)


def test_svd_gradient_with_unknown_inner_shape_is_refused_as_tensorflow():
    import client

    g = client.Graph()
    with g.as_default():
        x = client.placeholder(client.float32, [None, 3])
        s, u, v = client.svd(x)
        with pytest.raises(NotImplementedError, match="unknown inner matrix shape"):
            client.gradients(client.reduce_sum(u), x)


def test_solve_ls_gradient_is_refused_when_not_fast():
    import client
    from client.framework.op_builder import apply_op

    g = client.Graph()
    with g.as_default():
        a = client.constant(_rand((3, 2)))
        x = apply_op("MatrixSolveLs", [a, a, 0.0], {"fast": False}).outputs[0]
        with pytest.raises(ValueError, match="Gradient not defined for fast=False"):
            client.gradients(x, a)
