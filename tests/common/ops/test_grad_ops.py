"""Gradient kernels (grad_ops): signatures against TensorFlow's OpDefs, numpy expectations,
and TensorFlow's raw ops as the oracle on random inputs."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import InvalidArgumentError

from . import compare_with_tf, run1, run_kernel, run_tf
from .signatures import assert_signature_matches_tensorflow, module_ops

f32, f64 = np.float32, np.float64


MY_OPS = module_ops("common.ops.grad_ops")


def test_registered_the_whole_family():
    for name in (
        "ReluGrad",
        "Conv2DBackpropInput",
        "MaxPoolGradGrad",
        "AvgPoolGrad",
        "SparseSoftmaxCrossEntropyWithLogits",
        "MirrorPadGrad",
        "BiasAddGrad",
    ):
        assert name in MY_OPS
    assert len(MY_OPS) == 26


@pytest.mark.parametrize("name", MY_OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


# ---------------------------------------------------------------------------------------
# Numpy expectations
# ---------------------------------------------------------------------------------------


def test_relu_family_grads():
    g = np.array([1.0, 2.0, 3.0, 4.0], f32)
    x = np.array([-1.0, 0.0, 3.0, 7.0], f32)
    np.testing.assert_array_equal(run1("ReluGrad", g, x), [0, 0, 3, 4])
    np.testing.assert_array_equal(run1("Relu6Grad", g, x), [0, 0, 3, 0])
    np.testing.assert_array_equal(run1("LeakyReluGrad", g, x, alpha=0.5), [0.5, 1, 3, 4])
    np.testing.assert_array_equal(
        run1("EluGrad", g, np.array([-0.5, 0, 1, 2], f32)), [0.5, 2, 3, 4]
    )


def test_y_dy_grads():
    y = np.array([0.5, 2.0], f32)
    dy = np.array([2.0, 3.0], f32)
    np.testing.assert_array_equal(run1("SigmoidGrad", y, dy), [0.5, -6.0])
    np.testing.assert_array_equal(run1("TanhGrad", y, dy), [1.5, -9.0])
    np.testing.assert_array_equal(run1("SqrtGrad", y, dy), [2.0, 0.75])
    np.testing.assert_array_equal(run1("ReciprocalGrad", y, dy), [-0.5, -12.0])
    np.testing.assert_array_equal(run1("RsqrtGrad", y, dy), [-0.125, -12.0])


def test_activation_grad_shape_mismatch():
    with pytest.raises(InvalidArgumentError, match="same shape"):
        run1("ReluGrad", np.zeros(2, f32), np.zeros(3, f32))


def test_bias_add_grad_formats():
    g = np.arange(24, dtype=f32).reshape(2, 3, 4)
    np.testing.assert_array_equal(run1("BiasAddGrad", g), g.sum(axis=(0, 1)))
    np.testing.assert_array_equal(run1("BiasAddGrad", g, data_format="NCHW"), g.sum(axis=(0, 2)))
    with pytest.raises(InvalidArgumentError, match="at least 2D"):
        run1("BiasAddGrad", np.zeros(3, f32))


def _numeric_conv_input_grad(x, f, dy, **attrs):
    """d(sum(conv(x) * dy))/dx by linearity: conv is linear in x, so apply it to basis
    vectors (small sizes only)."""
    out = np.zeros(x.size, f64)
    for i in range(x.size):
        e = np.zeros(x.size, f64)
        e[i] = 1
        out[i] = np.sum(run1("Conv2D", e.reshape(x.shape), f.astype(f64), **attrs) * dy)
    return out.reshape(x.shape)


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_conv_backprop_input_is_the_adjoint_of_conv(padding):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 5, 4, 2))
    f = rng.standard_normal((3, 2, 2, 3))
    attrs = {"strides": [1, 2, 1, 1], "padding": padding, "dilations": [1, 1, 2, 1]}
    y = run1("Conv2D", x, f, **attrs)
    dy = rng.standard_normal(y.shape)
    got = run1("Conv2DBackpropInput", np.array(x.shape, np.int32), f, dy, **attrs)
    np.testing.assert_allclose(got, _numeric_conv_input_grad(x, f, dy, **attrs), rtol=1e-12)


def test_conv_backprop_wrong_out_backprop_shape():
    with pytest.raises(InvalidArgumentError, match="does not match out_backprop"):
        run1(
            "Conv2DBackpropInput",
            np.array([1, 4, 4, 1], np.int32),
            np.ones((2, 2, 1, 1), f32),
            np.ones((1, 2, 2, 1), f32),
            strides=[1, 1, 1, 1],
            padding="VALID",
        )


def test_max_pool_grad_routes_to_first_max():
    x = np.array([[1, 3], [3, 0]], f32).reshape(1, 2, 2, 1)
    y = np.array([[[[3]]]], f32)
    g = np.array([[[[5]]]], f32)
    got = run1("MaxPoolGrad", x, y, g, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    np.testing.assert_array_equal(got.reshape(2, 2), [[0, 5], [0, 0]])
    gg = np.arange(4, dtype=f32).reshape(1, 2, 2, 1)
    got2 = run1(
        "MaxPoolGradGrad", x, y, gg, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"
    )
    np.testing.assert_array_equal(got2.reshape(-1), [1])


def test_avg_pool_grad_spreads_evenly():
    g = np.array([[[[8.0]]]], f32)
    got = run1(
        "AvgPoolGrad",
        np.array([1, 2, 2, 1], np.int32),
        g,
        ksize=[1, 2, 2, 1],
        strides=[1, 2, 2, 1],
        padding="VALID",
    )
    np.testing.assert_array_equal(got.reshape(-1), [2, 2, 2, 2])


def test_softmax_xent_values():
    logits = np.log(np.array([[1.0, 3.0]], f64))
    labels = np.array([[0.0, 1.0]], f64)
    loss, backprop = run_kernel("SoftmaxCrossEntropyWithLogits", [logits, labels])
    np.testing.assert_allclose(loss, [-np.log(0.75)])
    np.testing.assert_allclose(backprop, [[0.25, -0.25]])
    loss2, bp2 = run_kernel(
        "SparseSoftmaxCrossEntropyWithLogits", [logits, np.array([1], np.int64)]
    )
    np.testing.assert_allclose(loss2, loss)
    np.testing.assert_allclose(bp2, backprop)


def test_sparse_xent_out_of_range_label():
    with pytest.raises(
        InvalidArgumentError,
        match=r"Received a label value of 3 which is outside the valid range "
        r"of \[0, 3\)",
    ):
        run_kernel(
            "SparseSoftmaxCrossEntropyWithLogits",
            [np.zeros((2, 3), f32), np.array([0, 3], np.int32)],
        )


def test_mirror_pad_grad_folds_borders():
    g = np.arange(1, 8, dtype=f32)  # padded [a b | c d e | f g] with (2, 2) around 3
    got = run1("MirrorPadGrad", g, np.array([[2, 2]], np.int32), mode="SYMMETRIC")
    # SYMMETRIC: padded = [x1 x0 | x0 x1 x2 | x2 x1]
    np.testing.assert_array_equal(got, [2 + 3, 1 + 4 + 7, 5 + 6])
    got = run1(
        "MirrorPadGrad", np.arange(1, 6, dtype=f32), np.array([[1, 1]], np.int32), mode="REFLECT"
    )
    # REFLECT: padded = [x1 | x0 x1 x2 | x1]
    np.testing.assert_array_equal(got, [2, 1 + 3 + 5, 4])


# ---------------------------------------------------------------------------------------
# TensorFlow oracle
# ---------------------------------------------------------------------------------------

RNG = np.random.default_rng(1234)


def _r(*shape, dtype=f32):
    return RNG.standard_normal(shape).astype(dtype)


def _pos(*shape):
    return (RNG.random(shape) + 0.5).astype(f32)


ELEMENTWISE = [
    ("ReluGrad", lambda: [_r(3, 4), _r(3, 4)], {}),
    ("Relu6Grad", lambda: [_r(3, 4), _r(3, 4) * 5], {}),
    ("EluGrad", lambda: [_r(3, 4), _r(3, 4)], {}),
    ("SeluGrad", lambda: [_r(3, 4), _r(3, 4)], {}),
    ("SoftplusGrad", lambda: [_r(3, 4), _r(3, 4)], {}),
    ("SoftsignGrad", lambda: [_r(3, 4), _r(3, 4)], {}),
    ("LeakyReluGrad", lambda: [_r(3, 4), _r(3, 4)], {"alpha": 0.3}),
    ("SigmoidGrad", lambda: [_r(3, 4), _r(3, 4)], {}),
    ("TanhGrad", lambda: [_r(3, 4), _r(3, 4)], {}),
    ("RsqrtGrad", lambda: [_pos(3, 4), _r(3, 4)], {}),
    ("SqrtGrad", lambda: [_pos(3, 4), _r(3, 4)], {}),
    ("ReciprocalGrad", lambda: [_pos(3, 4), _r(3, 4)], {}),
    ("SigmoidGrad", lambda: [_r(5).astype(f64), _r(5).astype(f64)], {}),
    ("BiasAddGrad", lambda: [_r(2, 3, 4, 5)], {}),
    ("BiasAddGrad", lambda: [_r(2, 3, 4, 5)], {"data_format": "NCHW"}),
    ("SoftmaxCrossEntropyWithLogits", lambda: [_r(4, 5), _pos(4, 5)], {}),
    ("SoftmaxCrossEntropyWithLogits", lambda: [_r(4, 5), _pos(1, 5)], {}),
    (
        "SparseSoftmaxCrossEntropyWithLogits",
        lambda: [_r(4, 5), np.array([0, 4, 2, 1], np.int32)],
        {},
    ),
    ("SparseSoftmaxCrossEntropyWithLogits", lambda: [_r(2, 3), np.array([1, 2], np.int64)], {}),
    (
        "MirrorPadGrad",
        lambda: [_r(6, 7), np.array([[1, 2], [2, 1]], np.int32)],
        {"mode": "REFLECT"},
    ),
    (
        "MirrorPadGrad",
        lambda: [_r(6, 7), np.array([[2, 2], [0, 3]], np.int64)],
        {"mode": "SYMMETRIC"},
    ),
]


@pytest.mark.parametrize("op,make,attrs", ELEMENTWISE, ids=[c[0] for c in ELEMENTWISE])
def test_oracle_simple(op, make, attrs):
    pytest.importorskip("tensorflow")
    compare_with_tf(op, make(), **attrs)


CONV_CASES = [
    # (input NHWC, filter HWIO, strides, padding, dilations, data_format, explicit)
    ((2, 7, 6, 3), (3, 3, 3, 4), [1, 1, 1, 1], "SAME", [1, 1, 1, 1], "NHWC", []),
    ((2, 7, 6, 3), (3, 2, 3, 4), [1, 2, 3, 1], "VALID", [1, 1, 1, 1], "NHWC", []),
    ((1, 8, 9, 2), (2, 3, 2, 3), [1, 2, 2, 1], "SAME", [1, 1, 1, 1], "NHWC", []),
    ((1, 9, 9, 2), (3, 3, 2, 2), [1, 1, 1, 1], "VALID", [1, 2, 2, 1], "NHWC", []),
    (
        (1, 6, 5, 2),
        (3, 3, 2, 2),
        [1, 1, 1, 1],
        "EXPLICIT",
        [1, 1, 1, 1],
        "NHWC",
        [0, 0, 1, 2, 0, 1, 0, 0],
    ),
    ((1, 6, 5, 4), (2, 2, 2, 6), [1, 1, 1, 1], "VALID", [1, 1, 1, 1], "NHWC", []),  # groups
]


def _conv_case(case, nchw_ok=True):
    shape, fshape, strides, padding, dil, fmt, explicit = case
    attrs = {"strides": strides, "padding": padding, "dilations": dil, "data_format": fmt}
    if explicit:
        attrs["explicit_paddings"] = explicit
    return _r(*shape), _r(*fshape), attrs


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_oracle_conv2d_backprops(case):
    tf = pytest.importorskip("tensorflow")
    x, f, attrs = _conv_case(CONV_CASES[case])
    y = tf.raw_ops.Conv2D(input=x, filter=f, **attrs).numpy()
    dy = _r(*y.shape)
    compare_with_tf("Conv2DBackpropInput", [np.array(x.shape, np.int32), f, dy], **attrs)
    # The filter gradient sums N*OH*OW products per element in float32 (one GEMM, BLAS's
    # order, not Eigen's): equal to TF's up to rounding relative to the largest element.
    inputs = [x, np.array(f.shape, np.int32), dy]
    (ours,), (theirs,) = (
        run_kernel("Conv2DBackpropFilter", inputs, **attrs),
        run_tf("Conv2DBackpropFilter", inputs, **attrs),
    )
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6 * np.abs(theirs).max())


def test_oracle_conv2d_backprops_nchw():
    tf = pytest.importorskip("tensorflow")
    # TF's CPU Conv2D has no NCHW kernel; the backprop ops do. Compare via NHWC transposes.
    x, f = _r(2, 3, 7, 6), _r(3, 2, 3, 4)
    attrs = {"strides": [1, 1, 2, 1], "padding": "SAME", "data_format": "NCHW"}
    nhwc = {"strides": [1, 2, 1, 1], "padding": "SAME"}
    xt = np.transpose(x, (0, 2, 3, 1))
    y = tf.raw_ops.Conv2D(input=xt, filter=f, **nhwc).numpy()
    dyt = _r(*y.shape)
    dy = np.ascontiguousarray(np.transpose(dyt, (0, 3, 1, 2)))
    dx = run1("Conv2DBackpropInput", np.array(x.shape, np.int32), f, dy, **attrs)
    want = tf.raw_ops.Conv2DBackpropInput(
        input_sizes=xt.shape, filter=f, out_backprop=dyt, **nhwc
    ).numpy()
    np.testing.assert_allclose(dx, np.transpose(want, (0, 3, 1, 2)), rtol=1e-5, atol=1e-5)
    df = run1("Conv2DBackpropFilter", x, np.array(f.shape, np.int32), dy, **attrs)
    want_f = tf.raw_ops.Conv2DBackpropFilter(
        input=xt, filter_sizes=f.shape, out_backprop=dyt, **nhwc
    ).numpy()
    np.testing.assert_allclose(df, want_f, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "strides,padding,mult",
    [([1, 1, 1, 1], "SAME", 1), ([1, 2, 2, 1], "VALID", 2), ([1, 2, 1, 1], "SAME", 3)],
)
def test_oracle_depthwise_backprops(strides, padding, mult):
    tf = pytest.importorskip("tensorflow")
    x, f = _r(2, 7, 6, 3), _r(3, 3, 3, mult)
    attrs = {"strides": strides, "padding": padding}
    y = tf.raw_ops.DepthwiseConv2dNative(input=x, filter=f, **attrs).numpy()
    dy = _r(*y.shape)
    compare_with_tf(
        "DepthwiseConv2dNativeBackpropInput", [np.array(x.shape, np.int32), f, dy], **attrs
    )
    compare_with_tf(
        "DepthwiseConv2dNativeBackpropFilter", [x, np.array(f.shape, np.int32), dy], **attrs
    )


POOL_CASES = [
    ([1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
    ([1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
    ([1, 3, 2, 1], [1, 1, 2, 1], "VALID"),
    ([1, 2, 3, 1], [1, 2, 1, 1], "SAME"),
]


@pytest.mark.parametrize("ksize,strides,padding", POOL_CASES)
def test_oracle_pool_grads(ksize, strides, padding):
    tf = pytest.importorskip("tensorflow")
    x = _r(2, 7, 6, 3)
    attrs = {"ksize": ksize, "strides": strides, "padding": padding}
    y = tf.raw_ops.MaxPool(input=x, **attrs).numpy()
    g = _r(*y.shape)
    compare_with_tf("MaxPoolGrad", [x, y, g], **attrs)
    compare_with_tf(
        "MaxPoolGradV2",
        [x, y, g, np.array(ksize, np.int32), np.array(strides, np.int32)],
        padding=padding,
    )
    compare_with_tf("MaxPoolGradGrad", [x, y, _r(*x.shape)], **attrs)
    compare_with_tf(
        "MaxPoolGradGradV2",
        [x, y, _r(*x.shape), np.array(ksize, np.int32), np.array(strides, np.int32)],
        padding=padding,
    )
    ya = tf.raw_ops.AvgPool(value=x, **attrs).numpy()
    compare_with_tf("AvgPoolGrad", [np.array(x.shape, np.int32), _r(*ya.shape)], **attrs)


def test_oracle_max_pool_grad_with_ties():
    tf = pytest.importorskip("tensorflow")
    x = np.round(_r(1, 6, 6, 2)).astype(f32)  # many equal values inside windows
    attrs = {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}
    y = tf.raw_ops.MaxPool(input=x, **attrs).numpy()
    compare_with_tf("MaxPoolGrad", [x, y, _r(*y.shape)], **attrs)
    compare_with_tf("MaxPoolGradGrad", [x, y, _r(*x.shape)], **attrs)


def test_oracle_sparse_xent_error():
    pytest.importorskip("tensorflow")
    import tensorflow as tf

    logits, labels = _r(2, 3), np.array([0, 3], np.int32)
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=logits, labels=labels)
    with pytest.raises(InvalidArgumentError) as ours:
        run_kernel("SparseSoftmaxCrossEntropyWithLogits", [logits, labels])
    assert str(ours.value) in theirs.value.message


# ---------------------------------------------------------------------------------------
# End to end: tf.gradients graphs built by TensorFlow, run by our Session and TF's
# ---------------------------------------------------------------------------------------


def _run_both(graph, fetches: list, feeds: dict) -> None:
    tf = pytest.importorskip("tensorflow")
    from common.session import Session

    with tf.compat.v1.Session(graph=graph) as sess:
        want = sess.run(fetches, feeds)
    names = [t.name for t in fetches]
    with Session(graph.as_graph_def().SerializeToString()) as ours:
        got = ours.run(names, {t.name: v for t, v in feeds.items()})
    for name, a, b in zip(names, got, want):
        assert np.asarray(a).shape == np.shape(b), name
        # float32 sums in a different order: relative to the tensor's magnitude
        np.testing.assert_allclose(
            a, b, rtol=1e-4, atol=1e-5 * max(1.0, np.max(np.abs(b))), err_msg=name
        )


def test_end_to_end_dense_softmax_gradients():
    tf = pytest.importorskip("tensorflow")
    tf1 = tf.compat.v1
    rng = np.random.default_rng(0)
    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [4, 5])
        y = tf1.placeholder(tf.float32, [4, 3])
        w = tf.constant(rng.standard_normal((5, 3)).astype(f32))
        b = tf.constant(rng.standard_normal(3).astype(f32))
        logits = tf.nn.relu(tf.matmul(x, w) + b)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
        sparse = tf.reduce_sum(
            tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=tf.argmax(y, 1), logits=tf.sigmoid(logits)
            )
        )
        grads = tf.gradients(loss + sparse, [x, w, b])
    feeds = {x: rng.standard_normal((4, 5)).astype(f32), y: np.eye(3, dtype=f32)[[0, 1, 2, 1]]}
    _run_both(g, [loss, sparse, *grads], feeds)


def test_end_to_end_conv_pool_and_second_order_gradients():
    tf = pytest.importorskip("tensorflow")
    tf1 = tf.compat.v1
    rng = np.random.default_rng(1)
    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [2, 8, 8, 3])
        f = tf.constant(rng.standard_normal((3, 3, 3, 4)).astype(f32))
        h = tf.nn.bias_add(
            tf.nn.conv2d(x, f, strides=[1, 2, 1, 1], padding="SAME"), tf.constant(np.ones(4, f32))
        )
        p = tf.nn.max_pool2d(tf.nn.relu(h), 2, 2, "VALID")
        q = tf.nn.avg_pool2d(tf.tanh(h), 3, 1, "SAME")
        d = tf.nn.depthwise_conv2d(
            x,
            tf.constant(rng.standard_normal((2, 2, 3, 2)).astype(f32)),
            strides=[1, 1, 1, 1],
            padding="VALID",
        )
        loss = tf.reduce_sum(p * p) + tf.reduce_mean(q) + tf.reduce_sum(tf.nn.elu(d))
        dx, df = tf.gradients(loss, [x, f])
        (ddx,) = tf.gradients(tf.reduce_sum(dx * dx), [x])  # MaxPoolGradGrad, TanhGrad grads
    ops = {n.op for n in g.as_graph_def().node}
    assert {
        "MaxPoolGradGrad",
        "Conv2DBackpropFilter",
        "AvgPoolGrad",
        "EluGrad",
        "DepthwiseConv2dNativeBackpropInput",
    } <= ops
    _run_both(g, [loss, dx, df, ddx], {x: rng.standard_normal((2, 8, 8, 3)).astype(f32)})


def test_end_to_end_gradients_of_many_ops():
    tf = pytest.importorskip("tensorflow")
    tf1 = tf.compat.v1
    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [4, 6])
        terms = [
            tf.reduce_max(x, 1),
            tf.reduce_prod(x[:, :3] + 2.0, 1),
            tf.gather(x, [0, 2, 2], axis=1),
            tf.concat([x, x * 2], 1),
            tf.tile(x, [2, 1]),
            tf.pad(x, [[1, 1], [0, 2]], mode="REFLECT"),
            tf.transpose(x),
            tf.cumsum(x, axis=1),
            tf.math.top_k(x, 2).values,
            tf.nn.l2_loss(x),
            tf.sqrt(tf.abs(x) + 1),
            tf.math.rsqrt(tf.abs(x) + 1),
            tf.math.reciprocal(x + 10),
            tf.nn.log_softmax(x),
            tf.nn.softplus(x),
            tf.nn.leaky_relu(x),
            tf.nn.selu(x),
            tf.nn.relu6(x * 4),
            tf.nn.softsign(x),
            tf.reduce_min(x),
            tf.reduce_logsumexp(x, 1),
            tf.math.segment_sum(x, [0, 0, 1, 1]),
            tf.math.unsorted_segment_max(x, [0, 1, 0, 1], 2),
            tf.where(x > 0, x, x * x),
            tf.clip_by_value(x, -0.5, 0.5),
            tf.reshape(x, [-1])[3:9],
            tf.exp(x * 0.1),
            tf.math.log1p(tf.abs(x)),
            tf.einsum("ij,kj->ik", x, x),
            tf.linalg.norm(x, axis=1),
            tf.nn.moments(x, [0])[1],
            tf.dynamic_partition(x, [0, 1, 0, 1], 2)[1],
            tf.unstack(x)[2],
            tf.split(x, 2, axis=1)[1],
            tf.math.squared_difference(x, 1.0),
            tf.math.atan2(x, x + 3),
            tf.math.cumprod(x, axis=0),
            tf.sigmoid(x),
        ]
        loss = tf.add_n([tf.reduce_sum(t) for t in terms])
        (dx,) = tf.gradients(loss, [x])
    _run_both(g, [loss, dx], {x: np.random.default_rng(2).standard_normal((4, 6)).astype(f32)})


def test_oracle_relu_grad_non_finite_gradients():
    # TF computes gradients * (features > 0): NaN or inf where features <= 0 gives NaN.
    pytest.importorskip("tensorflow")
    g = np.array([np.nan, np.inf, -1.0, np.nan, 2.0, -np.inf, 3.0], f32)
    x = np.array([-1.0, -1.0, -1.0, 0.0, 1.0, 0.0, np.nan], f32)
    compare_with_tf("ReluGrad", [g, x])
    assert np.signbit(run1("ReluGrad", g, x)[2])  # -1 * 0: TF's -0.0


@pytest.mark.parametrize("strides", [[1, 2, 2, 1], [1, 1, 1, 1]], ids=["disjoint", "overlap"])
def test_oracle_max_pool_grad_non_finite_gradients(strides):
    # Only each window's argmax receives its gradient, inf and NaN included.
    pytest.importorskip("tensorflow")
    x = _r(2, 6, 6, 3)
    attrs = {"ksize": [1, 2, 2, 1], "strides": strides, "padding": "SAME"}
    y = run1("MaxPool", x, **attrs)
    g = _r(*y.shape)
    g[0, 0, 0, 0], g[1, 1, 1, 1], g[0, 2, 1, 2] = np.inf, np.nan, -np.inf
    compare_with_tf("MaxPoolGrad", [x, y, g], **attrs)
    compare_with_tf("MaxPoolGrad", [x, y, _r(*y.shape)], **attrs)


_EIGEN_AVG_POOL_GRAD = r"""
import sys
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(5)
out = {}
for dtype in (np.float32, np.float64):
    for k, s, p in (((3, 3), (1, 1), "SAME"), ((3, 2), (2, 1), "VALID"), ((4, 4), (2, 3), "SAME")):
        x = rng.standard_normal((2, 7, 8, 3)).astype(dtype)
        attrs = {"ksize": [1, *k, 1], "strides": [1, *s, 1], "padding": p}
        g = rng.standard_normal(tuple(tf.raw_ops.AvgPool(value=x, **attrs).shape)).astype(dtype)
        dx = tf.raw_ops.AvgPoolGrad(orig_input_shape=np.array(x.shape, np.int32), grad=g, **attrs)
        key = f"{np.dtype(dtype).name}-{k[0]}x{k[1]}-{s[0]}x{s[1]}-{p}"
        out[key + "/g"], out[key + "/dx"] = g, dx.numpy()
np.savez(sys.argv[1], **out)
"""


def test_oracle_avg_pool_grad_equals_tensorflows_eigen_kernel_bit_for_bit(tmp_path):
    """TF's own (Eigen) AvgPoolGrad, oneDNN off: grad * T(1 / count) per window, windows
    in row-major order, in T; up to nine overlapping windows per element."""
    import os
    import subprocess
    import sys

    pytest.importorskip("tensorflow")
    env = {**os.environ, "TF_ENABLE_ONEDNN_OPTS": "0", "TF_CPP_MIN_LOG_LEVEL": "3"}
    out = tmp_path / "avg.npz"
    subprocess.run([sys.executable, "-c", _EIGEN_AVG_POOL_GRAD, str(out)], check=True,
                   env=env, capture_output=True, timeout=300)  # fmt: skip
    saved = np.load(out)
    for key in sorted({k.split("/")[0] for k in saved.files}):
        dtype, k, s, p = key.split("-")
        g, want = saved[key + "/g"], saved[key + "/dx"]
        shape = np.array([2, 7, 8, 3], np.int32)
        ksize, strides = ([1, *map(int, v.split("x")), 1] for v in (k, s))
        attrs = {"ksize": ksize, "strides": strides, "padding": p}
        (ours,) = run_kernel("AvgPoolGrad", [shape, g], **attrs)
        np.testing.assert_array_equal(ours, want, err_msg=key)
