"""The TF1 probe's machinery: verdicts for an equal, a differing and a failing case, and
a handful of real cases run through both modules."""

from __future__ import annotations

import pytest

import client
from tools import tf1_probe
from tools.tf1_probe_cases import CASES

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1


def _equal(tf):
    return tf.reduce_sum(tf.constant([1.0, 2.0]))


def _differs(tf):
    # Our client gets 1 more than TensorFlow: a differing case by construction.
    return tf.constant(2 if tf is client else 1)


def _fails(tf):
    if tf is client:
        return tf.no_such_call()
    return tf.constant(1)


def _oracle_fails(tf):
    return tf.no_such_call()


def test_verdicts_and_totals() -> None:
    cases = [("eq", _equal), ("diff", _differs), ("fail", _fails), ("bad", _oracle_fails)]
    report = tf1_probe.probe(cases, tf1, client)
    res = report["results"]
    assert res["eq"] == "equal"
    assert res["diff"] == "differs"
    assert res["fail"].startswith("fails: AttributeError")
    assert res["bad"].startswith("oracle fails: AttributeError")
    assert report["totals"] == {"equal": 1, "differs": 1, "fails": 1, "oracle fails": 1, "total": 4}


def test_same_compares_structures() -> None:
    assert tf1_probe.same([1, (2.0, b"a")], [1, (2.0 + 1e-9, b"a")])
    assert not tf1_probe.same([1, 2], [1, 2, 3])
    assert not tf1_probe.same([1], [2])
    assert not tf1_probe.same([1.0], [1.1])


@pytest.mark.parametrize(
    "name", ["matmul_transpose", "cond_basic", "while_loop_sum", "data_map_filter_repeat"]
)
def test_real_cases_are_equal(name: str) -> None:
    build = dict(CASES)[name]
    assert (
        tf1_probe.verdict(
            lambda: tf1_probe.run_case(client, build), lambda: tf1_probe.run_case(tf1, build)
        )
        == "equal"
    )


def test_cases_have_unique_names() -> None:
    names = [n for n, _ in CASES]
    assert len(names) == len(set(names)) >= 120
