"""The whole-program probe's runner: verdicts per program per client, cluster-only
programs skipped locally, and a few real programs equal to TensorFlow's output."""

from __future__ import annotations

import os

import pytest

import client
from tools import tf1_programs
from tools.tf1_programs_third import CLUSTER_ONLY, PROGRAMS

tf_real = pytest.importorskip("tensorflow")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
tf1 = tf_real.compat.v1


def _local_oracle(name, prog):
    return tf1_programs.run_program(tf1, prog)


def _prints_sum(tf, target):
    with tf.Graph().as_default(), tf.Session(target) as sess:
        return sess.run(tf.reduce_sum(tf.constant([1.0, 2.0])))


def _fails_on_ours(tf, target):
    with tf.Graph().as_default(), tf.Session(target) as sess:
        return sess.run(tf.no_such_call() if tf is client else tf.constant(1))


def test_measure_reports_verdicts_and_totals() -> None:
    programs = [("sum", _prints_sum), ("gap", _fails_on_ours)]
    report = tf1_programs.measure(programs, _local_oracle, {"ours": (client, "")})
    assert report["results"]["sum"] == {"ours": "equal"}
    assert report["results"]["gap"]["ours"].startswith("fails: AttributeError")
    totals = report["totals"]["ours"]
    assert (totals["equal"], totals["fails"], totals["total"]) == (1, 1, 2)


def test_cluster_only_programs_skip_locally() -> None:
    name = sorted(CLUSTER_ONLY)[0]
    report = tf1_programs.measure(
        [(name, dict(PROGRAMS)[name])], _local_oracle, {"ours": (client, "")}
    )
    assert report["results"][name]["ours"].startswith("skipped")


def test_programs_have_unique_names() -> None:
    names = [n for n, _ in PROGRAMS]
    assert len(names) == len(set(names)) >= 47


@pytest.mark.parametrize(
    "name",
    [
        "kmeans_plain_ops",
        "lr_decay_schedules",
        "tfrecord_pipeline",
        "sparse_linear_model",
        "second_order_gradients",
        "hooks_checkpoint_summaries",
    ],
)
def test_real_programs_are_equal(name: str) -> None:
    report = tf1_programs.measure(
        [(name, dict(PROGRAMS)[name])], _local_oracle, {"ours": (client, "")}
    )
    assert report["results"][name] == {"ours": "equal"}
