"""Random kernels: TensorFlow's RandomPoisson sampler (random_poisson_op.cc), in double:
per output its own 256-block run of uniform doubles (two per block, used last first);
rate < 10 counts uniforms until their product drops below exp(-rate) (Knuth); +inf
gives inf; larger rates use Hormann's transformed rejection. Vectorised as passes over
the unfinished outputs, one attempt each."""

from __future__ import annotations

import numpy as np

from common.ops.random import libm
from common.ops.random.gamma import RESERVED_PER_OUTPUT, _Draws
from common.ops.random.philox import PhiloxRandom


def random_poisson(
    gen: PhiloxRandom, rate: np.ndarray, samples_per_rate: int, highest: float
) -> np.ndarray:
    """[samples_per_rate, num_rates] doubles; `highest` is the output type's largest
    value (Knuth's count stops there)."""
    r = np.asarray(rate, np.float64).reshape(-1)
    num_rates = r.size
    out_idx = (
        np.arange(num_rates)[None, :] * samples_per_rate + np.arange(samples_per_rate)[:, None]
    ).reshape(-1)
    rates = np.broadcast_to(r[None, :], (samples_per_rate, num_rates)).reshape(-1)
    offsets = out_idx.astype(np.uint64) * np.uint64(RESERVED_PER_OUTPUT)
    n = out_idx.size
    result = np.zeros(n)
    cursor = np.zeros(n, np.int64)
    uniforms = _Draws(gen, offsets, "uniform")

    knuth = np.flatnonzero(rates < 10)
    exp_neg = libm.exp(-rates)
    prod = np.ones(n)
    count = np.zeros(n)
    todo = knuth
    while todo.size:
        prod[todo] = prod[todo] * uniforms.next(todo, cursor)
        stop = (prod[todo] <= exp_neg[todo]) & (count[todo] <= highest)
        result[todo[stop]] = count[todo[stop]]
        count[todo[~stop]] += 1
        todo = todo[~stop]

    big = np.flatnonzero(rates >= 10)
    inf = big[np.isinf(rates[big])]
    result[inf] = np.inf
    todo = big[~np.isinf(rates[big])]
    rt = rates
    log_rate = libm.log(np.where(rt > 0, rt, 1.0))
    b = 0.931 + 2.53 * np.sqrt(np.maximum(rt, 0))
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    while todo.size:
        u = uniforms.next(todo, cursor) - 0.5
        v = uniforms.next(todo, cursor)
        at, bt = a[todo], b[todo]
        u_shifted = 0.5 - np.abs(u)
        with np.errstate(divide="ignore", invalid="ignore"):
            k = np.floor((2 * at / u_shifted + bt) * u + rt[todo] + 0.43)
        ok = k >= 0
        quick = ok & (u_shifted >= 0.07) & (v <= 0.9277 - 3.6224 / (bt - 2))
        slow = ok & ~quick & ~((u_shifted < 0.013) & (v > u_shifted))
        accept = quick.copy()
        if slow.any():
            i = np.flatnonzero(slow)
            us = u_shifted[i]
            s = libm.log(v[i] * inv_alpha[todo[i]] / (at[i] / (us * us) + bt[i]))
            t = -rt[todo[i]] + k[i] * log_rate[todo[i]] - libm.lgamma(k[i] + 1)
            accept[i] = s <= t
        result[todo[accept]] = k[accept]
        todo = todo[~accept]
    return result.reshape(samples_per_rate, num_rates)
