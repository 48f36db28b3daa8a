"""Oracle cases for gradients through control flow v2: While/StatelessWhile and
If/StatelessIf whose gradients TensorFlow's Python builds as functional ops with TensorList
accumulators, map_fn and TensorArrays written in a v2 loop. See corpus.py; control flow v2
is TensorFlow's default, so these build without `control_flow_v1`."""

from __future__ import annotations

from typing import Any

import numpy as np

from .corpus import Built, case

Rng = np.random.Generator


def _f32(rng: Rng, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


@case("gradients_v2")
def grad_v2_while_power(tf: Any, rng: Rng) -> Built:
    # d/dx x**n by repeated multiplication: the forward values of x*acc are accumulated.
    x = tf.placeholder(tf.float32, [3], name="x")
    n = tf.placeholder(tf.int32, [], name="n")
    _, y = tf.while_loop(lambda i, acc: i < n, lambda i, acc: (i + 1, acc * x), [0, tf.ones([3])])
    return Built({x: _f32(rng, 3), n: np.int32(4)}, [y, *tf.gradients(tf.reduce_sum(y), [x])])


@case("gradients_v2")
def grad_v2_while_accumulate(tf: Any, rng: Rng) -> Built:
    # A loop count that depends on a tensor, a matrix product carried across iterations
    # and a running sum: gradients w.r.t. the initial state and the loop-invariant weight.
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    w = tf.placeholder(tf.float32, [3, 3], name="w")
    k = tf.placeholder(tf.float32, [], name="k")
    n = tf.cast(tf.floor(k * 2.0), tf.int32) + 1

    def body(i: Any, h: Any, total: Any) -> Any:
        h = tf.tanh(tf.matmul(h, w))
        return i + 1, h, total + tf.reduce_sum(h * h, 1)

    _, h, total = tf.while_loop(lambda i, h, t: i < n, body, [0, x, tf.zeros([2])])
    loss = tf.reduce_sum(total) + tf.reduce_sum(h)
    feeds = {x: _f32(rng, 2, 3), w: _f32(rng, 3, 3) * 0.5, k: np.float32(1.7)}
    return Built(feeds, [n, loss, *tf.gradients(loss, [x, w])])


@case("gradients_v2")
def grad_v2_cond_both_branches(tf: Any, rng: Rng) -> Built:
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.placeholder(tf.float32, [2, 2], name="x")
    w = tf.placeholder(tf.float32, [2, 2], name="w")
    y = tf.cond(p, lambda: tf.matmul(x, w) * x, lambda: tf.sin(x) + w)
    z = tf.cond(tf.logical_not(p), lambda: tf.exp(x) * w, lambda: tf.square(w))
    loss = tf.reduce_sum(y) + tf.reduce_sum(z * z)
    gx, gw = tf.gradients(loss, [x, w])
    # The same conds with the other predicate, in the same run: both branches' gradients.
    q = tf.logical_not(p)
    y2 = tf.cond(q, lambda: tf.matmul(x, w) * x, lambda: tf.sin(x) + w)
    gx2, gw2 = tf.gradients(tf.reduce_sum(y2 * y2), [x, w])
    feeds = {p: np.bool_(True), x: _f32(rng, 2, 2), w: _f32(rng, 2, 2)}
    return Built(feeds, [loss, gx, gw, y2, gx2, gw2])


@case("gradients_v2")
def grad_v2_cond_in_while(tf: Any, rng: Rng) -> Built:
    x = tf.placeholder(tf.float32, [3], name="x")
    w = tf.placeholder(tf.float32, [3], name="w")

    def body(i: Any, v: Any) -> Any:
        v = tf.cond(tf.equal(i % 2, 0), lambda: v * w, lambda: tf.sin(v) + w)
        return i + 1, v

    _, v = tf.while_loop(lambda i, v: i < 5, body, [0, x])
    loss = tf.reduce_sum(v * v)
    return Built({x: _f32(rng, 3), w: _f32(rng, 3)}, [loss, *tf.gradients(loss, [x, w])])


@case("gradients_v2")
def grad_v2_map_fn(tf: Any, rng: Rng) -> Built:
    xs = tf.placeholder(tf.float32, [4, 3], name="xs")
    w = tf.placeholder(tf.float32, [3], name="w")
    loss = tf.reduce_sum(tf.map_fn(lambda t: t * t * w, xs))
    return Built({xs: _f32(rng, 4, 3), w: _f32(rng, 3)}, [loss, *tf.gradients(loss, [xs, w])])


@case("gradients_v2")
def grad_v2_tensor_array_stack(tf: Any, rng: Rng) -> Built:
    x = tf.placeholder(tf.float32, [3], name="x")
    w = tf.placeholder(tf.float32, [3], name="w")
    ta = tf.TensorArray(tf.float32, size=4, element_shape=[3])

    def body(i: Any, h: Any, ta: Any) -> Any:
        h = tf.tanh(h * w + tf.cast(i, tf.float32))
        return i + 1, h, ta.write(i, h)

    _, _, ta = tf.while_loop(lambda i, h, ta: i < 4, body, [0, x, ta])
    ys = ta.stack()
    weights = tf.constant(_f32(rng, 4, 3))
    loss = tf.reduce_sum(ys * weights)
    return Built({x: _f32(rng, 3), w: _f32(rng, 3)}, [ys, *tf.gradients(loss, [x, w])])


@case("gradients_v2")
def grad_v2_tensor_array_unstack_read(tf: Any, rng: Rng) -> Built:
    # An RNN-like loop reading a TensorArray unstacked from the input: the gradient
    # flows back through TensorListGetItem into a TensorList and TensorListStack.
    xs = tf.placeholder(tf.float32, [5, 2], name="xs")
    u = tf.placeholder(tf.float32, [2, 2], name="u")
    inputs = tf.TensorArray(tf.float32, size=5).unstack(xs)

    def body(t: Any, h: Any) -> Any:
        return t + 1, tf.tanh(tf.matmul(h, u) + inputs.read(t)[None, :])

    _, h = tf.while_loop(lambda t, h: t < 5, body, [0, tf.zeros([1, 2])])
    loss = tf.reduce_sum(h * h)
    return Built({xs: _f32(rng, 5, 2), u: _f32(rng, 2, 2)}, [h, *tf.gradients(loss, [xs, u])])


@case("gradients_v2")
def grad_v2_while_second_order(tf: Any, rng: Rng) -> Built:
    x = tf.placeholder(tf.float32, [3], name="x")
    _, y = tf.while_loop(lambda i, acc: i < 3, lambda i, acc: (i + 1, acc * x), [0, tf.ones([3])])
    (g,) = tf.gradients(tf.reduce_sum(y), [x])
    (gg,) = tf.gradients(tf.reduce_sum(g), [x])
    return Built({x: _f32(rng, 3)}, [y, g, gg])


@case("gradients_v2")
def grad_v2_nested_while(tf: Any, rng: Rng) -> Built:
    x = tf.placeholder(tf.float32, [2], name="x")

    def outer(i: Any, v: Any) -> Any:
        _, v = tf.while_loop(lambda j, u: j < 2, lambda j, u: (j + 1, tf.sin(u) * x), [0, v])
        return i + 1, v

    _, v = tf.while_loop(lambda i, v: i < 3, outer, [0, x])
    loss = tf.reduce_sum(v)
    return Built({x: _f32(rng, 2)}, [v, *tf.gradients(loss, [x])])


@case("gradients_v2")
def grad_v2_scan_and_max_iterations(tf: Any, rng: Rng) -> Built:
    # tf.scan (a v2 While over TensorArrays) and a loop cut short by maximum_iterations.
    xs = tf.placeholder(tf.float32, [4, 2], name="xs")
    a = tf.placeholder(tf.float32, [2], name="a")
    ys = tf.scan(lambda acc, x: acc * a + tf.sin(x), xs, initializer=tf.ones([2]))
    _, v = tf.while_loop(
        lambda i, v: i < 100, lambda i, v: (i + 1, v * a + 1.0), [0, a], maximum_iterations=3
    )
    loss = tf.reduce_sum(ys * ys) + tf.reduce_sum(v)
    return Built({xs: _f32(rng, 4, 2), a: _f32(rng, 2)}, [ys, v, *tf.gradients(loss, [xs, a])])


@case("gradients_v2")
def grad_v2_nested_cond_stop_gradient(tf: Any, rng: Rng) -> Built:
    p = tf.placeholder(tf.bool, [], name="p")
    q = tf.placeholder(tf.bool, [], name="q")
    x = tf.placeholder(tf.float32, [3], name="x")

    def inner_true() -> Any:
        return tf.cond(q, lambda: x * tf.stop_gradient(x), lambda: tf.exp(x))

    y = tf.cond(p, inner_true, lambda: tf.cos(x))
    y2 = tf.cond(q, lambda: tf.cond(p, lambda: tf.tanh(x), lambda: x), lambda: -x)
    loss = tf.reduce_sum(y * x) + tf.reduce_sum(y2)
    feeds = {p: np.bool_(True), q: np.bool_(False), x: _f32(rng, 3)}
    return Built(feeds, [y, y2, *tf.gradients(loss, [x])])


@case("gradients_v2", "variables", cli=False)
def grad_v2_train_variable_in_loop(tf: Any, rng: Rng) -> Built:
    # A resource variable read inside the loop body and inside a cond: training steps
    # through the While and If gradients (the captured handle's gradient is its read's).
    x = tf.placeholder(tf.float32, [4, 2], name="x")
    w = tf.get_variable("w", initializer=_f32(rng, 2, 2) * 0.5, use_resource=True)
    b = tf.get_variable("b", initializer=np.zeros(2, np.float32), use_resource=True)

    def body(i: Any, h: Any) -> Any:
        h = tf.tanh(tf.matmul(h, w) + b)
        return i + 1, tf.cond(i < 1, lambda: h * 2.0, lambda: h + b)

    _, h = tf.while_loop(lambda i, h: i < 3, body, [0, x])
    loss = tf.reduce_mean(tf.square(h - 0.25), name="loss")
    train = tf.train.GradientDescentOptimizer(0.3).minimize(loss)
    init = tf.global_variables_initializer()
    fetches = [loss, w.read_value(), b.read_value()]
    return Built({x: _f32(rng, 4, 2)}, fetches, [init], [train], 3)


@case("gradients_v2")
def grad_v2_zero_iterations_and_gather(tf: Any, rng: Rng) -> Built:
    # A loop that runs zero times (empty accumulators) and one whose body gathers rows of
    # a captured table (an IndexedSlices gradient leaving the While's gradient).
    x = tf.placeholder(tf.float32, [3], name="x")
    n = tf.placeholder(tf.int32, [], name="n")
    table = tf.placeholder(tf.float32, [5, 3], name="table")
    _, y = tf.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * x), [0, x])

    def body(i: Any, v: Any) -> Any:
        return i + 1, v + tf.gather(table, i % 5) * v

    _, z = tf.while_loop(lambda i, v: i < 7, body, [0, x])
    loss = tf.reduce_sum(y) + tf.reduce_sum(z)
    feeds = {x: _f32(rng, 3), n: np.int32(0), table: _f32(rng, 5, 3) * 0.3}
    return Built(feeds, [y, z, *tf.gradients(loss, [x, table])])


@case("gradients_v2")
def grad_v2_nested_map_fn_dynamic_tensor_array(tf: Any, rng: Rng) -> Built:
    xs = tf.placeholder(tf.float32, [3, 4], name="xs")
    inner = tf.map_fn(lambda row: tf.map_fn(lambda e: tf.sin(e) * e, row), xs)
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)

    def body(i: Any, ta: Any) -> Any:
        return i + 1, ta.write(i, tf.reduce_sum(xs[i] * tf.cast(i + 1, tf.float32)))

    _, ta = tf.while_loop(lambda i, ta: i < 3, body, [0, ta])
    picked = ta.gather([2, 0])
    loss = tf.reduce_sum(inner) + tf.reduce_sum(picked * picked)
    return Built({xs: _f32(rng, 3, 4)}, [inner, picked, *tf.gradients(loss, [xs])])


@case("gradients_v2", "pinned", min_devices=3)
def grad_v2_pinned_loop_and_cond(tf: Any, rng: Rng) -> Built:
    x = tf.placeholder(tf.float32, [2, 2], name="x")
    with tf.device("/device:CPU:1"):
        _, h = tf.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tf.matmul(h, x)), [0, x])
    with tf.device("/device:CPU:2"):
        y = tf.cond(tf.reduce_sum(h) > 0.0, lambda: tf.square(h), lambda: tf.sin(h))
    loss = tf.reduce_sum(y)
    return Built({x: _f32(rng, 2, 2)}, [h, y, *tf.gradients(loss, [x])])


@case("gradients_v2")
def grad_v2_cond_and_tensor_array_second_order(tf: Any, rng: Rng) -> Built:
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.cond(p, lambda: tf.sin(x) * x, lambda: x * x * x)
    (g,) = tf.gradients(tf.reduce_sum(y), [x])
    (gg,) = tf.gradients(tf.reduce_sum(g), [x])
    ta = tf.TensorArray(tf.float32, size=3)
    _, ta = tf.while_loop(lambda i, ta: i < 3, lambda i, ta: (i + 1, ta.write(i, x * x)), [0, ta])
    (h,) = tf.gradients(tf.reduce_sum(ta.stack() * x), [x])
    (hh,) = tf.gradients(tf.reduce_sum(h), [x])
    return Built({p: np.bool_(True), x: _f32(rng, 3)}, [g, gg, h, hh])
