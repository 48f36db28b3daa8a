"""Client graph building, swept API by API against tensorflow.compat.v1: every case in
graph_sweep_cases builds one small program with both clients, and the GraphDefs must agree
node for node, in order: name, op, inputs (in order, control inputs included) and the
attributes that fix what a node computes (dtype/T/shape-like attrs, and Const values).

A difference we choose not to mirror is listed in KNOWN_DIFFERENCES with its reason; such
a case is a strict xfail, so it fails as soon as it starts matching."""

from __future__ import annotations

import difflib
import os

import numpy as np
import pytest

import client
from tests.client import graph_sweep_cases as cases

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

# Attributes compared when either node has them. Others (_class, data_format defaults,
# seeds drawn at random) are either covered by the node's name and op or are TF defaults
# that do not change the value.
KEY_ATTRS = (
    "dtype",
    "T",
    "Tidx",
    "Tshape",
    "Tindices",
    "Tparams",
    "Taxis",
    "Tpaddings",
    "Tmultiples",
    "Tperm",
    "Index",
    "SrcT",
    "DstT",
    "out_type",
    "output_type",
    "shape",
    "N",
    "axis",
    "keep_dims",
    "transpose_a",
    "transpose_b",
    "adj_x",
    "adj_y",
    "strides",
    "ksize",
    "padding",
    "begin_mask",
    "end_mask",
    "ellipsis_mask",
    "new_axis_mask",
    "shrink_axis_mask",
    "squeeze_dims",
    "exclusive",
    "reverse",
    "is_training",
    "epsilon",
    "alpha",
    "num_split",
    "seq_dim",
    "batch_dim",
    "align_corners",
    "half_pixel_centers",
    "container",
    "shared_name",
    "element_shape",
    "dynamic_size",
    "clear_after_read",
    "identical_element_shapes",
    "frame_name",
    "is_constant",
    "parallel_iterations",
    "validate_shape",
    "use_locking",
)


def _attr_text(key, value) -> str:
    if key == "value":
        proto = tf_real.make_tensor_proto(0)
        proto.ParseFromString(value.tensor.SerializeToString())
        arr = tf_real.make_ndarray(proto)
        return f"value={arr.dtype}{list(arr.shape)}:{np.array2string(arr.ravel()[:12])}"
    return f"{key}={str(value).strip().replace(chr(10), ' ')}"


def _node_line(node) -> str:
    attrs = [
        _attr_text(k, node.attr[k])
        for k in sorted(node.attr)
        if k in KEY_ATTRS or (k == "value" and node.op == "Const")
    ]
    return f"{node.name} = {node.op}({', '.join(node.input)}) {' '.join(attrs)}"


def graph_diff(ours, theirs) -> list[str]:
    """A unified diff of the two GraphDefs' node lines (ours first); empty when equal."""
    a = [_node_line(n) for n in ours.node]
    b = [_node_line(n) for n in theirs.node]
    return list(difflib.unified_diff(a, b, "client", "tensorflow", n=1, lineterm=""))[2:]


def build_both(build):
    """The GraphDefs `build` makes with client and with tf.compat.v1, each in a fresh graph."""
    g = client.Graph()
    with g.as_default():
        build(client)
    t = tf_real.Graph()
    with t.as_default():
        build(tf1)
    return g.as_graph_def(), t.as_graph_def()


# Case name -> why the client's graph differs from TensorFlow's on purpose.
KNOWN_DIFFERENCES: dict[str, str] = {}


def _params(table):
    return [
        pytest.param(
            build,
            id=name,
            marks=[pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENCES[name])]
            if name in KNOWN_DIFFERENCES
            else [],
        )
        for name, build in table.items()
    ]


@pytest.mark.parametrize("build", _params(cases.GRADIENT_CASES))
def test_gradient_graph_matches_tf(build):
    ours, theirs = build_both(build)
    assert graph_diff(ours, theirs) == []
