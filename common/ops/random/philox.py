"""Random kernels' engine: TensorFlow's Philox-4x32-10 counter-based generator
(lib/random/philox_random.h) and its seeding rules, vectorised over counters.

A PhiloxRandom value is (key, 128-bit counter); each call of TF's generator returns the
block for the current counter and adds one to it, so block i of a stream is
philox(counter + i). Values are immutable; GuardedPhiloxRandom is the one mutable holder
(a stateful kernel's generator) and is safe to use from any thread.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import numpy as np

_M32 = 0xFFFFFFFF
_M64 = (1 << 64) - 1
# Multipliers and key increments of Philox-4x32 (Salmon et al., as TF uses them).
_MUL_A, _MUL_B = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_KEY_A, _KEY_B = 0x9E3779B9, 0xBB67AE85
_ROUNDS = 10


def philox_blocks(key: tuple[int, int], counters: np.ndarray) -> np.ndarray:
    """Philox-4x32-10 of each row of `counters` ([n, 4] uint32, word 0 lowest) under
    `key` (two 32-bit words): [n, 4] uint32."""
    c = [counters[:, i].astype(np.uint64) for i in range(4)]
    k0, k1 = key
    lo32 = np.uint64(_M32)
    shift = np.uint64(32)
    for r in range(_ROUNDS):
        p0 = c[0] * _MUL_A
        p1 = c[2] * _MUL_B
        c = [
            (p1 >> shift) ^ c[1] ^ np.uint64(k0),
            p1 & lo32,
            (p0 >> shift) ^ c[3] ^ np.uint64(k1),
            p0 & lo32,
        ]
        if r + 1 < _ROUNDS:
            k0, k1 = (k0 + _KEY_A) & _M32, (k1 + _KEY_B) & _M32
    return np.stack(c, axis=1).astype(np.uint32)


def counter_words(base: int, offsets: np.ndarray) -> np.ndarray:
    """The counters base + offsets (mod 2**128) as [n, 4] uint32 words, low word first."""
    off = np.asarray(offsets, np.uint64)
    lo = np.uint64(base & _M64) + off  # wraps mod 2**64 like TF's Skip
    carry = (lo < off).astype(np.uint64)
    hi = np.uint64((base >> 64) & _M64) + carry
    m = np.uint64(_M32)
    s = np.uint64(32)
    return np.stack([lo & m, lo >> s, hi & m, hi >> s], axis=1).astype(np.uint32)


@dataclass(frozen=True)
class PhiloxRandom:
    """TF's random::PhiloxRandom: a key (two 32-bit words) and a 128-bit counter."""

    key: tuple[int, int]
    counter: int = 0

    @classmethod
    def from_seeds(cls, seed_lo: int, seed_hi: int) -> PhiloxRandom:
        """PhiloxRandom(seed_lo, seed_hi): the key is seed_lo, counter words 2-3 seed_hi."""
        lo, hi = seed_lo & _M64, seed_hi & _M64
        return cls((lo & _M32, lo >> 32), hi << 64)

    @classmethod
    def from_key_counter(cls, key: int, counter: tuple[int, int]) -> PhiloxRandom:
        """From the uint64 key and [2] uint64 counter tensors of the V2 stateless ops."""
        k = key & _M64
        return cls((k & _M32, k >> 32), (counter[0] & _M64) | ((counter[1] & _M64) << 64))

    def skip(self, count: int) -> PhiloxRandom:
        """TF's PhiloxRandom::Skip(uint64 count), word by word: a carry out of word 0
        bumps the high half of the count, which may itself wrap to 0 (then no carry
        reaches word 1), so the sum is not always counter + count mod 2**128."""
        count &= _M64
        c = self.counter
        w0, w1, hi = c & _M32, (c >> 32) & _M32, c >> 64
        count_lo, count_hi = count & _M32, count >> 32
        w0 += count_lo
        if w0 > _M32:
            w0 &= _M32
            count_hi = (count_hi + 1) & _M32
        w1 += count_hi
        if w1 > _M32:
            w1 &= _M32
            hi = (hi + 1) & _M64
        return PhiloxRandom(self.key, w0 | (w1 << 32) | (hi << 64))

    def blocks(self, n: int, start: int = 0) -> np.ndarray:
        """Blocks start .. start+n-1 of this stream: [n, 4] uint32."""
        return self.blocks_at(np.arange(start, start + n, dtype=np.uint64))

    def blocks_at(self, offsets: np.ndarray) -> np.ndarray:
        return philox_blocks(self.key, counter_words(self.counter, offsets))

    def uint32s(self, n: int) -> np.ndarray:
        """The first n 32-bit samples, in the order TF's SingleSampleAdapter yields them."""
        return self.blocks(-(-n // 4)).reshape(-1)[:n]

    @property
    def key64(self) -> int:
        return self.key[0] | (self.key[1] << 32)

    @property
    def counter64(self) -> tuple[int, int]:
        return self.counter & _M64, self.counter >> 64


class GuardedPhiloxRandom:
    """A stateful kernel's generator (TF's GuardedPhiloxRandom): seeded once from the
    kernel's (seed, seed2) attrs — from the OS when both are 0 — and advanced by every
    reservation so successive steps draw fresh numbers. Thread-safe."""

    def __init__(self, seed: int, seed2: int) -> None:
        if seed == 0 and seed2 == 0:
            seed, seed2 = (int.from_bytes(os.urandom(8), "little") for _ in range(2))
        self._gen = PhiloxRandom.from_seeds(seed, seed2)
        self._lock = threading.Lock()

    def reserve_samples128(self, samples: int) -> PhiloxRandom:
        """The generator as it is now; the held one skips `samples` blocks."""
        with self._lock:
            gen = self._gen
            self._gen = gen.skip(samples)
        return gen

    def reserve_samples32(self, samples: int) -> PhiloxRandom:
        return self.reserve_samples128((samples + 3) // 4)

    def reserve_random_outputs(self, output_count: int, multiplier: int = 256) -> PhiloxRandom:
        """TF's conservative reservation: `multiplier` blocks per output element."""
        return self.reserve_samples128(output_count * multiplier)


_SCRAMBLE_KEY = (0x3EC8F720, 0x02461E29)


def key_counter_from_seed(seed: np.ndarray) -> PhiloxRandom:
    """TF's stateless GenerateKey: the two seed values (sign-extended to 64 bits) are a
    counter, scrambled by one Philox call under a fixed key into (key, counter)."""
    s0, s1 = (int(v) & _M64 for v in np.asarray(seed).reshape(-1)[:2])
    mix = PhiloxRandom(_SCRAMBLE_KEY, s0 | (s1 << 64)).blocks(1)[0]
    return PhiloxRandom((int(mix[0]), int(mix[1])), (int(mix[2]) | (int(mix[3]) << 32)) << 64)


class WordStream:
    """TF's SimplePhilox over a generator: 32-bit words read in order (expanded from
    Philox blocks in chunks), as doubles (two words), floats (one) or 64-bit ints (two,
    low first). One reader at a time: a kernel makes one per run."""

    def __init__(self, gen: PhiloxRandom) -> None:
        self._gen = gen
        self._block = 0  # next Philox block to expand
        self._words = np.empty(0, np.uint32)

    def take(self, n: int) -> np.ndarray:
        out = self.peek(n)
        self._words = self._words[n:]
        return out

    def peek(self, n: int) -> np.ndarray:
        while self._words.size < n:
            blocks = max(64, -(-(n - self._words.size) // 4))
            more = self._gen.blocks(blocks, self._block).reshape(-1)
            self._block += blocks
            self._words = np.concatenate([self._words, more])
        return self._words[:n]

    def rand64(self, n: int) -> np.ndarray:
        w = self.take(2 * n).reshape(n, 2).astype(np.uint64)
        return w[:, 0] | (w[:, 1] << np.uint64(32))

    def rand_floats(self, n: int) -> np.ndarray:
        u = self.take(n)
        return ((u & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)

    def rand_doubles(self, n: int) -> np.ndarray:
        w = self.take(2 * n).reshape(n, 2).astype(np.uint64)
        man = ((w[:, 0] & np.uint64(0xFFFFF)) << np.uint64(32)) | w[:, 1]
        return (man | np.uint64(1023 << 52)).view(np.float64) - 1.0
