"""Ops (executor stage): the banded and diagonal views of batched matrices (TensorFlow's
matrix_band_part_op and matrix_diag_op kernels): MatrixBandPart, MatrixDiagV2/V3,
MatrixDiagPart/V2/V3, MatrixSetDiag/V2/V3 (MatrixDiag, v1, lives in transform_ops).
Pure indexing, so values equal TensorFlow's bit for bit. A band k = [k0, k1] of
diagonals is packed as TF packs it: row k1 - d holds diagonal d, each diagonal shifted
right or left within the row by the `align` attr (V2 is V3 with LEFT_LEFT).
Stateless and thread-safe."""

from __future__ import annotations

import numpy as np

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

_ALIGN = "align: {'LEFT_RIGHT', 'RIGHT_LEFT', 'LEFT_LEFT', 'RIGHT_RIGHT'} = 'RIGHT_LEFT'"


def band_part(x: np.ndarray, num_lower: np.ndarray, num_upper: np.ndarray) -> np.ndarray:
    if x.ndim < 2:
        raise InvalidArgumentError(
            f"input must be at least 2-dim, received shape: {mu.shape_str(x.shape)}"
        )
    rows, cols = x.shape[-2:]
    lower, upper = int(num_lower), int(num_upper)
    if lower > rows:
        raise InvalidArgumentError(
            f"num_lower must be negative or less or equal to number of rows ({rows}) got: {lower}"
        )
    if upper > cols:
        raise InvalidArgumentError(
            f"num_upper must be negative or less or equal to number of columns ({cols}) "
            f"got: {upper}"
        )
    offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]
    keep = np.ones((rows, cols), bool)
    if lower >= 0:
        keep &= offset >= -lower
    if upper >= 0:
        keep &= offset <= upper
    return np.where(keep, x, np.zeros((), x.dtype))


def _diag_range(k: np.ndarray) -> tuple[int, int]:
    flat = np.reshape(k, [-1])
    if flat.size not in (1, 2):
        raise InvalidArgumentError(
            f"diag_index must have only one or two elements, received {flat.size} elements."
        )
    k0, k1 = int(flat[0]), int(flat[-1])
    if k0 > k1:
        raise InvalidArgumentError(
            f"lower_diag_index must not be larger than upper_diag_index: {k0} > {k1}"
        )
    return k0, k1


def _check_bounds(k0: int, k1: int, rows: int, cols: int, lower_dot: str) -> None:
    if not (-rows < k0 < cols or k0 == 0):
        raise InvalidArgumentError(
            f"lower_diag_index is out of bound: {k0}{lower_dot} It must be between "
            f"-{rows} and {cols}"
        )
    if not (-rows < k1 < cols or k1 == 0):
        raise InvalidArgumentError(
            f"upper_diag_index is out of bound: {k1} It must be between -{rows} and {cols}"
        )


def _band_indices(
    rows: int, cols: int, k0: int, k1: int, width: int, align: str
) -> tuple[np.ndarray, ...]:
    """(row, col) of every element of diagonals k0..k1 and where it goes in the packed
    band: (diagonal row k1 - d, position within that row)."""
    left_super = align in ("LEFT_LEFT", "LEFT_RIGHT")
    left_sub = align in ("LEFT_LEFT", "RIGHT_LEFT")
    parts: list[list[np.ndarray]] = [[], [], [], []]
    for d in range(k1, k0 - 1, -1):
        length = max(0, min(rows + min(0, d), cols - max(0, d)))
        j = np.arange(length)
        left = left_super if d >= 0 else left_sub
        shift = 0 if left else width - length
        for part, v in zip(
            parts, (j - min(0, d), j + max(0, d), np.full(length, k1 - d), j + shift)
        ):
            part.append(v)
    return tuple(np.concatenate(p).astype(np.intp) for p in parts)


def diag_part(x: np.ndarray, k: np.ndarray, padding: np.ndarray, align: str) -> np.ndarray:
    if x.ndim < 2:
        raise InvalidArgumentError(
            f"input must be at least 2-dim, received shape: {mu.shape_str(x.shape)}"
        )
    k0, k1 = _diag_range(k)
    rows, cols = x.shape[-2:]
    _check_bounds(k0, k1, rows, cols, ".")
    width = min(rows + min(k1, 0), cols + min(-k0, 0))
    num = k1 - k0 + 1
    out = np.full(x.shape[:-2] + (num, width), np.reshape(padding, [-1])[0], x.dtype)
    r, c, di, pos = _band_indices(rows, cols, k0, k1, width, align)
    out[..., di, pos] = x[..., r, c]
    return out[..., 0, :] if num == 1 else out


def _packed_diagonals(diagonal: np.ndarray, k0: int, k1: int) -> np.ndarray:
    """The diagonals as [..., num_diags, width] (one diagonal may come without its axis)."""
    num = k1 - k0 + 1
    if num == 1:
        return diagonal[..., None, :]
    if diagonal.ndim < 2 or diagonal.shape[-2] != num:
        raise InvalidArgumentError(
            "The number of diagonals provided in the input does not match the "
            "lower_diag_index and upper_diag_index range."
        )
    return diagonal


def matrix_diag(
    diagonal: np.ndarray,
    k: np.ndarray,
    num_rows: np.ndarray,
    num_cols: np.ndarray,
    padding: np.ndarray,
    align: str,
) -> np.ndarray:
    if diagonal.ndim < 1:
        raise InvalidArgumentError(
            f"diagonal must be at least 1-dim, received shape: {mu.shape_str(diagonal.shape)}"
        )
    k0, k1 = _diag_range(k)
    diags = _packed_diagonals(diagonal, k0, k1)
    width = diags.shape[-1]
    min_rows, min_cols = width - min(k1, 0), width + max(k0, 0)
    rows, cols = int(num_rows), int(num_cols)
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    if rows < min_rows:
        raise InvalidArgumentError("The number of rows is too small.")
    if cols < min_cols:
        raise InvalidArgumentError("The number of columns is too small.")
    if rows != min_rows and cols != min_cols:
        raise InvalidArgumentError(
            "The number of rows or columns is not consistent with the specified d_lower, "
            "d_upper, and diagonal."
        )
    out = np.full(diags.shape[:-2] + (rows, cols), np.reshape(padding, [-1])[0], diagonal.dtype)
    r, c, di, pos = _band_indices(rows, cols, k0, k1, width, align)
    out[..., r, c] = diags[..., di, pos]
    return out


def set_diag(x: np.ndarray, diagonal: np.ndarray, k: np.ndarray, align: str) -> np.ndarray:
    if x.ndim < 2:
        raise InvalidArgumentError(
            f"input must be at least 2-dim, received shape: {mu.shape_str(x.shape)}"
        )
    k0, k1 = _diag_range(k)
    rows, cols = x.shape[-2:]
    _check_bounds(k0, k1, rows, cols, "")
    num = k1 - k0 + 1
    # TF reads the diagonals' count at the input's rank - 2, whatever the diagonal's rank.
    axis = x.ndim - 2
    if num > 1 and (diagonal.ndim <= axis or diagonal.shape[axis] != num):
        raise InvalidArgumentError(
            "The number of diagonals provided in `diag` is not consistent with "
            "`lower_diag_index` and `upper_diag_index`"
        )
    width = min(rows + min(k1, 0), cols + min(-k0, 0))
    expected = x.shape[:-2] + ((num,) if num > 1 else ()) + (width,)
    if diagonal.shape != expected:
        raise InvalidArgumentError(
            "Either first dimensions of diagonal don't match input.shape[:-2], or "
            "diagonal.shape[:-1] is not equal to the longests diagonal in range "
            f"[lower_diag_index:upper_diag_index].\nInput shape: {mu.shape_str(x.shape)}\n"
            f"Diagonal shape: {mu.shape_str(diagonal.shape)}\n"
            f"Expected diagonal shape: {mu.shape_str(expected)}"
        )
    diags = diagonal[..., None, :] if num == 1 else diagonal
    out = x.copy()
    r, c, di, pos = _band_indices(rows, cols, k0, k1, width, align)
    out[..., r, c] = diags[..., di, pos]
    return out


register_op(
    "MatrixBandPart",
    ["input: T", "num_lower: Tindex", "num_upper: Tindex"],
    ["band: T"],
    ["T: type", "Tindex: {int32, int64} = DT_INT64"],
)
register_op("MatrixDiagPart", ["input: T"], ["diagonal: T"], ["T: type"])
register_op(
    "MatrixDiagPartV2", ["input: T", "k: int32", "padding_value: T"], ["diagonal: T"], ["T: type"]
)
register_op(
    "MatrixDiagPartV3",
    ["input: T", "k: int32", "padding_value: T"],
    ["diagonal: T"],
    ["T: type", _ALIGN],
)
_DIAG_INPUTS = ["diagonal: T", "k: int32", "num_rows: int32", "num_cols: int32", "padding_value: T"]
register_op("MatrixDiagV2", _DIAG_INPUTS, ["output: T"], ["T: type"])
register_op("MatrixDiagV3", _DIAG_INPUTS, ["output: T"], ["T: type", _ALIGN])
register_op("MatrixSetDiag", ["input: T", "diagonal: T"], ["output: T"], ["T: type"])
register_op("MatrixSetDiagV2", ["input: T", "diagonal: T", "k: int32"], ["output: T"], ["T: type"])
register_op(
    "MatrixSetDiagV3", ["input: T", "diagonal: T", "k: int32"], ["output: T"], ["T: type", _ALIGN]
)


def _kernel(op: str, fn) -> None:
    """Registers `fn(align, *inputs)`; align is the attr's value (LEFT_LEFT for V1/V2)."""

    def factory(kc: KernelConstruction):
        align = str(kc.attrs.get("align", "LEFT_LEFT"))

        def compute(ctx, inputs: list) -> list:
            return [fn(align, *(np.asarray(v) for v in inputs))]

        return compute

    factory.__qualname__ = f"_{op}"
    register_kernel(op)(factory)


_ZERO_K = np.zeros((), np.int32)


def _part_v1(align: str, x: np.ndarray) -> np.ndarray:
    if x.ndim < 2:
        raise InvalidArgumentError(
            f"input must be at least 2-dim, received shape: {mu.shape_str(x.shape)}"
        )
    width = min(x.shape[-2:])
    return diag_part(x, _ZERO_K, np.zeros((), x.dtype), align)[..., :width]


_kernel("MatrixBandPart", lambda align, x, lo, up: band_part(x, lo, up))
_kernel("MatrixDiagPart", _part_v1)
_kernel("MatrixDiagPartV2", lambda align, x, k, pad: diag_part(x, k, pad, align))
_kernel("MatrixDiagPartV3", lambda align, x, k, pad: diag_part(x, k, pad, align))
_kernel("MatrixDiagV2", lambda align, d, k, r, c, pad: matrix_diag(d, k, r, c, pad, align))
_kernel("MatrixDiagV3", lambda align, d, k, r, c, pad: matrix_diag(d, k, r, c, pad, align))
_kernel("MatrixSetDiag", lambda align, x, d: set_diag(x, d, _ZERO_K, align))
_kernel("MatrixSetDiagV2", lambda align, x, d, k: set_diag(x, d, k, align))
_kernel("MatrixSetDiagV3", lambda align, x, d, k: set_diag(x, d, k, align))
