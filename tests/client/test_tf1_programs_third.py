"""What the fourth set of whole TF1 programs (tools.tf1_programs_third) needed of the
client: static shapes of the color adjustments (random_contrast kept an image's shape),
while_loop shape invariants (and TF's error when a loop variable's shape changes),
gradient_override_map recorded on the op when it is made, tf.identity_n and
tf.custom_gradient. Graphs and values against tensorflow.compat.v1."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, run_both

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True


def _both(fn):
    """fn(tf) run with TensorFlow and with the client, each in a fresh graph."""
    out = []
    for tf in (tf1, client):
        with tf.Graph().as_default():
            try:
                out.append(fn(tf))
            except (ValueError, TypeError) as e:
                out.append((type(e).__name__, str(e)))
    return out


@pytest.mark.parametrize("shape", [[4, 4, 3], [2, 4, 4, 3], [None, None, 3], None, [None, 5, None]])
def test_color_adjustments_keep_the_image_shape(shape):
    def shapes(tf):
        x = tf.placeholder(tf.float32, shape)
        adjusted = [
            tf.image.adjust_contrast(x, 1.2),
            tf.image.adjust_hue(x, 0.1),
            tf.image.adjust_saturation(x, 1.1),
            tf.image.rgb_to_hsv(x),
            tf.image.hsv_to_rgb(x),
            tf.image.random_contrast(x, 0.8, 1.2, seed=1),
        ]
        return [str(t.shape) for t in adjusted]

    theirs, ours = _both(shapes)
    assert ours == theirs


@pytest.mark.parametrize("op", ["adjust_contrast", "adjust_hue", "adjust_saturation"])
def test_color_adjustments_reject_rank_two_as_tensorflow(op):
    theirs, ours = _both(lambda tf: getattr(tf.image, op)(tf.placeholder(tf.float32, [4, 3]), 1.0))
    assert ours == theirs
    assert "Shape must be at least rank 3 but is rank 2" in ours[1]


def _fetching(build):
    """A run_both program: the graph is built first, then its fetches are run."""

    def program(tf):
        fetches = build(tf)
        return lambda sess: sess.run(fetches)

    return program


def _growing(tf, **kwargs):
    return tf.while_loop(
        lambda k, h: k < 3,
        lambda k, h: (k + 1, tf.concat([h, h], 0)),
        [tf.constant(0), tf.constant([1.0])],
        **kwargs,
    )


@pytest.mark.parametrize("v2", [True, False])
@pytest.mark.parametrize(
    "invariant", [None, [], [2], [None]], ids=["none", "scalar", "fixed", "unknown"]
)
def test_while_loop_shape_invariants_as_tensorflow(v2, invariant):
    def build(tf):
        (tf.enable_control_flow_v2 if v2 else tf.disable_control_flow_v2)()
        try:
            kwargs = {}
            if invariant is not None:
                kwargs["shape_invariants"] = [tf.TensorShape([]), tf.TensorShape(invariant)]
            _, h = _growing(tf, **kwargs)
            return str(h.shape)
        finally:
            tf.enable_control_flow_v2()

    theirs, ours = _both(build)
    # Node names in messages differ: TF's while_v2 builds the body in a function graph.
    assert _head(ours) == _head(theirs)


def _head(result):
    return (result[0], result[1].split(" for '")[0]) if isinstance(result, tuple) else result


@pytest.mark.parametrize(
    "shape, axis", [([], 0), ([], None), ([2], 1), ([2], None), ([2, 3], 5), ([2, 3], -3)]
)
def test_concat_shape_errors_as_tensorflow(shape, axis):
    def build(tf):
        x = tf.placeholder(tf.float32, shape)
        a = tf.placeholder(tf.int32, []) if axis is None else axis
        return str(tf.concat([x, x], a).shape)

    theirs, ours = _both(build)
    # TF also lists the constant inputs its shape function read; the client does not.
    assert _head(ours) == _head(theirs)


def test_while_loop_with_invariants_runs_and_keeps_maximum_iterations():
    def build(tf):
        k, h = _growing(
            tf,
            shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])],
            maximum_iterations=2,
        )
        assert h.shape.as_list() == [None]
        return lambda sess: sess.run([k, h])

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs)


def test_while_loop_invariants_must_match_the_loop_variables():
    theirs, ours = _both(lambda tf: _growing(tf, shape_invariants=[tf.TensorShape([])]))
    assert ours[0] == theirs[0] == "ValueError"


def _overridden(tf):
    if "Programs3TestNegate" not in tf1_registered:
        tf1_registered.add("Programs3TestNegate")
        for api in (tf1, client):
            api.RegisterGradient("Programs3TestNegate")(lambda op, grad: -3.0 * grad)
    x = tf.constant([1.0, -2.0, 0.5], name="x")
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": "Programs3TestNegate", "Round": "Identity"}):
        flipped = tf.identity(x, name="flip")
        rounded = tf.round(x * 2.0)
    plain = tf.identity(x, name="plain")
    loss = tf.reduce_sum(flipped * flipped) + tf.reduce_sum(plain) + tf.reduce_sum(rounded)
    # Gradients are taken outside the `with`: the override stays with the ops made in it.
    return x, tf.gradients(loss, x)[0]


tf1_registered: set[str] = set()


def test_gradient_override_map_is_recorded_on_the_op():
    ours, theirs = build_both(_overridden)
    assert graph_diff(ours, theirs) == []
    attrs = {
        n.name: n.attr["_gradient_op_type"].s for n in ours.node if "_gradient_op_type" in n.attr
    }
    want = {
        n.name: n.attr["_gradient_op_type"].s for n in theirs.node if "_gradient_op_type" in n.attr
    }
    assert attrs == want == {"flip": b"Programs3TestNegate", "Round": b"Identity"}


def test_gradient_override_map_values_match_tensorflow():
    ours, theirs, _, _ = run_both(_fetching(lambda tf: _overridden(tf)[1]))
    assert_close(ours, theirs)


def test_identity_n_builds_tensorflows_graph_and_gradients():
    def build(tf):
        a = tf.constant([1.0, 2.0])
        b = tf.constant([[3.0]])
        c, d = tf.identity_n([a, b])
        assert (c.shape.as_list(), d.shape.as_list()) == ([2], [1, 1])
        return tf.gradients(tf.reduce_sum(c * c) + tf.reduce_sum(d), [a, b])

    ours, theirs = build_both(build)
    assert graph_diff(ours, theirs) == []
    got, want, _, _ = run_both(_fetching(build))
    assert_close(got, want)


def _custom(tf):
    @tf.custom_gradient
    def log1pexp(v):
        e = tf.exp(v)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))

        return tf.log(1 + e), grad

    @tf.custom_gradient
    def scale_two(u, v):
        def grad(dy):
            return dy * 2.0, tf.clip_by_norm(dy, 0.5)

        return u * v, grad

    x = tf.constant([-100.0, -1.3, 0.2, 50.0], name="x")
    y = tf.constant([1.0, 2.0, 3.0, 4.0], name="y")
    w = tf.Variable([0.3, -0.7], name="w")

    @tf.custom_gradient
    def weighted(u, pair):
        def grad(dy):
            return -dy, tf.reduce_sum(dy), 2 * tf.reduce_sum(dy)

        return u * pair[0] + pair[1], grad

    outs = [log1pexp(x), scale_two(x, y), scale_two(w * 1.0, tf.constant([3.0, 1.0]))]
    # A list argument is two scalar arguments, each with its gradient.
    outs.append(weighted(w * 1.0, [3.0, 1.0]))
    grads = tf.gradients(tf.reduce_sum(outs[0]) + tf.reduce_sum(outs[1] * outs[1]), [x, y])
    grads.append(tf.gradients(tf.reduce_sum(outs[2]) + tf.reduce_sum(outs[3]), w)[0])
    return outs, grads


def _strip_uid(graph_def):
    # The override's name carries TF's process-wide uid: compare its prefix only.
    for node in graph_def.node:
        if "_gradient_op_type" in node.attr:
            assert node.attr["_gradient_op_type"].s.startswith(b"CustomGradient-")
            del node.attr["_gradient_op_type"]
    return graph_def


def test_custom_gradient_builds_tensorflows_graph():
    ours, theirs = build_both(_custom)
    assert graph_diff(_strip_uid(ours), _strip_uid(theirs)) == []


def test_custom_gradient_values_match_tensorflow():
    got, want, _, _ = run_both(_fetching(_custom))
    assert_close(got, want, rtol=1e-6, atol=1e-6)
    assert np.isfinite(got[1][0]).all()  # the stable gradient of log1pexp at -100 and 50


def test_custom_gradient_refuses_keyword_arguments():
    def build(tf):
        @tf.custom_gradient
        def f(v):
            return tf.identity(v), lambda dy: dy

        return f(v=tf.constant(1.0))

    theirs, ours = _both(build)
    assert ours == theirs


def _loss_averages(tf, with_variable=True):
    w = tf.Variable([1.0, -2.0], name="w")
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    loss = tf.reduce_mean(tf.square(x * w), name="loss")
    decay = tf.multiply(tf.nn.l2_loss(w), 0.01, name="weight_loss")
    per_row = tf.reshape(tf.reduce_sum(x * w, axis=1)[:2], [2], name="per_row")
    ema = tf.train.ExponentialMovingAverage(0.9, name="avg")
    # The CIFAR-10 tutorial's loss averages: tensors, not variables.
    update = ema.apply([loss, decay, per_row] + ([w] if with_variable else []))
    with tf.control_dependencies([update]):
        total = tf.identity(loss + decay, name="total")
    averages = [ema.average(t) for t in (loss, decay, per_row)]
    return total, averages, ema.average_name(loss), ema.variables_to_restore()


def test_moving_average_of_tensors_builds_tensorflows_graph():
    ours, theirs = build_both(lambda tf: _loss_averages(tf, with_variable=False)[:2])
    assert graph_diff(ours, theirs) == []


def test_moving_average_of_an_unknown_shape_is_refused():
    with client.Graph().as_default():
        x = client.placeholder(client.float32, [None])
        with pytest.raises(NotImplementedError, match="unknown shape"):
            client.train.ExponentialMovingAverage(0.9).apply([x * 2.0])


def test_moving_average_of_tensors_matches_tensorflow():
    def build(tf):
        total, averages, name, to_restore = _loss_averages(tf)
        feed = {"x:0": [[1.0, 2.0], [0.5, -1.0]]}

        def steps(sess):
            out = [sess.run(total, feed) for _ in range(3)]
            return out, sess.run(averages, feed), name, sorted(to_restore)

        return steps

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-6, atol=1e-6)
