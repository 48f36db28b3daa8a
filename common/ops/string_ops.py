"""Ops (executor stage): string ops (TensorFlow's string_ops.cc family): StringJoin,
ReduceJoin, StringLength, Substr, StringUpper/Lower, StringStrip, StringSplit(V2),
AsString, StringToNumber, RegexReplace, StaticRegexReplace, RegexFullMatch,
StaticRegexFullMatch.

String tensors are object arrays of `bytes` (DESIGN.md). Kernels are stateless and safe
from any thread; errors carry TensorFlow's messages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from common import dtypes
from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops import regex as regex_lib
from common.ops.registry import KernelConstruction, register_kernel, register_op

_AS_STRING_T = (
    "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64, "
    "complex64, complex128, bool, variant, string}"
)


def strings(x) -> np.ndarray:
    """`x` as an object array of bytes."""
    a = np.asarray(x, dtype=object)
    return a


def _map(fn: Callable[[bytes], object], x: np.ndarray, dtype=object) -> np.ndarray:
    flat = [fn(v) for v in x.reshape(-1)]
    return np.array(flat, dtype=dtype).reshape(x.shape) if flat else np.zeros(x.shape, dtype)


def _bytes_array(values: Sequence[bytes], shape: tuple) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out.reshape(shape)


# ---------------------------------------------------------------------------------------
# Joins
# ---------------------------------------------------------------------------------------


def _string_join(kc: KernelConstruction) -> Callable:
    sep = kc.attrs.get("separator", "").encode()

    def compute(ctx, inputs: list) -> list:
        xs = [strings(x) for x in inputs]
        shape: tuple | None = None
        for x in xs:
            if x.ndim == 0:
                continue
            if shape is None:
                shape = x.shape
            elif x.shape != shape:
                raise InvalidArgumentError(
                    f"Input shapes do not match: {mu.shape_str(shape)} vs. {mu.shape_str(x.shape)}"
                )
        shape = shape or ()
        cols = [np.broadcast_to(x, shape).reshape(-1) for x in xs]
        n = int(np.prod(shape))
        return [_bytes_array([sep.join(c[i] for c in cols) for i in range(n)], shape)]

    return compute


def _reduce_join(kc: KernelConstruction) -> Callable:
    sep, keep = kc.attrs.get("separator", "").encode(), bool(kc.attrs.get("keep_dims", False))

    def compute(ctx, inputs: list) -> list:
        x = strings(inputs[0])
        axes: list[int] = []
        for a in np.asarray(inputs[1]).reshape(-1).tolist():
            if a < -x.ndim or a >= x.ndim:
                raise InvalidArgumentError(
                    f"Invalid reduction dimension {a} for input with {x.ndim} dimensions"
                )
            a %= x.ndim
            if a in axes:
                raise InvalidArgumentError(f"Duplicate reduction dimension {a}")
            axes.append(a)
        kept = [d for d in range(x.ndim) if d not in axes]
        # The first listed axis varies fastest in the joined order.
        t = np.transpose(x, kept + axes[::-1])
        out_shape = tuple(x.shape[d] for d in kept)
        n_out = int(np.prod(out_shape))
        flat = t.reshape(n_out, int(np.prod([x.shape[d] for d in axes])))
        joined = [sep.join(row) for row in flat]
        y = _bytes_array(joined, out_shape)
        if keep:
            y = y.reshape(tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)))
        return [y]

    return compute


# ---------------------------------------------------------------------------------------
# Per-element transforms
# ---------------------------------------------------------------------------------------


def _utf8(s: bytes) -> str:
    try:
        return s.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidArgumentError(f"Invalid UTF8 encoding in string: {s!r}") from None


def _string_length(kc: KernelConstruction) -> Callable:
    chars = kc.attrs.get("unit", "BYTE") == "UTF8_CHAR"

    def length(s: bytes) -> int:
        # UTF8_CHAR counts the bytes that are not continuation bytes, as TF does.
        return sum(1 for b in s if (b & 0xC0) != 0x80) if chars else len(s)

    def compute(ctx, inputs: list) -> list:
        return [_map(length, strings(inputs[0]), np.int32)]

    return compute


def _substr(kc: KernelConstruction) -> Callable:
    chars = kc.attrs.get("unit", "BYTE") == "UTF8_CHAR"

    def compute(ctx, inputs: list) -> list:
        x = strings(inputs[0])
        pos, ln = np.asarray(inputs[1]), np.asarray(inputs[2])
        if pos.shape != ln.shape:
            raise InvalidArgumentError(
                f"pos and len should have the same shape, got: {mu.shape_str(pos.shape)} vs. "
                f"{mu.shape_str(ln.shape)}"
            )
        shape = mu.broadcast_shape(x.shape, pos.shape)
        xs = np.broadcast_to(x, shape).reshape(-1)
        ps = np.broadcast_to(pos, shape).reshape(-1)
        ls = np.broadcast_to(ln, shape).reshape(-1)
        out = []
        for i, (s, p, n) in enumerate(zip(xs, ps.tolist(), ls.tolist())):
            units: bytes | str = _utf8(s) if chars else s
            size = len(units)
            start = p + size if p < 0 else p
            if start < 0 or start > size:
                raise InvalidArgumentError(
                    f"pos {p} out of range for string b'{s.decode('latin-1')}' at index {i}"
                )
            piece = units[start : start + max(n, 0)]
            out.append(piece.encode("utf-8") if isinstance(piece, str) else piece)
        return [_bytes_array(out, shape)]

    return compute


def _case(upper: bool) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        encoding = kc.attrs.get("encoding", "")
        if encoding not in ("", "utf-8"):
            raise InvalidArgumentError(f"encoding must be '' or 'utf-8', got {encoding!r}")

        def convert(s: bytes) -> bytes:
            if encoding:  # Unicode case mapping; otherwise ASCII only, as TF
                t = _utf8(s)
                return (t.upper() if upper else t.lower()).encode("utf-8")
            return s.upper() if upper else s.lower()

        def compute(ctx, inputs: list) -> list:
            return [_map(convert, strings(inputs[0]))]

        return compute

    return factory


def _string_strip(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        return [_map(bytes.strip, strings(inputs[0]))]

    return compute


# ---------------------------------------------------------------------------------------
# Splits (sparse outputs: indices [n, 2], values [n], dense shape [2])
# ---------------------------------------------------------------------------------------


def _sparse(pieces: list[list[bytes]]) -> list:
    indices = [(i, j) for i, row in enumerate(pieces) for j in range(len(row))]
    values = [p for row in pieces for p in row]
    width = max((len(r) for r in pieces), default=0)
    return [
        np.array(indices, np.int64).reshape(-1, 2),
        _bytes_array(values, (len(values),)),
        np.array([len(pieces), width], np.int64),
    ]


def _vector_input(x: np.ndarray) -> np.ndarray:
    if x.ndim != 1:
        raise InvalidArgumentError(f"input must be a vector, got shape: {mu.shape_str(x.shape)}")
    return x


def _scalar_string(x, what: str) -> bytes:
    a = np.asarray(x, dtype=object)
    if a.ndim != 0:
        raise InvalidArgumentError(f"{what} must be a scalar, got shape: {mu.shape_str(a.shape)}")
    return a.item()


def _string_split(kc: KernelConstruction) -> Callable:
    skip_empty = bool(kc.attrs.get("skip_empty", True))

    def split(s: bytes, delims: bytes) -> list[bytes]:
        if not delims:  # split into characters (bytes)
            return [s[i : i + 1] for i in range(len(s))]
        parts = re.split(b"[" + re.escape(delims) + b"]", s)
        return [p for p in parts if p] if skip_empty else parts

    def compute(ctx, inputs: list) -> list:
        x = _vector_input(strings(inputs[0]))
        delims = _scalar_string(inputs[1], "delimiter")
        return _sparse([split(s, delims) if s or not skip_empty else [] for s in x])

    return compute


def _string_split_v2(kc: KernelConstruction) -> Callable:
    maxsplit = int(kc.attrs.get("maxsplit", -1))

    def compute(ctx, inputs: list) -> list:
        x = _vector_input(strings(inputs[0]))
        sep = _scalar_string(inputs[1], "sep")
        rows = []
        for s in x:
            rows.append(s.split(sep or None, maxsplit))
        return _sparse(rows)

    return compute


# ---------------------------------------------------------------------------------------
# Numbers <-> strings
# ---------------------------------------------------------------------------------------


def _as_string(kc: KernelConstruction) -> Callable:
    dt = dtypes.as_numpy(kc.attr("T")) if kc.attr("T") != dtypes.DataType.DT_VARIANT else None
    precision, width = int(kc.attrs.get("precision", -1)), int(kc.attrs.get("width", -1))
    scientific, shortest = bool(kc.attrs.get("scientific")), bool(kc.attrs.get("shortest"))
    fill = kc.attrs.get("fill", "")
    if scientific and shortest:
        raise InvalidArgumentError("Cannot select both scientific and shortest notation")
    if len(fill) > 1:
        raise InvalidArgumentError("Fill string must be one or fewer characters")
    kind = (
        "s"
        if dt is None or dt.kind == "O"
        else (
            "b" if dt.kind == "b" else "d" if mu.is_integer(dt) else "c" if dt.kind == "c" else "f"
        )
    )
    name = dtypes.tf_name(kc.attr("T"))
    if kind not in "fc" and (scientific or shortest or precision > -1):
        what = "scientific" if scientific else "shortest" if shortest else "precision"
        raise InvalidArgumentError(f"{what} not supported for datatype {name}")
    if kind == "b" and (width > -1 or fill):
        raise InvalidArgumentError(f"width/fill not supported for datatype {name}")
    spec = "%" + fill + (str(width) if width > -1 else "")
    if kind in "fc":
        spec += (f".{precision}" if precision > -1 else "") + (
            "e" if scientific else "g" if shortest else "f"
        )
    else:
        spec += "s" if kind == "s" else "d"

    def fmt(v) -> bytes:
        if kind == "b":
            return b"true" if v else b"false"
        if kind == "s":
            return (spec % v.decode("latin-1")).encode("latin-1")
        if kind == "c":
            return ("(" + spec % float(v.real) + "," + spec % float(v.imag) + ")").encode()
        return (spec % (float(v) if kind == "f" else int(v))).encode()

    def compute(ctx, inputs: list) -> list:
        return [_map(fmt, np.asarray(inputs[0]))]

    return compute


_INT_RE = re.compile(rb"^\s*[+-]?\d+\s*$")
_FLOAT_RE = re.compile(
    rb"^\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|0[xX][0-9a-fA-F]+|inf|infinity|nan)\s*$",
    re.IGNORECASE,
)


def _parse_number(s: bytes, out: np.dtype):
    bad = InvalidArgumentError(
        f"StringToNumberOp could not correctly convert string: {s.decode('latin-1')}"
    )
    if mu.is_integer(out):
        if not _INT_RE.match(s):
            raise bad
        v = int(s)
        info = np.iinfo(out)
        if v < info.min or v > info.max:
            raise bad
        return v
    if not _FLOAT_RE.match(s):
        raise bad
    t = s.strip().lower()
    body = t.lstrip(b"+-")
    if body.startswith(b"0x"):
        f = float(int(body, 16)) * (-1.0 if t.startswith(b"-") else 1.0)
    else:
        f = float(t)
    with np.errstate(over="ignore"):
        return out.type(f)


def _string_to_number(kc: KernelConstruction) -> Callable:
    out = dtypes.as_numpy(kc.attr("out_type"))

    def compute(ctx, inputs: list) -> list:
        return [_map(lambda s: _parse_number(s, out), strings(inputs[0]), out)]

    return compute


# ---------------------------------------------------------------------------------------
# Regular expressions (RE2, linear time: common.ops.regex)
# ---------------------------------------------------------------------------------------


def _replace(x: np.ndarray, pattern: bytes, rewrite: bytes, replace_global: bool) -> np.ndarray:
    regex = regex_lib.compile_pattern(pattern)
    return _map(lambda s: regex_lib.replace(regex, s, rewrite, replace_global), x)


def _regex_replace(kc: KernelConstruction) -> Callable:
    replace_global = bool(kc.attrs.get("replace_global", True))

    def compute(ctx, inputs: list) -> list:
        pattern = _scalar_string(inputs[1], "Pattern")
        rewrite = _scalar_string(inputs[2], "Rewrite")
        return [_replace(strings(inputs[0]), pattern, rewrite, replace_global)]

    return compute


def _static_regex_replace(kc: KernelConstruction) -> Callable:
    pattern = kc.attr("pattern").encode()
    rewrite = kc.attr("rewrite").encode()
    replace_global = bool(kc.attrs.get("replace_global", True))
    regex_lib.compile_pattern(pattern)  # a bad pattern fails at kernel construction

    def compute(ctx, inputs: list) -> list:
        return [_replace(strings(inputs[0]), pattern, rewrite, replace_global)]

    return compute


def _full_match(x: np.ndarray, pattern: bytes) -> np.ndarray:
    regex = regex_lib.compile_pattern(pattern)
    return _map(lambda s: regex_lib.full_match(regex, s), x, dtype=bool)


def _regex_full_match(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        return [_full_match(strings(inputs[0]), _scalar_string(inputs[1], "Pattern"))]

    return compute


def _static_regex_full_match(kc: KernelConstruction) -> Callable:
    pattern = kc.attr("pattern").encode()
    regex_lib.compile_pattern(pattern)  # a bad pattern fails at kernel construction

    def compute(ctx, inputs: list) -> list:
        return [_full_match(strings(inputs[0]), pattern)]

    return compute


def _register() -> None:
    register_op(
        "StringJoin",
        ["inputs: N * string"],
        ["output: string"],
        ["N: int >= 0", "separator: string = ''"],
    )
    register_kernel("StringJoin")(_string_join)
    register_op(
        "ReduceJoin",
        ["inputs: string", "reduction_indices: int32"],
        ["output: string"],
        ["keep_dims: bool = false", "separator: string = ''"],
    )
    register_kernel("ReduceJoin")(_reduce_join)
    unit = "unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'"
    register_op("StringLength", ["input: string"], ["output: int32"], [unit])
    register_kernel("StringLength")(_string_length)
    register_op(
        "Substr",
        ["input: string", "pos: T", "len: T"],
        ["output: string"],
        ["T: {int32, int64}", unit],
    )
    register_kernel("Substr")(_substr)
    for name, upper in (("StringUpper", True), ("StringLower", False)):
        register_op(name, ["input: string"], ["output: string"], ["encoding: string = ''"])
        register_kernel(name)(_case(upper))
    register_op("StringStrip", ["input: string"], ["output: string"])
    register_kernel("StringStrip")(_string_strip)
    sparse_out = ["indices: int64", "values: string", "shape: int64"]
    register_op(
        "StringSplit",
        ["input: string", "delimiter: string"],
        sparse_out,
        ["skip_empty: bool = true"],
    )
    register_kernel("StringSplit")(_string_split)
    register_op(
        "StringSplitV2", ["input: string", "sep: string"], sparse_out, ["maxsplit: int = -1"]
    )
    register_kernel("StringSplitV2")(_string_split_v2)
    register_op(
        "AsString",
        ["input: T"],
        ["output: string"],
        [
            f"T: {_AS_STRING_T}",
            "precision: int = -1",
            "scientific: bool = false",
            "shortest: bool = false",
            "width: int = -1",
            "fill: string = ''",
        ],
    )
    register_kernel("AsString")(_as_string)
    register_op(
        "StringToNumber",
        ["string_tensor: string"],
        ["output: out_type"],
        ["out_type: {float, double, int32, int64, uint32, uint64} = DT_FLOAT"],
    )
    register_kernel("StringToNumber")(_string_to_number)
    register_op(
        "RegexReplace",
        ["input: string", "pattern: string", "rewrite: string"],
        ["output: string"],
        ["replace_global: bool = true"],
    )
    register_kernel("RegexReplace")(_regex_replace)
    register_op(
        "StaticRegexReplace",
        ["input: string"],
        ["output: string"],
        ["pattern: string", "rewrite: string", "replace_global: bool = true"],
    )
    register_kernel("StaticRegexReplace")(_static_regex_replace)
    register_op("RegexFullMatch", ["input: string", "pattern: string"], ["output: bool"])
    register_kernel("RegexFullMatch")(_regex_full_match)
    register_op("StaticRegexFullMatch", ["input: string"], ["output: bool"], ["pattern: string"])
    register_kernel("StaticRegexFullMatch")(_static_regex_full_match)


_register()
