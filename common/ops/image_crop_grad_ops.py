"""Ops (executor stage), CropAndResize's gradients: CropAndResizeGradImage (to the image)
and CropAndResizeGradBoxes (to the boxes), as TensorFlow's crop_and_resize_op.cc
computes them on CPU.

Sampling positions are computed in float32 in TensorFlow's order (a one-pixel crop
samples the box centre in double, as TF's `0.5 * ...` promotes it); contributions are
scattered box by box, row by row, in TF's loop order, and the box gradient sums its
terms one at a time (float32, or float += double where TF mixes them), so results equal
TensorFlow's. The box gradient steps by (y2 - y1) * ratio, the ratio (size - 1) /
(crop - 1) rounded first, where the image gradient divides last, as TF's two kernels do.
Kernels keep no state; safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError, OutOfRangeError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

F32 = np.float32
_REAL = "{uint8, uint16, int8, int16, int32, int64, half, float, double}"


def _positions(
    lo: np.float32, hi: np.float32, size: int, crop: int, by_ratio: bool = False
) -> list:
    """The in-image coordinate of each crop row (or column), None outside the image.
    The step is (hi - lo) * (size - 1) / (crop - 1), or with `by_ratio` (the box
    gradient's rule) (hi - lo) times the rounded ratio (size - 1) / (crop - 1)."""
    out: list = []
    if crop <= 1:
        scale = F32(0)
    elif by_ratio:
        scale = F32(F32(hi - lo) * _ratio(size, crop))
    else:
        scale = F32(F32((hi - lo) * F32(size - 1)) / F32(crop - 1))
    for i in range(crop):
        if crop > 1:
            v = F32(F32(lo * F32(size - 1)) + F32(F32(i) * scale))
        else:
            v = F32(0.5 * float(F32(lo + hi)) * (size - 1))
        out.append(None if v < 0 or v > size - 1 else v)
    return out


def _round_half_away(v: np.float32) -> int:
    f = np.floor(v)
    return int(f) + int(v - f >= F32(0.5))


def _check_boxes(boxes: np.ndarray, box_ind: np.ndarray) -> int:
    """ParseAndCheckBoxSizes: the number of boxes."""
    if boxes.size == 0 and box_ind.size == 0:
        return 0
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise InvalidArgumentError(f"boxes must be 2-D{mu.shape_str(boxes.shape)}")
    if box_ind.ndim != 1:
        raise InvalidArgumentError(f"box_index must be 1-D{mu.shape_str(box_ind.shape)}")
    if box_ind.shape[0] != boxes.shape[0]:
        raise InvalidArgumentError("box_index has incompatible shape")
    return boxes.shape[0]


def _check_box_ind(box_ind: np.ndarray, batch: int) -> None:
    if np.any((box_ind < 0) | (box_ind >= batch)):
        raise OutOfRangeError("box_index has values outside [0, batch_size)")


def crop_and_resize_grad_image(grads, boxes, box_ind, image_size, dtype, method: str):
    g = np.asarray(grads, np.float32)
    b, bi, size = np.asarray(boxes, np.float32), np.asarray(box_ind), np.asarray(image_size)
    if g.ndim != 4:
        raise InvalidArgumentError(f"grads image must be 4-D{mu.shape_str(g.shape)}")
    _, crop_h, crop_w, _ = g.shape
    if crop_h <= 0 or crop_w <= 0:
        raise InvalidArgumentError("grads dimensions must be positive")
    if g.shape[0] != _check_boxes(b, bi):
        raise InvalidArgumentError("boxes and grads have incompatible shape")
    if size.ndim != 1:
        raise InvalidArgumentError(f"image_size must be 1-D{mu.shape_str(size.shape)}")
    if size.shape[0] != 4:
        raise InvalidArgumentError(f"image_size must have 4 elements{mu.shape_str(size.shape)}")
    batch, height, width, depth = (int(v) for v in size)
    if height <= 0 or width <= 0:
        raise InvalidArgumentError("image dimensions must be positive")
    if g.shape[3] != depth:
        raise InvalidArgumentError("image_size and grads are incompatible")
    _check_box_ind(bi, batch)
    out = np.zeros((batch, height, width, depth), dtype)
    for n in range(g.shape[0]):
        y1, x1, y2, x2 = b[n]
        img = out[int(bi[n])]
        rows = _positions(y1, y2, height, crop_h)
        cols = _positions(x1, x2, width, crop_w)
        for y, in_y in enumerate(rows):
            if in_y is None:
                continue
            top, bottom = int(np.floor(in_y)), int(np.ceil(in_y))
            y_lerp = F32(in_y - F32(top))
            for x, in_x in enumerate(cols):
                if in_x is None:
                    continue
                grad = g[n, y, x]
                if method == "nearest":
                    img[_round_half_away(in_y), _round_half_away(in_x)] += grad.astype(dtype)
                    continue
                left, right = int(np.floor(in_x)), int(np.ceil(in_x))
                x_lerp = F32(in_x - F32(left))
                dtop = (F32(1) - y_lerp) * grad
                dbottom = y_lerp * grad
                img[top, left] += ((F32(1) - x_lerp) * dtop).astype(dtype)
                img[top, right] += (x_lerp * dtop).astype(dtype)
                img[bottom, left] += ((F32(1) - x_lerp) * dbottom).astype(dtype)
                img[bottom, right] += (x_lerp * dbottom).astype(dtype)
    return out


def _ratio(size: int, crop: int) -> np.float32:
    return F32(F32(size - 1) / F32(crop - 1)) if crop > 1 else F32(0)


def _sum_in_order(acc: np.float32, terms: np.ndarray) -> np.float32:
    """acc += each term in turn, in float32 (float terms) or as float += double."""
    if terms.dtype == np.float32:
        return np.add.accumulate(np.concatenate([[acc], terms]).astype(F32))[-1]
    total = F32(acc)
    for t in terms.tolist():
        total = F32(float(total) + t)
    return total


def crop_and_resize_grad_boxes(grads, image, boxes, box_ind) -> np.ndarray:
    g = np.asarray(grads, np.float32)
    im = np.asarray(image)
    b, bi = np.asarray(boxes, np.float32), np.asarray(box_ind)
    if g.ndim != 4:
        raise InvalidArgumentError(f"grads image must be 4-D{mu.shape_str(g.shape)}")
    _, crop_h, crop_w, depth = g.shape
    if crop_h <= 0 or crop_w <= 0:
        raise InvalidArgumentError("grads dimensions must be positive")
    if im.ndim != 4:
        raise InvalidArgumentError(f"input image must be 4-D{mu.shape_str(im.shape)}")
    batch, height, width = im.shape[:3]
    if height <= 0 or width <= 0:
        raise InvalidArgumentError("image dimensions must be positive")
    if im.shape[3] != depth:
        raise InvalidArgumentError("image, grads depth differ")
    if g.shape[0] != _check_boxes(b, bi):
        raise InvalidArgumentError("boxes and grads have incompatible shape")
    _check_box_ind(bi, batch)
    image_f = im.astype(F32)
    out = np.zeros((g.shape[0], 4), np.float32)
    h_ratio, w_ratio = _ratio(height, crop_h), _ratio(width, crop_w)
    for n in range(g.shape[0]):
        y1, x1, y2, x2 = b[n]
        src = image_f[int(bi[n])]
        rows = _positions(y1, y2, height, crop_h, by_ratio=True)
        cols = _positions(x1, x2, width, crop_w, by_ratio=True)
        terms: list[list[np.ndarray]] = [[], [], [], []]
        for y, in_y in enumerate(rows):
            if in_y is None:
                continue
            top, bottom = int(np.floor(in_y)), int(np.ceil(in_y))
            y_lerp = F32(in_y - F32(top))
            for x, in_x in enumerate(cols):
                if in_x is None:
                    continue
                left, right = int(np.floor(in_x)), int(np.ceil(in_x))
                x_lerp = F32(in_x - F32(left))
                tl, tr = src[top, left], src[top, right]
                bl, br = src[bottom, left], src[bottom, right]
                top_grad = g[n, y, x]
                grad_y = ((F32(1) - x_lerp) * (bl - tl) + x_lerp * (br - tr)) * top_grad
                grad_x = ((F32(1) - y_lerp) * (tr - tl) + y_lerp * (br - bl)) * top_grad
                for grad, step, crop, ratio, extent, lo, hi in (
                    (grad_y, y, crop_h, h_ratio, height, 0, 2),
                    (grad_x, x, crop_w, w_ratio, width, 1, 3),
                ):
                    if crop > 1:
                        offset = F32(F32(step) * ratio)
                        terms[lo].append(grad * F32(F32(extent - 1) - offset))
                        terms[hi].append(grad * offset)
                    else:
                        half = grad.astype(np.float64) * 0.5 * (extent - 1)
                        terms[lo].append(half)
                        terms[hi].append(half)
        for k in range(4):
            if terms[k]:
                out[n, k] = _sum_in_order(out[n, k], np.concatenate(terms[k]))
    return out


def _grad_image(kc: KernelConstruction) -> Callable:
    method, dtype = kc.attrs.get("method", "bilinear"), mu.np_type(kc.attr("T"))
    if method not in ("bilinear", "nearest"):
        raise InvalidArgumentError(f"method must be 'bilinear' or 'nearest'{method}", kc.node_name)

    def compute(ctx, inputs: list) -> list:
        grads, boxes, box_ind, image_size = inputs
        return [crop_and_resize_grad_image(grads, boxes, box_ind, image_size, dtype, method)]

    return compute


def _grad_boxes(kc: KernelConstruction) -> Callable:
    method = kc.attrs.get("method", "bilinear")
    if method != "bilinear":
        raise InvalidArgumentError(f"method must be 'bilinear'{method}", kc.node_name)

    def compute(ctx, inputs: list) -> list:
        grads, image, boxes, box_ind = inputs
        return [crop_and_resize_grad_boxes(grads, image, boxes, box_ind)]

    return compute


def _register() -> None:
    register_op(
        "CropAndResizeGradImage",
        ["grads: float", "boxes: float", "box_ind: int32", "image_size: int32"],
        ["output: T"],
        ["T: {float, half, double}", "method: {'bilinear', 'nearest'} = 'bilinear'"],
    )
    register_kernel("CropAndResizeGradImage", host_memory=("image_size",))(_grad_image)
    register_op(
        "CropAndResizeGradBoxes",
        ["grads: float", "image: T", "boxes: float", "box_ind: int32"],
        ["output: float"],
        [f"T: {_REAL}", "method: {'bilinear'} = 'bilinear'"],
    )
    register_kernel("CropAndResizeGradBoxes")(_grad_boxes)


_register()
