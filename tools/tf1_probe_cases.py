"""The TF1 probe's cases: one everyday call or idiom each, tutorial-sized.

A case is `build(tf) -> fetches` (or a function of the session that runs several steps and
returns what to compare). `tf` is tensorflow.compat.v1 or our `client`; cases use only
what both offer under the same names. Random draws are seeded so that values compare.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

CASES: list[tuple[str, Callable[[Any], Any]]] = []


def case(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    CASES.append((fn.__name__, fn))
    return fn


X = np.arange(12, dtype=np.float32).reshape(3, 4) / 10.0
IMG = (np.arange(2 * 6 * 6 * 3, dtype=np.float32).reshape(2, 6, 6, 3) % 17) / 17.0


def _dense_model(tf: Any) -> tuple[Any, Any]:
    x = tf.constant(X)
    h = tf.layers.dense(x, 5, activation=tf.nn.relu, kernel_initializer=tf.ones_initializer())
    y = tf.layers.dense(h, 1, kernel_initializer=tf.constant_initializer(0.1))
    loss = tf.reduce_mean(tf.square(y - 1.0))
    return y, loss


def _train(tf: Any, opt: Any, steps: int = 3) -> Callable[[Any], Any]:
    _, loss = _dense_model(tf)
    train = opt.minimize(loss, global_step=tf.train.get_or_create_global_step())

    def run(sess: Any) -> Any:
        for _ in range(steps):
            sess.run(train)
        return sess.run([loss] + tf.trainable_variables())

    return run


# --- math, arrays ---------------------------------------------------------------------
@case
def reduce_sum_axis(tf):
    return tf.reduce_sum(tf.constant(X), axis=1, keepdims=True)


@case
def reduce_mean_max_min(tf):
    x = tf.constant(X)
    return [tf.reduce_mean(x), tf.reduce_max(x, 0), tf.reduce_min(x, 1), tf.reduce_prod(x + 1)]


@case
def matmul_transpose(tf):
    a = tf.constant(X)
    return tf.matmul(a, a, transpose_b=True)


@case
def argmax_argmin(tf):
    x = tf.constant(X[::-1])
    return [tf.argmax(x, axis=1), tf.argmin(x, axis=0)]


@case
def cast_and_round(tf):
    x = tf.constant([1.4, 2.5, -0.5, 3.7])
    return [tf.cast(x, tf.int32), tf.round(x), tf.floor(x), tf.ceil(x)]


@case
def math_elementwise(tf):
    x = tf.constant([0.5, 1.0, 2.0])
    return [tf.exp(x), tf.log(x), tf.sqrt(x), tf.rsqrt(x), tf.math.log1p(x), tf.pow(x, 3.0)]


@case
def math_trig(tf):
    x = tf.constant([0.1, 0.5, 0.9])
    return [tf.sin(x), tf.cos(x), tf.tan(x), tf.asin(x), tf.atan2(x, x + 1), tf.tanh(x)]


@case
def reshape_transpose(tf):
    x = tf.reshape(tf.range(24), [2, 3, 4])
    return [tf.transpose(x, [2, 0, 1]), tf.reshape(x, [-1, 6]), tf.shape(x)]


@case
def concat_stack_split(tf):
    a, b = tf.constant(X), tf.constant(X * 2)
    parts = tf.split(tf.concat([a, b], 0), 3, axis=0)
    return [tf.stack([a, b], axis=1), tf.unstack(a, axis=1), parts]


@case
def gather_and_gather_nd(tf):
    x = tf.constant(X)
    return [tf.gather(x, [2, 0]), tf.gather_nd(x, [[0, 1], [2, 3]]), tf.gather(x, [1], axis=1)]


@case
def slice_and_strided(tf):
    x = tf.reshape(tf.range(30), [5, 6])
    return [x[1:4, ::2], x[-1], tf.slice(x, [1, 1], [2, 3]), x[:, tf.newaxis, 2]]


@case
def tile_pad_expand(tf):
    x = tf.constant([[1, 2], [3, 4]])
    return [
        tf.tile(x, [2, 3]),
        tf.pad(x, [[1, 0], [0, 2]], constant_values=9),
        tf.expand_dims(x, -1),
        tf.squeeze(tf.ones([1, 3, 1])),
    ]


@case
def where_and_boolean_mask(tf):
    x = tf.constant(X)
    m = x > 0.5
    return [tf.where(m, x, tf.zeros_like(x)), tf.boolean_mask(x, m), tf.where(m)]


@case
def one_hot_and_fill(tf):
    return [
        tf.one_hot([0, 2, 1], 3, on_value=5.0, off_value=-1.0),
        tf.fill([2, 2], 7),
        tf.ones_like(tf.constant(X)),
        tf.eye(3),
    ]


@case
def cumsum_cumprod(tf):
    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    return [tf.cumsum(x), tf.cumsum(x, exclusive=True, reverse=True), tf.cumprod(x)]


@case
def top_k_and_sort(tf):
    x = tf.constant([[3.0, 1.0, 4.0, 1.5], [9.0, 2.0, 6.0, 5.0]])
    v, i = tf.nn.top_k(x, k=2)
    return [v, i, tf.sort(x, direction="DESCENDING"), tf.argsort(x)]


@case
def segment_ops(tf):
    data = tf.constant(X)
    return [
        tf.math.segment_sum(data, [0, 0, 1]),
        tf.unsorted_segment_max(data, [1, 0, 1], 2),
        tf.math.unsorted_segment_mean(data, [0, 1, 0], 2),
    ]


@case
def range_linspace(tf):
    return [tf.range(3, 18, 4), tf.linspace(0.0, 1.0, 5), tf.range(5.0, delta=1.5)]


@case
def clip_ops(tf):
    x = tf.constant(X - 0.5)
    return [
        tf.clip_by_value(x, -0.2, 0.3),
        tf.clip_by_norm(x, 1.0),
        tf.clip_by_global_norm([x, x * 2], 1.0)[0],
        tf.global_norm([x]),
    ]


@case
def reverse_and_roll(tf):
    x = tf.reshape(tf.range(6), [2, 3])
    return [tf.reverse(x, [1]), tf.roll(x, 1, axis=1), tf.reverse_sequence(x, [2, 3], 1, 0)]


@case
def unique_and_setdiff(tf):
    y, idx = tf.unique(tf.constant([4, 1, 4, 2, 1]))
    return [y, idx, tf.setdiff1d([1, 2, 3, 4], [2, 4])[0]]


@case
def count_nonzero_and_any(tf):
    x = tf.constant([[0, 1, 2], [0, 0, 3]])
    b = x > 0
    return [tf.count_nonzero(x, axis=1), tf.reduce_any(b, 1), tf.reduce_all(b, 0)]


@case
def logical_and_compare(tf):
    a = tf.constant([1, 2, 3])
    b = tf.constant([3, 2, 1])
    return [
        tf.logical_and(a > 1, b > 1),
        tf.logical_not(tf.equal(a, b)),
        tf.logical_xor(a < 3, b < 3),
        tf.maximum(a, b),
        tf.minimum(a, b),
    ]


@case
def floordiv_mod(tf):
    a = tf.constant([7, -7, 9])
    return [a // 2, a % 3, tf.truediv(a, 2), tf.math.floormod(a, 4), tf.div_no_nan(1.0, 0.0)]


@case
def add_n_and_accumulate(tf):
    xs = [tf.constant(X), tf.constant(X * 2), tf.constant(X * 3)]
    return [tf.add_n(xs), tf.math.accumulate_n(xs)]


@case
def tensordot_einsum_free(tf):
    a = tf.constant(X)
    return tf.tensordot(a, tf.transpose(a), axes=1)


@case
def math_reduce_logsumexp(tf):
    x = tf.constant(X)
    return [tf.reduce_logsumexp(x, axis=1), tf.math.reduce_std(x), tf.math.reduce_variance(x, 0)]


@case
def nn_moments(tf):
    m, v = tf.nn.moments(tf.constant(X), axes=[0])
    return [m, v]


@case
def meshgrid_and_broadcast(tf):
    a, b = tf.meshgrid([1, 2, 3], [4, 5])
    return [a, b, tf.broadcast_to([1, 2], [3, 2]), tf.broadcast_dynamic_shape([3, 1], [1, 4])]


@case
def string_to_number_and_as_string(tf):
    return [
        tf.strings.to_number(["1.5", "2"]),
        tf.as_string([1, 22]),
        tf.string_to_number(["7"], out_type=tf.int32),
    ]


@case
def matrix_band_and_diag(tf):
    x = tf.reshape(tf.range(16.0), [4, 4])
    return [tf.matrix_band_part(x, 1, 0), tf.diag_part(x), tf.matrix_diag([1.0, 2.0]), tf.trace(x)]


@case
def bitwise_ops(tf):
    a = tf.constant([5, 12])
    return [tf.bitwise.bitwise_and(a, 6), tf.bitwise.left_shift(a, 1), tf.bitwise.invert(a)]


@case
def squared_difference_and_abs(tf):
    x = tf.constant(X)
    return [tf.squared_difference(x, 0.5), tf.abs(x - 0.5), tf.sign(x - 0.5), tf.reciprocal(x + 1)]


@case
def is_nan_is_finite(tf):
    x = tf.constant([1.0, np.nan, np.inf])
    return [tf.is_nan(x), tf.is_finite(x), tf.is_inf(x)]


# --- linalg ---------------------------------------------------------------------------
@case
def linalg_inverse_det(tf):
    a = tf.constant([[4.0, 1.0], [2.0, 3.0]])
    return [tf.matrix_inverse(a), tf.matrix_determinant(a), tf.linalg.logdet(a @ tf.transpose(a))]


@case
def linalg_cholesky_solve(tf):
    a = tf.constant([[4.0, 2.0], [2.0, 3.0]])
    ch = tf.cholesky(a)
    return [ch, tf.cholesky_solve(ch, [[1.0], [2.0]]), tf.matrix_solve(a, [[1.0], [0.0]])]


@case
def linalg_norm_qr(tf):
    a = tf.constant(X)
    q, r = tf.qr(a)
    return [tf.norm(a), tf.norm(a, ord=1, axis=1), tf.abs(q), tf.abs(r)]


@case
def linalg_svd_eig(tf):
    a = tf.constant([[2.0, 1.0], [1.0, 3.0]])
    return [tf.svd(a, compute_uv=False), tf.self_adjoint_eigvals(a)]


@case
def linalg_l2_normalize(tf):
    return tf.nn.l2_normalize(tf.constant(X), axis=1)


# --- nn -------------------------------------------------------------------------------
@case
def nn_activations(tf):
    x = tf.constant(X - 0.6)
    return [
        tf.nn.relu(x),
        tf.nn.relu6(x * 20),
        tf.nn.elu(x),
        tf.nn.selu(x),
        tf.nn.leaky_relu(x, 0.1),
        tf.nn.softplus(x),
        tf.nn.softsign(x),
        tf.sigmoid(x),
    ]


@case
def nn_softmax_family(tf):
    x = tf.constant(X)
    return [tf.nn.softmax(x), tf.nn.log_softmax(x, axis=0)]


@case
def nn_softmax_xent(tf):
    logits = tf.constant(X)
    labels = tf.one_hot([0, 3, 1], 4)
    return [
        tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits),
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 3, 1], logits=logits),
    ]


@case
def nn_sigmoid_xent(tf):
    logits = tf.constant(X - 0.5)
    labels = tf.constant((X > 0.4).astype(np.float32))
    return [
        tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits),
        tf.nn.weighted_cross_entropy_with_logits(labels, logits, 2.0),
    ]


@case
def nn_conv2d(tf):
    x = tf.constant(IMG)
    w = tf.constant(np.linspace(-1, 1, 3 * 3 * 3 * 4, dtype=np.float32).reshape(3, 3, 3, 4))
    return [tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), tf.nn.conv2d(x, w, [1, 2, 2, 1], "VALID")]


@case
def nn_pools(tf):
    x = tf.constant(IMG)
    return [
        tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
        tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
    ]


@case
def nn_bias_add_dropout_eval(tf):
    x = tf.constant(X)
    return [tf.nn.bias_add(x, [1.0, 2.0, 3.0, 4.0]), tf.nn.dropout(x, rate=0.0)]


@case
def nn_dropout_seeded(tf):
    tf.set_random_seed(3)
    return tf.nn.dropout(tf.ones([4, 5]), rate=0.5, seed=7)


@case
def nn_conv1d(tf):
    x = tf.constant(X.reshape(1, 12, 1))
    w = tf.constant(np.ones((3, 1, 2), np.float32))
    return tf.nn.conv1d(x, w, stride=1, padding="SAME")


@case
def nn_conv2d_transpose(tf):
    x = tf.constant(IMG[:, :3, :3, :])
    w = tf.constant(np.linspace(0, 1, 3 * 3 * 2 * 3, dtype=np.float32).reshape(3, 3, 2, 3))
    return tf.nn.conv2d_transpose(x, w, [2, 6, 6, 2], [1, 2, 2, 1], "SAME")


@case
def nn_embedding_lookup(tf):
    params = tf.constant(X)
    return [
        tf.nn.embedding_lookup(params, [2, 0, 2]),
        tf.nn.embedding_lookup([params[:2], params[2:]], [0, 2, 1]),
    ]


@case
def nn_batch_normalization(tf):
    x = tf.constant(X)
    m, v = tf.nn.moments(x, [0])
    return tf.nn.batch_normalization(x, m, v, 0.1, 2.0, 1e-3)


@case
def nn_in_top_k(tf):
    return tf.nn.in_top_k(tf.constant(X), [3, 0, 2], 2)


@case
def nn_l2_loss_and_zero_fraction(tf):
    x = tf.constant(X - 0.5)
    return [tf.nn.l2_loss(x), tf.nn.zero_fraction(tf.nn.relu(x))]


@case
def nn_lrn(tf):
    return tf.nn.lrn(tf.constant(IMG), depth_radius=1, bias=1.0, alpha=0.5, beta=0.75)


# --- layers ---------------------------------------------------------------------------
@case
def layers_dense(tf):
    return _dense_model(tf)[0]


@case
def layers_conv_pool_flatten(tf):
    x = tf.constant(IMG)
    h = tf.layers.conv2d(
        x,
        4,
        3,
        padding="same",
        activation=tf.nn.relu,
        kernel_initializer=tf.constant_initializer(0.05),
    )
    h = tf.layers.max_pooling2d(h, 2, 2)
    return tf.layers.flatten(h)


@case
def layers_batch_norm_training(tf):
    x = tf.constant(X)
    y = tf.layers.batch_normalization(x, training=True)
    ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)

    def run(sess):
        out = sess.run([y] + ops)[0]
        return [out] + sess.run(tf.global_variables())

    return run


@case
def layers_dropout_inference(tf):
    return tf.layers.dropout(tf.constant(X), 0.5, training=False)


@case
def layers_glorot_seeded(tf):
    return tf.get_variable("w", [3, 4], initializer=tf.glorot_uniform_initializer(seed=1))


@case
def layers_conv1d_avgpool(tf):
    x = tf.constant(X.reshape(1, 12, 1))
    h = tf.layers.conv1d(x, 2, 3, kernel_initializer=tf.ones_initializer())
    return tf.layers.average_pooling1d(h, 2, 2)


# --- variables and scopes -------------------------------------------------------------
@case
def variable_scope_reuse(tf):
    with tf.variable_scope("enc"):
        a = tf.get_variable("w", [2], initializer=tf.constant_initializer(3.0))
    with tf.variable_scope("enc", reuse=True):
        b = tf.get_variable("w")
    return [a + b, tf.constant([v.name for v in tf.global_variables()])]


@case
def variable_assign_ops(tf):
    v = tf.Variable([1.0, 2.0], name="v")
    up = tf.assign_add(v, [1.0, 1.0])

    def run(sess):
        sess.run(up)
        sess.run(tf.assign_sub(v, [0.5, 0.5]))
        sess.run(v.assign(v * 2))
        return sess.run(v)

    return run


@case
def variable_scatter_update(tf):
    v = tf.Variable(tf.zeros([4]))
    op = tf.scatter_add(v, [0, 2, 2], [1.0, 2.0, 3.0])
    return lambda sess: (sess.run(op), sess.run(tf.scatter_update(v, [1], [9.0])))


@case
def name_scope_names(tf):
    with tf.name_scope("outer"), tf.name_scope("inner"):
        c = tf.add(1, 2, name="sum")
    return tf.constant(c.name)


@case
def initializers_constant(tf):
    vs = [
        tf.get_variable("a", [2, 2], initializer=tf.zeros_initializer()),
        tf.get_variable("b", [3], initializer=tf.constant_initializer([1, 2, 3])),
        tf.get_variable("c", [2, 2], initializer=tf.initializers.identity()),
    ]
    return vs


@case
def initializers_random_seeded(tf):
    return [
        tf.get_variable("a", [3, 3], initializer=tf.truncated_normal_initializer(seed=2)),
        tf.get_variable("b", [4], initializer=tf.random_uniform_initializer(-1, 1, seed=3)),
        tf.get_variable("c", [2, 3], initializer=tf.variance_scaling_initializer(seed=4)),
    ]


@case
def local_variable_and_collection(tf):
    v = tf.Variable(5, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES])
    tf.add_to_collection("mine", v)
    return [v, tf.constant(len(tf.get_collection("mine")))]


@case
def placeholder_with_default_and_feed(tf):
    p = tf.placeholder(tf.float32, [None, 2])
    d = tf.placeholder_with_default(tf.constant(3.0), [])
    y = tf.reduce_sum(p) * d
    return lambda sess: [sess.run(y, {p: [[1, 2], [3, 4]]}), sess.run(y, {p: [[1, 1]], d: 2.0})]


@case
def control_dependencies_identity(tf):
    v = tf.Variable(1)
    inc = tf.assign_add(v, 10)
    with tf.control_dependencies([inc]):
        out = tf.identity(v)
    return out


# --- control flow ---------------------------------------------------------------------
@case
def cond_basic(tf):
    p = tf.placeholder(tf.bool, [])
    x = tf.constant(2.0)
    y = tf.cond(p, lambda: x * 3, lambda: x - 1)
    return lambda sess: [sess.run(y, {p: True}), sess.run(y, {p: False})]


@case
def while_loop_sum(tf):
    i, s = tf.while_loop(lambda i, s: i < 10, lambda i, s: (i + 1, s + i), [0, 0])
    return [i, s]


@case
def while_loop_shape_invariant(tf):
    def body(i, x):
        return i + 1, tf.concat([x, [i]], 0)

    _, x = tf.while_loop(
        lambda i, x: i < 4,
        body,
        [0, tf.zeros([0], tf.int32)],
        shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])],
    )
    return x


@case
def case_op(tf):
    x = tf.constant(3)
    return tf.case(
        [(x < 2, lambda: tf.constant(10)), (x < 5, lambda: tf.constant(20))],
        default=lambda: tf.constant(30),
    )


@case
def map_fn_square(tf):
    return tf.map_fn(lambda r: tf.reduce_sum(r * r), tf.constant(X))


@case
def scan_and_foldl(tf):
    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    return [
        tf.scan(lambda a, b: a + b, x),
        tf.foldl(lambda a, b: a * b, x),
        tf.foldr(lambda a, b: a - b, x),
    ]


@case
def gradients_through_cond(tf):
    x = tf.constant(2.0)
    y = tf.cond(x > 1.0, lambda: x * x, lambda: -x)
    return tf.gradients(y, x)


@case
def gradients_through_while(tf):
    x = tf.constant(1.5)
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), [0, tf.constant(1.0)])
    return tf.gradients(y, x)


@case
def tensor_array_write_stack(tf):
    ta = tf.TensorArray(tf.float32, size=3)
    ta = ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0]).write(2, [5.0, 6.0])
    return [ta.stack(), ta.read(1), ta.concat()]


@case
def tensor_array_in_while(tf):
    ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)

    def body(i, ta):
        return i + 1, ta.write(i, i * i)

    _, ta = tf.while_loop(lambda i, ta: i < 5, body, [0, ta])
    return ta.stack()


@case
def tensor_array_unstack_gather(tf):
    ta = tf.TensorArray(tf.float32, size=3).unstack(tf.constant(X))
    return [ta.gather([2, 0]), ta.size()]


@case
def assert_and_print(tf):
    x = tf.constant([1, 2])
    with tf.control_dependencies([tf.assert_positive(x), tf.debugging.assert_equal(x, x)]):
        y = tf.identity(x)
    return y


@case
def group_and_tuple(tf):
    v = tf.Variable(0)
    g = tf.group(tf.assign_add(v, 1), tf.no_op())
    t = tf.tuple([tf.constant(1), tf.constant(2)])
    return lambda sess: (sess.run(g), sess.run(t), sess.run(v))


@case
def stop_gradient_and_hessian(tf):
    x = tf.constant([1.0, 2.0])
    y = tf.reduce_sum(x * x * x) + tf.reduce_sum(tf.stop_gradient(x) * x)
    return [tf.gradients(y, x), tf.hessians(y, x)]


# --- gradients and training -----------------------------------------------------------
@case
def gradients_dense_model(tf):
    y, loss = _dense_model(tf)
    return tf.gradients(loss, tf.trainable_variables())


@case
def train_gradient_descent(tf):
    return _train(tf, tf.train.GradientDescentOptimizer(0.1))


@case
def train_momentum_nesterov(tf):
    return _train(tf, tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True))


@case
def train_adam(tf):
    return _train(tf, tf.train.AdamOptimizer(0.01))


@case
def train_adagrad(tf):
    return _train(tf, tf.train.AdagradOptimizer(0.1))


@case
def train_rmsprop(tf):
    return _train(tf, tf.train.RMSPropOptimizer(0.01, momentum=0.5))


@case
def train_adadelta(tf):
    return _train(tf, tf.train.AdadeltaOptimizer(1.0))


@case
def train_ftrl(tf):
    return _train(tf, tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01))


@case
def train_compute_apply_clip(tf):
    _, loss = _dense_model(tf)
    opt = tf.train.GradientDescentOptimizer(0.1)
    gv = opt.compute_gradients(loss)
    clipped = [(tf.clip_by_norm(g, 0.5), v) for g, v in gv]
    step = opt.apply_gradients(clipped)
    return lambda sess: (sess.run(step), sess.run(tf.trainable_variables()))[1]


@case
def schedule_exponential_decay(tf):
    gs = tf.train.get_or_create_global_step()
    lrs = [
        tf.train.exponential_decay(0.1, gs, 10, 0.5, staircase=True),
        tf.train.piecewise_constant(gs, [2, 5], [1.0, 0.5, 0.1]),
        tf.train.polynomial_decay(0.1, gs, 20, 0.01),
        tf.train.cosine_decay(0.1, gs, 20),
        tf.train.inverse_time_decay(0.1, gs, 5, 0.5),
    ]

    def run(sess):
        out = []
        for _ in range(4):
            out.append(sess.run(lrs))
            sess.run(tf.assign_add(gs, 3))
        return out

    return run


@case
def ema_moving_average(tf):
    v = tf.Variable(1.0)
    ema = tf.train.ExponentialMovingAverage(0.9)
    upd = ema.apply([v])

    def run(sess):
        sess.run(tf.assign(v, 5.0))
        sess.run(upd)
        return sess.run(ema.average(v))

    return run


@case
def saver_save_restore(tf):
    import tempfile

    v = tf.Variable([1.0, 2.0], name="v")
    saver = tf.train.Saver()

    def run(sess):
        with tempfile.TemporaryDirectory() as d:
            path = saver.save(sess, d + "/model", global_step=1)
            sess.run(tf.assign(v, [0.0, 0.0]))
            saver.restore(sess, path)
            return [sess.run(v), tf.train.latest_checkpoint(d).endswith("model-1")]

    return run


@case
def regularization_losses(tf):
    x = tf.constant(X)
    tf.layers.dense(
        x,
        2,
        kernel_initializer=tf.ones_initializer(),
        kernel_regularizer=lambda w: 0.1 * tf.nn.l2_loss(w),
    )
    return tf.losses.get_regularization_loss()


# --- losses and metrics ---------------------------------------------------------------
@case
def losses_common(tf):
    y = tf.constant(X)
    p = tf.constant(X[::-1].copy())
    return [
        tf.losses.mean_squared_error(y, p),
        tf.losses.absolute_difference(y, p),
        tf.losses.huber_loss(y, p, delta=0.3),
        tf.losses.log_loss(y / 2, p / 2),
    ]


@case
def losses_softmax_sigmoid(tf):
    logits = tf.constant(X)
    onehot = tf.one_hot([1, 0, 3], 4)
    return [
        tf.losses.softmax_cross_entropy(onehot, logits, label_smoothing=0.1),
        tf.losses.sparse_softmax_cross_entropy([1, 0, 3], logits),
        tf.losses.sigmoid_cross_entropy(onehot, logits, weights=2.0),
    ]


@case
def losses_hinge_cosine(tf):
    y = tf.constant([[1.0, 0.0], [0.0, 1.0]])
    p = tf.constant([[0.3, -0.2], [0.5, 0.8]])
    return [
        tf.losses.hinge_loss(y, p),
        tf.losses.cosine_distance(tf.nn.l2_normalize(y, 1), tf.nn.l2_normalize(p, 1), axis=1),
    ]


@case
def metrics_accuracy_mean(tf):
    acc, acc_up = tf.metrics.accuracy([1, 0, 1, 1], [1, 1, 1, 0])
    m, m_up = tf.metrics.mean([1.0, 2.0, 6.0])
    return lambda sess: (sess.run([acc_up, m_up]), sess.run([acc, m]))[1]


@case
def metrics_precision_recall_auc(tf):
    labels = tf.constant([1, 0, 1, 1, 0])
    preds = tf.constant([0.9, 0.4, 0.3, 0.8, 0.1])
    p, pu = tf.metrics.precision(labels, preds > 0.5)
    r, ru = tf.metrics.recall(labels, preds > 0.5)
    a, au = tf.metrics.auc(labels, preds, num_thresholds=20)
    return lambda sess: (sess.run([pu, ru, au]), sess.run([p, r, a]))[1]


@case
def confusion_matrix(tf):
    return tf.confusion_matrix([0, 1, 2, 1], [0, 2, 2, 1], num_classes=3)


# --- random ---------------------------------------------------------------------------
@case
def random_seeded_ops(tf):
    tf.set_random_seed(42)
    return [
        tf.random_normal([3], seed=1),
        tf.random_uniform([2, 2], seed=2),
        tf.truncated_normal([3], seed=3),
        tf.random_uniform([4], 0, 10, tf.int32, seed=4),
    ]


@case
def random_shuffle_multinomial(tf):
    tf.set_random_seed(1)
    return [tf.random_shuffle(tf.range(6), seed=5), tf.multinomial(tf.log([[0.2, 0.8]]), 5, seed=6)]


@case
def random_gamma_poisson(tf):
    tf.set_random_seed(2)
    return [tf.random_gamma([3], 2.0, seed=1), tf.random_poisson(3.0, [3], seed=2)]


@case
def random_crop_and_flip(tf):
    tf.set_random_seed(3)
    return [
        tf.random_crop(tf.constant(IMG[0]), [3, 3, 3], seed=1),
        tf.image.random_flip_left_right(tf.constant(IMG[0]), seed=2),
    ]


# --- tf.data --------------------------------------------------------------------------
def _drain(tf: Any, ds: Any) -> Callable[[Any], Any]:
    nxt = tf.data.make_one_shot_iterator(ds).get_next()

    def run(sess):
        out = []
        while True:
            try:
                out.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                return out

    return run


@case
def data_from_tensor_slices_batch(tf):
    return _drain(tf, tf.data.Dataset.from_tensor_slices(X).batch(2))


@case
def data_map_filter_repeat(tf):
    ds = tf.data.Dataset.range(10).map(lambda x: x * 2).filter(lambda x: x % 3 > 0).repeat(2)
    return _drain(tf, ds)


@case
def data_shuffle_seeded(tf):
    return _drain(tf, tf.data.Dataset.range(8).shuffle(8, seed=3).batch(4))


@case
def data_zip_dict(tf):
    ds = tf.data.Dataset.from_tensor_slices({"a": [1, 2, 3], "b": [[1.0], [2.0], [3.0]]})
    ds = tf.data.Dataset.zip((ds, tf.data.Dataset.range(3)))
    return _drain(tf, ds)


@case
def data_padded_batch(tf):
    ds = tf.data.Dataset.range(1, 5).map(lambda n: tf.fill([n], n))
    return _drain(tf, ds.padded_batch(2, padded_shapes=[None]))


@case
def data_initializable_iterator(tf):
    p = tf.placeholder(tf.int64, [])
    it = tf.data.make_initializable_iterator(tf.data.Dataset.range(p))
    nxt = it.get_next()

    def run(sess):
        sess.run(it.initializer, {p: 3})
        return [sess.run(nxt) for _ in range(3)]

    return run


@case
def data_flat_map_take_skip(tf):
    ds = tf.data.Dataset.range(4).flat_map(lambda x: tf.data.Dataset.range(x)).skip(1).take(4)
    return _drain(tf, ds)


@case
def data_interleave_prefetch(tf):
    ds = (
        tf.data.Dataset.range(3)
        .interleave(lambda x: tf.data.Dataset.from_tensors(x).repeat(2), cycle_length=2)
        .prefetch(2)
    )
    return _drain(tf, ds)


@case
def data_from_generator_free_unbatch(tf):
    return _drain(tf, tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]]).unbatch())


# --- queues ---------------------------------------------------------------------------
@case
def fifo_queue(tf):
    q = tf.FIFOQueue(5, tf.int32)
    enq = q.enqueue_many([[1, 2, 3]])
    deq = q.dequeue()
    return lambda sess: (sess.run(enq), [sess.run(deq) for _ in range(3)])[1]


@case
def queue_dequeue_many_size(tf):
    q = tf.FIFOQueue(10, [tf.float32, tf.int32], shapes=[[2], []])
    enq = q.enqueue_many([X[:, :2], [7, 8, 9]])
    deq = q.dequeue_many(2)
    return lambda sess: (sess.run(enq), sess.run(q.size()), sess.run(deq))[1:]


@case
def random_shuffle_queue_seeded(tf):
    q = tf.RandomShuffleQueue(10, 0, tf.int32, shapes=[[]], seed=1)
    enq = q.enqueue_many([tf.range(6)])
    return lambda sess: (sess.run(enq), sess.run(q.dequeue_many(6)))[1]


@case
def padding_fifo_queue(tf):
    q = tf.PaddingFIFOQueue(5, tf.int32, shapes=[[None]])
    e1, e2 = q.enqueue([[1, 2]]), q.enqueue([[3]])
    return lambda sess: (sess.run([e1]), sess.run([e2]), sess.run(q.dequeue_many(2)))[2]


# --- image ----------------------------------------------------------------------------
@case
def image_resize(tf):
    x = tf.constant(IMG)
    return [
        tf.image.resize_bilinear(x, [4, 4]),
        tf.image.resize_nearest_neighbor(x, [9, 9]),
        tf.image.resize_images(x, [3, 5]),
    ]


@case
def image_flip_transpose_rot(tf):
    x = tf.constant(IMG[0])
    return [
        tf.image.flip_left_right(x),
        tf.image.flip_up_down(x),
        tf.image.rot90(x),
        tf.image.transpose_image(x),
    ]


@case
def image_crop_pad(tf):
    x = tf.constant(IMG[0])
    return [
        tf.image.central_crop(x, 0.5),
        tf.image.crop_to_bounding_box(x, 1, 2, 3, 3),
        tf.image.pad_to_bounding_box(x, 1, 1, 8, 8),
        tf.image.resize_image_with_crop_or_pad(x, 4, 8),
    ]


@case
def image_color(tf):
    x = tf.constant(IMG[0])
    return [
        tf.image.rgb_to_grayscale(x),
        tf.image.rgb_to_hsv(x),
        tf.image.adjust_brightness(x, 0.1),
        tf.image.adjust_contrast(x, 1.5),
        tf.image.adjust_saturation(x, 0.5),
        tf.image.adjust_hue(x, 0.1),
    ]


@case
def image_convert_and_standardize(tf):
    x = tf.constant((IMG[0] * 255).astype(np.uint8))
    return [tf.image.convert_image_dtype(x, tf.float32), tf.image.per_image_standardization(x)]


@case
def image_encode_decode_png(tf):
    x = tf.constant((IMG[0] * 255).astype(np.uint8))
    return tf.image.decode_png(tf.image.encode_png(x))


@case
def image_crop_and_resize(tf):
    return tf.image.crop_and_resize(
        tf.constant(IMG), [[0.0, 0.0, 0.5, 0.5], [0.2, 0.1, 1.0, 0.9]], [0, 1], [3, 3]
    )


@case
def image_non_max_suppression(tf):
    boxes = tf.constant([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3]], tf.float32)
    return tf.image.non_max_suppression(boxes, [0.9, 0.8, 0.7], 2, 0.5)


# --- strings --------------------------------------------------------------------------
@case
def strings_split_join(tf):
    s = tf.constant(["a b", "c d e"])
    sp = tf.strings.split(s)
    return [sp, tf.strings.join(["x", s], separator="-"), tf.reduce_join(s, separator="|")]


@case
def strings_length_substr_upper(tf):
    s = tf.constant(["hello", "TensorFlow"])
    return [
        tf.strings.length(s),
        tf.strings.substr(s, 1, 3),
        tf.strings.upper(s),
        tf.strings.lower(s),
    ]


@case
def strings_regex_and_hash(tf):
    s = tf.constant(["cat42", "dog7"])
    return [
        tf.strings.regex_replace(s, "[0-9]+", "#"),
        tf.strings.regex_full_match(s, "c.*"),
        tf.strings.to_hash_bucket_fast(s, 100),
        tf.string_to_hash_bucket_strong(s, 10, [1, 2]),
    ]


@case
def strings_format_and_strip(tf):
    return [tf.strings.strip(["  a ", "b  "]), tf.strings.format("x={}", tf.constant(3))]


@case
def strings_unicode_decode(tf):
    return tf.strings.unicode_decode(["héllo", "ab"], "UTF-8").to_tensor()


@case
def strings_bytes_split_ngrams(tf):
    return tf.strings.bytes_split(tf.constant("abc"))


# --- sparse ---------------------------------------------------------------------------
def _sp(tf: Any) -> Any:
    return tf.SparseTensor([[0, 1], [1, 0], [2, 3]], [1.0, 2.0, 3.0], [3, 4])


@case
def sparse_to_dense_and_add(tf):
    sp = _sp(tf)
    return [tf.sparse.to_dense(sp), tf.sparse_add(sp, sp), tf.sparse.add(tf.constant(X), sp)]


@case
def sparse_matmul_reduce(tf):
    sp = _sp(tf)
    return [
        tf.sparse_tensor_dense_matmul(sp, tf.constant(X.T)),
        tf.sparse_reduce_sum(sp, axis=1),
        tf.sparse.reduce_max(sp),
    ]


@case
def sparse_transpose_retain_fill(tf):
    sp = _sp(tf)
    filled, empty = tf.sparse.fill_empty_rows(sp, -1.0)
    return [tf.sparse.transpose(sp), tf.sparse.retain(sp, [True, False, True]), filled, empty]


@case
def sparse_from_dense_and_reorder(tf):
    d = tf.constant([[0, 5], [3, 0]])
    sp = tf.sparse.from_dense(d)
    return [sp, tf.sparse.reorder(tf.SparseTensor([[1, 0], [0, 1]], [3, 5], [2, 2]))]


@case
def sparse_concat(tf):
    sp = _sp(tf)
    return tf.sparse.concat(1, [sp, sp])


@case
def embedding_lookup_sparse(tf):
    ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([0, 2, 1], tf.int64), [2, 2])
    return tf.nn.embedding_lookup_sparse(tf.constant(X), ids, None, combiner="mean")


# --- io parsing -----------------------------------------------------------------------
def _serialized() -> list[bytes]:
    import tensorflow as tf_real  # type: ignore[import-untyped]

    out = []
    for age, name, score in [(30, b"alice", [1.5, 2.5]), (41, b"bob", [0.5])]:
        ex = tf_real.train.Example(
            features=tf_real.train.Features(
                feature={
                    "age": tf_real.train.Feature(int64_list=tf_real.train.Int64List(value=[age])),
                    "name": tf_real.train.Feature(bytes_list=tf_real.train.BytesList(value=[name])),
                    "score": tf_real.train.Feature(float_list=tf_real.train.FloatList(value=score)),
                }
            )
        )
        out.append(ex.SerializeToString())
    return out


@case
def io_parse_example(tf):
    feats = tf.parse_example(
        tf.constant(_serialized()),
        {
            "age": tf.FixedLenFeature([], tf.int64),
            "name": tf.FixedLenFeature([], tf.string),
            "score": tf.VarLenFeature(tf.float32),
        },
    )
    return feats


@case
def io_parse_single_example(tf):
    return tf.parse_single_example(
        tf.constant(_serialized()[1]),
        {"age": tf.FixedLenFeature([1], tf.int64), "missing": tf.FixedLenFeature([], tf.int64, 0)},
    )


@case
def io_decode_csv(tf):
    return tf.decode_csv(["1,a,2.5", "3,,4"], [[0], ["z"], [0.0]])


@case
def io_decode_raw_and_serialize(tf):
    return [
        tf.decode_raw(tf.constant([b"\x01\x02\x03\x04"]), tf.uint8),
        tf.parse_tensor(tf.serialize_tensor(tf.constant(X)), tf.float32),
    ]


@case
def io_tfrecord_dataset(tf):
    import os
    import tempfile

    path = os.path.join(tempfile.mkdtemp(), "r.tfrecord")
    with tf.python_io.TFRecordWriter(path) as w:
        for s in _serialized():
            w.write(s)
    ds = tf.data.TFRecordDataset(path).map(
        lambda s: tf.parse_single_example(s, {"age": tf.FixedLenFeature([], tf.int64)})["age"]
    )
    return _drain(tf, ds)


# --- summaries, misc ------------------------------------------------------------------
@case
def summary_scalar_histogram_merge(tf):
    tf.summary.scalar("loss", tf.constant(1.5))
    tf.summary.histogram("w", tf.constant([1.0, 2.0, 2.0]))
    merged = tf.summary.merge_all()

    def run(sess):
        import tensorflow as tf_real

        s = tf_real.compat.v1.Summary.FromString(sess.run(merged))
        return sorted(v.tag for v in s.value)

    return run


@case
def lookup_table_index(tf):
    init = tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2])
    table = tf.lookup.StaticHashTable(init, -1)
    return table.lookup(tf.constant(["b", "c", "a"]))


@case
def py_func(tf):
    return tf.py_func(lambda x: (x * 2).astype(np.float32), [tf.constant(X)], tf.float32)


@case
def histogram_fixed_width(tf):
    return tf.histogram_fixed_width(tf.constant([0.1, 0.5, 0.9, 2.0]), [0.0, 1.0], nbins=4)


@case
def sequence_mask(tf):
    return tf.sequence_mask([1, 3, 2], 4)


@case
def dynamic_partition_stitch(tf):
    parts = tf.dynamic_partition(tf.constant([10, 20, 30, 40]), [0, 1, 0, 1], 2)
    return [parts, tf.dynamic_stitch([[0, 2], [1, 3]], parts)]


@case
def rnn_dynamic_lstm(tf):
    cell = tf.nn.rnn_cell.LSTMCell(3, initializer=tf.constant_initializer(0.1))
    out, state = tf.nn.dynamic_rnn(cell, tf.constant(X.reshape(1, 3, 4)), dtype=tf.float32)
    return [out, state.h]


@case
def rnn_gru_static(tf):
    cell = tf.nn.rnn_cell.GRUCell(2, kernel_initializer=tf.constant_initializer(0.2))
    outs, _ = tf.nn.static_rnn(cell, tf.unstack(tf.constant(X.reshape(3, 1, 4))), dtype=tf.float32)
    return outs


@case
def spectral_fft(tf):
    x = tf.constant(X)
    return [tf.abs(tf.signal.rfft(x)), tf.real(tf.fft(tf.complex(x, x)))]


@case
def complex_ops(tf):
    z = tf.complex(tf.constant([1.0, 2.0]), tf.constant([3.0, -1.0]))
    return [tf.real(z), tf.imag(z), tf.abs(z), tf.angle(z), tf.conj(z)]


@case
def math_polyval_and_lbeta_free(tf):
    return [
        tf.math.polyval([1.0, 2.0, 3.0], tf.constant(2.0)),
        tf.math.squared_difference(3.0, 1.0),
        tf.math.xdivy(0.0, 0.0),
    ]


@case
def batch_to_space_and_depth_to_space(tf):
    x = tf.reshape(tf.range(16.0), [1, 2, 2, 4])
    return [
        tf.depth_to_space(x, 2),
        tf.space_to_batch_nd(tf.reshape(tf.range(16.0), [1, 4, 4, 1]), [2, 2], [[0, 0], [0, 0]]),
    ]


@case
def scatter_nd_basic(tf):
    return tf.scatter_nd([[1], [3]], [5, 6], [5])


@case
def einsum_basic(tf):
    return tf.einsum("ij,kj->ik", tf.constant(X), tf.constant(X))


@case
def bincount_basic(tf):
    return tf.bincount(tf.constant([1, 1, 3]), minlength=5)


@case
def sets_intersection(tf):
    return tf.sparse.to_dense(tf.sets.intersection([[1, 2, 3]], [[2, 3, 4]]))


@case
def nn_ctc_loss(tf):
    labels = tf.SparseTensor([[0, 0], [0, 1]], [1, 2], [1, 2])
    logits = tf.constant(np.linspace(-1, 1, 4 * 1 * 4, dtype=np.float32).reshape(4, 1, 4))
    return tf.nn.ctc_loss(labels, logits, [4])


@case
def nn_depthwise_conv(tf):
    x = tf.constant(IMG)
    return tf.nn.depthwise_conv2d(x, tf.ones([2, 2, 3, 2]), [1, 1, 1, 1], "SAME")


@case
def image_ssim(tf):
    return tf.image.ssim(tf.constant(IMG), tf.constant(IMG[::-1].copy()), 1.0, filter_size=3)


@case
def math_lgamma_digamma(tf):
    x = tf.constant([0.5, 1.5, 3.0])
    return [tf.lgamma(x), tf.digamma(x), tf.math.erf(x), tf.math.erfc(x)]
