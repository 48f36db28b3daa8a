"""In-process session: what it runs by default (optimizations as TensorFlow's DirectSession)."""

from __future__ import annotations

import numpy as np
import pytest
from google.protobuf import text_format

from common.errors import InvalidArgumentError
from common.session import Session
from protos import config_pb2, graph_pb2

GRAPH = text_format.Parse(
    """
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
node { name: "b" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 3 } } } }
node { name: "ab" op: "Mul" input: "a" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "y" op: "AddV2" input: "x" input: "ab" attr { key: "T" value { type: DT_FLOAT } } }
""",
    graph_pb2.GraphDef(),
)


def executed_nodes(sess: Session) -> set[str]:
    names: set[str] = set()
    for signature in sess._cache.values():
        for _, executor in signature.group.items:
            names |= {n.name for n in executor.graph.op_nodes()}
    return names


def run_y(**kwargs) -> set[str]:
    with Session(GRAPH, **kwargs) as sess:
        (y,) = sess.run(["y:0"], {"x:0": np.float32(1.0)})
        assert y == np.float32(7.0)
        return executed_nodes(sess)


def test_constant_folding_is_on_by_default_as_in_tensorflow():
    names = run_y()
    assert "ab" not in names and any("__cf__" in n for n in names), names


def test_optimizations_off_on_request_or_by_config():
    assert {"a", "b", "ab"} <= run_y(optimize=False)
    config = config_pb2.ConfigProto()
    config.graph_options.optimizer_options.opt_level = config_pb2.OptimizerOptions.L0
    # L0 leaves TensorFlow's Grappler on, and our elementwise fusion with it ("ab" is
    # fused into "y"); turning the meta optimizer off too leaves every node.
    assert {"a", "b", "y"} <= run_y(config=config) and "ab" not in run_y(config=config)
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    assert {"a", "b", "ab"} <= run_y(config=config)


TWO_DEVICES = text_format.Parse(
    """
node { name: "x" op: "Placeholder" device: "/device:CPU:0"
       attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "shape" op: "Const" device: "/device:CPU:0"
       attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } }
                                             int_val: 5 } } } }
node { name: "r" op: "Reshape" input: "x" input: "shape" device: "/device:CPU:0"
       attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } }
node { name: "n" op: "Neg" input: "r" device: "/device:CPU:1"
       attr { key: "T" value { type: DT_FLOAT } } }
""",
    graph_pb2.GraphDef(),
)


def test_a_failed_step_reports_the_cause_not_the_aborted_recv_it_echoes():
    # CPU:1's _Recv of r's value is aborted by r's failure on CPU:0 (an echo); the step
    # reports r's InvalidArgument (common.errors.root_error), as TensorFlow's DirectSession.
    sess = Session(TWO_DEVICES, num_devices=2, optimize=False)
    with sess, pytest.raises(InvalidArgumentError) as failed:
        sess.run(["n:0"], {"x:0": np.zeros(3, np.float32)})
    assert failed.value.node_name == "r"


def test_a_lowered_cond_runs_only_the_fetched_outputs_as_tensorflow() -> None:
    """The in-process session prunes after lowering, as TensorFlow: the unfetched output's
    failing CheckNumerics and its side effect do not run."""
    tf = pytest.importorskip("tensorflow.compat.v1")
    from tensorflow.python.ops import cond_v2

    graph = tf.Graph()
    with graph.as_default():
        v = tf.Variable(0.0, name="v")
        x = tf.constant([1.0, 2.0])

        def then():
            return x * 2.0, tf.debugging.check_numerics(x / 0.0, "boom"), v.assign_add(1.0)

        a, _, _ = cond_v2.cond_v2(tf.constant(True), then, lambda: (x * 3.0, x, v.read_value()))
        read = v.read_value()
    with Session(graph.as_graph_def().SerializeToString()) as sess:
        sess.run([], targets=[v.initializer.name])
        np.testing.assert_array_equal(sess.run([a.name])[0], [2.0, 4.0])
        assert sess.run([read.name])[0] == 0.0
