"""Ops (executor stage), candidate sampling: TensorFlow's FixedUnigramSampler (unigram
weights from an attr or a vocabulary file, distorted by a power, sharded) sampling with
Walker's alias table exactly as TF's DistributionSampler builds and reads it. Built once
per kernel; sampling reads a word stream and is thread-safe."""

from __future__ import annotations

import numpy as np

from common import file_access
from common.errors import InvalidArgumentError
from common.ops.random import distributions, libm
from common.ops.registry import KernelConstruction


def alias_table(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TF's DistributionSampler constructor: (prob float32, alt int) per bucket. The
    pairing loop is sequential over buckets (once per kernel, not per sample)."""
    n = weights.size
    total = float(np.cumsum(weights.astype(np.float64))[-1])
    scaled = (weights * np.float32(n)).astype(np.float32)  # float * int is float in C++
    pr = (scaled.astype(np.float64) / total).tolist()
    alt = [-1] * n
    low = [i for i in range(n) if pr[i] < 1.0]
    high = [i for i in range(n) if pr[i] >= 1.0]
    while high and low:
        lo_i, hi_i = low.pop(), high.pop()
        alt[lo_i] = hi_i
        remaining = pr[hi_i] - (1.0 - pr[lo_i])
        pr[hi_i] = remaining
        (low if remaining < 1.0 else high).append(hi_i)
    prob = np.array(pr, np.float64).astype(np.float32)
    for i in high + low:  # rounding leftovers keep themselves
        prob[i] = 1.0
        alt[i] = i
    return prob, np.array(alt, np.int64)


class FixedUnigramSampler:
    def __init__(self, range_max: int, weights: np.ndarray) -> None:
        if range_max != weights.size:
            raise InvalidArgumentError(
                f"range is {range_max} must be equal to weights size  {weights.size}"
            )
        self.range = range_max
        self.weights = weights
        self.total = np.cumsum(weights, dtype=np.float32)[-1]  # float, summed in order
        self.prob, self.alt = alias_table(weights)

    @classmethod
    def from_attrs(cls, kc: KernelConstruction) -> FixedUnigramSampler:
        distortion = float(kc.attrs.get("distortion", 1.0))
        shards, shard = int(kc.attrs.get("num_shards", 1)), int(kc.attrs.get("shard", 0))
        reserved = int(kc.attrs.get("num_reserved_ids", 0))
        vocab_file = kc.attrs.get("vocab_file", "") or ""
        if isinstance(vocab_file, bytes):
            vocab_file = vocab_file.decode()
        if vocab_file:
            raw = _read_vocab(vocab_file)
        else:
            raw = np.asarray(list(kc.attrs.get("unigrams", [])), np.float32)
        ids = np.arange(reserved, reserved + raw.size)
        mine = libm.powf(raw[ids % shards == shard], distortion)
        zeros = np.zeros(int(np.sum(np.arange(reserved) % shards == shard)), np.float32)
        return cls(int(kc.attr("range_max")), np.concatenate([zeros, mine]))

    def probability(self, values: np.ndarray) -> np.ndarray:
        inside = (values >= 0) & (values < self.weights.size)
        w = self.weights[np.where(inside, values, 0)]
        return np.where(inside, w / self.total, np.float32(0)).astype(np.float32)

    def sample(self, stream, count: int) -> np.ndarray:
        """`count` alias draws: RandFloat (one word), then ExactUniformInt<uint32>(n)
        over the following words (rejecting words below 2**32 mod n)."""
        n = self.prob.size
        power2 = n & (n - 1) == 0
        rem = np.uint32(((2**32 - 1) % n) + 1) if not power2 else np.uint32(0)
        out: list[np.ndarray] = []
        got = 0
        while got < count:
            need = count - got
            w = stream.peek(2 * need)
            r, k = w[0::2], w[1::2]
            bad = np.zeros(need, bool) if power2 else (k < rem)
            ok = need if not bad.any() else int(np.argmax(bad))
            if ok:
                idx = (k[:ok] & np.uint32(n - 1)) if power2 else k[:ok] % np.uint32(n)
                idx = idx.astype(np.int64)
                u = distributions._floats_from_bits(r[:ok])
                out.append(np.where(u < self.prob[idx], idx, self.alt[idx]))
                got += ok
            stream.take(2 * ok)
            if ok < need:  # a rejected word: drop it and redraw the index from the next
                r0 = stream.take(1)
                while True:
                    kk = stream.take(1)[0]
                    if kk >= rem:
                        break
                i = int(kk % np.uint32(n))
                u0 = distributions._floats_from_bits(r0)[0]
                out.append(np.array([i if u0 < self.prob[i] else self.alt[i]], np.int64))
                got += 1
        return np.concatenate(out) if out else np.empty(0, np.int64)


def _read_vocab(path: str) -> np.ndarray:
    values = []
    with open(file_access.resolve(path, "vocab_file"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            cols = line.split(",")
            try:
                values.append(np.float32(cols[-1]))
            except ValueError:
                raise InvalidArgumentError(f"Wrong vocabulary format at line: {line}") from None
    return np.asarray(values, np.float32)
