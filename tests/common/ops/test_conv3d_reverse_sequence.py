"""Conv3D / 3-D pooling (and their gradient ops) and ReverseSequence against TensorFlow
2.21's raw ops: the same signatures, values (within float32 rounding for the sums) and
error codes. Skipped without TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import InvalidArgumentError, UnimplementedError

from .signatures import assert_signature_matches_tensorflow
from .test_random_ops import Kernel

tf = pytest.importorskip("tensorflow")

OPS = [
    "Conv3D",
    "Conv3DBackpropInputV2",
    "Conv3DBackpropFilterV2",
    "MaxPool3D",
    "AvgPool3D",
    "MaxPool3DGrad",
    "AvgPool3DGrad",
    "ReverseSequence",
]
RNG = np.random.RandomState(0)
X = RNG.randn(2, 5, 6, 4, 3).astype(np.float32)
W = RNG.randn(2, 3, 2, 3, 4).astype(np.float32)


def _run(op: str, inputs: list, **attrs):
    return np.asarray(Kernel(op, inputs, **attrs)())


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize(
    "strides,dilations", [((1, 1, 1), (1, 1, 1)), ((2, 1, 2), (1, 1, 1)), ((1, 1, 1), (2, 1, 1))]
)
def test_conv3d_and_backprops(padding, strides, dilations):
    attrs = dict(strides=[1, *strides, 1], padding=padding, dilations=[1, *dilations, 1])
    want = tf.raw_ops.Conv3D(input=X, filter=W, **attrs).numpy()
    np.testing.assert_allclose(_run("Conv3D", [X, W], **attrs), want, rtol=1e-5, atol=1e-5)
    grad = RNG.randn(*want.shape).astype(np.float32)
    sizes = np.array(X.shape, np.int32)
    want_dx = tf.raw_ops.Conv3DBackpropInputV2(
        input_sizes=sizes, filter=W, out_backprop=grad, **attrs
    ).numpy()
    got_dx = _run("Conv3DBackpropInputV2", [sizes, W, grad], **attrs)
    np.testing.assert_allclose(got_dx, want_dx, rtol=1e-5, atol=1e-5)
    fsizes = np.array(W.shape, np.int32)
    want_dw = tf.raw_ops.Conv3DBackpropFilterV2(
        input=X, filter_sizes=fsizes, out_backprop=grad, **attrs
    ).numpy()
    got_dw = _run("Conv3DBackpropFilterV2", [X, fsizes, grad], **attrs)
    np.testing.assert_allclose(got_dw, want_dw, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("ksize,strides", [((2, 2, 2), (1, 1, 1)), ((3, 2, 1), (2, 2, 1))])
def test_pool3d_and_grads(padding, ksize, strides):
    attrs = dict(ksize=[1, *ksize, 1], strides=[1, *strides, 1], padding=padding)
    for op, grad_op in (("MaxPool3D", "MaxPool3DGrad"), ("AvgPool3D", "AvgPool3DGrad")):
        want = getattr(tf.raw_ops, op)(input=X, **attrs).numpy()
        got = _run(op, [X], **attrs)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        grad = RNG.randn(*want.shape).astype(np.float32)
        if op == "MaxPool3D":
            want_g = tf.raw_ops.MaxPool3DGrad(
                orig_input=X, orig_output=want, grad=grad, **attrs
            ).numpy()
            got_g = _run(grad_op, [X, want, grad], **attrs)
        else:
            shape = np.array(X.shape, np.int32)
            want_g = tf.raw_ops.AvgPool3DGrad(orig_input_shape=shape, grad=grad, **attrs).numpy()
            got_g = _run(grad_op, [shape, grad], **attrs)
        np.testing.assert_allclose(got_g, want_g, rtol=1e-5, atol=1e-6)


def test_conv3d_refuses_what_tensorflow_refuses():
    with pytest.raises(UnimplementedError, match="batch and depth"):
        _run("Conv3D", [X, W], strides=[2, 1, 1, 1, 1], padding="SAME")
    with pytest.raises(InvalidArgumentError, match="depth"):
        _run("Conv3D", [X, W[:, :, :, :2]], strides=[1, 1, 1, 1, 1], padding="SAME")


@pytest.mark.parametrize("seq_dim,batch_dim", [(1, 0), (0, 1), (2, 0), (1, 2)])
def test_reverse_sequence(seq_dim, batch_dim):
    x = RNG.randn(3, 4, 5).astype(np.float32)
    n = x.shape[batch_dim]
    lengths = RNG.randint(0, x.shape[seq_dim] + 1, n).astype(np.int64)
    want = tf.raw_ops.ReverseSequence(
        input=x, seq_lengths=lengths, seq_dim=seq_dim, batch_dim=batch_dim
    ).numpy()
    got = _run("ReverseSequence", [x, lengths], seq_dim=seq_dim, batch_dim=batch_dim)
    np.testing.assert_array_equal(got, want)


def test_reverse_sequence_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(InvalidArgumentError, match="seq_lengths\\(1\\) > input.dims\\(1\\)"):
        _run("ReverseSequence", [x, np.array([1, 4], np.int64)], seq_dim=1, batch_dim=0)
    with pytest.raises(InvalidArgumentError, match="batch_dim == seq_dim == 1"):
        _run("ReverseSequence", [x, np.array([1, 2], np.int64)], seq_dim=1, batch_dim=1)
    with pytest.raises(InvalidArgumentError, match="Length of seq_lengths != input.dims\\(0\\)"):
        _run("ReverseSequence", [x, np.array([1], np.int64)], seq_dim=1, batch_dim=0)
