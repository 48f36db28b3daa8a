"""Oracle helper: a graph built with tensorflow.compat.v1 run by TensorFlow's session and by
our in-process Session on the same GraphDef; fetched values returned side by side."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from common.errors import OutOfRangeError
from common.session import Session


def run_both(build: Callable[[Any], list], steps: int = 1) -> tuple[list, list]:
    """`build(tf)` returns fetches; each side runs them `steps` times (a list per step)."""
    tf = pytest.importorskip("tensorflow.compat.v1")
    graph = tf.Graph()
    with graph.as_default():
        fetches = build(tf)
    names = [f.name for f in fetches]
    theirs, ours = [], []
    with tf.Session(graph=graph) as sess:
        for _ in range(steps):
            theirs.append(sess.run(fetches))
    with Session(graph.as_graph_def().SerializeToString()) as sess:
        for _ in range(steps):
            ours.append(sess.run(names, {}))
    return theirs, ours


def drain_both(build: Callable[[Any], list], limit: int = 1000) -> tuple[list, list]:
    """Runs the fetches until OutOfRange on each side: the elements seen, per side."""
    tf = pytest.importorskip("tensorflow.compat.v1")
    graph = tf.Graph()
    with graph.as_default():
        fetches = build(tf)
    names = [f.name for f in fetches]
    theirs: list = []
    ours: list = []
    with tf.Session(graph=graph) as sess:
        try:
            while len(theirs) < limit:
                theirs.append(sess.run(fetches))
        except tf.errors.OutOfRangeError:
            pass
    with Session(graph.as_graph_def().SerializeToString()) as sess:
        try:
            while len(ours) < limit:
                ours.append(sess.run(names, {}))
        except OutOfRangeError:
            pass
    return theirs, ours


def assert_values_equal(ours: Any, theirs: Any) -> None:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    if theirs.dtype == object or theirs.dtype.kind == "S":
        assert [bytes(x) for x in ours.reshape(-1)] == [bytes(x) for x in theirs.reshape(-1)]
    else:
        assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
        np.testing.assert_array_equal(ours, theirs)
