"""TF1's string ops, tf.unique / unique_with_counts / setdiff1d against
tensorflow.compat.v1: TF's nodes (graph_diff) and TF's values."""

from __future__ import annotations

import numpy as np

from tests.client.test_graph_sweep import build_both, graph_diff
from tests.client.tf1_oracle import assert_close, run_both

WORDS = np.array([b"hello world", b"  a  b ", b"tf1"], dtype=object)


def _strings(api):
    s = api.placeholder(api.string, [3], name="s")
    n = api.placeholder(api.float32, [2], name="n")
    sp = api.string_split(s)
    sp2 = api.strings.split(s, sep=" ", maxsplit=1)
    return s, n, [
        api.string_join([s, s], separator="-"),
        api.strings.join([s, "!"]),
        api.substr(s, 1, 3),
        api.strings.substr(s, 0, 2),
        api.as_string(n, precision=2),
        api.as_string(api.constant([3, 40]), width=4, fill="0"),
        api.string_to_number(api.constant(["1.5", "-2"])),
        api.strings.to_number(api.constant(["7", "8"]), out_type=api.int64),
        api.string_to_hash_bucket_fast(s, 10),
        api.strings.to_hash_bucket_strong(s, 100, [1, 2]),
        api.regex_replace(s, "l+", "L"),
        api.strings.regex_replace(s, api.constant("o"), api.constant("0"), replace_global=False),
        api.strings.regex_full_match(s, "t.*"),
        api.strings.length(s),
        api.strings.strip(s),
        sp.indices, sp.values, sp.dense_shape,
        sp2.indices, sp2.values, sp2.dense_shape,
    ]  # fmt: skip


def test_string_ops_build_tensorflows_nodes():
    ours, theirs = build_both(lambda api: _strings(api))
    assert graph_diff(ours, theirs) == []


def test_string_ops_values_match_tensorflow():
    def build(api):
        s, n, outs = _strings(api)
        return lambda sess: sess.run(outs, {s: WORDS, n: [1.234, -5.0]})

    ours, theirs, _, _ = run_both(build)
    assert_close(ours, theirs)
    assert list(ours[16]) == [b"hello", b"world", b"a", b"b", b"tf1"]


def test_unique_and_setdiff1d_match_tensorflow():
    def build(api):
        x = api.placeholder(api.int32, [None], name="x")
        u = api.unique(x)
        c = api.unique_with_counts(x, out_idx=api.int64)
        d = api.setdiff1d(x, api.constant([2, 9]))
        fetch = [u.y, u.idx, c.y, c.idx, c.count, d.out, d.idx, list(u), list(d)]
        return lambda sess: sess.run(fetch, {x: [4, 2, 4, 7, 2, 2]})

    ours, theirs, names, tf_names = run_both(build)
    assert_close(ours, theirs)
    assert names == tf_names
    assert list(ours[4]) == [2, 3, 1]
