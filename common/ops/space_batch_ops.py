"""Ops (executor stage): moving spatial blocks to and from the batch dimension —
SpaceToBatchND, BatchToSpaceND and their 4-D, square-block forms SpaceToBatch and
BatchToSpace.

Signatures are TensorFlow's (array_ops.cc); kernels follow spacetobatch_op.cc and
batchtospace_op.cc: the same checks in the same order with the same wording, the leading
and trailing block dims with block 1 and no padding/cropping folded away (so at most four
"non-combined" block dims, and an all-trivial block returns the input itself), then one
pad/reshape/transpose/reshape in numpy. Pure kernels: safe from any thread.
"""

from __future__ import annotations

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.array_ops import INDEX_TYPE, shape_str
from common.ops.registry import KernelConstruction, one_output_kernel, register_op

# TensorFlow's kMaxSpaceToBatchBlockDims: block dims left after folding the trivial ones.
MAX_BLOCK_DIMS = 4

register_op(
    "SpaceToBatchND",
    inputs=["input: T", "block_shape: Tblock_shape", "paddings: Tpaddings"],
    outputs=["output: T"],
    attrs=[
        "T: type",
        f"Tblock_shape: {INDEX_TYPE} = DT_INT32",
        f"Tpaddings: {INDEX_TYPE} = DT_INT32",
    ],
)
register_op(
    "SpaceToBatch",
    inputs=["input: T", "paddings: Tpaddings"],
    outputs=["output: T"],
    attrs=["T: type", f"Tpaddings: {INDEX_TYPE} = DT_INT32", "block_size: int >= 2"],
)
register_op(
    "BatchToSpaceND",
    inputs=["input: T", "block_shape: Tblock_shape", "crops: Tcrops"],
    outputs=["output: T"],
    attrs=[
        "T: type",
        f"Tblock_shape: {INDEX_TYPE} = DT_INT32",
        f"Tcrops: {INDEX_TYPE} = DT_INT32",
    ],
)
register_op(
    "BatchToSpace",
    inputs=["input: T", "crops: Tidx"],
    outputs=["output: T"],
    attrs=["T: type", "block_size: int >= 2", f"Tidx: {INDEX_TYPE} = DT_INT32"],
)


def _block_args(
    x: np.ndarray, block_shape: np.ndarray, pads: np.ndarray, what: str
) -> tuple[list[int], list[tuple[int, int]]]:
    """Checks ranks and shapes of block_shape and paddings/crops (`what`); their values."""
    block_shape, pads = np.asarray(block_shape), np.asarray(pads)
    if block_shape.ndim != 1:
        raise InvalidArgumentError(f"block_shape rank should be 1 instead of {block_shape.ndim}")
    m = block_shape.shape[0]
    if np.ndim(x) < 1 + m:
        raise InvalidArgumentError(f"input rank should be >= {1 + m} instead of {np.ndim(x)}")
    if pads.ndim != 2 or pads.shape[0] != m or pads.shape[1] != 2:
        raise InvalidArgumentError(
            f"{what} should have shape [{m}, 2] instead of {shape_str(pads.shape)}"
        )
    return [int(b) for b in block_shape], [(int(a), int(b)) for a, b in pads.tolist()]


def _internal_dims(blocks: list[int], pads: list[tuple[int, int]]) -> range:
    """The block dims left after folding leading ones into the batch dim and trailing
    ones into the depth (block 1, no padding or cropping), as TensorFlow computes them."""
    m = len(blocks)
    start = 0
    while start < m and blocks[start] == 1 and pads[start] == (0, 0):
        start += 1
    stop = m
    while stop > start and blocks[stop - 1] == 1 and pads[stop - 1] == (0, 0):
        stop -= 1
    if stop - start > MAX_BLOCK_DIMS:
        raise InvalidArgumentError(
            f"Maximum number of non-combined block dimensions is {stop - start} but must not "
            f"exceed {MAX_BLOCK_DIMS}"
        )
    return range(start, stop)


def space_to_batch(x: np.ndarray, block_shape: np.ndarray, paddings: np.ndarray) -> np.ndarray:
    """SpaceToBatchND: zero-pad the spatial dims, then move each block offset to the batch."""
    blocks, pads = _block_args(x, block_shape, paddings, "paddings")
    for i, b in enumerate(blocks):
        if b < 1:
            raise InvalidArgumentError(
                f"All values in block_shape must be positive, got value, {b} at index {i}."
            )
    m = len(blocks)
    if not _internal_dims(blocks, pads):
        return x
    for i in range(m):
        a, b = pads[i]
        if a < 0 or b < 0:
            raise InvalidArgumentError("Paddings must be non-negative")
        padded = x.shape[i + 1] + a + b
        if padded % blocks[i]:
            raise InvalidArgumentError(
                f"padded_shape[{i}]={padded} is not divisible by block_shape[{i}]={blocks[i]}"
            )
    widths = [(0, 0), *pads] + [(0, 0)] * (x.ndim - 1 - m)
    padded_x = np.pad(x, widths) if any(a or b for a, b in pads) else x
    batch, rest = x.shape[0], x.shape[1 + m :]
    split: list[int] = [batch]
    for i in range(m):
        split += [padded_x.shape[i + 1] // blocks[i], blocks[i]]
    y = padded_x.reshape(split + list(rest))
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
    perm += list(range(1 + 2 * m, y.ndim))
    out_shape = [batch * int(np.prod(blocks))] + split[1 : 1 + 2 * m : 2] + list(rest)
    return np.ascontiguousarray(y.transpose(perm)).reshape(out_shape)


def batch_to_space(x: np.ndarray, block_shape: np.ndarray, crops: np.ndarray) -> np.ndarray:
    """BatchToSpaceND: interleave the batch's block offsets into the spatial dims, then crop."""
    blocks, crop = _block_args(x, block_shape, crops, "crops")
    product = int(np.prod(blocks, dtype=np.int64))
    if product <= 0:
        raise InvalidArgumentError(f"Product of block sizes must be positive, got {product}")
    batch = x.shape[0]
    if batch % product:
        raise InvalidArgumentError(
            f"Input batch dimension ({batch}) is not divisible by product of block sizes "
            f"({product})"
        )
    m = len(blocks)
    if not _internal_dims(blocks, crop):
        return x
    out_spatial = []
    for i in range(m):
        a, b = crop[i]
        if a < 0 or b < 0:
            raise InvalidArgumentError("Crops must be non-negative")
        size = x.shape[i + 1] * blocks[i] - a - b
        if size < 0:
            raise InvalidArgumentError(f"cropped_shape[{i}]={size} must be non-negative")
        out_spatial.append(size)
    rest = list(x.shape[1 + m :])
    if x.size == 0 or any(b < 1 for b in blocks):  # an even number of negative blocks
        # passes TensorFlow's checks only when a spatial dim is 0: an empty result.
        return np.zeros([batch // product, *out_spatial, *rest], dtype=x.dtype)
    y = x.reshape(blocks + [batch // product] + list(x.shape[1:]))
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, y.ndim))
    full = [x.shape[i + 1] * blocks[i] for i in range(m)]
    y = np.ascontiguousarray(y.transpose(perm)).reshape([batch // product, *full, *rest])
    window = tuple(slice(a, a + size) for (a, _), size in zip(crop, out_spatial))
    return np.ascontiguousarray(y[(slice(None),) + window])


def _rank4(x: np.ndarray) -> None:
    if np.ndim(x) != 4:  # TensorFlow's wording, missing space included
        raise InvalidArgumentError(f"Input rank should be: 4instead of: {np.ndim(x)}")


@one_output_kernel("SpaceToBatchND", expensive=True)
def _space_to_batch_nd(
    k: KernelConstruction, x: np.ndarray, block_shape: np.ndarray, paddings: np.ndarray
) -> np.ndarray:
    return space_to_batch(x, block_shape, paddings)


@one_output_kernel("BatchToSpaceND", expensive=True)
def _batch_to_space_nd(
    k: KernelConstruction, x: np.ndarray, block_shape: np.ndarray, crops: np.ndarray
) -> np.ndarray:
    return batch_to_space(x, block_shape, crops)


@one_output_kernel("SpaceToBatch", expensive=True)
def _space_to_batch(k: KernelConstruction, x: np.ndarray, paddings: np.ndarray) -> np.ndarray:
    _rank4(x)
    bs = k.attr("block_size")
    return space_to_batch(x, np.array([bs, bs], np.int64), paddings)


@one_output_kernel("BatchToSpace", expensive=True)
def _batch_to_space(k: KernelConstruction, x: np.ndarray, crops: np.ndarray) -> np.ndarray:
    _rank4(x)
    bs = k.attr("block_size")
    return batch_to_space(x, np.array([bs, bs], np.int64), crops)
