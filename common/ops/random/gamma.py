"""Random kernels: TensorFlow's RandomGamma sampler (random_op.cc): per output, its own
run of 256 Philox blocks; alpha == 1 is an exponential (-log1p(-u)); otherwise
Marsaglia-Tsang transformation-rejection from double normals and uniforms drawn from
that run (each block gives two values, used last first), with the alpha < 1 boost
u**(1/alpha). Vectorised over outputs: each pass advances every unfinished output by
one attempt, so a pass is a handful of numpy operations whatever the output size."""

from __future__ import annotations

import numpy as np

from common.ops.random import distributions, libm
from common.ops.random.philox import PhiloxRandom

RESERVED_PER_OUTPUT = 256


class _Draws:
    """Two-value buffers per output (TF's norm_result/uniform_result with *_remaining)."""

    def __init__(self, gen: PhiloxRandom, offsets: np.ndarray, kind: str) -> None:
        self.gen, self.offsets, self.kind = gen, offsets, kind
        n = offsets.size
        self.buf = np.zeros((n, 2))
        self.remaining = np.zeros(n, np.int64)

    def next(self, rows: np.ndarray, cursor: np.ndarray) -> np.ndarray:
        """One value for each output in `rows`, advancing their shared block cursor."""
        empty = rows[self.remaining[rows] == 0]
        if empty.size:
            words = self.gen.blocks_at(self.offsets[empty] + cursor[empty].astype(np.uint64))
            cursor[empty] += 1
            if self.kind == "normal":
                d0, d1 = distributions._box_muller_double(words)
                self.buf[empty] = np.stack([d0, d1], axis=1)
            else:
                self.buf[empty, 0] = distributions._doubles_from_bits(words[:, 0], words[:, 1])
                self.buf[empty, 1] = distributions._doubles_from_bits(words[:, 2], words[:, 3])
            self.remaining[empty] = 2
        self.remaining[rows] -= 1
        return self.buf[rows, self.remaining[rows]]


def random_gamma(gen: PhiloxRandom, alpha: np.ndarray, samples_per_alpha: int) -> np.ndarray:
    """[samples_per_alpha, num_alphas] doubles, output (s, a) drawn from block run
    256 * (a * samples_per_alpha + s)."""
    a = np.asarray(alpha, np.float64).reshape(-1)
    num_alphas = a.size
    out_idx = (
        np.arange(num_alphas)[None, :] * samples_per_alpha + np.arange(samples_per_alpha)[:, None]
    ).reshape(-1)
    alphas = np.broadcast_to(a[None, :], (samples_per_alpha, num_alphas)).reshape(-1)
    offsets = out_idx.astype(np.uint64) * np.uint64(RESERVED_PER_OUTPUT)
    n = out_idx.size
    result = np.empty(n)
    cursor = np.zeros(n, np.int64)
    normals, uniforms = _Draws(gen, offsets, "normal"), _Draws(gen, offsets, "uniform")

    expo = np.flatnonzero(alphas == 1.0)
    if expo.size:
        u = uniforms.next(expo, cursor)
        result[expo] = -libm.log1p(-u)

    rest = np.flatnonzero(alphas != 1.0)
    small = alphas < 1
    d = alphas + np.where(small, 2.0 / 3, -1.0 / 3)
    c = 1.0 / 3 / np.sqrt(d)
    todo = rest
    while todo.size:
        x = normals.next(todo, cursor)
        v = 1 + c[todo] * x
        ok_v = v > 0
        todo_v, x, v = todo[ok_v], x[ok_v], v[ok_v]
        v = v * v * v
        u = uniforms.next(todo_v, cursor)
        dv = d[todo_v]
        with np.errstate(divide="ignore", invalid="ignore"):
            squeeze = u < 1 - 0.0331 * (x * x) * (x * x)
            accept = squeeze | (libm.log(u) < 0.5 * x * x + dv * (1 - v + libm.log(v)))
        done = todo_v[accept]
        res = dv[accept] * v[accept]
        boost = small[done]
        if boost.any():
            b = uniforms.next(done[boost], cursor)
            res[boost] *= libm.pow(b, 1 / alphas[done[boost]])
        result[done] = res
        finished = np.zeros(n, bool)
        finished[done] = True
        todo = todo[~finished[todo]]
    return result.reshape(samples_per_alpha, num_alphas)
