"""Client, tf.einsum of three or more operands against TensorFlow 2.21's compat.v1: the same
chain of pairwise Einsum ops (node names, inputs in order, equations) along opt_einsum's
contraction path for each `optimize`, the same static shapes, values and gradients with
unknown shapes fed (those of constants are in test_scatter_einsum's table), and the same
errors (TensorFlow's messages) for bad equations, shapes and `optimize`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import client
from tests.client.tf1_oracle import assert_close, run_both

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1

RNG = np.random.default_rng(5)
REPO_ROOT = Path(__file__).resolve().parents[2]

# name -> (equation, operand shapes; a None shape is a placeholder of unknown rank)
GRAPHS = {
    "chain": ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    "implicit_four": ("ij,jk,kl,lm", [(2, 3), (3, 4), (4, 5), (5, 6)]),
    "unknown_dims": ("ij,jk,kl->il", [(None, 3), (3, None), (4, 5)]),
    "unknown_rank": ("ij,jk,kl->il", [None, (3, 4), (4, 5)]),
    "ellipsis": ("...ij,jk,...kl->...il", [(7, 2, 3), (3, 4), (7, 4, 5)]),
    "ellipsis_broadcast": ("...ij,jk,...kl->...il", [(1, 6, 2, 3), (3, 4), (7, 1, 4, 5)]),
    "ellipsis_unknown_rank": ("...ij,jk,kl->...il", [None, (3, 4), (4, 5)]),
    "spaces": ("ab, bc, cd -> ad", [(2, 3), (3, 4), (4, 5)]),
    "outer_and_trace": ("ii,j,k->jk", [(3, 3), (2,), (4,)]),
    "uneven": ("ab,bc,cd,de->ae", [(2, 30), (30, 4), (4, 50), (50, 3)]),
}
OPTIMIZE = ["greedy", "optimal", "branch-2", "branch-all", "auto", "dp", ((1, 2), (0, 2), (0, 1))]


def _placeholders(api, shapes):
    return [
        api.placeholder(api.float32, None if s is None else list(s), name=f"x{i}")
        for i, s in enumerate(shapes)
    ]


def _nodes(api, build):
    g = api.Graph()
    with g.as_default():
        out = build(api)
    nodes = [
        (n.name, n.op, list(n.input), n.attr["equation"].s if n.op == "Einsum" else b"")
        for n in g.as_graph_def().node
    ]
    return nodes, out.shape.as_list() if out.shape.ndims is not None else None


def _assert_same_graph(build):
    ours, theirs = _nodes(client, build), _nodes(tf1, build)
    assert ours == theirs
    return ours[0]


@pytest.mark.parametrize("case", sorted(GRAPHS))
def test_einsum_chain_graph_and_shape_match_tensorflow(case):
    equation, shapes = GRAPHS[case]
    nodes = _assert_same_graph(lambda api: api.einsum(equation, *_placeholders(api, shapes)))
    assert sum(op == "Einsum" for _, op, _, _ in nodes) == len(shapes) - 1


@pytest.mark.parametrize("optimize", OPTIMIZE, ids=str)
def test_einsum_optimize_picks_tensorflows_path(optimize):
    equation, shapes = GRAPHS["uneven"]
    _assert_same_graph(
        lambda api: api.einsum(equation, *_placeholders(api, shapes), optimize=optimize)
    )


def test_numpy_operands_are_converted_by_the_einsum_that_takes_them():
    arrays = [RNG.standard_normal(s).astype(np.float32) for s in [(2, 3), (3, 4), (4, 5)]]
    nodes = _assert_same_graph(lambda api: api.einsum("ij,jk,kl->il", *arrays, name="E"))
    assert nodes[0][0] == "E/Einsum/inputs_0"


def test_einsum_chain_with_fed_unknown_shapes_matches_tensorflow():
    values = [RNG.standard_normal(s).astype(np.float32) for s in [(2, 3), (3, 4), (4, 5)]]

    def build(api):
        xs = _placeholders(api, [None, (None, 4), (4, None)])
        y = api.einsum("ij,jk,kl->il", *xs)
        grads = api.gradients(y, xs)
        return lambda sess: sess.run([y, *grads], dict(zip(xs, values)))

    ours, theirs, names, tf_names = run_both(build)
    assert names == tf_names
    assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


def _error(api, build):
    with api.Graph().as_default(), pytest.raises(Exception) as info:
        build(api)
    return type(info.value), str(info.value)


# name -> (equation, operand shapes, keyword arguments)
ERRORS = {
    "too_many_ellipses": ("...i...,ij,jk->k", [(2, 3, 4), (3, 4), (4, 5)], {}),
    "labels_vs_rank": ("ijk,jk,kl->il", [(2, 3), (3, 4), (4, 5)], {}),
    "labels_vs_rank_ellipsis": ("...ijk,jk,kl->il", [(2, 3), (3, 4), (4, 5)], {}),
    "dims_differ": ("ij,jk,kl->il", [(2, 3), (5, 4), (4, 5)], {}),
    "operand_count": ("ij,jk,kl->il", [(2, 3), (3, 4)], {}),
    "bad_optimize": ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], {"optimize": "fastest"}),
    "path_as_list": ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], {"optimize": [(0, 1), (0, 1)]}),
    "bad_keyword": ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], {"greedy": True}),
    "rank_two_operands": ("ij,jk->ik", [(2, 3, 4), (3, 4)], {}),
    "rank_at_least": ("...ijk,jk->ik", [(2, 3), (3, 4)], {}),
    "batch_without_output_ellipsis": ("...ij,jk->ik", [(5, 2, 3), (3, 4)], {}),
    "batch_not_broadcastable": ("...ij,...jk->...ik", [(5, 2, 3), (6, 3, 4)], {}),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_einsum_errors_match_tensorflow(case):
    equation, shapes, kwargs = ERRORS[case]

    def build(api):
        api.einsum(equation, *_placeholders(api, shapes), **kwargs)

    assert _error(client, build) == _error(tf1, build)


def test_client_imports_and_contracts_two_operands_without_opt_einsum():
    """opt_einsum is imported only where three or more operands need it."""
    code = (
        "import sys; sys.modules['opt_einsum'] = None\n"
        "import client\n"
        "with client.Graph().as_default():\n"
        "    x = client.placeholder(client.float32, [2, 3])\n"
        "    client.einsum('ij,kj->ik', x, x)\n"
        "    try:\n"
        "        client.einsum('ij,jk,kl->il', x, client.transpose(x), x)\n"
        "    except ImportError:\n"
        "        print('three need opt_einsum')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "three need opt_einsum"
