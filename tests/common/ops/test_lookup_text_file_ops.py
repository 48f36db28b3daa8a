"""Tests (ops stage): InitializeTableFromTextFileV2 — its OpDef, and vocabulary files read
into a HashTable by TensorFlow and by our session: the same lookups, the same errors."""

from __future__ import annotations

import os

import numpy as np
import pytest

from common.errors import OpError
from common.session import Session
from tests.common.ops.signatures import assert_signature_matches_tensorflow

VOCAB = "apple\t3\t1.5\nbanana\t7\t2.5\ncherry\t-1\t0.25\n"


def test_signature_matches_tensorflow() -> None:
    assert_signature_matches_tensorflow("InitializeTableFromTextFileV2")


def _cases(tf, tmp: str) -> dict:
    def write(name: str, text: str) -> str:
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    ok = write("v.txt", VOCAB)
    s, i64, i32, f32 = tf.string, tf.int64, tf.int32, tf.float32
    return {
        "whole_line_to_line_number": (s, i64, -2, -1, -1, 0, ok, [b"apple\t3\t1.5", b"zz"]),
        "int32_column_gets_offset": (s, i32, 0, 1, -1, 10, ok, [b"banana", b"zz"]),
        "float_column": (s, f32, 0, 2, -1, 0, ok, [b"cherry", b"apple"]),
        "line_number_keys_with_offset": (i64, s, -1, 0, -1, 5, ok, [5, 6, 7, 0]),
        "vocab_size_cuts": (s, i64, 0, -1, 2, 0, ok, [b"cherry", b"banana"]),
        "vocab_size_too_big": (s, i64, 0, -1, 9, 0, ok, [b"cherry"]),
        "not_an_int": (s, i64, 1, 0, -1, 0, ok, [b"x"]),
        "too_few_columns": (s, i64, 5, -1, -1, 0, ok, [b"x"]),
        "empty_line": (s, i64, -2, -1, -1, 0, write("e.txt", "a\n\nb\n"), [b"x"]),
        "missing_file": (s, i64, -2, -1, -1, 0, os.path.join(tmp, "nope.txt"), [b"x"]),
        "duplicate_key": (s, i64, 0, -1, -1, 0, write("d.txt", "a\nb\na\n"), [b"a"]),
        "line_number_needs_int64": (s, i64, -1, -1, -1, 0, ok, [b"a"]),
    }


CASE_NAMES = [
    "whole_line_to_line_number", "int32_column_gets_offset", "float_column",
    "line_number_keys_with_offset", "vocab_size_cuts", "vocab_size_too_big", "not_an_int",
    "too_few_columns", "empty_line", "missing_file", "duplicate_key",
    "line_number_needs_int64",
]  # fmt: skip


@pytest.mark.parametrize("case", CASE_NAMES)
def test_vocabulary_file_matches_tensorflow(case: str, tmp_path) -> None:
    tf = pytest.importorskip("tensorflow.compat.v1")
    from tensorflow.python.ops import gen_lookup_ops as gen

    kd, vd, ki, vi, size, offset, path, query = _cases(tf, str(tmp_path))[case]
    g = tf.Graph()
    with g.as_default():
        t = gen.hash_table_v2(key_dtype=kd, value_dtype=vd, shared_name="t")
        init = gen.initialize_table_from_text_file_v2(
            t, path, ki, vi, vocab_size=size, offset=offset, name="init"
        )
        default = {tf.string: "?", tf.int64: -9, tf.int32: -9, tf.float32: -9.0}[vd]
        find = gen.lookup_table_find_v2(t, tf.constant(query, kd), tf.constant(default, vd))
    with tf.Session(graph=g) as sess:
        try:
            sess.run(init)
            theirs: object = sess.run(find)
        except tf.errors.OpError as e:
            lines = [ln for ln in e.message.split("\n") if ln.strip() and "[[" not in ln]
            theirs = (type(e).__name__, lines[-1])
    with Session(g.as_graph_def().SerializeToString()) as sess:
        try:
            sess.run([], targets=[init.name])
            ours: object = sess.run([find.name])[0]
        except OpError as e:
            ours = (type(e).__name__, e.message.split("\n")[0])
            assert e.node_name == init.name
    if isinstance(theirs, tuple):
        assert ours == theirs
    else:
        assert isinstance(ours, np.ndarray) and ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


def test_a_second_initialization_is_ignored(tmp_path) -> None:
    tf = pytest.importorskip("tensorflow.compat.v1")
    from tensorflow.python.ops import gen_lookup_ops as gen

    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("x\ny\n")
    b.write_text("p\nq\nr\n")
    g = tf.Graph()
    with g.as_default():
        t = gen.hash_table_v2(key_dtype=tf.string, value_dtype=tf.int64, shared_name="t")
        first = gen.initialize_table_from_text_file_v2(t, str(a), -2, -1, name="first")
        second = gen.initialize_table_from_text_file_v2(t, str(b), -2, -1, name="second")
        size = gen.lookup_table_size_v2(t)
    with Session(g.as_graph_def().SerializeToString()) as sess:
        sess.run([], targets=[first.name])
        sess.run([], targets=[second.name])
        assert sess.run([size.name])[0] == 2
