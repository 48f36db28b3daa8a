"""Client reference variables against tensorflow.compat.v1 with resource variables off
(disable_resource_variables, disable_v2_behavior, use_resource=False): the same graphs
(VariableV2, "<name>/Assign", "<name>/read", Assign/AssignAdd/Scatter* state ops, the
optimizers' non-resource Apply* updates with reference slots, colocation groups) and the
same values after running them; checkpoints read by the other side."""

from __future__ import annotations

import numpy as np
import pytest

import client
from client.ops.ref_variable import RefVariable
from tests.client.test_graph_sweep import graph_diff
from tests.client.tf1_oracle import assert_close, run_both

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module


@pytest.fixture
def ref_variables():
    """Resource variables off in both clients for the test, as after a TF1 program's
    disable_v2_behavior(); both switches restored after it."""
    before = (client.resource_variables_enabled(), tf1.resource_variables_enabled())
    client.disable_resource_variables()
    tf1.disable_resource_variables()
    yield
    (client.enable_resource_variables if before[0] else client.disable_resource_variables)()
    (tf1.enable_resource_variables if before[1] else tf1.disable_resource_variables)()


def _graphs(build):
    g, t = client.Graph(), tf_real.Graph()
    with g.as_default():
        build(client)
    with t.as_default():
        build(tf1)
    return g.as_graph_def(), t.as_graph_def()


def _colocation(gd, skip):
    return {
        n.name: (list(n.attr["_class"].list.s), n.device)
        for n in gd.node
        if n.op not in skip and n.name not in skip
    }


def assert_same_graph(build, skip_colocation_of=()):
    """Node for node as the graph sweep compares them, and the same colocation groups
    and devices (where the runtime places each update)."""
    ours, theirs = _graphs(build)
    assert graph_diff(ours, theirs) == []
    assert _colocation(ours, skip_colocation_of) == _colocation(theirs, skip_colocation_of)


def _state_ops(tf):
    v = tf.Variable([1.0, 2.0, 3.0], name="v")
    w = tf.get_variable("w", [3], initializer=tf.zeros_initializer())
    u = tf.Variable(lambda: tf.ones([3]), name="u")
    c = tf.Variable(0, name="c")
    y = v * 2.0 + w
    grads = tf.gradients(tf.reduce_sum(y * u), [v, w, u])
    return {
        "assign": tf.assign(v, [3.0, 4.0, 5.0]),
        "assign_add": v.assign_add([1.0, 1.0, 1.0]),
        "scatter_update": tf.scatter_update(v, [0], [9.0]),
        "assign_sub": tf.assign_sub(w, [1.0, 2.0, 3.0]),
        "scatter_sub": v.scatter_sub(tf.IndexedSlices(tf.constant([1.0]), tf.constant([1]))),
        "scatter_add": tf.scatter_add(w, [2, 2], [0.5, 0.25]),
        "scatter_nd_add": tf.scatter_nd_add(u, [[1]], [2.0]),
        "scatter_mul": tf.scatter_mul(u, [0, 2], [3.0, 4.0]),
        "read": v.read_value(),
        "y": y,
        "grads": grads,
        "count": tf.count_up_to(c, 3),
        "initialized": tf.is_variable_initialized(v),
        "uninitialized": tf.report_uninitialized_variables(),
    }


def test_state_ops_graph_is_tensorflows(ref_variables):
    def build(tf):
        _state_ops(tf)
        tf.global_variables_initializer()
        tf.variables_initializer([tf.global_variables()[0]])

    assert_same_graph(build)


def test_state_ops_values_match_tensorflow(ref_variables):
    order = ["assign", "assign_add", "scatter_update", "assign_sub", "scatter_sub"]
    order += ["scatter_add", "scatter_nd_add", "scatter_mul", "read", "y", "grads", "count"]
    order += ["count", "initialized", "uninitialized"]

    def build(tf):
        ops = _state_ops(tf)
        return lambda sess: [sess.run(ops[k]) for k in order]

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs)


def test_a_ref_variable_is_tensorflows():
    """Its properties and the names of its parts, with the switch on (use_resource=False)."""

    def build(tf):
        v = tf.Variable(np.float32([[1.0, 2.0]]), name="v", use_resource=False)
        return v

    seen = []
    for tf, graph in ((client, client.Graph()), (tf1, tf_real.Graph())):
        with graph.as_default():
            v = build(tf)
            seen.append(
                (
                    type(v).__name__,
                    v.name,
                    v.dtype.name,
                    v.dtype.base_dtype.name,
                    v.op.type,
                    v.shape.as_list(),
                    v._ref().name,
                    v.value().name,
                    v.read_value().name,
                    v.initializer.name,
                    v.initial_value.name,
                    v.initialized_value().dtype.name,
                    [x.name for x in tf.global_variables()],
                    [x.name for x in tf.trainable_variables()],
                    str(v.to_proto()),
                    isinstance(v, tf.Variable),
                )
            )
    assert seen[0] == seen[1]


def test_switches_choose_as_tensorflow():
    """The process switch, disable_v2_behavior, use_resource= and variable_scope's
    use_resource pick the same kind of variable in both clients."""

    def kinds(tf):
        kinds = [tf.Variable(1.0, name="a").op.type]
        kinds.append(tf.get_variable("b", [], use_resource=True).op.type)
        kinds.append(tf.get_variable("c", [], use_resource=False).op.type)
        with tf.variable_scope("s", use_resource=False):
            kinds.append(tf.get_variable("d", []).op.type)
            kinds.append(tf.Variable(1.0, name="e").op.type)
            with tf.variable_scope("inner"):
                kinds.append(tf.get_variable("f", []).op.type)
        with tf.variable_scope("r", use_resource=True):
            kinds.append(tf.get_variable("g", []).op.type)
        return kinds

    def both():
        out = []
        for tf, graph in ((client, client.Graph()), (tf1, tf_real.Graph())):
            with graph.as_default():
                out.append(kinds(tf))
        return out

    before = (client.resource_variables_enabled(), tf1.resource_variables_enabled())
    try:
        ours, theirs = both()
        assert ours == theirs and ours[0] == "VarHandleOp"
        client.disable_v2_behavior()
        tf1.disable_resource_variables()
        assert client.resource_variables_enabled() is False
        ours, theirs = both()
        assert ours == theirs and ours[0] == "VariableV2"
        client.enable_resource_variables()
        assert client.resource_variables_enabled() is True
    finally:
        client.enable_control_flow_v2()
        (client.enable_resource_variables if before[0] else client.disable_resource_variables)()
        (tf1.enable_resource_variables if before[1] else tf1.disable_resource_variables)()


def test_uninitialized_read_fails_as_tensorflow(ref_variables):
    errors = []
    for tf in (client, tf1):
        with tf.Graph().as_default() as g:
            v = tf.Variable([1.0, 2.0], name="v")
            with tf.Session(graph=g) as sess, pytest.raises(Exception) as info:
                sess.run(v.value() * 2.0)
        code = getattr(info.value, "error_code", None) or getattr(info.value, "code", None)
        errors.append((type(info.value).__name__, int(code)))
        assert "uninitialized value v" in str(info.value)
    assert errors[0] == errors[1] == ("FailedPreconditionError", 9)


def test_ref_variable_is_not_a_resource():
    with client.Graph().as_default():
        v = client.Variable(1.0, use_resource=False)
        assert isinstance(v, RefVariable) and not hasattr(v, "handle")
        with pytest.raises(TypeError, match="sparse_delta is not IndexedSlices"):
            v.scatter_add([1.0])


# -- optimizers ------------------------------------------------------------------------------
OPTIMIZERS = {
    "gd": lambda tf: tf.train.GradientDescentOptimizer(0.1),
    "momentum": lambda tf: tf.train.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda tf: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "adam": lambda tf: tf.train.AdamOptimizer(0.1),
    "adagrad": lambda tf: tf.train.AdagradOptimizer(0.1),
    "rmsprop": lambda tf: tf.train.RMSPropOptimizer(0.1),
    "rmsprop_centered": lambda tf: tf.train.RMSPropOptimizer(0.1, momentum=0.5, centered=True),
    "adadelta": lambda tf: tf.train.AdadeltaOptimizer(1.0),
    "ftrl": lambda tf: tf.train.FtrlOptimizer(0.1),
    "ftrl_v2": lambda tf: tf.train.FtrlOptimizer(0.1, l2_shrinkage_regularization_strength=0.1),
    "proximal_gd": lambda tf: tf.train.ProximalGradientDescentOptimizer(0.1, 0.01, 0.01),
    "proximal_adagrad": lambda tf: tf.train.ProximalAdagradOptimizer(0.1),
    "adagrad_da": lambda tf: tf.train.AdagradDAOptimizer(0.1, tf.train.get_or_create_global_step()),
}
X = np.float32([[1.0, 2.0], [-1.0, 0.5], [0.25, -2.0]])


def _training(make, sparse: bool):
    def build(tf):
        x = tf.placeholder(tf.float32, [3, 2], name="x")
        w = tf.get_variable("w", initializer=np.float32([[0.5], [-1.0]]))
        b = tf.Variable(np.zeros(1, np.float32), name="b")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b))
        if sparse:  # a gather's IndexedSlices gradient, with a repeated row
            e = tf.Variable(np.float32([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), name="e")
            loss = loss + tf.reduce_sum(tf.square(tf.gather(e, [0, 2, 0])))
        step = tf.train.get_or_create_global_step()
        train = make(tf).minimize(loss, global_step=step)
        return x, train, loss

    return build


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_graph_is_tensorflows(ref_variables, name, sparse):
    assert_same_graph(_training(OPTIMIZERS[name], sparse))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_values_match_tensorflow(ref_variables, name, sparse):
    def build(tf):
        x, train, loss = _training(OPTIMIZERS[name], sparse)(tf)

        def steps(sess):
            for _ in range(3):
                sess.run(train, {x: X})
            names = sorted(v.op.name for v in tf.global_variables())
            values = {v.op.name: v for v in tf.global_variables()}
            return {n: sess.run(values[n]) for n in names} | {"loss": sess.run(loss, {x: X})}

        return steps

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


def test_slots_are_reference_variables(ref_variables):
    with client.Graph().as_default():
        v = client.Variable([1.0, 2.0], name="v")
        opt = client.train.AdamOptimizer(0.1)
        opt.minimize(client.reduce_sum(v * v))
        kinds = {type(s).__name__ for s in opt.variables()}
        assert kinds == {"RefVariable"}


# -- control flow, partitioned variables -----------------------------------------------------
@pytest.fixture
def v1_control_flow():
    before = (client.control_flow_v2_enabled(), tf1.control_flow_v2_enabled())
    client.disable_control_flow_v2()
    tf1.disable_control_flow_v2()
    yield
    (client.enable_control_flow_v2 if before[0] else client.disable_control_flow_v2)()
    (tf1.enable_control_flow_v2 if before[1] else tf1.disable_control_flow_v2)()


def _loop_and_cond(tf):
    """A v1 while loop whose body writes and reads a reference (RefEnter), a cond
    assigning it in one branch (RefSwitch), the gradient through both reads."""
    v = tf.Variable(1.5, name="v")
    x = tf.placeholder(tf.float32, [], name="x")

    def body(i, a):
        with tf.control_dependencies([tf.assign_add(v, 1.0)]):
            return i + 1, a + v.read_value() * x

    # One iteration at a time: TensorFlow's Identity of a ref aliases the variable's
    # buffer, so with parallel iterations a later AssignAdd may land before a read.
    _, total = tf.while_loop(lambda i, a: i < 3, body, [0, 0.0], parallel_iterations=1)
    p = tf.placeholder(tf.bool, [], name="p")
    picked = tf.cond(p, lambda: tf.assign(v, 5.0), lambda: v * 2.0)
    (grad,) = tf.gradients(total, v)
    return x, p, total, picked, grad


def test_loop_and_cond_graph_is_tensorflows(ref_variables, v1_control_flow):
    # The client's v1 Switch nodes carry no "_class" (TF colocates them with their data
    # or Merge): a difference of v1 control flow, not of reference variables.
    assert_same_graph(_loop_and_cond, skip_colocation_of={"Switch"})
    with client.Graph().as_default() as g:
        _loop_and_cond(client)
    assert {"RefEnter", "RefSwitch"} <= {op.type for op in g.get_operations()}


def test_loop_and_cond_values_match_tensorflow(ref_variables, v1_control_flow):
    def build(tf):
        x, p, total, picked, grad = _loop_and_cond(tf)
        return lambda sess: [
            sess.run([total, grad], {x: 2.0}),
            sess.run(picked, {p: False}),
            sess.run(picked, {p: True}),
            sess.run(tf.global_variables()[0]),
        ]

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs)


def _partitioned(tf):
    emb = tf.get_variable(
        "emb",
        [7, 3],
        initializer=np.arange(21, dtype=np.float32).reshape(7, 3) / 10,
        partitioner=tf.fixed_size_partitioner(3),
    )
    with tf.variable_scope("dense", partitioner=tf.variable_axis_size_partitioner(8)):
        w = tf.get_variable("w", [3, 2], initializer=tf.constant_initializer(0.5))
    ids = tf.placeholder_with_default(np.int32([0, 6, 4, 4]), [None], name="ids")
    loss = tf.reduce_sum(tf.square(tf.matmul(tf.nn.embedding_lookup(emb, ids), w)))
    train = tf.train.AdagradOptimizer(0.1).minimize(loss)
    return loss, train, tf.train.Saver()


# The client's Saver does not colocate its "control_dependency" Identity with the file
# name (TF's with_dependencies does): a Saver difference, not a variable one.
SAVER_IDENTITY = {"save/control_dependency"}


def test_partitioned_variables_graph_is_tensorflows(ref_variables):
    assert_same_graph(_partitioned, skip_colocation_of=SAVER_IDENTITY)


def test_partitioned_variables_values_match_tensorflow(ref_variables):
    def build(tf):
        loss, train, _ = _partitioned(tf)

        def steps(sess):
            for _ in range(2):
                sess.run(train)
            return [sess.run(loss), sess.run(tf.global_variables())]

        return steps

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs)


# -- checkpoints -----------------------------------------------------------------------------
def _saved_model(tf, values):
    v = tf.Variable(values["v"], name="v")
    with tf.variable_scope("s"):
        w = tf.get_variable("w", initializer=values["s/w"])
    step = tf.train.get_or_create_global_step()
    return {"v": v, "s/w": w, "global_step": step}, tf.train.Saver()


def _checkpoint_graph(tf):
    _saved_model(tf, {"v": np.float32([1.0, 2.0]), "s/w": np.float32([[3.0]])})


def test_saver_graph_is_tensorflows(ref_variables):
    assert_same_graph(_checkpoint_graph, skip_colocation_of=SAVER_IDENTITY)


@pytest.mark.parametrize("writer", ["client", "tensorflow"])
def test_checkpoints_restore_on_the_other_side(ref_variables, tmp_path, writer):
    want = {"v": np.float32([1.0, -2.0]), "s/w": np.float32([[0.25]]), "global_step": 9}
    zeros = {"v": np.float32([0.0, 0.0]), "s/w": np.float32([[0.0]])}
    first, second = (client, tf1) if writer == "client" else (tf1, client)
    with first.Graph().as_default() as g:
        variables, saver = _saved_model(first, want)
        with first.Session(graph=g) as sess:
            sess.run(first.global_variables_initializer())
            sess.run(first.assign(variables["global_step"], 9))
            saver.save(sess, str(tmp_path / "model"), write_meta_graph=False)
    with second.Graph().as_default() as g:
        variables, saver = _saved_model(second, zeros)
        with second.Session(graph=g) as sess:
            saver.restore(sess, str(tmp_path / "model"))
            got = sess.run(variables)
    assert_close(got, want)


# -- metrics: their local variables are reference variables too ------------------------------
def _metrics(tf):
    labels = tf.constant([1, 0, 1, 1, 0, 2])
    preds = tf.constant([1, 1, 1, 0, 0, 2])
    scores = tf.constant([0.9, 0.6, 0.8, 0.3, 0.2, 0.7])
    return [
        tf.metrics.accuracy(labels, preds),
        tf.metrics.mean(tf.cast(preds, tf.float32)),
        tf.metrics.auc(tf.minimum(labels, 1), scores, num_thresholds=5),
        tf.metrics.mean_per_class_accuracy(labels, preds, 3),
    ]


def test_metrics_graph_is_tensorflows(ref_variables):
    assert_same_graph(_metrics)


def test_metrics_values_match_tensorflow(ref_variables):
    def build(tf):
        metrics = _metrics(tf)
        updates, values = [m[1] for m in metrics], [m[0] for m in metrics]
        return lambda sess: [sess.run(updates), sess.run(updates), sess.run(values)]

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs)
