"""Random kernels' conversions from Philox bits to samples, as TensorFlow's
lib/random/random_distributions.h makes them: which 32-bit words make which element, so
that the same (key, counter) gives TensorFlow's values.

Uniform floats and integers are exact bit for bit. Normals use Box-Muller with the C
library's log and sincos as TF does (see libm: exact where the shim could be built).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from common.ops.random import libm
from common.ops.random.philox import PhiloxRandom

_F16 = np.dtype(np.float16)
_BF16 = np.dtype(ml_dtypes.bfloat16)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
# Elements per output group of the variable-sample (truncated normal) distributions, and
# TF's kReservedSamplesPerOutput: group g starts at block g * size * 256 / 4.
_RESERVED_PER_OUTPUT = 256
_TRUNCATE = 2.0


def _floats_from_bits(u: np.ndarray) -> np.ndarray:
    """Uint32ToFloat: 23 random mantissa bits under exponent 0, minus 1: [0, 1)."""
    return ((u & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)


def _doubles_from_bits(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Uint64ToDouble: 20 bits of `hi` and all of `lo` as the mantissa, minus 1."""
    man = ((hi & np.uint32(0xFFFFF)).astype(np.uint64) << np.uint64(32)) | lo.astype(np.uint64)
    return (man | np.uint64(1023 << 52)).view(np.float64) - 1.0


def uniform(gen: PhiloxRandom, n: int, dt: np.dtype) -> np.ndarray:
    """UniformDistribution for floats: one word per float/half/bfloat16, two per double."""
    dt = np.dtype(dt)
    if dt == _F64:
        u = gen.uint32s(2 * n).reshape(n, 2)
        return _doubles_from_bits(u[:, 0], u[:, 1])
    u = gen.uint32s(n)
    if dt == _F16:
        bits = ((u & np.uint32(0x3FF)) | np.uint32(15 << 10)).astype(np.uint16)
        return bits.view(np.float16) - np.float16(1)
    if dt == _BF16:
        bits = ((u & np.uint32(0x7F)) | np.uint32(127 << 7)).astype(np.uint16)
        return (bits.view(ml_dtypes.bfloat16).astype(np.float32) - 1).astype(_BF16)
    return _floats_from_bits(u)


def _box_muller_float(x0: np.ndarray, x1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    u1 = np.maximum(_floats_from_bits(x0), np.float32(1.0e-7))
    # 2.0f * M_PI * float is evaluated in double, then stored as float.
    v1 = (2.0 * np.pi * _floats_from_bits(x1).astype(np.float64)).astype(np.float32)
    u2 = np.sqrt(np.float32(-2.0) * libm.log(u1))
    s, c = libm.sincos(v1)
    return s * u2, c * u2


def _box_muller_double(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    u1 = np.maximum(_doubles_from_bits(words[:, 0], words[:, 1]), 1.0e-7)
    v1 = 2 * np.pi * _doubles_from_bits(words[:, 2], words[:, 3])
    u2 = np.sqrt(-2.0 * libm.log(u1))
    s, c = libm.sincos(v1)
    return s * u2, c * u2


def _interleave(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.stack([a, b], axis=-1).reshape(*a.shape[:-1], -1)


def normal(gen: PhiloxRandom, n: int, dt: np.dtype) -> np.ndarray:
    """NormalDistribution: Box-Muller on word pairs (floats) or word quads (doubles)."""
    dt = np.dtype(dt)
    pairs = -(-n // 2)
    if dt == _F64:
        d0, d1 = _box_muller_double(gen.uint32s(4 * pairs).reshape(pairs, 4))
        return _interleave(d0[None], d1[None])[0][:n]
    u = gen.uint32s(2 * pairs).reshape(pairs, 2)
    f0, f1 = _box_muller_float(u[:, 0], u[:, 1])
    return _interleave(f0[None], f1[None])[0][:n].astype(dt)


def _truncated_candidates(blocks: np.ndarray, double: bool) -> np.ndarray:
    """Normal candidates of [groups, k, 4] blocks in the order TF draws them."""
    g, k = blocks.shape[:2]
    if double:
        d0, d1 = _box_muller_double(blocks.reshape(-1, 4))
        return _interleave(d0.reshape(g, k, 1), d1.reshape(g, k, 1)).reshape(g, 2 * k)
    w = blocks.reshape(-1, 2)
    f0, f1 = _box_muller_float(w[:, 0], w[:, 1])
    return _interleave(f0.reshape(g, 2 * k, 1), f1.reshape(g, 2 * k, 1)).reshape(g, 4 * k)


def truncated_normal(gen: PhiloxRandom, n: int, dt: np.dtype) -> np.ndarray:
    """TruncatedNormalDistribution: each group of 4 outputs (2 for double) draws normals
    from its own reserved run of blocks, keeping those with |x| < 2, in order."""
    dt = np.dtype(dt)
    double = dt == _F64
    size = 2 if double else 4
    groups = -(-n // size)
    stride = size * _RESERVED_PER_OUTPUT // 4
    starts = np.arange(groups, dtype=np.uint64) * np.uint64(stride)
    out = np.empty((groups, size), np.float64 if double else np.float32)
    todo = np.arange(groups)
    cand = np.empty((groups, 0), out.dtype)
    used = 0
    while todo.size:
        # Two more blocks per unfinished group: almost every group finishes in the first.
        offs = (starts[todo, None] + np.arange(used, used + 2, dtype=np.uint64)).reshape(-1)
        blocks = gen.blocks_at(offs).reshape(todo.size, 2, 4)
        cand = np.concatenate([cand, _truncated_candidates(blocks, double)], axis=1)
        used += 2
        ok = np.abs(cand) < _TRUNCATE
        done = ok.sum(axis=1) >= size
        first = np.argsort(~ok, axis=1, kind="stable")[:, :size]
        out[todo[done]] = np.take_along_axis(cand, first, axis=1)[done]
        todo, cand = todo[~done], cand[~done]
    return out.reshape(-1)[:n].astype(dt)


def uniform_int(gen: PhiloxRandom, n: int, dt: np.dtype, lo: int, hi: int) -> np.ndarray:
    """UniformDistribution for integers: lo + bits % (hi - lo), with 32 bits per element
    for 32-bit types and two words (low first) for 64-bit ones (TF's biased rule)."""
    dt = np.dtype(dt)
    wide = dt.itemsize == 8
    bits = full_int(gen, n, np.dtype(np.uint64) if wide else np.dtype(np.uint32))
    utype = bits.dtype.type
    mod = 1 << (64 if wide else 32)
    span = utype((hi - lo) % mod)
    return (utype(lo % mod) + bits % span).view(dt)


def full_int(gen: PhiloxRandom, n: int, dt: np.dtype) -> np.ndarray:
    """UniformFullIntDistribution: every bit random; 64-bit values take two words."""
    dt = np.dtype(dt)
    if dt.itemsize == 8:
        u = gen.uint32s(2 * n).reshape(n, 2).astype(np.uint64)
        return (u[:, 0] | (u[:, 1] << np.uint64(32))).view(dt)
    return gen.uint32s(n).view(dt)


def uniform_doubles(gen: PhiloxRandom, n: int) -> np.ndarray:
    """SimplePhilox::RandDouble n times: two words per double."""
    return uniform(gen, n, _F64)
