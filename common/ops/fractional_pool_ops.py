"""Ops (executor stage): FractionalMaxPool, FractionalAvgPool (tf.nn.fractional_max_pool,
fractional_avg_pool) and their gradients, as TF's CPU kernels compute them.

Rows and columns are cut into pooling cells by TF's GeneratePoolingSequence, drawn from
a GuardedPhiloxRandom seeded afresh from (seed, seed2) at every run: pseudo-random cuts
ceil(alpha * (i + u)) from one SimplePhilox double u, random ones a RandomShuffle of the
k / k+1 gaps. So seeded sequences and values are TensorFlow's exactly; with
deterministic and no seeds the kernel picks its seeds once (per session, as TF's kernel
object lives in the session), without determinism every run draws new cells. A cell
spans [cum[i], cum[i+1]) or, overlapping, [cum[i], cum[i+1]] (clipped to the input).

Max: the first strict maximum in row-major cell order (Eigen's cwiseMax); average: the
sum in T divided by the cell size (integers truncate); the average gradient spreads each
value over its cell in double, in TF's order, then casts. The work loops over cell
offsets, each a vectorized pass over all cells. Stateless numpy, safe from any thread.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import numpy as np

from common import dtypes
from common.errors import InvalidArgumentError, UnimplementedError
from common.ops import math_util as mu
from common.ops.dilation_ops import lowest
from common.ops.random.philox import GuardedPhiloxRandom, WordStream
from common.ops.random_ops import node_state, shuffle_permutation
from common.ops.registry import KernelConstruction, register_kernel, register_op

_T = "T: {float, double, int32, int64}"
_SEQ = ["row_pooling_sequence: int64", "col_pooling_sequence: int64"]


def _float_str(v: float) -> str:
    """A float attr as TF's StrCat prints it (6 significant digits unless lossy)."""
    s = f"{np.float32(v):.6g}"
    return s if np.float32(s) == np.float32(v) else f"{np.float32(v):.9g}"


def _pseudo_random_gaps(n_in: int, n_out: int, gen: GuardedPhiloxRandom) -> np.ndarray:
    alpha = n_in / n_out
    k = n_in // n_out
    max_u = min((k + 2) / alpha - 1, (n_in + 1 - k) / alpha - (n_out - 1))
    u = float(WordStream(gen.reserve_samples32(2)).rand_doubles(1)[0]) * max_u
    cum = np.empty(n_out + 1, np.int64)
    cum[0], cum[n_out] = 1, n_in + 1
    i = np.arange(1, n_out, dtype=np.float64)
    # C++ computes ceil(alpha * (i + u)) in double and truncates to int, as here.
    cum[1:n_out] = np.ceil(alpha * (i + u)).astype(np.int64)
    return np.diff(cum)


def _random_gaps(n_in: int, n_out: int, gen: GuardedPhiloxRandom) -> np.ndarray:
    k = n_in // n_out
    gaps = np.full(n_out, k, np.int64)
    gaps[: n_in % n_out] += 1
    draws = gen.reserve_samples32(n_out)
    return gaps[shuffle_permutation(draws, n_out)] if n_out > 1 else gaps


def pooling_sequence(
    n_in: int, n_out: int, gen: GuardedPhiloxRandom, pseudo_random: bool
) -> np.ndarray:
    """TF's GeneratePoolingSequence: the [n_out + 1] cumulative cell boundaries."""
    gaps = (_pseudo_random_gaps if pseudo_random else _random_gaps)(n_in, n_out, gen)
    return np.concatenate([[0], np.cumsum(gaps)]).astype(np.int64)


def _cells(seq: np.ndarray, n: int, overlapping: bool) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) of each cell, end inclusive and clipped to the input."""
    starts = seq[:-1]
    ends = np.minimum(seq[1:] if overlapping else seq[1:] - 1, n - 1)
    return starts, ends


def _offsets(
    starts: np.ndarray, ends: np.ndarray, n: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per offset into the cells: (index clipped to [0, n), inside the cell) per cell."""
    span = int((ends - starts).max(initial=-1)) + 1
    for i in range(span):
        idx = starts + i
        yield np.clip(idx, 0, max(n - 1, 0)), idx <= ends


def _windows(
    x: np.ndarray, rows: np.ndarray, cols: np.ndarray, overlapping: bool
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """(value, inside, row, col) per (row offset, col offset) in row-major cell order."""
    rs, re = _cells(rows, x.shape[1], overlapping)
    cs, ce = _cells(cols, x.shape[2], overlapping)
    for r, rv in _offsets(rs, re, x.shape[1]):
        for c, cv in _offsets(cs, ce, x.shape[2]):
            inside = (rv[:, None] & cv[None, :])[None, :, :, None]
            yield x[:, r][:, :, c], inside, r, c


def _check_sequences(x: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> None:
    for seq, n, what in ((rows, x.shape[1], "Row"), (cols, x.shape[2], "Column")):
        if seq.size and (seq.min() < 0 or seq[:-1].max() >= n):
            raise InvalidArgumentError(
                f"{what} sequence tensor values must be within [0, {n}), got {seq.tolist()}"
            )


def fractional_max(
    x: np.ndarray, rows: np.ndarray, cols: np.ndarray, overlapping: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(max, flat input index of the first max) per output element."""
    shape = (x.shape[0], rows.size - 1, cols.size - 1, x.shape[3])
    best = np.full(shape, lowest(x.dtype), x.dtype)
    arg = np.full(shape, -1, np.int64)
    h, w, d = x.shape[1:]
    flat0 = (np.arange(x.shape[0]) * h)[:, None, None, None]
    for v, inside, r, c in _windows(x, rows, cols, overlapping):
        take = inside & ((best < v) | (arg < 0))
        best = np.where(take, v, best)
        flat = ((flat0 + r[None, :, None, None]) * w + c[None, None, :, None]) * d
        arg = np.where(take, flat + np.arange(d), arg)
    return best, arg


def fractional_avg(
    x: np.ndarray, rows: np.ndarray, cols: np.ndarray, overlapping: bool
) -> np.ndarray:
    shape = (x.shape[0], rows.size - 1, cols.size - 1, x.shape[3])
    total = np.zeros(shape, x.dtype)
    count = np.zeros(shape[1:3], np.int64)
    with np.errstate(over="ignore"):  # integer sums wrap as in C++
        for v, inside, _, _ in _windows(x, rows, cols, overlapping):
            total = np.where(inside, total + v, total)
            count += inside[0, :, :, 0]
    n = count[None, :, :, None].astype(x.dtype)
    if mu.is_integer(x.dtype):  # C++ integer division truncates toward zero
        return (np.sign(total) * (np.abs(total) // n)).astype(x.dtype)
    return total / n


def fractional_max_grad(
    x: np.ndarray,
    y: np.ndarray,
    grad: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    overlapping: bool,
) -> np.ndarray:
    for t, what in ((x, "orig_input"), (y, "orig_output")):
        # TF prints the whole Tensor::DebugString; its values are left out here.
        debug = f"Tensor<type: {dtypes.tf_name(dtypes.from_numpy(t.dtype))} shape: "
        debug += mu.shape_str(t.shape)
        if t.ndim != 4:
            raise InvalidArgumentError(f"{what} should be a tensor of rank 4, got {debug}")
        if not t.size:
            raise InvalidArgumentError(f"{what} must not be empty, got {debug}")
    if rows.size * cols.size > x.size:
        raise InvalidArgumentError("Pooling region has more elements than the input tensor.")
    _check_sequences(x, rows, cols)
    if (rows.size - 1, cols.size - 1) != y.shape[1:3] or y.shape[::3] != x.shape[::3]:
        raise InvalidArgumentError("tensor_out_dup is not the same as tensor_out")
    best, arg = fractional_max(x, rows, cols, overlapping)
    if not np.array_equal(best, y):
        raise InvalidArgumentError("tensor_out_dup is not the same as tensor_out")
    if grad.shape != y.shape:
        raise InvalidArgumentError(
            f"out_backprop must have the shape of orig_output {mu.shape_str(y.shape)}, "
            f"got {mu.shape_str(grad.shape)}"
        )
    out = np.zeros(x.size, x.dtype)
    with np.errstate(over="ignore"):
        np.add.at(out, arg.reshape(-1), grad.reshape(-1))
    return out.reshape(x.shape)


def _cell_pairs(seq: np.ndarray, n: int, overlapping: bool) -> tuple[np.ndarray, np.ndarray]:
    """(cell, input index) pairs, cells in order and each cell's inputs in order."""
    starts, ends = _cells(seq, n, overlapping)
    sizes = np.maximum(ends - starts + 1, 0)
    cell = np.repeat(np.arange(starts.size), sizes)
    first = np.repeat(starts - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes)
    return cell, first + np.arange(cell.size)


def fractional_avg_grad(
    in_shape: np.ndarray, grad: np.ndarray, rows: np.ndarray, cols: np.ndarray, overlapping: bool
) -> np.ndarray:
    if in_shape.ndim != 1 or in_shape.size != 4:
        raise InvalidArgumentError(
            "original input tensor shape must be1-dimensional and 4 elements"
        )
    if grad.ndim != 4:
        raise InvalidArgumentError(f"out_backprop must be 4-dimensional{mu.shape_str(grad.shape)}")
    for seq, n, what in ((rows, grad.shape[1], "row"), (cols, grad.shape[2], "col")):
        if seq.size <= n:
            raise InvalidArgumentError(
                f"Given out_backprop shape {mu.shape_str(grad.shape)}, {what}_seq_tensor must "
                f"have at least {n + 1} elements, but got {seq.size}"
            )
    shape = tuple(int(v) for v in in_shape)
    for v, what in zip(shape, ("Batch", "Rows", "Columns", "Depth")):
        if v == 0:
            raise InvalidArgumentError(f"{what} dimension of input must not be 0")
    b, h, w, d = shape
    if grad.shape[0] != b or grad.shape[3] != d or min(shape) < 0:
        raise InvalidArgumentError(
            f"out_backprop {mu.shape_str(grad.shape)} does not match the input {shape}"
        )
    rows, cols = rows[: grad.shape[1] + 1], cols[: grad.shape[2] + 1]
    _check_sequences(np.empty((0, h, w, 0)), rows, cols)
    rc, ri = _cell_pairs(rows, h, overlapping)
    cc, ci = _cell_pairs(cols, w, overlapping)
    rsz, csz = np.bincount(rc, minlength=rows.size - 1), np.bincount(cc, minlength=cols.size - 1)
    # Every (row pair, col pair), in TF's loop order: cell row, cell col, input row, col.
    p, q = (
        a.reshape(-1) for a in np.meshgrid(np.arange(rc.size), np.arange(cc.size), indexing="ij")
    )
    order = np.lexsort((ci[q], ri[p], cc[q], rc[p]))
    p, q = p[order], q[order]
    out_cell = rc[p] * grad.shape[2] + cc[q]
    in_pix = ri[p] * w + ci[q]
    size = (rsz[rc[p]] * csz[cc[q]]).astype(np.float64)
    g = grad.reshape(b, -1, d).astype(np.float64)
    vals = g[:, out_cell, :] / size[None, :, None]
    idx = (np.arange(b)[:, None, None] * (h * w) + in_pix[None, :, None]) * d + np.arange(d)
    out = np.zeros(b * h * w * d, np.float64)
    np.add.at(out, idx.reshape(-1), vals.reshape(-1))
    if mu.is_integer(grad.dtype):
        return np.trunc(out).astype(grad.dtype).reshape(shape)
    return out.astype(grad.dtype).reshape(shape)


# ---------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------


def _seeds(kc: KernelConstruction, what: str) -> tuple[list[float], tuple[int, int]]:
    ratio = [float(np.float32(r)) for r in kc.attr("pooling_ratio")]
    for r in ratio:
        if r < 1:
            raise InvalidArgumentError(
                f"pooling_ratio cannot be smaller than 1, got: {_float_str(r)}"
            )
    if ratio[0] != 1 or ratio[3] != 1:
        raise UnimplementedError(
            f"Fractional {what} pooling is not yet supported on the batch nor channel dimension."
        )
    seed, seed2 = int(kc.attr("seed")), int(kc.attr("seed2"))
    if not kc.attr("deterministic"):
        if seed or seed2:
            raise InvalidArgumentError("Both seed and seed2 should be 0 if deterministic is false.")
    elif seed == 0 and seed2 == 0:
        # TF's kernel draws these once (random::New64) and keeps them for its lifetime.
        seed, seed2 = node_state(
            kc,
            ("fractional_pool_seeds",),
            lambda: tuple(int.from_bytes(os.urandom(8), "little") for _ in range(2)),
        )
    return ratio, (seed, seed2)


def _output_size(x: np.ndarray, ratio: list[float]) -> list[int]:
    if x.ndim != 4:
        raise InvalidArgumentError("tensor_in must be 4-dimensional")
    for i, (n, r) in enumerate(zip(x.shape, ratio)):
        if n < r:
            raise InvalidArgumentError(
                f"Pooling ratio is higher than input dimension size for dimension {i}. "
                f"Input dim size: {n} pooling ratio: {_float_str(r)}"
            )
    # C++ divides the int size by the float ratio in float.
    return [int(np.floor(np.float32(n) / np.float32(r))) for n, r in zip(x.shape, ratio)]


def _pool_factory(what: str) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        ratio, (seed, seed2) = _seeds(kc, what)
        pseudo, overlapping = bool(kc.attr("pseudo_random")), bool(kc.attr("overlapping"))

        def compute(ctx, inputs: list) -> list:
            x = np.asarray(inputs[0])
            out = _output_size(x, ratio)
            gen = GuardedPhiloxRandom(seed, seed2)
            rows = pooling_sequence(x.shape[1], out[1], gen, pseudo)
            cols = pooling_sequence(x.shape[2], out[2], gen, pseudo)
            if what == "max":
                y = fractional_max(x, rows, cols, overlapping)[0]
            else:
                y = fractional_avg(x, rows, cols, overlapping)
            return [y, rows, cols]

        return compute

    return factory


def _max_grad(kc: KernelConstruction) -> Callable:
    overlapping = bool(kc.attr("overlapping"))

    def compute(ctx, inputs: list) -> list:
        x, y, grad, rows, cols = (np.asarray(v) for v in inputs)
        return [fractional_max_grad(x, y, grad, rows, cols, overlapping)]

    return compute


def _avg_grad(kc: KernelConstruction) -> Callable:
    overlapping = bool(kc.attr("overlapping"))

    def compute(ctx, inputs: list) -> list:
        shape, grad, rows, cols = (np.asarray(v) for v in inputs)
        return [fractional_avg_grad(shape, grad, rows, cols, overlapping)]

    return compute


_POOL_ATTRS = [
    "pooling_ratio: list(float) >= 4",
    "pseudo_random: bool = false",
    "overlapping: bool = false",
    "deterministic: bool = false",
    "seed: int = 0",
    "seed2: int = 0",
    _T,
]
for _op, _what in (("FractionalMaxPool", "max"), ("FractionalAvgPool", "average")):
    register_op(_op, ["value: T"], ["output: T", *_SEQ], _POOL_ATTRS)
    register_kernel(_op, expensive=True)(_pool_factory(_what))
register_op(
    "FractionalMaxPoolGrad",
    ["orig_input: T", "orig_output: T", "out_backprop: T", *_SEQ],
    ["output: T"],
    ["overlapping: bool = false", _T],
)
register_kernel("FractionalMaxPoolGrad", expensive=True)(_max_grad)
register_op(
    "FractionalAvgPoolGrad",
    ["orig_input_tensor_shape: int64", "out_backprop: T", *_SEQ],
    ["output: T"],
    ["overlapping: bool = false", _T],
)
register_kernel("FractionalAvgPoolGrad", expensive=True, host_memory=("orig_input_tensor_shape",))(
    _avg_grad
)
