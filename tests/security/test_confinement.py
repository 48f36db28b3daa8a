"""Confinement through real processes: with --file-root every op that touches files stays
under the root (PermissionDenied naming the path otherwise); with --deny-ops safe a graph
using such an op is refused at registration with PermissionDenied naming op and node."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import client as tf
from deploy.launcher import LocalCluster

from .conftest import stop_cluster


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("root")


@pytest.fixture(scope="module")
def confined(root: Path) -> Iterator[LocalCluster]:
    flags = ["--file-root", str(root)]
    cluster = LocalCluster(jobs={"worker": 1}, master_args=flags, worker_args=flags).start()
    try:
        yield cluster
    finally:
        stop_cluster(cluster)


def test_files_stay_under_the_root(confined: LocalCluster, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            inside = tf.write_file("notes/ok.txt", "hello")
            escape = tf.write_file(str(outside), "pwned")
            dotdot = tf.write_file("../../etc-flowrt-test", "pwned")
            read = tf.read_file("notes/ok.txt")
            listed = tf.matching_files("notes/*")
            listed_outside = tf.matching_files(str(root.parent / "*"))
        with tf.Session(confined.target) as sess:
            sess.run(inside)
            assert (root / "notes" / "ok.txt").read_text() == "hello"
            assert sess.run(read) == b"hello"
            for op, shown in (
                (escape, str(outside)),
                (dotdot, "../../etc-flowrt-test"),
                (listed_outside, str(root.parent)),
            ):
                with pytest.raises(tf.errors.PermissionDeniedError) as info:
                    sess.run(op)
                assert shown in info.value.message and "--file-root" in info.value.message
            assert sess.run(listed).tolist() == [str(root / "notes" / "ok.txt").encode()]
    assert not outside.exists()


def test_a_checkpoint_outside_the_root_is_refused(
    confined: LocalCluster, root: Path, tmp_path: Path
) -> None:
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            v = tf.Variable(np.ones(3, np.float32), name="v")
        saver = tf.train.Saver([v])
        with tf.Session(confined.target) as sess:
            sess.run(v.initializer)
            saver.save(sess, str(root / "ckpt" / "model"))
            assert (root / "ckpt" / "model.index").exists()
            with pytest.raises(tf.errors.PermissionDeniedError):
                saver.save(sess, str(tmp_path / "model"))
            for f in (root / "ckpt").glob("model.*"):  # a real checkpoint, outside the root
                shutil.copy(f, tmp_path / f.name)
            with pytest.raises(tf.errors.PermissionDeniedError):
                saver.restore(sess, str(tmp_path / "model"))


def test_deny_ops_safe_refuses_file_ops_at_registration() -> None:
    cluster = LocalCluster(
        jobs={"worker": 1},
        master_args=["--deny-ops", "safe"],
        worker_args=["--deny-ops", "safe"],
    ).start()
    try:
        with tf.Graph().as_default():
            op = tf.write_file("x.txt", "hello", name="writer")
            with tf.Session(cluster.target) as sess:
                with pytest.raises(tf.errors.PermissionDeniedError) as info:
                    sess.run(op)
                assert "Op WriteFile (node writer)" in info.value.message
        with tf.Graph().as_default(), tf.Session(cluster.target) as sess:
            assert sess.run(tf.constant(2.0)) == 2.0
    finally:
        stop_cluster(cluster)


def test_a_graph_over_the_node_limit_is_resource_exhausted() -> None:
    cluster = LocalCluster(jobs={"worker": 1}, master_args=["--max-graph-nodes", "10"]).start()
    try:
        with tf.Graph().as_default():
            total = tf.add_n([tf.constant(float(i)) for i in range(20)])
            with (
                tf.Session(cluster.target) as sess,
                pytest.raises(tf.errors.ResourceExhaustedError) as info,
            ):
                sess.run(total)
            assert "21 nodes" in info.value.message and "--max-graph-nodes" in info.value.message
    finally:
        stop_cluster(cluster)
