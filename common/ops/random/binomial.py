"""Random kernels: TensorFlow's binomial sampler (random_binomial_op.cc), in double.

Each output draws uniform doubles from its own run of Philox blocks (two doubles a block,
used last first): 42 blocks per output for the inversion sampler (n * p < 10: count
geometric variables until their sum passes n), 256 for Hormann's BTRS rejection
sampler (n * p >= 10). p > 1/2 samples n - Binomial(n, 1 - p). Vectorised as passes
over the unfinished outputs, one attempt each, as the gamma and Poisson samplers.
"""

from __future__ import annotations

import numpy as np

from common.ops.random import libm
from common.ops.random.gamma import _Draws
from common.ops.random.philox import PhiloxRandom

_INVERSION_BLOCKS = 42
_BTRS_BLOCKS = 256
# Stirling's series tail log(k!) - (k + 1/2) log(k + 1) + (k + 1) - log(2 pi)/2, k <= 9.
_TAIL = np.array(
    [
        0.0810614667953272,
        0.0413406959554092,
        0.0276779256849983,
        0.02079067210376509,
        0.0166446911898211,
        0.0138761288230707,
        0.0118967099458917,
        0.0104112652619720,
        0.00925546218271273,
        0.00833056343336287,
    ]
)


def _stirling_tail(k: np.ndarray) -> np.ndarray:
    small = k <= 9
    kp1 = k + 1
    kp1sq = kp1 * kp1
    big = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / kp1
    return np.where(small, _TAIL[np.where(small, k, 0).astype(np.int64)], big)


def _inversion(
    draws: _Draws, cursor: np.ndarray, rows: np.ndarray, n: np.ndarray, p: np.ndarray
) -> np.ndarray:
    """The number of geometric(p) variables whose running sum stays within n."""
    out = np.zeros(rows.size)
    geom_sum = np.zeros(rows.size)
    log_q = libm.log1p(-p)
    todo = np.arange(rows.size)
    while todo.size:
        u = draws.next(rows[todo], cursor)
        with np.errstate(divide="ignore"):
            geom_sum[todo] += np.ceil(libm.log(u) / log_q[todo])
        stop = geom_sum[todo] > n[todo]
        out[todo[~stop]] += 1
        todo = todo[~stop]
    return out


def _btrs(
    draws: _Draws, cursor: np.ndarray, rows: np.ndarray, n: np.ndarray, p: np.ndarray
) -> np.ndarray:
    """Hormann's transformed rejection (with TF's variant of the acceptance bound)."""
    out = np.zeros(rows.size)
    stddev = np.sqrt(n * p * (1 - p))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    r = p / (1 - p)
    alpha = (2.83 + 5.1 / b) * stddev
    m = np.floor((n + 1) * p)
    todo = np.arange(rows.size)
    while todo.size:
        u = draws.next(rows[todo], cursor)
        v = draws.next(rows[todo], cursor)
        u = u - 0.5
        us = 0.5 - np.abs(u)
        at, bt, nt = a[todo], b[todo], n[todo]
        with np.errstate(divide="ignore", invalid="ignore"):
            k = np.floor((2 * at / us + bt) * u + c[todo])
        accept = (us >= 0.07) & (v <= v_r[todo])
        test = ~accept & (k >= 0) & (k <= nt)
        if test.any():
            i = np.flatnonzero(test)
            t = todo[i]
            ki, ni, mi, ri = k[i], nt[i], m[t], r[t]
            usi = us[i]
            lv = libm.log(v[i] * alpha[t] / (at[i] / (usi * usi) + bt[i]))
            bound = (
                (mi + 0.5) * libm.log((mi + 1) / (ri * (ni - mi + 1)))
                + (ni + 1) * libm.log((ni - mi + 1) / (ni - ki + 1))
                + (ki + 0.5) * libm.log(ri * (ni - ki + 1) / (ki + 1))
                + _stirling_tail(mi)
                + _stirling_tail(ni - mi)
                - _stirling_tail(ki)
                - _stirling_tail(ni - ki)
            )
            accept[i] = lv <= bound
        out[todo[accept]] = k[accept]
        todo = todo[~accept]
    return out


def random_binomial(
    gen: PhiloxRandom, counts: np.ndarray, probs: np.ndarray, samples_per_batch: int
) -> np.ndarray:
    """[samples_per_batch, num_batches] doubles for flat per-batch `counts` and `probs`
    (in their own dtype T, whose arithmetic picks the sampler as TF's does); output
    (s, b) is TF's output_idx b * samples_per_batch + s, which picks its block run."""
    t = counts.dtype.type
    num_batches = counts.size
    idx = (
        np.arange(num_batches)[None, :] * samples_per_batch + np.arange(samples_per_batch)[:, None]
    ).reshape(-1)
    n_t = np.broadcast_to(counts[None, :], (samples_per_batch, num_batches)).reshape(-1)
    p_t = np.broadcast_to(probs[None, :], (samples_per_batch, num_batches)).reshape(-1)
    n = n_t.astype(np.float64)
    result = np.full(idx.size, np.nan)
    with np.errstate(invalid="ignore", over="ignore"):
        zero = (n <= 0) | (p_t <= t(0))
        one = ~zero & (p_t >= t(1))
        low = ~zero & ~one & (p_t <= t(0.5))
        high = ~zero & ~one & (p_t > t(0.5))
        q_t = (t(1) - p_t).astype(t)
        # The smaller of p and 1 - p, and whether n times it reaches 10 (in T).
        small_t = np.where(low, p_t, q_t)
        many = (n_t * small_t).astype(t) >= t(10)
    result[zero] = 0.0
    result[one] = n[one]
    small = small_t.astype(np.float64)
    for mask, blocks, sampler in (
        (~many, _INVERSION_BLOCKS, _inversion),
        (many, _BTRS_BLOCKS, _btrs),
    ):
        rows = np.flatnonzero(mask & (low | high))
        if not rows.size:
            continue
        offsets = idx[rows].astype(np.uint64) * np.uint64(blocks)
        draws = _Draws(gen, offsets, "uniform")
        cursor = np.zeros(rows.size, np.int64)
        local = np.arange(rows.size)
        k = sampler(draws, cursor, local, n[rows], small[rows])
        result[rows] = np.where(high[rows], n[rows] - k, k)
    return result.reshape(samples_per_batch, num_batches)
