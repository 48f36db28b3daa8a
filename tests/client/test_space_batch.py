"""Client vs TensorFlow (graph mode): space_to_batch(_nd) and batch_to_space(_nd) — node
names and types, static shapes, shape errors, values, and tf.gradients through them."""

from __future__ import annotations

import numpy as np
import pytest

import client
from client.framework.op_builder import apply_op

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module


def _x(shape, dtype=np.float32) -> np.ndarray:
    return ((np.arange(int(np.prod(shape))) % 11) - 4).astype(dtype).reshape(shape)


def _both(body):
    """Runs `body(tf) -> (fetches, feed_dict)` with the client and with TensorFlow;
    returns (ours, theirs)."""
    out = []
    for tf in (client, tf1):
        g = tf.Graph()
        with g.as_default():
            fetches, feeds = body(tf)
            with tf.Session(graph=g) as sess:
                out.append(sess.run(fetches, feeds))
    return out


def _assert_same(ours, theirs) -> None:
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        o, t = np.asarray(o), np.asarray(t)
        assert (o.dtype, o.shape) == (t.dtype, t.shape)
        np.testing.assert_array_equal(o, t)


def _static(body) -> list:
    """`body(tf) -> tensors` built with both; their static shapes, node names, op types and
    input dtypes."""
    out = []
    for tf in (client, tf1):
        with tf.Graph().as_default():
            ts = body(tf)
            out.append(
                [
                    (
                        t.shape.as_list() if t.shape.ndims is not None else None,
                        t.op.name,
                        t.op.type,
                        [x.dtype.name for x in t.op.inputs],
                        [x.op.name for x in t.op.inputs],
                    )
                    for t in ts
                ]
            )
    return out


# ---------------------------------------------------------------------------------------
# Graph building
# ---------------------------------------------------------------------------------------


def _builders(tf):
    ph = tf.placeholder
    return [
        tf.space_to_batch_nd(ph(tf.float32, [None, 4, 5, 3]), [2, 2], [[0, 0], [1, 0]]),
        tf.space_to_batch_nd(ph(tf.float32, [2, 4, 5, 3]), [2, 2], ph(tf.int32, [2, 2])),
        tf.space_to_batch_nd(ph(tf.float32, [2, 4, 5, 3]), ph(tf.int64, [2]), [[0, 0], [1, 0]]),
        tf.space_to_batch_nd(ph(tf.float32), [2, 2], [[0, 0], [1, 0]], name="s2b"),
        tf.space_to_batch_nd(
            ph(tf.float32, [2, 4, 5, 3]), np.zeros([0], np.int64), np.zeros([0, 2], np.int32)
        ),
        tf.space_to_batch_nd(ph(tf.float32, [2, 6, 3]), np.array([3], np.int64), [[1, 2]]),
        tf.space_to_batch(ph(tf.float32, [2, 4, 6, 3]), [[0, 0], [0, 0]], 2),
        tf.space_to_batch(ph(tf.float32), [[1, 1], [0, 0]], block_shape=2, name="legacy"),
        tf.nn.space_to_batch(ph(tf.float32, [1, 2, 2, 1]), [[0, 0], [0, 0]], 2),
        tf.batch_to_space(ph(tf.float32, [8, 2, 3, 1]), [[0, 1], [2, 0]], 2),
        tf.batch_to_space(ph(tf.float32), [[0, 1], [2, 0]], 2),
        tf.batch_to_space_nd(ph(tf.float32, [8, 2, 3, 1]), [2, 2], [[0, 1], [2, 0]]),
        tf.batch_to_space_nd(ph(tf.float32, [None, 2, None, 1]), [2, 2], [[0, 1], [2, 0]]),
        tf.batch_to_space_nd(ph(tf.float32, [8, 2, 3, 1]), [2, 2], ph(tf.int64, [2, 2])),
        tf.batch_to_space_nd(ph(tf.int32, [8, 2, 3, 1]), ph(tf.int32, [2]), [[0, 1], [2, 0]]),
        tf.batch_to_space_nd(
            ph(tf.float64, [2, 4, 5]), np.zeros([0], np.int32), np.zeros([0, 2], np.int64)
        ),
    ]


def test_nodes_and_static_shapes_match_tensorflow():
    ours, theirs = _static(_builders)
    assert ours == theirs


@pytest.mark.parametrize(
    "build",
    [
        lambda tf: tf.space_to_batch_nd(
            tf.placeholder(tf.float32, [2, 4, 5, 3]), tf.placeholder(tf.int32), [[0, 0]] * 2
        ),
        lambda tf: tf.space_to_batch_nd(
            tf.placeholder(tf.float32, [2, 4, 5, 3]),
            tf.placeholder(tf.int32, [None]),
            [[0, 0]] * 2,
        ),
        lambda tf: tf.space_to_batch_nd(
            tf.placeholder(tf.float32, [2, 4, 5, 3]), [2, 2], [[0, 0], [0, 0]]
        ),
        lambda tf: tf.space_to_batch_nd(
            tf.placeholder(tf.float32, [2, 4, 5, 3]), [2, 0], [[0, 0], [1, 0]]
        ),
        lambda tf: tf.space_to_batch_nd(
            tf.placeholder(tf.float32, [2, 4, 5, 3]), [2, 2], [[0, -1], [1, 0]]
        ),
        lambda tf: tf.space_to_batch_nd(tf.placeholder(tf.float32, [2, 4, 5, 3]), [2, 2], [[0, 0]]),
        lambda tf: tf.space_to_batch_nd(
            tf.placeholder(tf.float32, [2, 4, 5, 3]), [2, 2], [[0, 0, 0], [0, 0, 0]]
        ),
        lambda tf: tf.space_to_batch_nd(
            tf.placeholder(tf.float32, [2, 4, 5, 3]), [2, 2], [0, 0, 0, 0]
        ),
        lambda tf: tf.space_to_batch_nd(tf.placeholder(tf.float32, [2, 4]), [2, 2], [[0, 0]] * 2),
        lambda tf: tf.space_to_batch_nd(
            tf.placeholder(tf.float32, [2, 4, 5, 3]), [[2, 2]], [[0, 0]] * 2
        ),
        lambda tf: tf.space_to_batch(tf.placeholder(tf.float32, [2, 4, 6]), [[0, 0]] * 2, 2),
        lambda tf: tf.batch_to_space_nd(
            tf.placeholder(tf.float32, [6, 2, 3, 1]), [2, 2], [[0, 1], [2, 0]]
        ),
        lambda tf: tf.batch_to_space_nd(
            tf.placeholder(tf.float32, [8, 2, 3, 1]), [2, 2], [[3, 2], [2, 0]]
        ),
        lambda tf: tf.batch_to_space_nd(
            tf.placeholder(tf.float32, [8, 2, 3, 1]), [2, 2], [[1, 4], [2, 0]]
        ),
        lambda tf: tf.batch_to_space_nd(
            tf.placeholder(tf.float32, [8, 2, 3, 1]), [2, 2], [[-1, 1], [2, 0]]
        ),
        lambda tf: tf.batch_to_space_nd(
            tf.placeholder(tf.float32, [8, 2, 3, 1]), [-2, 2], [[0, 0], [2, 0]]
        ),
        lambda tf: tf.batch_to_space_nd(
            tf.placeholder(tf.float32, [8, 2, 3, 1]), [2, 2], [[0, 0], [0, 0], [0, 0]]
        ),
        lambda tf: tf.batch_to_space(tf.placeholder(tf.float32, [8, 2, 3]), [[0, 0]] * 2, 2),
        lambda tf: tf.batch_to_space(
            tf.placeholder(tf.float32, [8, 2, 3, 1]), [[0, 0]] * 2, 2, block_shape=2
        ),
    ],
)
def test_shape_errors_match_tensorflow(build):
    messages = []
    for tf in (client, tf1):
        with tf.Graph().as_default(), pytest.raises(ValueError) as e:
            build(tf)
        messages.append(str(e.value))
    ours, theirs = messages
    # TF also prints the constant inputs ("and with computed input tensors: ...").
    assert theirs.startswith(ours.split(" with input shapes: ")[0]), (ours, theirs)
    assert ours.split(" for '{{node")[0].strip() != ""


@pytest.mark.parametrize(
    "op,shape,pads",
    [
        ("SpaceToBatch", [2, 4, 6, 3], [[0, 2], [1, 2]]),
        ("SpaceToBatch", None, [[0, 2], [1, 1]]),
        ("BatchToSpace", [18, 2, 3, 1], [[1, 2], [0, 3]]),
        ("BatchToSpace", [None, 2, None, 1], [[1, 2], [0, 3]]),
    ],
)
def test_legacy_op_static_shapes_match_tensorflow(op, shape, pads):
    """The square-block ops have no builder in tf.compat.v1 (raw ops only)."""
    arg = "paddings" if op == "SpaceToBatch" else "crops"
    shapes = []
    for tf in (client, tf1):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, shape)
            if tf is client:
                y = apply_op(op, [x, pads], {"block_size": 3}).outputs[0]
            else:
                y = getattr(tf_real.raw_ops, op)(input=x, **{arg: pads}, block_size=3)
            shapes.append(y.shape.as_list())
    assert shapes[0] == shapes[1]


# ---------------------------------------------------------------------------------------
# Values and gradients
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64])
def test_values_match_tensorflow(dtype):
    x4 = _x((2, 5, 4, 2), dtype)
    x3 = _x((3, 7, 2), dtype)

    def body(tf):
        dt = tf.as_dtype(dtype)
        a = tf.placeholder(dt, [None, None, None, 2], name="a")
        b = tf.placeholder(dt, [3, 7, 2], name="b")
        block = tf.placeholder(tf.int64, [2], name="block")
        s2b = tf.space_to_batch_nd(a, block, np.array([[1, 0], [0, 2]], np.int64))
        back = tf.batch_to_space_nd(s2b, block, np.array([[1, 0], [0, 2]], np.int64))
        s1 = tf.space_to_batch_nd(b, [2], [[0, 1]])
        b1 = tf.batch_to_space_nd(s1, [2], [[1, 0]])
        legacy = tf.space_to_batch(a, [[1, 2], [0, 4]], block_size=4)
        legacy_back = tf.batch_to_space(legacy, [[1, 2], [0, 4]], block_size=4)
        return [s2b, back, s1, b1, legacy, legacy_back], {a: x4, b: x3, block: [3, 2]}

    ours, theirs = _both(body)
    _assert_same(ours, theirs)
    np.testing.assert_array_equal(ours[1], x4)
    np.testing.assert_array_equal(ours[5], x4)


def test_runtime_errors_match_tensorflow():
    def body(tf):
        a = tf.placeholder(tf.float32, [1, 4, 4, 1], name="a")
        block = tf.placeholder(tf.int32, [2], name="block")
        return tf.space_to_batch_nd(a, block, [[0, 0], [0, 0]], name="s2b"), {
            a: _x((1, 4, 4, 1)),
            block: [3, 2],
        }

    errors = []
    for tf in (client, tf1):
        with tf.Graph().as_default() as g:
            fetch, feeds = body(tf)
            with tf.Session(graph=g) as sess, pytest.raises(tf.errors.InvalidArgumentError) as e:
                sess.run(fetch, feeds)
        errors.append(e.value)
    ours, theirs = errors
    assert ours.message.startswith("padded_shape[0]=4 is not divisible by block_shape[0]=3")
    assert ours.message in theirs.message  # TF prefixes where the node was defined
    assert (ours.node_name, int(ours.code)) == (theirs.op.name, theirs.error_code) == ("s2b", 3)


def _grad_body(tf):
    rng = np.random.RandomState(3)
    xv = rng.randn(2, 5, 4, 3).astype(np.float32)
    w = rng.randn(*((2 * 6, 2, 3, 3))).astype(np.float32)
    x = tf.placeholder(tf.float32, [2, 5, 4, 3], name="x")
    s2b = tf.space_to_batch_nd(x, [3, 2], [[1, 0], [1, 1]])  # [12, 2, 3, 3]
    loss1 = tf.reduce_sum(s2b * w)
    b2s = tf.batch_to_space_nd(s2b * 2.0, [3, 2], [[1, 0], [1, 1]])
    loss2 = tf.reduce_sum(tf.square(b2s))
    legacy = tf.space_to_batch(x, [[1, 0], [0, 0]], block_size=2)  # [8, 3, 2, 3]
    back = tf.batch_to_space(legacy * legacy, [[1, 0], [0, 0]], block_size=2)
    loss3 = tf.reduce_sum(back * xv)
    grads = tf.gradients([loss1, loss2, loss3], [x])
    per_loss = [tf.gradients(loss, [x])[0] for loss in (loss1, loss2, loss3)]
    y = tf.placeholder(tf.float32, [8, 2, 3, 1], name="y")
    b2s_only = tf.batch_to_space_nd(y, [2, 2], [[0, 1], [2, 0]])
    (dy,) = tf.gradients(tf.reduce_sum(b2s_only * b2s_only), [y])
    yv = rng.randn(8, 2, 3, 1).astype(np.float32)
    return grads + per_loss + [dy], {x: xv, y: yv}


def test_gradients_match_tensorflow():
    ours, theirs = _both(_grad_body)
    assert len(ours) == 5
    for o, t in zip(ours, theirs):
        assert o.shape == t.shape and o.dtype == t.dtype
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-5)


def test_gradient_graph_is_the_opposite_op():
    def build(tf):
        x = tf.placeholder(tf.float32, [2, 5, 4, 3], name="x")
        s2b = tf.space_to_batch_nd(x, [3, 2], [[1, 0], [1, 1]])
        (dx,) = tf.gradients(tf.reduce_sum(s2b), [x])
        y = tf.placeholder(tf.float32, [8, 2, 3, 1], name="y")
        b2s = tf.batch_to_space(y, [[0, 1], [2, 0]], block_size=2)
        (dy,) = tf.gradients(tf.reduce_sum(b2s), [y])
        return [dx, dy]

    # The incoming gradient's node (from Sum's gradient) is not these ops' business.
    ours, theirs = ([r[:4] + (r[4][1:],) for r in rows] for rows in _static(build))
    assert ours == theirs
    assert [op_type for _, _, op_type, _, _ in ours] == ["BatchToSpaceND", "SpaceToBatchND"]
