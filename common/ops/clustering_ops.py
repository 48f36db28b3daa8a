"""Ops (executor stage): k-means helpers, as TensorFlow's clustering_ops.cc:
NearestNeighbors, KmeansPlusPlusInitialization, KMC2ChainInitialization.

The two initializations draw from PhiloxRandom(seed) through SimplePhilox as TF does,
so equal inputs give TF's choices; the arithmetic is float32 as TF's, but sums and
matrix products use numpy's order, so distances may differ from TF's in the last bit
(a sampled index could then differ only at an exact tie). Stateless, thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.candidate_sampling_ops import exact_uniform64
from common.ops.random.philox import PhiloxRandom, WordStream
from common.ops.registry import KernelConstruction, register_kernel, register_op

_F32 = np.float32


def _matrix(x, what: str) -> np.ndarray:
    a = np.asarray(x)
    if a.ndim != 2:
        raise InvalidArgumentError(f"Input {what} should be a matrix.")
    return a.astype(_F32, copy=False)


def _scalar(x, what: str) -> int:
    a = np.asarray(x)
    if a.ndim != 0:
        raise InvalidArgumentError(f"Input {what} should be a scalar.")
    return int(a)


def _half_sq_norm(x: np.ndarray) -> np.ndarray:
    return _F32(0.5) * np.einsum("ij,ij->i", x, x, dtype=_F32)


def nearest_neighbors(points, centers, k) -> list[np.ndarray]:
    p, c = _matrix(points, "points"), _matrix(centers, "centers")
    kk = _scalar(k, "k")
    if p.shape[0] == 0:
        raise InvalidArgumentError("Expected points.rows() > 0.")
    if p.shape[1] != c.shape[1]:
        raise InvalidArgumentError(
            f"Expected point_dimensions == center_dimensions: {p.shape[1]} vs {c.shape[1]}."
        )
    kk = min(c.shape[0], kk)
    if kk == 0:
        return [np.empty((p.shape[0], 0), np.int64), np.empty((p.shape[0], 0), _F32)]
    partial = _half_sq_norm(c)[None, :] - (p @ c.T).astype(_F32)
    # TopN over (distance, index) pairs: ties go to the smaller index.
    order = np.argsort(partial, axis=1, kind="stable")[:, :kk]
    part = np.take_along_axis(partial, order, axis=1)
    dist = (2.0 * (_half_sq_norm(p)[:, None] + part).astype(np.float64)).astype(_F32)
    return [order.astype(np.int64), dist]


def kmeans_plus_plus(points, num_to_sample, seed, num_retries) -> np.ndarray:
    x = _matrix(points, "points")
    count = _scalar(num_to_sample, "num_to_sample")
    s = _scalar(seed, "seed")
    retries = _scalar(num_retries, "num_retries_per_sample")
    n = x.shape[0]
    if retries < 0:
        retries = 2 + int(np.log(count)) if count > 0 else 2
    if n <= 0:
        raise InvalidArgumentError("Expected points.rows() > 0.")
    if count <= 0:
        raise InvalidArgumentError("Expected num_to_sample > 0.")
    if count > n:
        raise InvalidArgumentError(f"Expected num_to_sample <= points.rows(). {count} vs {n}.")
    rng = WordStream(PhiloxRandom.from_seeds(s, 0))
    half = _half_sq_norm(x)
    min_d = np.full(n, np.inf, _F32)
    cumsum = np.zeros(n, _F32)
    chosen: set[int] = set()
    out = np.empty((count, x.shape[1]), _F32)

    def draw() -> int:
        if not chosen:
            return int(exact_uniform64(rng, n, 1)[0])
        while True:
            target = rng.rand_floats(1)[0] * cumsum[-1]
            index = int(np.searchsorted(cumsum, target, side="right"))
            if index not in chosen:
                return index

    def distances_to(i: int) -> np.ndarray:
        return np.minimum(min_d, (half - (x @ x[i]).astype(_F32)) + half[i])

    for i in range(count):
        if i > 0:
            cumsum = np.cumsum(min_d, dtype=_F32)
        if retries == 0:
            best = draw()
            min_d = distances_to(best)
        else:
            best, best_d, best_potential = 0, min_d, _F32(np.inf)
            for _ in range(1 + retries):
                idx = draw()
                new_d = distances_to(idx)
                potential = np.sum(new_d, dtype=_F32)
                if potential < best_potential:
                    best, best_d, best_potential = idx, new_d, potential
            min_d = best_d
        best = min(best, n - 1)
        out[i] = x[best]
        chosen.add(best)
    return out


def kmc2_chain(distances, seed) -> np.int64:
    """The last state of a Markov chain over the candidates: i replaces the state
    when d_i > u_i * d_state (u_i one float per candidate, drawn in order). Vectorised
    as jumps from each accepted candidate to the next one that would be accepted."""
    d = np.asarray(distances)
    if d.ndim != 1:
        raise InvalidArgumentError("Input distances should be a vector.")
    s = _scalar(seed, "seed")
    n = d.shape[0]
    if n <= 0:
        raise InvalidArgumentError("Expected distances_tensor.size() > 0.")
    d = d.astype(_F32)
    u = WordStream(PhiloxRandom.from_seeds(s, 0)).rand_floats(n - 1)  # u[i-1] for i
    state = 0
    while state < n - 1:
        rest = d[state + 1 :] > u[state:] * d[state]
        if not rest.any():
            break
        state = state + 1 + int(np.argmax(rest))
    return np.int64(state)


def _kernel(fn: Callable, many: bool = False) -> Callable:
    def factory(kc: KernelConstruction) -> Callable:
        def compute(ctx, inputs: list) -> list:
            out = fn(*inputs)
            return list(out) if many else [out]

        return compute

    return factory


register_op(
    "NearestNeighbors",
    ["points: float", "centers: float", "k: int64"],
    ["nearest_center_indices: int64", "nearest_center_distances: float"],
)
register_kernel("NearestNeighbors", host_memory=("k",))(_kernel(nearest_neighbors, many=True))
register_op(
    "KmeansPlusPlusInitialization",
    ["points: float", "num_to_sample: int64", "seed: int64", "num_retries_per_sample: int64"],
    ["samples: float"],
)
register_kernel(
    "KmeansPlusPlusInitialization",
    host_memory=("num_to_sample", "seed", "num_retries_per_sample"),
)(_kernel(kmeans_plus_plus))
register_op("KMC2ChainInitialization", ["distances: float", "seed: int64"], ["index: int64"])
register_kernel("KMC2ChainInitialization", host_memory=("seed",))(_kernel(kmc2_chain))
