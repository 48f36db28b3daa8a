"""Kernel helpers shared by the math and nn op families: shapes, dtypes, axes, errors.

Pure functions over numpy values; safe from any thread. They keep TensorFlow's result
dtypes (numpy's type promotion never leaks: results are cast to the op's T) and raise
InvalidArgumentError with TensorFlow's wording; the executor attaches the node name.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

import ml_dtypes
import numpy as np

from common import dtypes
from common.dtypes import DataType
from common.errors import InvalidArgumentError

_LOW_PRECISION = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))

# Floating-point errors (overflow, divide by zero, invalid) are silent in every kernel, as
# in TensorFlow. Entering np.errstate costs ~1 us, more than a scalar add, so the executor
# enters it once per scheduling loop through `FpErrorsIgnored`, which also sets this flag;
# cheap kernels test the flag (`fp_errors_ignored()`, ~20 ns) and enter np.errstate
# themselves only when called some other way (tests, tools). Both numpy's errstate and the
# flag are context variables: a new thread starts with neither.
_FP_ERRORS_IGNORED: ContextVar[bool] = ContextVar("flowrt_fp_errors_ignored", default=False)
fp_errors_ignored = _FP_ERRORS_IGNORED.get


def _ignore_all_extobj() -> tuple[Any, Any] | None:
    """numpy 2's error-state context variable and its all-"ignore" value, made once: what
    np.errstate(all="ignore") sets, without its ~1 us of argument handling per entry (the
    executor enters once per scheduling loop, so once or more per step). None when this
    numpy keeps its error state some other way: np.errstate is then used."""
    try:
        from numpy._core import _ufunc_config
    except ImportError:
        return None
    var = getattr(_ufunc_config, "_extobj_contextvar", None)
    make = getattr(_ufunc_config, "_make_extobj", None)
    if var is None or make is None:
        return None
    return var, make(all="ignore")


_IGNORE_ALL = _ignore_all_extobj()


class FpErrorsIgnored:
    """Context manager: np.errstate(all="ignore") plus the `fp_errors_ignored()` flag."""

    __slots__ = ("_errstate", "_token")

    def __enter__(self) -> None:
        if _IGNORE_ALL is not None:
            var, extobj = _IGNORE_ALL
            self._errstate = var.set(extobj)  # a token, reset on exit
        else:
            self._errstate = np.errstate(all="ignore")
            self._errstate.__enter__()
        self._token = _FP_ERRORS_IGNORED.set(True)

    def __exit__(self, *exc: Any) -> None:
        _FP_ERRORS_IGNORED.reset(self._token)
        if _IGNORE_ALL is not None:
            _IGNORE_ALL[0].reset(self._errstate)
        else:
            self._errstate.__exit__(*exc)


def shape_str(shape: Sequence[int]) -> str:
    """TensorShape::DebugString: "[2,3]"."""
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def np_type(dt: DataType) -> np.dtype:
    return dtypes.as_numpy(dt)


def compute_type(d: np.dtype) -> np.dtype:
    """The numpy dtype to compute in: half and bfloat16 are computed in float32 and
    rounded once at the end, as Eigen does per op."""
    return np.dtype(np.float32) if d in _LOW_PRECISION else d


def upcast(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    ct = compute_type(x.dtype)
    return x if ct == x.dtype else x.astype(ct)


def as_type(x, d: np.dtype) -> np.ndarray:
    """`x` as an array of exactly dtype `d` (a no-op when it already is)."""
    x = np.asarray(x)
    return x if x.dtype == d else x.astype(d)


def broadcast_shape(*shapes: Sequence[int]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise InvalidArgumentError(
            "Incompatible shapes: " + " vs. ".join(shape_str(s) for s in shapes)
        ) from None


def is_integer(d: np.dtype) -> bool:
    return d.kind in "iu"


def is_float(d: np.dtype) -> bool:
    return d.kind == "f" or d in _LOW_PRECISION


def scalar_int(x, what: str) -> int:
    x = np.asarray(x)
    if x.ndim != 0:
        raise InvalidArgumentError(f"{what} must be a scalar, not shape {shape_str(x.shape)}")
    return int(x)


def reduction_axes(axes, rank: int) -> tuple[int, ...]:
    """Normalise reduction indices (scalar or vector, negatives allowed, a dimension named
    twice refused) as TensorFlow's ReductionHelper does."""
    idx = np.asarray(axes).reshape(-1)
    out: list[int] = []
    for a in idx.tolist():
        if a < -rank or a >= rank:
            raise InvalidArgumentError(
                f"Invalid reduction dimension ({a} for input with {rank} dimension(s)"
            )
        a = a % rank if rank else a
        if a in out:
            raise InvalidArgumentError(
                f"Invalid reduction arguments: Axes contains duplicate dimension: {a}"
            )
        out.append(a)
    return tuple(sorted(out))


def lowest(d: np.dtype):
    if d.kind == "b":
        return False
    if is_integer(d):
        return np.iinfo(d).min
    return -np.inf


def highest(d: np.dtype):
    if d.kind == "b":
        return True
    if is_integer(d):
        return np.iinfo(d).max
    return np.inf
