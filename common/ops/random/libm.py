"""Random kernels' transcendental functions, as TensorFlow computes them: the C
library's scalar logf/sincosf/log1pf/expm1f (log/sincos/exp for double), applied over
numpy arrays.

TensorFlow's Box-Muller calls these one value at a time; numpy's vectorised log/sin/cos
differ from them in the last bit for a few percent of values. libm_shim.c loops over
the C library's functions; it is compiled once per machine with the system C compiler
into a per-user cache and loaded with ctypes. Without a compiler the functions fall back
to numpy in double precision rounded to the argument's type (EXACT is then False):
correctly rounded, which differs from glibc's float functions for ~1% of values.
Thread-safe: the library is loaded once under a lock and its functions keep no state.
"""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path

import numpy as np

from common.ops import c_shim

_SOURCE = Path(__file__).with_name("libm_shim.c")
_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_tried = False


def _build() -> ctypes.CDLL | None:
    lib = c_shim.build(_SOURCE, ["-fno-fast-math"], ["-lm"])
    if lib is None:
        return None
    for name in _UNARY.values():
        getattr(lib, name).restype = None
    for name in ("flowrt_sincosf", "flowrt_sincos"):
        getattr(lib, name).restype = None
    return lib


def _library() -> ctypes.CDLL | None:
    global _lib, _tried
    with _lock:
        if not _tried:
            _tried = True
            try:
                _lib = _build()
            except OSError:
                _lib = None
        return _lib


def exact() -> bool:
    """Whether the C library's own functions are used (TensorFlow's values exactly)."""
    return _library() is not None


def _ptr(a: np.ndarray) -> ctypes.c_void_p:
    return ctypes.c_void_p(a.ctypes.data)


# The C loop for each (function, dtype); without the library numpy computes it in double.
_UNARY = {
    ("log", np.dtype(np.float32)): "flowrt_logf",
    ("log", np.dtype(np.float64)): "flowrt_log",
    ("exp", np.dtype(np.float64)): "flowrt_exp",
    ("lgamma", np.dtype(np.float64)): "flowrt_lgamma",
    ("log1p", np.dtype(np.float32)): "flowrt_log1pf",
    ("log1p", np.dtype(np.float64)): "flowrt_log1p",
    ("expm1", np.dtype(np.float32)): "flowrt_expm1f",
}


def _unary(fn: str, x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x)
    lib = _library()
    name = _UNARY[(fn, x.dtype)]
    if lib is None:
        if fn == "lgamma":
            import math

            return np.array([math.lgamma(v) for v in x.reshape(-1)]).reshape(x.shape)
        return getattr(np, fn)(x.astype(np.float64)).astype(x.dtype)
    out = np.empty_like(x)
    getattr(lib, name)(_ptr(x), _ptr(out), ctypes.c_int64(x.size))
    return out


def log(x: np.ndarray) -> np.ndarray:
    """logf for float32 arrays, log for float64 ones."""
    return _unary("log", x)


def exp(x: np.ndarray) -> np.ndarray:
    """exp for float64 arrays."""
    return _unary("exp", x)


def lgamma(x: np.ndarray) -> np.ndarray:
    """lgamma for float64 arrays (the reentrant lgamma_r)."""
    return _unary("lgamma", x)


def log1p(x: np.ndarray) -> np.ndarray:
    """log1pf for float32 arrays, log1p for float64 ones."""
    return _unary("log1p", x)


def expm1(x: np.ndarray) -> np.ndarray:
    """expm1f for float32 arrays."""
    return _unary("expm1", x)


def sincos(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sincosf for float32 arrays, sincos for float64 ones: (sin, cos)."""
    x = np.ascontiguousarray(x)
    lib = _library()
    if lib is None:
        v = x.astype(np.float64)
        return np.sin(v).astype(x.dtype), np.cos(v).astype(x.dtype)
    s, c = np.empty_like(x), np.empty_like(x)
    fn = lib.flowrt_sincosf if x.dtype == np.float32 else lib.flowrt_sincos
    fn(_ptr(x), _ptr(s), _ptr(c), ctypes.c_int64(x.size))
    return s, c


def powf(x: np.ndarray, y: float) -> np.ndarray:
    """powf(x, y) over a float32 array (std::pow of two floats)."""
    x = np.ascontiguousarray(x, np.float32)
    lib = _library()
    if lib is None:
        return np.power(x.astype(np.float64), float(np.float32(y))).astype(np.float32)
    out = np.empty_like(x)
    lib.flowrt_powf.restype = None
    lib.flowrt_powf(_ptr(x), ctypes.c_float(y), _ptr(out), ctypes.c_int64(x.size))
    return out


def pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:  # noqa: A001 (the C name)
    """pow(x, y) elementwise over float64 arrays."""
    x = np.ascontiguousarray(x, np.float64)
    y = np.ascontiguousarray(np.broadcast_to(y, x.shape), np.float64)
    lib = _library()
    if lib is None:
        return np.power(x, y)
    out = np.empty_like(x)
    lib.flowrt_pow.restype = None
    lib.flowrt_pow(_ptr(x), _ptr(y), _ptr(out), ctypes.c_int64(x.size))
    return out
