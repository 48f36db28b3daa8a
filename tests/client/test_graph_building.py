"""Client graph building: TF's names, scopes, shapes and construction errors."""

from __future__ import annotations

import numpy as np
import pytest

import client as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield


def test_unique_names_and_scopes():
    a = tf.constant(1.0)
    b = tf.constant(2.0)
    assert (a.name, b.name) == ("Const:0", "Const_1:0")
    assert (a + b).name == "add:0"
    assert (a + b).name == "add_1:0"
    with tf.name_scope("s") as scope:
        assert scope == "s/"
        c = tf.multiply(a, 3.0)
        with tf.name_scope("t"):
            d = tf.identity(c)
    with tf.name_scope("s"):
        e = tf.identity(a)
    assert c.name == "s/Mul:0"
    assert c.op.inputs[1].op.name == "s/Mul/y"
    assert d.name == "s/t/Identity:0"
    assert e.name == "s_1/Identity:0"


def test_operation_and_tensor_properties():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.reduce_sum(x, axis=1, name="y")
    assert y.op.type == "Sum"
    assert y.op.inputs[0] is x
    assert y.shape.as_list() == [None]
    assert y.dtype == tf.float32 and y.dtype.name == "float32"
    assert x.op.get_attr("dtype") == tf.float32
    assert y.op.get_attr("keep_dims") is False
    assert y.value_index == 0 and y.graph is tf.get_default_graph()
    assert {y: 1}[y] == 1
    nd = y.op.node_def
    assert (nd.name, nd.op, list(nd.input)) == ("y", "Sum", ["x", "y/reduction_indices"])
    m = tf.reduce_mean(x)
    assert list(m.op.node_def.input) == ["x", "Const"] and m.op.name == "Mean"


def test_devices_merge_like_tf():
    with tf.device("/job:ps/task:0"):
        a = tf.constant(1.0)
        with tf.device("/device:CPU:0"):
            b = tf.constant(1.0)
        with tf.device("/job:worker"):
            c = tf.constant(1.0)
    assert a.device == "/job:ps/task:0"
    assert b.device == "/job:ps/task:0/device:CPU:0"
    assert c.device == "/job:worker/task:0"


def test_control_dependencies_and_colocation():
    a = tf.constant(1.0, name="a")
    with tf.control_dependencies([a]):
        b = tf.constant(2.0, name="b")
    with tf.colocate_with(a):
        c = tf.identity(b, name="c")
    assert b.op.control_inputs == [a.op]
    assert c.op.get_attr("_class") == [b"loc:@a"]
    assert list(c.op.node_def.input) == ["b"]


def test_static_shapes():
    x = tf.placeholder(tf.float32, [2, 3])
    assert tf.reshape(x, [-1]).shape.as_list() == [6]
    assert tf.transpose(x).shape.as_list() == [3, 2]
    assert tf.concat([x, x], 1).shape.as_list() == [2, 6]
    assert tf.stack([x, x]).shape.as_list() == [2, 2, 3]
    assert x[:, tf.newaxis, 1].shape.as_list() == [2, 1]
    assert x[..., 0].shape.as_list() == [2]
    assert tf.expand_dims(x, 0).shape.as_list() == [1, 2, 3]
    assert tf.reduce_mean(x, 0, keepdims=True).shape.as_list() == [1, 3]


def test_matmul_shape_error_worded_like_tf():
    a = tf.placeholder(tf.float32, [2, 3])
    b = tf.placeholder(tf.float32, [4, 5])
    with pytest.raises(ValueError) as e:
        tf.matmul(a, b)
    assert str(e.value) == (
        "Dimensions must be equal, but are 3 and 4 for '{{node MatMul}} = MatMul[T=DT_FLOAT, "
        "grad_a=false, grad_b=false, transpose_a=false, transpose_b=false](Placeholder, Placeholder_1)' with input "
        "shapes: [2,3], [4,5]."
    )
    assert "MatMul" not in [op.name for op in tf.get_default_graph().get_operations()]


def test_dtype_mismatch_is_type_error():
    a = tf.constant(1.0)
    b = tf.constant(1)
    with pytest.raises(
        TypeError,
        match="Input 'y' of 'AddV2' Op has type int32 that does not match type float32 of argument 'x'",
    ):
        tf.add(a, b)


def test_as_graph_def_and_import_round_trip():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.nn.relu(x * 2.0, name="y")
    gd = tf.get_default_graph().as_graph_def()
    g2 = tf.Graph()
    with g2.as_default():
        z = tf.constant([[1.0, -1.0]])
        (out,) = tf.import_graph_def(gd, input_map={"x": z}, return_elements=["y:0"], name="imp")
        assert out.name == "imp/y:0"
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(out), [[2.0, 0.0]])
    assert y.name == "y:0"


def test_broadcast_shape_error_worded_like_tf():
    a = tf.placeholder(tf.float32, [2, 3])
    b = tf.placeholder(tf.float32, [2, 4])
    with pytest.raises(ValueError) as e:
        a + b
    assert str(e.value) == (
        "Dimensions must be equal, but are 3 and 4 for '{{node add}} = AddV2[T=DT_FLOAT]"
        "(Placeholder, Placeholder_1)' with input shapes: [2,3], [2,4]."
    )


def test_while_loop_graph_layout_like_tf():
    i = tf.constant(0)
    r = tf.while_loop(lambda i: i < 5, lambda i: i + 1, [i])
    ops = [(op.name, op.type) for op in tf.get_default_graph().get_operations()]
    assert ops == [
        ("Const", "Const"),
        ("while/Enter", "Enter"),
        ("while/Merge", "Merge"),
        ("while/Less/y", "Const"),
        ("while/Less", "Less"),
        ("while/LoopCond", "LoopCond"),
        ("while/Switch", "Switch"),
        ("while/Identity", "Identity"),
        ("while/add/y", "Const"),
        ("while/add", "AddV2"),
        ("while/NextIteration", "NextIteration"),
        ("while/Exit", "Exit"),
    ]
    assert r.name == "while/Exit:0"
    assert r.op.inputs[0].op.get_attr("T") == tf.int32
    assert (
        tf.get_default_graph().get_operation_by_name("while/Enter").get_attr("frame_name")
        == b"while/while_context"
    )


def _layout(graph_def) -> list[tuple[str, str, list[str]]]:
    return sorted((n.name, n.op, list(n.input)) for n in graph_def.node)


def test_sampler_pool_and_arg_reduction_graphs_like_tf():
    tf_real = pytest.importorskip("tensorflow")
    tf1 = tf_real.compat.v1

    def build(api, nn):
        x = api.placeholder(api.float32, [2, 4, 4, 3], name="x")
        api.random_normal([2, 3], mean=1.0, stddev=2.0, seed=1, name="rn")
        api.truncated_normal([2, 3], seed=1)
        nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID", name="mp")
        nn.avg_pool(x, [1, 2, 2, 1], [1, 1, 1, 1], "SAME")
        api.argmax(x, 3, name="amax")
        api.argmin(x, 1, output_type=api.int32)

    build(tf, tf.nn)
    ours = tf.get_default_graph().as_graph_def()
    g = tf_real.Graph()
    with g.as_default():
        build(tf1, tf1.nn)
    assert _layout(ours) == _layout(g.as_graph_def())
    pools = {
        n.name: (n.attr["ksize"].list.i, n.attr["padding"].s)
        for n in ours.node
        if n.op in ("MaxPool", "AvgPool")
    }
    assert pools == {"mp": ([1, 2, 2, 1], b"VALID"), "AvgPool": ([1, 2, 2, 1], b"SAME")}
    assert [n.attr["output_type"].type for n in ours.node if n.op == "ArgMin"] == [3]


def test_transpose_of_unknown_rank_graph_like_tf():
    # The reversed permutation is a Range under the op's scope ("transpose/Range"), and a
    # list holding a tensor still packs through convert_to_tensor.
    tf_real = pytest.importorskip("tensorflow")
    tf1 = tf_real.compat.v1

    def build(api):
        x = api.placeholder(api.float32, name="x")
        api.transpose(x)
        api.convert_to_tensor([x, x])

    build(tf)
    ours = tf.get_default_graph().as_graph_def()
    g = tf_real.Graph()
    with g.as_default():
        build(tf1)
    assert _layout(ours) == _layout(g.as_graph_def())


def _reduction_gradients(api):
    x = api.placeholder(api.float32, [2, 3], name="x")
    u = api.placeholder(api.float32, [None, 3], name="u")
    r = api.placeholder(api.float32, None, name="r")
    grads = [
        api.gradients(api.reduce_sum(x * x), x),
        api.gradients(api.reduce_sum(x * x, axis=1), x),
        api.gradients(api.reduce_sum(x, axis=1), x),
        api.gradients(api.reduce_sum(x, axis=[0], keepdims=True), x),
        api.gradients(api.reduce_mean(x, axis=-1), x),
        api.gradients(api.reduce_sum(u * u, axis=1), u),
        api.gradients(api.reduce_mean(u), u),
        api.gradients(api.reduce_sum(r, axis=0), r),
        api.gradients(api.reduce_sum(u, axis=api.constant(1) + 0), u),
        api.gradients(api.reduce_mean(u, axis=api.constant(1) + 0), u),
        api.gradients(api.reduce_mean(r * 2.0), r),
    ]
    feeds = {
        x: np.arange(6, dtype=np.float32).reshape(2, 3),
        u: np.arange(12, dtype=np.float32).reshape(4, 3),
        r: np.ones([2, 5], np.float32),
    }
    return lambda sess: sess.run(grads, feeds)


def test_sum_and_mean_gradient_graphs_like_tf():
    """TF's _SumGrad node for node: gradients/Shape for grad_ys, Reshape + Tile when shape
    and axes are static (with _SafeShapeDiv's once-per-graph Maximum/floordiv),
    DynamicStitch + BroadcastTo otherwise; _MeanGrad's Gather + Prod count."""
    from tests.client.tf1_oracle import assert_close, run_both

    ours, theirs, our_names, tf_names = run_both(_reduction_gradients)
    assert our_names == tf_names  # in TF's order, too
    assert_close(ours, theirs)
    tf.reset_default_graph()
    _reduction_gradients(tf)
    tf_real = pytest.importorskip("tensorflow")
    g = tf_real.Graph()
    with g.as_default():
        _reduction_gradients(tf_real.compat.v1)
    assert _layout(tf.get_default_graph().as_graph_def()) == _layout(g.as_graph_def())


def test_scalar_reductions_use_rank_and_range_like_tf():
    """TF's _ReductionDims tests `if x_rank:`, so reducing a scalar over all axes builds
    Rank + Range rather than an empty Const."""
    tf_real = pytest.importorskip("tensorflow")

    def build(api):
        s = api.constant(2.0)
        api.reduce_sum(s)
        api.reduce_prod(s)
        api.reduce_mean(s)
        api.reduce_max(s, name="m")

    build(tf)
    g = tf_real.Graph()
    with g.as_default():
        build(tf_real.compat.v1)
    assert _layout(tf.get_default_graph().as_graph_def()) == _layout(g.as_graph_def())


def test_stack_and_expand_dims_constants_named_like_tf():
    """stack on axis 0 converts the list as a whole (one Const, or autopacked Consts named
    by index); ExpandDims' Python axis is the Const "ExpandDims/dim"."""
    tf_real = pytest.importorskip("tensorflow")

    def build(api):
        a, b = api.constant(1.0), api.constant(2.0)
        api.stack([a, b])
        api.stack([1, 2, 3])
        api.expand_dims(a, 0)
        api.expand_dims(a, -1, name="last")
        x = api.placeholder(api.float32, [None, 3])
        n = api.shape(x)[0]
        api.stack([n, 4])
        api.stack([[n, 2], [3, 4]], name="nested")
        api.stack([n, 5], axis=-1)
        api.reshape(x, [n, -1, 1])

    build(tf)
    g = tf_real.Graph()
    with g.as_default():
        build(tf_real.compat.v1)
    assert _layout(tf.get_default_graph().as_graph_def()) == _layout(g.as_graph_def())


def test_resource_variable_reads_named_like_tf():
    """read_value() is Read/ReadVariableOp plus an Identity in the caller's scope; an
    update's result is the lazy read without one."""
    tf_real = pytest.importorskip("tensorflow")

    def build(api):
        v = api.Variable([1.0, 2.0], use_resource=True, name="v")
        v.read_value()
        with api.name_scope("outer"):
            v.read_value()
        v.assign([3.0, 4.0])
        v.assign_add([1.0, 1.0])

    build(tf)
    g = tf_real.Graph()
    with g.as_default():
        build(tf_real.compat.v1)
    assert _layout(tf.get_default_graph().as_graph_def()) == _layout(g.as_graph_def())


def test_resource_variable_read_value_value_like_tf():
    from tests.client.tf1_oracle import assert_close, run_both

    def build(api):
        v = api.Variable([1.0, 2.0], use_resource=True, name="v")
        read = v.read_value()
        with api.control_dependencies([read]):
            update = v.assign_add([1.0, 1.0])
        return lambda sess: sess.run([read, update])

    ours, theirs, names, tf_names = run_both(build)
    assert_close(ours, theirs)
    assert sorted(names) == sorted(tf_names)


def test_variable_inputs_read_once_like_tf():
    """An op given a variable reads it once ("Fill/ReadVariableOp"), as TF does: inferring
    the op's type attr from the variable makes no extra read."""
    tf_real = pytest.importorskip("tensorflow")

    def build(api):
        n = api.Variable(3, use_resource=True, name="n")
        w = api.Variable([1.0, -2.0], use_resource=True, name="w")
        api.fill([2, 2], n)
        api.add(w, 1.0)
        api.maximum(w, 0.0, name="relu_like")
        api.fill(api.shape(api.zeros([2, 3])), 1.0)

    build(tf)
    g = tf_real.Graph()
    with g.as_default():
        build(tf_real.compat.v1)
    assert _layout(tf.get_default_graph().as_graph_def()) == _layout(g.as_graph_def())
