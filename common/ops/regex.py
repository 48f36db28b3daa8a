"""Ops, regular expressions on RE2 (the library TensorFlow's regex kernels use): matching
in time linear in the input, whatever the pattern (Python's backtracking `re` takes
exponential time on patterns like `(a+)+$`).

`compile_pattern` compiles a bytes pattern with RE2's default options (UTF-8), as
TensorFlow's kernels do; `replace` is RE2::Replace / RE2::GlobalReplace with RE2's
rewrite syntax (\\0-\\9 and \\\\), including GlobalReplace's rule that an empty match
right after the previous match is skipped. Pure functions; compiled patterns are
immutable and safe to share between threads.
"""

from __future__ import annotations

import functools
from typing import Any

import re2

from common.errors import InvalidArgumentError

_BACKSLASH = 0x5C


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: bytes) -> Any:
    """The compiled RE2 for `pattern`; InvalidArgument (TensorFlow's message) if bad."""
    try:
        return re2.compile(pattern)
    except re2.error as e:
        raise InvalidArgumentError(
            f"Invalid pattern: {pattern.decode('utf-8', 'replace')}, error: {e}"
        ) from None


def _max_submatch(rewrite: bytes) -> int:
    """RE2::MaxSubmatch: the largest \\digit group the rewrite names (0 if none)."""
    best = 0
    i = 0
    while i < len(rewrite):
        if rewrite[i] == _BACKSLASH:
            i += 1
            if i < len(rewrite) and 0x30 <= rewrite[i] <= 0x39:
                best = max(best, rewrite[i] - 0x30)
        i += 1
    return best


def _rewrite(out: bytearray, rewrite: bytes, match: Any) -> bool:
    """RE2::Rewrite: appends to `out` up to a bad escape; False if it met one."""
    i = 0
    while i < len(rewrite):
        c = rewrite[i]
        i += 1
        if c != _BACKSLASH:
            out.append(c)
            continue
        nxt = rewrite[i] if i < len(rewrite) else -1
        i += 1
        if 0x30 <= nxt <= 0x39:
            out += match.group(nxt - 0x30) or b""
        elif nxt == _BACKSLASH:
            out.append(_BACKSLASH)
        else:
            return False
    return True


def _utf8_length(text: bytes, pos: int) -> int:
    """Bytes of the UTF-8 character at `pos` (1 for an invalid or truncated one)."""
    lead = text[pos]
    if lead >> 5 == 0b110:
        n = 2
    elif lead >> 4 == 0b1110:
        n = 3
    elif lead >> 3 == 0b11110:
        n = 4
    else:
        return 1
    if pos + n > len(text) or any(b >> 6 != 2 for b in text[pos + 1 : pos + n]):
        return 1
    return n


def replace(regex: Any, text: bytes, rewrite: bytes, replace_global: bool) -> bytes:
    """`text` with the first (or every) match of `regex` replaced by `rewrite`. As in
    RE2, a rewrite naming a group the pattern lacks replaces nothing, and a bad escape
    (\\x) ends the rewrite text: Replace then leaves `text` as it is, GlobalReplace
    keeps the part before it (TensorFlow reports neither)."""
    if _max_submatch(rewrite) > regex.groups:
        return text
    out = bytearray()
    pos = 0
    last_end = -1
    count = 0
    while pos <= len(text):
        match = regex.search(text, pos)
        if match is None:
            break
        start, end = match.span()
        out += text[pos:start]
        if start == end and start == last_end:
            # GlobalReplace: no empty match where the last match ended; step one character.
            step = _utf8_length(text, pos) if pos < len(text) else 1
            out += text[pos : pos + step]
            pos += step
            continue
        if not _rewrite(out, rewrite, match) and not replace_global:
            return text
        pos = last_end = end
        count += 1
        if not replace_global:
            break
    if count == 0:
        return text
    out += text[pos:]
    return bytes(out)


def full_match(regex: Any, text: bytes) -> bool:
    return regex.fullmatch(text) is not None
