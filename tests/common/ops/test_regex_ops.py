"""Regex ops on RE2 semantics (common.ops.regex): TensorFlow's raw ops are the oracle,
output for output and error code for error code, on cases where Python's `re` differs
(empty matches after a match, UTF-8 characters, RE2-only syntax, backreferences), and a
pattern that is exponential for a backtracking engine."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import InvalidArgumentError

from . import run_kernel, run_tf


def S(*values: str | bytes) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = [v.encode() if isinstance(v, str) else v for v in values]
    return out


def B(value: str) -> np.ndarray:
    return np.array(value.encode(), dtype=object)


TEXTS = S("abxd", "", "xx", "héllo wörld", "aaa", "a1b22c333", b"\xff\xfex", "naïve café")
REPLACE = [
    ("x*", "-"),
    ("", "-"),
    (".", "<\\0>"),
    ("(a)|b", "[\\1]"),
    ("\\d+", "#"),
    ("\\pL+", "W"),
    ("(?i)A", "\\\\"),
    ("(\\w)(\\w)?", "\\2\\1"),
    ("\\C", "."),
    ("[[:alpha:]]+", "_"),
    ("(?P<name>o)", "0"),
    ("\\b", "|"),
]
BAD = [
    ("(a)\\1", "x"),  # backreferences: not RE2
    ("a++", "x"),  # possessive: not RE2
    ("(", "x"),
    ("(a)", "\\2"),  # rewrite asks for a group the pattern lacks
    ("a", "\\x"),  # bad rewrite escape
    ("a", "x\\"),
    ("(?=a)", "x"),  # lookahead: not RE2
]


def _compare(op: str, inputs: list, **attrs) -> None:  # type: ignore[no-untyped-def]
    tf = pytest.importorskip("tensorflow")
    try:
        theirs = run_tf(op, inputs, **attrs)
    except tf.errors.OpError as e:
        assert type(e).__name__ == "InvalidArgumentError", e
        with pytest.raises(InvalidArgumentError):
            run_kernel(op, inputs, **attrs)
        return
    ours = run_kernel(op, inputs, **attrs)
    assert [o.tolist() for o in ours] == [np.asarray(t, dtype=object).tolist() for t in theirs]


@pytest.mark.parametrize("replace_global", [True, False])
@pytest.mark.parametrize("pattern,rewrite", REPLACE + BAD)
def test_regex_replace_matches_tensorflow(pattern: str, rewrite: str, replace_global: bool):
    _compare("RegexReplace", [TEXTS, B(pattern), B(rewrite)], replace_global=replace_global)


@pytest.mark.parametrize("pattern,rewrite", REPLACE + BAD)
def test_static_regex_replace_matches_tensorflow(pattern: str, rewrite: str):
    _compare("StaticRegexReplace", [TEXTS], pattern=pattern, rewrite=rewrite)


@pytest.mark.parametrize("pattern", [p for p, _ in REPLACE + BAD] + ["h.llo w.rld", "\\S+ \\S+"])
def test_regex_full_match_matches_tensorflow(pattern: str):
    _compare("RegexFullMatch", [TEXTS, B(pattern)])
    _compare("StaticRegexFullMatch", [TEXTS], pattern=pattern)


def test_a_pattern_exponential_for_backtracking_is_linear():
    # `(a+)+$` against a's and a final '!': about 2**n steps for a backtracking engine
    # (n=40 would take hours), linear for RE2.
    text = S("a" * 40 + "!", "a" * 10_000)
    got = run_kernel("RegexFullMatch", [text, B("(a+)+$")])[0]
    assert got.tolist() == [False, True]
    got = run_kernel("RegexReplace", [text, B("(a+)+$"), B("x")])[0]
    assert got.tolist() == [b"a" * 40 + b"!", b"x"]
